import { isLosslessNumber } from 'lossless-json';
import { invalidParameter } from './api-error.ts';
import { parseDecimal } from './decimal.ts';

/**
 * Typed access to a request's parameters: the query string of a GET, the JSON body of a POST.
 *
 * The sandbox is deliberately strict about types (a String parameter must be a JSON string):
 * code that passes strict checks also passes a lenient real exchange. Integer parameters
 * (exchange-api.md Integer/Long) accept a bare JSON integer of any size or a string of
 * digits, as the exchange's Java backend does; a bare 19-digit orderId arrives intact because
 * bodies are parsed losslessly (see wire-json.ts). `null`, and `""` in a query string, count
 * as absent.
 */
export class ParamReader {
  private readonly values: Record<string, unknown>;
  private readonly fromQuery: boolean;
  private readonly prefix: string;

  private constructor(values: Record<string, unknown>, fromQuery: boolean, prefix: string) {
    this.values = values;
    this.fromQuery = fromQuery;
    this.prefix = prefix;
  }

  /** Parameters of a GET: the first value of each key of the raw query string. */
  static fromQueryString(rawQuery: string): ParamReader {
    const values: Record<string, unknown> = {};
    for (const [key, value] of new URLSearchParams(rawQuery)) {
      if (!Object.hasOwn(values, key)) values[key] = value;
    }
    return new ParamReader(values, true, '');
  }

  /**
   * Parameters of a POST: the members of the parsed JSON object. `prefix` names a nested
   * object in messages (e.g. `orderList[2].`).
   */
  static fromBody(body: Record<string, unknown>, prefix = ''): ParamReader {
    return new ParamReader(body, false, prefix);
  }

  /** A parameter's name as messages show it. */
  label(name: string): string {
    return this.prefix + name;
  }

  /** The raw values, for the request log. */
  get raw(): Record<string, unknown> {
    return this.values;
  }

  private get(name: string): unknown {
    if (!Object.hasOwn(this.values, name)) return undefined;
    const value = this.values[name];
    if (value === null) return undefined;
    if (this.fromQuery && value === '') return undefined;
    return value;
  }

  /** Whether the parameter is present (not absent, null, or an empty query value). */
  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  /** A String parameter. */
  string(name: string, options: { required: true; maxLength?: number }): string;
  string(name: string, options?: { required?: false; maxLength?: number }): string | undefined;
  string(name: string, options: { required?: boolean; maxLength?: number } = {}): string | undefined {
    const value = this.get(name);
    if (value === undefined) {
      if (options.required === true) throw invalidParameter(`${this.label(name)} is required`);
      return undefined;
    }
    if (typeof value !== 'string') throw invalidParameter(`${this.label(name)} must be a string`);
    if (options.required === true && value === '') throw invalidParameter(`${this.label(name)} is required`);
    if (options.maxLength !== undefined && value.length > options.maxLength) {
      throw invalidParameter(`${this.label(name)} must be at most ${options.maxLength} characters`);
    }
    return value;
  }

  /** A String parameter restricted to a set of values. */
  oneOf<const T extends string>(name: string, allowed: readonly T[], options: { required?: boolean } = {}): T | undefined {
    const value = options.required === true ? this.string(name, { required: true }) : this.string(name);
    if (value === undefined) return undefined;
    if (!(allowed as readonly string[]).includes(value)) throw invalidParameter(`${this.label(name)} must be one of ${allowed.join(', ')}`);
    return value as T;
  }

  /** The exact decimal digits of an integer parameter (for ids: never through a double). */
  integerText(name: string): string | undefined {
    const value = this.get(name);
    if (value === undefined) return undefined;
    let text: string;
    if (typeof value === 'string') text = value;
    else if (isLosslessNumber(value)) text = value.value;
    else if (typeof value === 'number' || typeof value === 'bigint') text = String(value);
    else throw invalidParameter(`${this.label(name)} must be an integer`);
    if (!/^-?\d+$/.test(text)) throw invalidParameter(`${this.label(name)} must be an integer`);
    return text;
  }

  /** An integer parameter within [min, max] (both inclusive), or the default when absent. */
  integer(name: string, options: { min: number; max?: number; default: number }): number;
  integer(name: string, options: { min: number; max?: number; default?: undefined }): number | undefined;
  integer(name: string, options: { min: number; max?: number; default?: number }): number | undefined {
    const text = this.integerText(name);
    if (text === undefined) return options.default;
    const value = Number(text);
    const max = options.max ?? Number.MAX_SAFE_INTEGER;
    if (!Number.isSafeInteger(value) || value < options.min || value > max) {
      throw invalidParameter(`${this.label(name)} must be an integer from ${options.min}${options.max === undefined ? '' : ` to ${options.max}`}`);
    }
    return value;
  }

  /** A timestamp parameter (epoch ms, a non-negative integer). */
  time(name: string): number | undefined {
    return this.integer(name, { min: 0 });
  }

  /** A non-negative id parameter as its exact digits, leading zeros removed. */
  id(name: string): string | undefined {
    const text = this.integerText(name);
    if (text === undefined) return undefined;
    if (text.startsWith('-')) throw invalidParameter(`${this.label(name)} must not be negative`);
    return BigInt(text).toString();
  }

  /** A BigDecimal parameter: a decimal string or a bare JSON number; returned as its exact text. */
  decimal(name: string): string | undefined {
    const value = this.get(name);
    if (value === undefined) return undefined;
    const text = typeof value === 'string' ? value : isLosslessNumber(value) ? value.value : typeof value === 'number' ? String(value) : undefined;
    if (text === undefined || parseDecimal(text) === null) throw invalidParameter(`${this.label(name)} must be a decimal`);
    return text;
  }

  /** A String[] parameter (POST bodies only); absent or empty gives []. */
  stringArray(name: string): string[] {
    const value = this.get(name);
    if (value === undefined) return [];
    if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) throw invalidParameter(`${this.label(name)} must be an array of strings`);
    return value as string[];
  }

  /** A List of objects parameter (POST bodies only). */
  objectArray(name: string, options: { required: true; max: number }): Record<string, unknown>[] {
    const value = this.get(name);
    if (value === undefined) throw invalidParameter(`${this.label(name)} is required`);
    if (!Array.isArray(value) || value.some((item) => typeof item !== 'object' || item === null || Array.isArray(item))) {
      throw invalidParameter(`${this.label(name)} must be an array of objects`);
    }
    if (value.length === 0 || value.length > options.max) throw invalidParameter(`${this.label(name)} must hold 1 to ${options.max} items`);
    return value as Record<string, unknown>[];
  }
}
