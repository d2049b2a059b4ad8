import type { IncomingMessage } from 'node:http';
import { invalidParameter, SandboxApiError } from './api-error.ts';
import { authenticate, noPermission } from './auth.ts';
import type { EndpointDef } from './endpoint.ts';
import { serverErrorBody, truncateBody, type FaultInjector, type FaultKind } from './faults.ts';
import type { SandboxAccount } from './model.ts';
import { ParamReader } from './params.ts';
import type { SlidingWindows } from './rate-window.ts';
import type { SandboxState } from './sandbox-state.ts';
import { parseBodyLossless, stringifyWire } from './wire-json.ts';

/**
 * What happens to one exchange request, in order:
 * 1. IP budget (per endpoint): over it, 429 and nothing is charged (exchange-notes.md "Rate limits").
 * 2. Fault draw: a reset or 5xx ends here (charged to the IP, never reaching the account).
 * 3. Authentication (exchange-notes.md "Signing") and permission: a failure still costs IP weight.
 * 4. UID budget (per endpoint): over it, 429 and nothing is charged.
 * 5. Charge IP and UID weight; run the handler (a 'malformed' fault on a trading endpoint skips
 *    it, so a garbled answer never hides a placed or canceled order).
 * 6. Wrap the payload in its envelope; a 'malformed' fault truncates a 200, a 'slow' one delays the answer.
 */

/** The budgets in force: weight per window per endpoint, per IP and separately per UID. */
export interface Quotas {
  /** /api/v2 (spot and rebate). */
  spotQuota: number;
  /** /capi/v2. */
  futuresQuota: number;
}

/** How one exchange request is answered, decided before anything is sent. */
export interface Outcome {
  status: number;
  /** null: reset the connection instead of answering. */
  body: string | null;
  contentType: string;
  code: string | null;
  rows: number | null;
  uid: string | null;
  ipWeight: number;
  uidWeight: number;
  fault: FaultKind | null;
  /** Hold the answer back this long (a 'slow' fault). */
  delayMs: number;
}

/** The request as received. */
export interface ExchangeRequest {
  req: IncomingMessage;
  endpoint: EndpointDef;
  path: string;
  rawQuery: string;
  rawBody: Buffer;
}

/** Content type of every JSON answer. */
export const JSON_TYPE = 'application/json; charset=utf-8';

/** An answer with nothing charged and no fault, to which the pipeline adds what happened. */
export function makeOutcome(status: number, body: string | null, details: Partial<Outcome> = {}): Outcome {
  return { status, body, contentType: JSON_TYPE, code: null, rows: null, uid: null, ipWeight: 0, uidWeight: 0, fault: null, delayMs: 0, ...details };
}

/** The error body every group answers a refusal with (exchange-notes.md "Errors"). */
export function errorOutcome(error: SandboxApiError, now: number): Outcome {
  return makeOutcome(error.status, stringifyWire({ code: error.code, msg: error.message, requestTime: now, data: null }), { code: error.code });
}

/** Wraps a payload in its group's envelope (exchange-api.md 2.1). */
function envelope(endpoint: EndpointDef, data: unknown, now: number): { body: string; code: string | null } {
  switch (endpoint.group) {
    case 'spot':
      return { body: stringifyWire({ code: '00000', msg: 'success', requestTime: now, data }), code: '00000' };
    case 'rebate':
      return { body: stringifyWire({ code: '200', data, timestamp: now }), code: '200' };
    case 'futures':
      return { body: stringifyWire(data), code: null };
  }
}

/**
 * The parameters of a request: the query of a GET, the body of a POST (parsed losslessly). An
 * invalid body is remembered and refused with 40017 after authentication, as a server whose
 * auth filter runs first would.
 */
export function readParams(endpoint: EndpointDef, rawQuery: string, rawBody: Buffer): { params: ParamReader; bodyError: SandboxApiError | null } {
  if (endpoint.method === 'GET') return { params: ParamReader.fromQueryString(rawQuery), bodyError: null };
  const text = rawBody.toString('utf8');
  if (text.trim() === '') return { params: ParamReader.fromBody({}), bodyError: null };
  let parsed: unknown;
  try {
    parsed = parseBodyLossless(text);
  } catch {
    return { params: ParamReader.fromBody({}), bodyError: invalidParameter('the request body is not valid JSON') };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { params: ParamReader.fromBody({}), bodyError: invalidParameter('the request body must be a JSON object') };
  }
  return { params: ParamReader.fromBody(parsed as Record<string, unknown>), bodyError: null };
}

/** Decides the answers to exchange requests (see the steps above). */
export class ExchangePipeline {
  private readonly state: SandboxState;
  private readonly windows: SlidingWindows;
  private readonly faults: FaultInjector;
  private readonly quotas: Quotas;

  constructor(state: SandboxState, windows: SlidingWindows, faults: FaultInjector, quotas: Quotas) {
    this.state = state;
    this.windows = windows;
    this.faults = faults;
    this.quotas = quotas;
  }

  /** Decides the answer to one request; changes state only when it runs a trading handler. */
  decide(request: ExchangeRequest, params: ParamReader, bodyError: SandboxApiError | null): Outcome {
    const { req, endpoint } = request;
    const { state, windows } = this;
    const now = state.now();
    // Budgets run on this machine's clock: skew moves the server's clock, not the passing of time.
    const clock = Date.now();
    const quota = endpoint.group === 'futures' ? this.quotas.futuresQuota : this.quotas.spotQuota;
    const ipKey = `${endpoint.id} ip ${req.socket.remoteAddress ?? 'unknown'}`;
    const charged = { uid: null as string | null, ipWeight: 0, uidWeight: 0 };
    const answer = (outcome: Outcome): Outcome => ({ ...outcome, ...charged });
    const chargeIp = (): void => {
      windows.charge(ipKey, endpoint.ipWeight, clock);
      charged.ipWeight = endpoint.ipWeight;
    };
    const tooMany = (): Outcome => answer(errorOutcome(new SandboxApiError(429, '429', 'Too Many Requests'), now));

    if (!windows.fits(ipKey, endpoint.ipWeight, quota, clock)) return tooMany();

    const fault = this.faults.next();
    if (fault?.kind === 'reset') {
      chargeIp();
      return answer(makeOutcome(0, null, { fault: 'reset' }));
    }
    if (fault?.kind === 'server-error') {
      chargeIp();
      const { contentType, body } = serverErrorBody(fault.status, fault.html, now);
      return answer(makeOutcome(fault.status, body, { contentType, fault: 'server-error' }));
    }
    const slow = fault?.kind === 'slow' ? { fault: 'slow' as const, delayMs: fault.delayMs } : { fault: null, delayMs: 0 };

    let account: SandboxAccount | null = null;
    if (endpoint.signed) {
      try {
        account = authenticate(
          { headers: req.headers, method: req.method ?? '', requestPath: request.path, rawQuery: request.rawQuery, rawBody: request.rawBody },
          now,
          (key) => state.accountByKey(key),
        );
        if (endpoint.needsFuturesPermission === true && !account.canReadFutures) throw noPermission();
      } catch (error) {
        if (!(error instanceof SandboxApiError)) throw error;
        chargeIp();
        return answer({ ...errorOutcome(error, now), ...slow });
      }
      charged.uid = account.uid;
    }

    const uidWeight = account === null ? null : endpoint.uidWeight;
    const uidKey = account === null ? '' : `${endpoint.id} uid ${account.uid}`;
    if (uidWeight !== null && !windows.fits(uidKey, uidWeight, quota, clock)) return tooMany();
    chargeIp();
    if (uidWeight !== null) {
      windows.charge(uidKey, uidWeight, clock);
      charged.uidWeight = uidWeight;
    }

    if (fault?.kind === 'malformed' && endpoint.mutating) {
      const placeholder = stringifyWire({ code: '00000', msg: 'success', requestTime: now, data: { orderId: null } });
      return answer(makeOutcome(200, truncateBody(placeholder, fault.cutFraction), { fault: 'malformed' }));
    }
    try {
      if (bodyError !== null) throw bodyError;
      const result = endpoint.handle({ state, account, params, now });
      const { body, code } = envelope(endpoint, result.data, now);
      // A truncated 200 carries nothing usable: no code, no rows.
      if (fault?.kind === 'malformed') return answer(makeOutcome(200, truncateBody(body, fault.cutFraction), { fault: 'malformed' }));
      return answer(makeOutcome(200, body, { code, rows: result.rows, ...slow }));
    } catch (error) {
      if (error instanceof SandboxApiError) return answer({ ...errorOutcome(error, now), ...slow });
      throw error;
    }
  }
}
