import http from 'node:http';
import https from 'node:https';
import { AuthError, ExchangeError, RateLimitError } from '../errors.ts';
import { ENDPOINTS, type EndpointId } from './endpoints.ts';
import { stringifyJsonLossless } from './lossless-json.ts';
import { RateBudget } from './rate-budget.ts';
import { interpretResponse, type RawResponse } from './response.ts';
import { DEFAULT_RETRY, withRetry, type RetryOptions } from './retry.ts';
import { buildQueryString, signRequest, type Params } from './sign.ts';

/** An API key with its secret and passphrase. Never logged, never stored. */
export interface Credentials {
  apiKey: string;
  secret: string;
  passphrase: string;
}

/** Options of an ExchangeClient. */
export interface ExchangeClientOptions {
  /** Root of every /api/v2 path, e.g. `https://api-spot.example.com`. */
  spotBaseUrl: string;
  /** Root of every /capi/v2 path. */
  contractBaseUrl: string;
  /** Needed for every endpoint but the public ones. */
  credentials?: Credentials;
  /** The process's weight budget; share one between clients so they share the IP budget. @default a new RateBudget with the default quotas */
  budget?: RateBudget;
  /** @default DEFAULT_RETRY */
  retry?: Partial<RetryOptions>;
  /** Per-attempt idle timeout: the longest wait for the next byte, ms. @default 15000 */
  timeoutMs?: number;
  /**
   * Per-attempt deadline: the longest an answer may take in all, ms, however steadily it
   * trickles in (the idle timeout alone lets a byte every few seconds hold a run forever).
   * @default DEFAULT_DEADLINE_MS (60000)
   */
  deadlineMs?: number;
  /**
   * The largest answer read, in bytes; a bigger one is dropped unread past this size (memory
   * stays bounded whatever the exchange sends). @default DEFAULT_MAX_RESPONSE_BYTES (16 MiB)
   */
  maxResponseBytes?: number;
  /** The `locale` header. @default 'en-US' */
  locale?: string;
  /** Called after every HTTP attempt (for counters and request logs). */
  onAttempt?: (event: AttemptEvent) => void;
  /**
   * Stops the work (SIGINT, SIGTERM): once aborted, a call makes no further attempt, a retry's
   * backoff ends at once, and the call fails with the signal's reason (an InterruptedError).
   * A request already sent is let finish (within timeoutMs), then dropped.
   */
  signal?: AbortSignal;
}

/** One HTTP attempt, as reported to `onAttempt`. */
export interface AttemptEvent {
  endpoint: EndpointId;
  attempt: number;
  status: number;
  ipWeight: number;
  uidWeight: number;
  durationMs: number;
  /** The error of a failed attempt (its message is free of secrets). */
  error: Error | undefined;
}

/** Counters of one client. */
export interface ClientStats {
  requests: number;
  failedAttempts: number;
  rateLimited: number;
  ipWeight: number;
  uidWeight: number;
}

/** A request ready to send: built and serialized once, signed again per attempt (fresh timestamp). */
interface PreparedRequest {
  endpoint: EndpointId;
  url: string;
  query: string;
  body: string;
}

/**
 * A signed, budgeted, retrying client for the exchange of ../shared/spec/exchange-api.md.
 * `call` returns the unwrapped payload parsed losslessly (see lossless-json.ts).
 */
export class ExchangeClient {
  readonly budget: RateBudget;
  private readonly options: ExchangeClientOptions;
  private readonly retry: RetryOptions;
  private readonly timeoutMs: number;
  private readonly limits: ResponseLimits;
  private readonly uidScope: string;
  private clockOffsetMs = 0;
  private readonly counters: ClientStats = { requests: 0, failedAttempts: 0, rateLimited: 0, ipWeight: 0, uidWeight: 0 };

  constructor(options: ExchangeClientOptions) {
    this.options = options;
    this.budget = options.budget ?? new RateBudget();
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.timeoutMs = options.timeoutMs ?? 15_000;
    this.limits = { idleMs: this.timeoutMs, deadlineMs: options.deadlineMs ?? DEFAULT_DEADLINE_MS, maxBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES };
    // The UID budget is counted per API key; the key is an identifier, not a secret.
    this.uidScope = options.credentials?.apiKey ?? 'public';
  }

  /** Calls an endpoint and returns its payload (the envelope's `data`, or the bare futures body). */
  async call<T = unknown>(endpoint: EndpointId, params: Params = {}): Promise<T> {
    const prepared = this.prepare(endpoint, params);
    let resynced = false;
    return withRetry(
      async (attempt) => {
        try {
          return (await this.budget.run(endpoint, this.uidScope, () => this.send(prepared, attempt))) as T;
        } catch (error) {
          if (error instanceof AuthError && error.code === '40008' && !resynced) {
            // Our clock drifted past the 30 s tolerance: learn the server's time and try once more.
            resynced = true;
            await this.syncClock();
            return (await this.budget.run(endpoint, this.uidScope, () => this.send(prepared, attempt))) as T;
          }
          throw error;
        }
      },
      this.retry,
      async ({ error }) => {
        this.counters.failedAttempts += 1;
        if (error instanceof RateLimitError) {
          this.counters.rateLimited += 1;
          await this.budget.rateLimited(endpoint, this.uidScope);
        }
      },
      this.options.signal,
    );
  }

  /** Asks the exchange for its time and corrects ACCESS-TIMESTAMP by the difference. */
  async syncClock(): Promise<number> {
    const sentAt = Date.now();
    const serverMs = await this.call<unknown>('spot.time');
    const receivedAt = Date.now();
    const server = Number(serverMs);
    if (!Number.isFinite(server)) {
      throw new ExchangeError('spot.time: the exchange time is not a number', { status: 200, code: 'BAD_TIME', endpoint: 'spot.time', isRetryable: false });
    }
    this.clockOffsetMs = server - (sentAt + receivedAt) / 2;
    return this.clockOffsetMs;
  }

  /** The current estimate of server time minus local time, ms. */
  get clockOffset(): number {
    return this.clockOffsetMs;
  }

  stats(): ClientStats {
    return { ...this.counters };
  }

  private prepare(endpoint: EndpointId, params: Params): PreparedRequest {
    const spec = ENDPOINTS[endpoint];
    const root = spec.base === 'spot' ? this.options.spotBaseUrl : this.options.contractBaseUrl;
    const origin = root.replace(/\/+$/, '');
    if (spec.method === 'GET') {
      const query = buildQueryString(params);
      return { endpoint, url: origin + spec.path + (query === '' ? '' : `?${query}`), query, body: '' };
    }
    const defined = Object.fromEntries(Object.entries(params).filter(([, value]) => value !== undefined));
    return { endpoint, url: origin + spec.path, query: '', body: stringifyJsonLossless(defined) };
  }

  private async send(request: PreparedRequest, attempt: number): Promise<unknown> {
    const spec = ENDPOINTS[request.endpoint];
    const headers: Record<string, string> = { 'Content-Type': 'application/json', locale: this.options.locale ?? 'en-US' };
    if (spec.signed) {
      const credentials = this.options.credentials;
      if (credentials === undefined) {
        throw new AuthError(`${request.endpoint} needs API credentials and none are configured`, {
          status: 0,
          code: 'NO_CREDENTIALS',
          endpoint: request.endpoint,
          hint: 'set EXLEDGER_API_KEY, EXLEDGER_API_SECRET and EXLEDGER_API_PASSPHRASE',
        });
      }
      const timestamp = String(Math.round(Date.now() + this.clockOffsetMs));
      headers['ACCESS-KEY'] = credentials.apiKey;
      headers['ACCESS-PASSPHRASE'] = credentials.passphrase;
      headers['ACCESS-TIMESTAMP'] = timestamp;
      headers['ACCESS-SIGN'] = signRequest(credentials.secret, { timestamp, method: spec.method, requestPath: spec.path, query: request.query, body: request.body });
    }

    const startedAt = Date.now();
    let status = 0;
    let error: Error | undefined;
    this.counters.requests += 1;
    this.counters.ipWeight += spec.ipWeight;
    this.counters.uidWeight += spec.uidWeight ?? 0;
    try {
      const raw = await this.fetchText(request, spec.method, headers);
      status = raw.status;
      const payload = interpretResponse(request.endpoint, spec, raw, (text) => this.redact(text));
      if (payload.serverTimeMs !== undefined) {
        // Passive clock tracking: every spot/rebate envelope carries the server's time, so the
        // offset stays right without extra requests. Half the round trip is the best estimate.
        this.clockOffsetMs = payload.serverTimeMs - (startedAt + Date.now()) / 2;
      }
      return payload.data;
    } catch (caught) {
      error = caught as Error;
      throw caught;
    } finally {
      this.options.onAttempt?.({
        endpoint: request.endpoint,
        attempt,
        status,
        ipWeight: spec.ipWeight,
        uidWeight: spec.uidWeight ?? 0,
        durationMs: Date.now() - startedAt,
        error,
      });
    }
  }

  private async fetchText(request: PreparedRequest, method: 'GET' | 'POST', headers: Record<string, string>): Promise<RawResponse> {
    const where = `${request.endpoint} (${method} ${ENDPOINTS[request.endpoint].path})`;
    try {
      return await sendHttp(request.url, method, headers, method === 'POST' ? request.body : undefined, this.limits);
    } catch (error) {
      throw transportError(request.endpoint, where, error, this.timeoutMs);
    }
  }

  /** Removes any credential that an exchange message might echo back. */
  private redact(text: string): string {
    const credentials = this.options.credentials;
    if (credentials === undefined) return text;
    let out = text;
    for (const secret of [credentials.secret, credentials.passphrase, credentials.apiKey]) {
      if (secret.length > 0) out = out.split(secret).join('[redacted]');
    }
    return out;
  }
}

/**
 * Keep-alive agents shared by every client: node:http costs a fraction of fetch's CPU per
 * request, which matters when a sync makes thousands of them.
 */
const AGENTS = { 'http:': new http.Agent({ keepAlive: true, maxSockets: 64 }), 'https:': new https.Agent({ keepAlive: true, maxSockets: 64 }) };

/**
 * A minute for one answer in all: a full page of the largest endpoint is a few hundred KB,
 * served in well under a second; a minute leaves room for a slow link and still frees a run
 * that an exchange (or a proxy) holds with a trickle.
 */
export const DEFAULT_DEADLINE_MS = 60_000;
/**
 * 16 MiB for one answer: a full page is at most a few hundred KB (100 records of about 1 KB);
 * sixteen times the largest page ever seen in the notes' samples is still far below anything
 * that strains memory, with every request of a sync in flight at once.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/** The bounds of one answer. */
interface ResponseLimits {
  idleMs: number;
  deadlineMs: number;
  maxBytes: number;
}

class TimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

/** The answer was bigger than the client reads. */
class TooLargeError extends Error {
  override readonly name = 'TooLargeError';
}

/** One HTTP exchange: the status and the whole body as text, within the limits. */
function sendHttp(url: string, method: 'GET' | 'POST', headers: Record<string, string>, body: string | undefined, limits: ResponseLimits): Promise<RawResponse> {
  const target = new URL(url);
  const transport = target.protocol === 'https:' ? https : http;
  return new Promise((resolveAnswer, rejectAnswer) => {
    // The callback runs long after `outgoing` exists.
    const deadline = setTimeout(() => outgoing.destroy(new TimeoutError(`the answer took longer than ${limits.deadlineMs} ms in all`)), limits.deadlineMs);
    const resolve = (answer: RawResponse) => (clearTimeout(deadline), resolveAnswer(answer));
    const reject = (error: unknown) => (clearTimeout(deadline), rejectAnswer(error));
    const outgoing = transport.request(
      target,
      { method, headers: body === undefined ? headers : { ...headers, 'Content-Length': String(Buffer.byteLength(body)) }, agent: AGENTS[target.protocol as 'http:' | 'https:'] },
      (response) => {
        const tooLarge = () => outgoing.destroy(new TooLargeError(`the answer is larger than ${limits.maxBytes} bytes`));
        if (Number(response.headers['content-length'] ?? 0) > limits.maxBytes) return tooLarge();
        const chunks: Buffer[] = [];
        let bytes = 0;
        response.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (bytes > limits.maxBytes) tooLarge();
          else chunks.push(chunk);
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', reject);
        response.on('aborted', () => reject(Object.assign(new Error('response aborted'), { code: 'ECONNRESET' })));
      },
    );
    outgoing.setTimeout(limits.idleMs, () => outgoing.destroy(new TimeoutError(`no answer within ${limits.idleMs} ms`)));
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** Network failures: resets and timeouts are retried; an address that cannot be reached is final. */
function transportError(endpoint: EndpointId, where: string, error: unknown, timeoutMs: number): ExchangeError {
  const name = (error as { name?: string }).name;
  if (error instanceof TimeoutError) return new ExchangeError(`${where}: ${error.message}`, { status: 0, code: 'TIMEOUT', endpoint, isRetryable: true, cause: error });
  if (error instanceof TooLargeError) {
    return new ExchangeError(`${where}: ${error.message} (maxResponseBytes); dropped unread`, { status: 0, code: 'TOO_LARGE', endpoint, isRetryable: true, cause: error });
  }
  if (name === 'AbortError') {
    return new ExchangeError(`${where}: no answer within ${timeoutMs} ms`, { status: 0, code: 'TIMEOUT', endpoint, isRetryable: true, cause: error });
  }
  const code = findErrorCode(error);
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ERR_INVALID_URL' || code === 'EHOSTUNREACH') {
    return new ExchangeError(`${where}: cannot reach the exchange (${code})`, {
      status: 0,
      code,
      endpoint,
      isRetryable: false,
      hint: 'check EXLEDGER_SPOT_BASE_URL / EXLEDGER_CONTRACT_BASE_URL and the network',
      cause: error,
    });
  }
  return new ExchangeError(`${where}: the connection failed (${code ?? 'network error'})`, { status: 0, code: code ?? 'NETWORK', endpoint, isRetryable: true, cause: error });
}

function findErrorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
