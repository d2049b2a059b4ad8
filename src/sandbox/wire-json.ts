import { isLosslessNumber, parse } from 'lossless-json';

/**
 * JSON in and out of the sandbox without losing a digit.
 *
 * Futures tradeId/orderId are 64-bit integers sent as bare JSON numbers above 2^53
 * (exchange-notes.md "Numbers"); JSON.stringify cannot write a bigint and JSON.parse rounds
 * one, so the sandbox writes its own JSON and reads request bodies with lossless-json.
 */

/**
 * Serializes a wire value to JSON text. bigint is written as a bare integer, a LosslessNumber
 * (from a parsed request body) as its exact text; `undefined` properties are left out, as
 * JSON.stringify does. Throws TypeError on non-finite numbers, which JSON cannot carry.
 */
export function stringifyWire(value: unknown): string {
  const parts: string[] = [];
  writeValue(value, parts);
  return parts.join('');
}

function writeValue(value: unknown, out: string[]): void {
  if (value === null || value === undefined) {
    out.push('null');
    return;
  }
  switch (typeof value) {
    case 'string':
      out.push(JSON.stringify(value));
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`cannot write the non-finite number ${value} as JSON`);
      out.push(String(value));
      return;
    case 'bigint':
      out.push(value.toString());
      return;
    case 'boolean':
      out.push(value ? 'true' : 'false');
      return;
    default:
      break;
  }
  if (isLosslessNumber(value)) {
    out.push(value.value);
    return;
  }
  if (Array.isArray(value)) {
    out.push('[');
    value.forEach((item, index) => {
      if (index > 0) out.push(',');
      writeValue(item === undefined ? null : item, out);
    });
    out.push(']');
    return;
  }
  if (typeof value === 'object') {
    out.push('{');
    let first = true;
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      if (item === undefined || typeof item === 'function') continue;
      if (!first) out.push(',');
      first = false;
      out.push(JSON.stringify(key), ':');
      writeValue(item, out);
    }
    out.push('}');
    return;
  }
  throw new TypeError(`cannot write a ${typeof value} as JSON`);
}

/**
 * Parses a request body. Every number stays a LosslessNumber holding its exact text, so an
 * orderId sent as a bare 19-digit integer reaches the parameter readers intact.
 * Throws SyntaxError on invalid JSON.
 */
export function parseBodyLossless(text: string): unknown {
  return parse(text);
}
