import { createHmac } from 'node:crypto';

/** What a signature covers (exchange-notes.md, "Signing"). */
export interface SignInput {
  /** Epoch ms as sent in ACCESS-TIMESTAMP. */
  timestamp: string;
  method: 'GET' | 'POST';
  /** Full path, e.g. `/api/v2/trade/fills`. */
  requestPath: string;
  /** The query string exactly as sent, without the `?`; empty when there is none. */
  query: string;
  /** The exact body text sent; empty for GET. */
  body: string;
}

/**
 * Computes ACCESS-SIGN: base64(HMAC-SHA256(secret, timestamp + METHOD + requestPath + ("?" + query) + body)).
 * The `?` is part of the pre-hash only when there is a query (exchange-notes.md, "Signing").
 */
export function signRequest(secret: string, input: SignInput): string {
  const prehash = input.timestamp + input.method + input.requestPath + (input.query === '' ? '' : `?${input.query}`) + input.body;
  return createHmac('sha256', secret).update(prehash).digest('base64');
}

/** A query or body parameter value. bigint is kept exact (64-bit ids). */
export type ParamValue = string | number | bigint | boolean | readonly string[];
export type Params = Record<string, ParamValue | undefined>;

/**
 * Builds the query string once, with sorted keys, so the same string is signed and sent.
 * Values are percent-encoded; the exchange's parameters (symbols, numbers, coin names) need none.
 */
export function buildQueryString(params: Params): string {
  return Object.keys(params)
    .filter((key) => params[key] !== undefined)
    .sort()
    .map((key) => `${encodeURIComponent(key)}=${encodeURIComponent(String(params[key]))}`)
    .join('&');
}
