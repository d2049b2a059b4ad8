import { LosslessNumber } from 'lossless-json';
import { AuthError, DataError, ExchangeError, RateLimitError } from '../errors.ts';
import type { EndpointId, EndpointSpec } from './endpoints.ts';
import { parseJsonLossless } from './lossless-json.ts';

/**
 * Turns an HTTP answer into the payload or a typed error (exchange-api.md 2.1 and 7,
 * exchange-notes.md "Errors").
 */

/** Success codes: spot "00000", rebate "200"; some futures POSTs answer either (exchange-notes.md "Errors"). */
const SUCCESS_CODES = new Set(['00000', '200']);

/** Codes for credentials, signature, clock and permission: retrying never helps (exchange-notes.md "Errors"). */
const AUTH_CODES: Record<string, string> = {
  '40001': 'a required authentication header is missing',
  '40006': 'the API key is invalid',
  '40008': 'the request timestamp is too far from server time',
  '40009': 'the signature check failed (wrong API secret?)',
  '40012': 'the API key or passphrase is wrong',
  '40014': 'the API key lacks permission for this endpoint',
};

const AUTH_HINTS: Record<string, string> = {
  '40001': 'set EXLEDGER_API_KEY, EXLEDGER_API_SECRET and EXLEDGER_API_PASSPHRASE (or the account in the config file)',
  '40006': 'check EXLEDGER_API_KEY (or the account apiKey in the config file)',
  '40008': "check this machine's clock (exledger corrects for skew using the exchange's time)",
  '40009': 'check EXLEDGER_API_SECRET (or the account secret in the config file)',
  '40012': 'check EXLEDGER_API_KEY and EXLEDGER_API_PASSPHRASE',
  '40014': 'give the API key read permission for this product, or leave its streams out',
};

/** The parts of an HTTP answer the interpreter needs. */
export interface RawResponse {
  status: number;
  text: string;
}

/** A successfully unwrapped answer. */
export interface Payload {
  data: unknown;
  /** Server time reported in the envelope (spot requestTime, rebate timestamp), if any. */
  serverTimeMs: number | undefined;
}

/**
 * Interprets one answer. Throws ExchangeError (or a subclass) for a refused request and
 * DataError for a body that breaks the envelope contract.
 */
export function interpretResponse(endpoint: EndpointId, spec: EndpointSpec, response: RawResponse, redact: (text: string) => string): Payload {
  const where = `${endpoint} (${spec.method} ${spec.path})`;
  let body: unknown;
  try {
    body = parseJsonLossless(response.text);
  } catch (error) {
    throw errorForUnparsable(endpoint, where, response.status, error);
  }

  // Codes are strings ("00000", "200"); a number is read as its digits all the same.
  const envelope: Record<string, unknown> | undefined =
    isRecord(body) && (typeof body.code === 'string' || typeof body.code === 'number') ? { ...body, code: String(body.code) } : undefined;
  const code = envelope?.code as string | undefined;
  const message = envelope !== undefined && typeof envelope.msg === 'string' ? redact(envelope.msg) : undefined;

  if (response.status === 429 || code === '429') {
    throw new RateLimitError(`${where}: over the exchange's rate limit (HTTP 429)`, { endpoint });
  }
  if (response.status < 200 || response.status >= 300) {
    throw errorForCode(endpoint, where, response.status, code, message);
  }

  if (spec.envelope === 'none') {
    // Futures endpoints have no envelope; a `code` alone is no error (some answer "00000"/"200"
    // on success). An object that is only an error envelope with another code is an error.
    if (envelope !== undefined && !SUCCESS_CODES.has(envelope.code as string) && isOnlyEnvelope(envelope)) {
      throw errorForCode(endpoint, where, response.status, code, message);
    }
    return { data: body, serverTimeMs: undefined };
  }

  if (envelope === undefined) {
    throw new DataError(`${where}: the response has no envelope code (expected the ${spec.envelope} envelope of exchange-api.md 2.1)`, { endpoint });
  }
  const expected = spec.envelope === 'spot' ? '00000' : '200';
  if (code !== expected) {
    throw errorForCode(endpoint, where, response.status, code, message);
  }
  if (!('data' in envelope)) {
    throw new DataError(`${where}: the response envelope has no "data" field`, { endpoint });
  }
  const timeField = spec.envelope === 'spot' ? envelope.requestTime : envelope.timestamp;
  return { data: envelope.data, serverTimeMs: toMillis(timeField) };
}

function errorForUnparsable(endpoint: EndpointId, where: string, status: number, cause: unknown): ExchangeError {
  if (status === 429) return new RateLimitError(`${where}: over the exchange's rate limit (HTTP 429)`, { endpoint });
  if (status === 521) return ipNotWhitelisted(endpoint, where);
  if (status >= 500) {
    return new ExchangeError(`${where}: the exchange answered HTTP ${status}`, { status, code: `HTTP_${status}`, endpoint, isRetryable: true, cause });
  }
  if (status >= 200 && status < 300) {
    // A truncated or garbled body: the request itself was fine, so asking again helps.
    return new ExchangeError(`${where}: the response body is not valid JSON`, { status, code: 'MALFORMED_BODY', endpoint, isRetryable: true, cause });
  }
  return new ExchangeError(`${where}: the exchange answered HTTP ${status} with a body that is not JSON`, {
    status,
    code: `HTTP_${status}`,
    endpoint,
    isRetryable: false,
    hint: 'check the base URL (EXLEDGER_SPOT_BASE_URL / EXLEDGER_CONTRACT_BASE_URL)',
    cause,
  });
}

function errorForCode(endpoint: EndpointId, where: string, status: number, code: string | undefined, message: string | undefined): ExchangeError {
  const detail = message === undefined ? '' : `: "${message}"`;
  if (status === 521) return ipNotWhitelisted(endpoint, where);
  if (code !== undefined && code in AUTH_CODES) {
    return new AuthError(`${where} was refused: ${AUTH_CODES[code]} (exchange code ${code}${detail})`, { status, code, endpoint, hint: AUTH_HINTS[code] });
  }
  if (status === 401 || status === 403) {
    return new AuthError(`${where} was refused: not authorised (HTTP ${status}, exchange code ${code ?? 'none'}${detail})`, {
      status,
      code: code ?? `HTTP_${status}`,
      endpoint,
      hint: 'check the API key, secret, passphrase and the key permissions',
    });
  }
  const isRetryable = status >= 500;
  return new ExchangeError(`${where} failed: exchange code ${code ?? 'none'}${detail} (HTTP ${status})`, {
    status,
    code: code ?? `HTTP_${status}`,
    endpoint,
    isRetryable,
  });
}

function ipNotWhitelisted(endpoint: EndpointId, where: string): AuthError {
  return new AuthError(`${where} was refused: this machine's IP address is not whitelisted for the API key (HTTP 521)`, {
    status: 521,
    code: 'HTTP_521',
    endpoint,
    hint: "add this machine's public IP to the API key's whitelist",
  });
}

function isOnlyEnvelope(body: Record<string, unknown>): boolean {
  return Object.keys(body).every((key) => key === 'code' || key === 'msg' || key === 'requestTime' || key === 'data');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function toMillis(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && /^\d+$/.test(value)) return Number(value);
  if (value instanceof LosslessNumber) return Number(value.toString());
  return undefined;
}
