import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { SandboxApiError } from './api-error.ts';
import type { SandboxAccount } from './model.ts';

/**
 * Request authentication as exchange-notes.md "Signing" describes it:
 * ACCESS-SIGN = base64(HMAC_SHA256(secret, timestamp + METHOD + requestPath + ("?" + query) + body)),
 * over the query string exactly as sent and the body's exact bytes, with a 30 s tolerance on
 * ACCESS-TIMESTAMP. Error messages name headers, never their values.
 */

/** How far ACCESS-TIMESTAMP may be from server time (exchange-notes.md "Signing"). */
export const TIMESTAMP_TOLERANCE_MS = 30_000;

/** The headers of exchange-api.md section 5, and the names the exchange's messages use for them (samples/_errors_v2.json). */
const REQUIRED_HEADERS = [
  ['access-key', 'ACCESS_KEY'],
  ['access-sign', 'ACCESS_SIGN'],
  ['access-timestamp', 'ACCESS_TIMESTAMP'],
  ['access-passphrase', 'ACCESS_PASSPHRASE'],
] as const;

/** What a signature covers, as received. */
export interface SignedRequest {
  headers: IncomingHttpHeaders;
  method: string;
  /** The path exactly as sent, e.g. `/api/v2/trade/fills`. */
  requestPath: string;
  /** The query string exactly as sent, without `?`; '' when there is none. */
  rawQuery: string;
  /** The body bytes exactly as received. */
  rawBody: Buffer;
}

/** The signature a client should have sent (base64 HMAC-SHA256 over the pre-hash string). */
export function expectedSignature(secret: string, timestamp: string, request: Omit<SignedRequest, 'headers'>): string {
  const head = timestamp + request.method.toUpperCase() + request.requestPath + (request.rawQuery === '' ? '' : `?${request.rawQuery}`);
  return createHmac('sha256', secret).update(Buffer.from(head, 'utf8')).update(request.rawBody).digest('base64');
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  const text = Array.isArray(value) ? value[0] : value;
  return text === undefined || text === '' ? undefined : text;
}

/**
 * Checks the authentication headers and returns the caller's account. Throws, in this order:
 * 40001 a header is missing (400), 40006 unknown key (401), 40008 timestamp not an integer or
 * more than 30 s from server time (401), 40012 wrong passphrase (401), 40009 bad signature (401).
 */
export function authenticate(request: SignedRequest, nowMs: number, findAccount: (apiKey: string) => SandboxAccount | undefined): SandboxAccount {
  const values: Record<string, string> = {};
  for (const [name, shown] of REQUIRED_HEADERS) {
    const value = header(request.headers, name);
    if (value === undefined) throw new SandboxApiError(400, '40001', `Header "${shown}" is required`);
    values[name] = value;
  }
  const account = findAccount(values['access-key'] as string);
  if (account === undefined) throw new SandboxApiError(401, '40006', 'Invalid ACCESS_KEY');
  const timestamp = values['access-timestamp'] as string;
  if (!/^\d{1,16}$/.test(timestamp) || Math.abs(Number(timestamp) - nowMs) > TIMESTAMP_TOLERANCE_MS) {
    throw new SandboxApiError(401, '40008', 'Invalid ACCESS_TIMESTAMP: the request time is more than 30 seconds away from server time');
  }
  if (!safeEqual(values['access-passphrase'] as string, account.passphrase)) throw new SandboxApiError(401, '40012', 'Incorrect API key or passphrase');
  const expected = expectedSignature(account.secret, timestamp, request);
  if (!safeEqual(values['access-sign'] as string, expected)) throw new SandboxApiError(401, '40009', 'Signature verification failed');
  return account;
}

/** 40014 for an endpoint the key has no permission for (exchange-api.md 4.16: futures read). */
export function noPermission(): SandboxApiError {
  return new SandboxApiError(403, '40014', 'Incorrect permissions: this API key may not read futures data');
}

function safeEqual(given: string, expected: string): boolean {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}
