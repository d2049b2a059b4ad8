import { createHash } from 'node:crypto';
import { LosslessNumber } from 'lossless-json';
import { DataError } from '../errors.ts';
import { jsonScalarToString, stringifyJsonLossless } from '../exchange/lossless-json.ts';
import type { FieldSpec, HistoryStream, StreamDeclaration } from './stream.ts';

/** One record ready for the raw table. */
export interface RawRecord {
  /** Unique per stream and account: the id, or (time, content hash, occurrence) for id-less streams. */
  key: string;
  /** The record's time, epoch ms (for referral totals: the start of their day). */
  eventMs: number;
  /** The record exactly as sent (lossless JSON text, unknown fields included). */
  json: string;
}

const DECIMAL = /^-?\d+(\.\d+)?$/;
const DIGITS = /^-?\d+$/;

/** Takes the record array (or single record) out of a payload; a missing array breaks the contract. */
export function recordsOf(stream: StreamDeclaration, payload: unknown): Record<string, unknown>[] {
  let node: unknown = payload;
  for (const part of stream.recordsPath === '' ? [] : stream.recordsPath.split('.')) {
    node = isRecord(node) ? node[part] : undefined;
  }
  if (stream.singleRecord === true) {
    if (!isRecord(node)) throw new DataError(`${stream.name}: expected an object from ${stream.endpoint}, got ${describe(node)}`, { endpoint: stream.endpoint });
    return [node];
  }
  // A null list is how some endpoints say "nothing" (spot open orders show `nextPage: null`).
  if (node === null) return [];
  if (!Array.isArray(node)) {
    const where = stream.recordsPath === '' ? 'the payload' : `"${stream.recordsPath}"`;
    throw new DataError(`${stream.name}: expected ${where} of ${stream.endpoint} to be an array, got ${describe(node)}`, { endpoint: stream.endpoint });
  }
  return node.map((item, index) => {
    if (!isRecord(item)) throw new DataError(`${stream.name}: record ${index} from ${stream.endpoint} is ${describe(item)}, not an object`, { endpoint: stream.endpoint });
    return item;
  });
}

/**
 * What a value may be before it is stored, so that nothing stored can break a later build
 * (docs/operating.md "What the sync refuses"). Amounts: a plain decimal with at most 18 decimals (what
 * DECIMAL(38,18) holds exactly; exchange-notes.md "Numbers") and at most 14 digits before the
 * point: the models multiply quantities by prices in 128-bit integers and are exact below 10^14
 * each (sql/macros/exact_arith.sql), and sums of up to a million such amounts stay inside
 * DECIMAL(38,18). Integers (coin ids, source types: `Integer` in the spec) fit 32 bits. Times
 * are epoch milliseconds within 2000-2099. Text and ids are at most 1,000 characters.
 */
export const VALUE_LIMITS = Object.freeze({
  amountIntegerDigits: 14,
  amountDecimals: 18,
  integerMax: 2147483647n,
  integerMin: -2147483648n,
  timeMinMs: Date.UTC(2000, 0, 1),
  timeMaxMs: Date.UTC(2100, 0, 1),
  textLength: 1000,
});

/**
 * Checks a record against its declaration: required fields present, values of the declared type
 * and within VALUE_LIMITS and the declared sign, nested shapes too. The error names the stream,
 * the record (its id, or its time where it has none), the field and the value.
 */
export function validateRecord(stream: StreamDeclaration, record: Record<string, unknown>): void {
  const problem = fieldsProblem(stream.fields, record, '', true) ?? productsProblem(stream, record);
  if (problem !== null) throw new DataError(`${stream.name}: ${recordName(stream, record)} from ${stream.endpoint}: ${problem}`, { endpoint: stream.endpoint });
  if (stream.kind === 'history' && stream.timeFields.length > 0 && stream.timeFields.every((name) => record[name] === undefined || record[name] === null)) {
    throw new DataError(`${stream.name}: ${recordName(stream, record)} from ${stream.endpoint} has none of the time fields ${stream.timeFields.join(', ')}`, { endpoint: stream.endpoint });
  }
}

/** The first problem of `record` against `fields`, or null. `path` prefixes nested field names. */
function fieldsProblem(fields: readonly FieldSpec[], record: Record<string, unknown>, path: string, topLevel: boolean): string | null {
  for (const field of fields) {
    const name = `${path}${field.name}`;
    const value = record[field.name];
    if (value === undefined || value === null) {
      if (field.required === false) continue;
      return `has no "${name}" (a required field)`;
    }
    const problem = valueProblem(field, value, topLevel);
    if (problem !== null) return `"${name}" is ${describe(value)}: ${problem}`;
    if (field.shape !== undefined) {
      const items = field.shape.kind === 'list' ? value : [value];
      if (!Array.isArray(items)) return `"${name}" is ${describe(value)}: should be an array of objects`;
      for (const [index, item] of items.entries()) {
        const itemPath = field.shape.kind === 'list' ? `${name}[${index}].` : `${name}.`;
        if (!isRecord(item)) return `"${itemPath.slice(0, -1)}" is ${describe(item)}: should be an object`;
        const nested = fieldsProblem(field.shape.fields, item, itemPath, false);
        if (nested !== null) return nested;
      }
    }
  }
  return null;
}

/** Whether the product of a pair of fields the models multiply leaves their range. */
function productsProblem(stream: StreamDeclaration, record: Record<string, unknown>): string | null {
  for (const [left, right] of stream.products ?? []) {
    const a = jsonScalarToString(record[left]);
    const b = jsonScalarToString(record[right]);
    if (a === null || b === null || a === '' || b === '') continue;
    const limit = 10n ** BigInt(VALUE_LIMITS.amountIntegerDigits);
    const [aUnits, aScale] = decimalUnits(a);
    const [bUnits, bScale] = decimalUnits(b);
    const product = aUnits * bUnits;
    if ((product < 0n ? -product : product) >= limit * 10n ** BigInt(aScale + bScale)) {
      return `"${left}" ${describe(record[left])} times "${right}" ${describe(record[right])} is 10^${VALUE_LIMITS.amountIntegerDigits} or more (the models are exact below it)`;
    }
  }
  return null;
}

/** A plain decimal string as integer units and their scale: '-1.25' is [-125n, 2]. */
function decimalUnits(text: string): [bigint, number] {
  const [integer = '', decimals = ''] = text.split('.');
  return [BigInt(`${integer}${decimals}`), decimals.length];
}

/** Why a present value breaks its field's declaration, or null. */
function valueProblem(field: FieldSpec, value: unknown, topLevel: boolean): string | null {
  const text = typeof value === 'boolean' ? null : jsonScalarToString(value);
  switch (field.type) {
    case 'amount': {
      // Optional amounts may be empty strings (spot fillPrice, exchange-notes.md "Numbers"): unknown.
      if (text === '' && field.required === false && topLevel) return null;
      if (text === null || !DECIMAL.test(text)) return 'should be a decimal string';
      const [integer = '', decimals = ''] = text.replace('-', '').split('.');
      if (decimals.length > VALUE_LIMITS.amountDecimals) return `more than ${VALUE_LIMITS.amountDecimals} decimals (DECIMAL(38,18) would round it)`;
      if (integer.replace(/^0+/, '').length > VALUE_LIMITS.amountIntegerDigits) return `more than ${VALUE_LIMITS.amountIntegerDigits} digits before the point (the models are exact below 10^${VALUE_LIMITS.amountIntegerDigits})`;
      const negative = text.startsWith('-') && /[1-9]/.test(text);
      const zero = !/[1-9]/.test(text);
      if (field.sign === 'positive' && (negative || zero)) return 'should be positive';
      if (field.sign === 'non-negative' && negative) return 'should not be negative';
      return null;
    }
    case 'id':
      if (text === null || !DIGITS.test(text)) return 'should be an integer id';
      return text.length > VALUE_LIMITS.textLength ? `longer than ${VALUE_LIMITS.textLength} characters` : null;
    case 'integer': {
      if (text === null || !DIGITS.test(text)) return 'should be an integer';
      const number = BigInt(text);
      return number > VALUE_LIMITS.integerMax || number < VALUE_LIMITS.integerMin ? 'outside the 32-bit integer range (the spec\'s Integer)' : null;
    }
    case 'time_ms': {
      if (text === null || !DIGITS.test(text)) return 'should be epoch milliseconds';
      const ms = BigInt(text);
      return ms < BigInt(VALUE_LIMITS.timeMinMs) || ms >= BigInt(VALUE_LIMITS.timeMaxMs) ? 'outside 2000-01-01 to 2099-12-31 as epoch milliseconds' : null;
    }
    case 'text':
      if (typeof value !== 'string') return 'should be a string';
      return value.length > VALUE_LIMITS.textLength ? `longer than ${VALUE_LIMITS.textLength} characters` : null;
    case 'boolean':
      return typeof value === 'boolean' || value === 'true' || value === 'false' ? null : 'should be a boolean';
    case 'json':
      return null;
  }
}

/**
 * How an error names a record: its identity (`fillId 123`), else its first id field, else its
 * time (id-less records), else its first text field; the exact values, shortened if long.
 */
export function recordName(stream: StreamDeclaration, record: Record<string, unknown>): string {
  const present = (name: string) => {
    const text = jsonScalarToString(record[name]);
    return text === null || text === '' ? null : `${name} ${text.length > 40 ? `${text.slice(0, 40)}…` : text}`;
  };
  const candidates = [
    ...(stream.kind === 'history' && stream.identity.kind !== 'content-occurrence' ? stream.identity.fields : []),
    ...stream.fields.filter((field) => field.type === 'id').map((field) => field.name),
    ...(stream.kind === 'history' ? stream.timeFields : []),
    ...stream.fields.filter((field) => field.type === 'text').map((field) => field.name),
  ];
  for (const name of candidates) {
    const named = present(name);
    if (named !== null) return `the record with ${named}`;
  }
  return 'a record';
}

/** The record's time, epoch ms, from the first time field present. */
export function eventTimeOf(stream: HistoryStream, record: Record<string, unknown>): number {
  for (const name of stream.timeFields) {
    const text = jsonScalarToString(record[name]);
    if (text !== null && DIGITS.test(text)) return Number(text);
  }
  throw new DataError(`${stream.name}: a record has no usable time in ${stream.timeFields.join(' or ')}`, { endpoint: stream.endpoint });
}

/**
 * Builds raw records for everything read in one window. Keys of id-less records number
 * identical records within their millisecond (0, 1, …), so two genuine twins stay two rows and a
 * re-read of the same window yields the same keys.
 */
export function toRawRecords(stream: HistoryStream, records: readonly Record<string, unknown>[], windowStartMs: number): RawRecord[] {
  const identity = stream.identity;
  const occurrences = new Map<string, number>();
  const raw = records.map((record): RawRecord => {
    const json = stringifyJsonLossless(record);
    if (identity.kind === 'window-key') {
      return { key: `${windowStartMs}:${keyFields(identity.fields, record)}`, eventMs: windowStartMs, json };
    }
    const eventMs = eventTimeOf(stream, record);
    if (identity.kind === 'key') return { key: keyFields(identity.fields, record), eventMs, json };
    const digest = createHash('sha256').update(canonicalJson(record)).digest('base64url').slice(0, 22);
    const base = `${eventMs}:${digest}`;
    const occurrence = occurrences.get(base) ?? 0;
    occurrences.set(base, occurrence + 1);
    return { key: `${base}:${occurrence}`, eventMs, json };
  });
  if (identity.kind === 'content-occurrence') return raw;
  // A record read twice in one window (pages that shifted while being read) is one record.
  return [...new Map(raw.map((record) => [record.key, record])).values()];
}

/** Exact key text from the identity fields. */
function keyFields(fields: readonly string[], record: Record<string, unknown>): string {
  return fields.map((name) => jsonScalarToString(record[name]) ?? '').join(':');
}

/** JSON with sorted keys, so field order on the wire does not change a content hash. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isRecord(value) && !(value instanceof LosslessNumber)) {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`)
      .join(',')}}`;
  }
  return stringifyJsonLossless(value);
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (value instanceof LosslessNumber || typeof value === 'bigint' || typeof value === 'number') return `the number ${String(value)}`;
  if (typeof value === 'string') return `"${value.length > 40 ? `${value.slice(0, 40)}…` : value}"`;
  return typeof value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
