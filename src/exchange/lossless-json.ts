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

/** Parses JSON text without losing any digit of any number. Throws SyntaxError on invalid JSON. */
export function parseJsonLossless(text: string): unknown {
  return parse(text, null, parseNumber);
}

/** Serializes a value written by parseJsonLossless (or holding bigint) back to exact JSON text. */
export function stringifyJsonLossless(value: unknown): string {
  const text = stringify(value);
  if (text === undefined) throw new TypeError('value cannot be serialized to JSON');
  return text;
}

/** The exact decimal text of a JSON scalar read by parseJsonLossless (ids, amounts, times). */
export function jsonScalarToString(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (value instanceof LosslessNumber) return value.toString();
  return null;
}
