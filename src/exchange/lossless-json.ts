import { LosslessNumber, parse, stringify } from 'lossless-json';

/**
 * JSON numbers as exledger reads them: safe integers become `number`, integers beyond 2^53
 * become `bigint` (futures tradeId/orderId, exchange-notes.md "Numbers"), and every other number
 * stays a LosslessNumber holding the exact text, so no amount is ever rounded through a double.
 */
export function parseNumber(text: string): number | bigint | LosslessNumber {
  if (/^-?\d+$/.test(text)) {
    const asNumber = Number(text);
    return Number.isSafeInteger(asNumber) ? asNumber : BigInt(text);
  }
  return new LosslessNumber(text);
}

/**
 * A bare JSON number that a double may not hold exactly: 16 or more digits, a fraction or an
 * exponent. Bare numbers follow `:`, `,` or `[`; a match inside a string only costs the slow path.
 */
const UNSAFE_NUMBER = /[:,[]\s*-?(?:\d{16,}|\d+[.eE])/;

/**
 * Parses JSON text without losing any digit of any number. Throws SyntaxError on invalid JSON.
 * Most payloads carry amounts as strings and ids that fit a double: those take the native
 * parser; the rest (bare 64-bit ids, bare decimals) take lossless-json.
 */
export function parseJsonLossless(text: string): unknown {
  return UNSAFE_NUMBER.test(text) ? parse(text, null, parseNumber) : JSON.parse(text);
}

/** Serializes a value written by parseJsonLossless (or holding bigint) back to exact JSON text. */
export function stringifyJsonLossless(value: unknown): string {
  // The native serializer is exact for everything but bigint (it throws) and LosslessNumber (it
  // writes the object, with its marker field); those take lossless-json.
  try {
    const text = JSON.stringify(value);
    if (text !== undefined && !text.includes('"isLosslessNumber":true')) return text;
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
  }
  const lossless = stringify(value);
  if (lossless === undefined) throw new TypeError('value cannot be serialized to JSON');
  return lossless;
}

/** The exact decimal text of a JSON scalar read by parseJsonLossless (ids, amounts, times). */
export function jsonScalarToString(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (value instanceof LosslessNumber) return value.toString();
  return null;
}
