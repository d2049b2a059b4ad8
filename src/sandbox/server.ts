import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ADMIN_PREFIX, handleAdmin } from './admin.ts';
import { SandboxApiError } from './api-error.ts';
import { findEndpoint } from './endpoint-table.ts';
import { errorOutcome, ExchangePipeline, JSON_TYPE, makeOutcome, readParams, type Outcome } from './exchange-pipeline.ts';
import { FaultInjector, type FaultLevel } from './faults.ts';
import type { SandboxExchange, SandboxScale } from './model.ts';
import type { BoundsMode } from './paging.ts';
import { SlidingWindows } from './rate-window.ts';
import { RequestLog, type RequestLogEntry } from './request-log.ts';
import { SandboxState } from './sandbox-state.ts';
import { stringifyWire } from './wire-json.ts';

export type { RequestLogEntry } from './request-log.ts';

/** Options of the sandbox exchange. */
export interface SandboxOptions {
  /** Address to listen on. @default '127.0.0.1' */
  host?: string;
  /** TCP port; 0 picks a free one. @default 0 */
  port?: number;
  /** Prebuilt data; otherwise generated from seed/scale/accounts/endMs with generateExchange. */
  exchange?: SandboxExchange;
  /** Generator seed (without `exchange`). @default the generator's default */
  seed?: number;
  /** Generator scale (without `exchange`). @default the generator's default */
  scale?: SandboxScale;
  /** Number of accounts (without `exchange`). @default the generator's default */
  accounts?: number;
  /** End of the generated history, exclusive (without `exchange`). @default the generator's default */
  endMs?: number;
  /** Injected failures: light ~2%, heavy ~20% of exchange requests. @default 'none' */
  faults?: FaultLevel;
  /** Weight per window per endpoint for /api/v2 (spot and rebate), per IP and separately per UID. @default 500 */
  spotQuota?: number;
  /** Weight per window per endpoint for /capi/v2, per IP and separately per UID. @default 1000 */
  futuresQuota?: number;
  /** Sliding rate-limit window, ms. @default 10000 */
  windowMs?: number;
  /** How history endpoints treat their start/end time bounds. @default 'inclusive' */
  bounds?: BoundsMode;
  /**
   * Meaning of transferRecords' cursors. 'documented': after = older than, before = newer
   * than; 'reversed' swaps them (the newer API documents the opposite). @default 'documented'
   */
  transferCursor?: 'documented' | 'reversed';
  /** If set, history older than now minus this many days is gone, and asking for it answers 40704. @default null */
  historyHorizonDays?: number | null;
  /** The server clock is Date.now() + clockSkewMs. @default 0 */
  clockSkewMs?: number;
  /**
   * Late records: one spot fill in ten (chosen by its id, isLateSpotFill) is published this many
   * ms after its time, and hidden until the visibility horizon (visible-until) reaches that
   * moment, as records an exchange books late. A client that read up to a moment before finds it
   * when it reads that window again (its lookback). 0: none. @default 0
   */
  lateSpotFillsMs?: number;
  /** Also append each request log entry to this file as a JSON line. */
  requestLogFile?: string;
  /** Seed of the fault PRNG. @default the exchange's seed */
  faultSeed?: number;
  /** [min, max] delay of a 'slow' fault, ms (shorten it in tests). @default [1000, 4000] */
  slowFaultMs?: readonly [number, number];
}

/** A running sandbox. */
export interface RunningSandbox {
  /** `http://HOST:PORT`, the root of both /api/v2 and /capi/v2. */
  url: string;
  exchange: SandboxExchange;
  /** Every exchange request so far, in the order answered (the live list). */
  requestLog: RequestLogEntry[];
  /** Hides records with t > ms (tests use it to let "a new day arrive"). */
  setVisibleUntil(ms: number): void;
  clearRequestLog(): void;
  close(): Promise<void>;
}

/** Largest request body accepted. */
const MAX_BODY_BYTES = 1 << 20;

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error('request body too large'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * Generates the data. Loaded on demand: a sandbox over a prebuilt exchange (most tests) never
 * loads the generator.
 */
async function generate(options: SandboxOptions): Promise<SandboxExchange> {
  const { generateExchange } = await import('./generate.ts');
  return generateExchange({ seed: options.seed, scale: options.scale, accounts: options.accounts, endMs: options.endMs });
}

/**
 * Starts the sandbox exchange: a real HTTP server over in-memory exchange data that checks
 * signatures, counts weights, pages as the spec says and fails on request. It serves the
 * endpoints of exchange-api.md section 4, the two server-time endpoints and the admin
 * endpoints under /__sandbox/ (see admin.ts).
 */
export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const exchange = options.exchange ?? (await generate(options));
  const settings = {
    faults: options.faults ?? 'none',
    spotQuota: options.spotQuota ?? 500,
    futuresQuota: options.futuresQuota ?? 1000,
    windowMs: options.windowMs ?? 10_000,
    bounds: options.bounds ?? 'inclusive',
    transferCursor: options.transferCursor ?? 'documented',
    historyHorizonDays: options.historyHorizonDays ?? null,
    clockSkewMs: options.clockSkewMs ?? 0,
    lateSpotFillsMs: options.lateSpotFillsMs ?? 0,
    slowFaultMs: options.slowFaultMs ?? ([1000, 4000] as const),
  };
  const state = new SandboxState(exchange, settings);
  const pipeline = new ExchangePipeline(
    state,
    new SlidingWindows(settings.windowMs),
    new FaultInjector(settings.faults, options.faultSeed ?? exchange.seed, settings.slowFaultMs),
    settings,
  );
  const log = new RequestLog(options.requestLogFile);
  const timers = new Set<NodeJS.Timeout>();

  async function handleRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const arrivedAt = Date.now();
    const at = state.now();
    const url = req.url ?? '/';
    const queryAt = url.indexOf('?');
    // The path and query exactly as sent: the signature covers them verbatim (exchange-notes.md "Signing").
    const path = queryAt < 0 ? url : url.slice(0, queryAt);
    const rawQuery = queryAt < 0 ? '' : url.slice(queryAt + 1);
    const rawBody = await readBody(req);
    if (path.startsWith(ADMIN_PREFIX)) {
      handleAdmin({ state, log, settings }, req, res, path, rawBody);
      return;
    }
    const method = req.method ?? '';
    const endpoint = findEndpoint(method, path);
    let outcome: Outcome;
    let params: Record<string, unknown> = {};
    if (endpoint === undefined) {
      outcome = errorOutcome(new SandboxApiError(404, '40404', 'Request URL NOT FOUND'), at);
    } else {
      const read = readParams(endpoint, rawQuery, rawBody);
      params = read.params.raw;
      try {
        outcome = pipeline.decide({ req, endpoint, path, rawQuery, rawBody }, read.params, read.bodyError);
      } catch (error) {
        // A bug in the sandbox (or the generator), not an exchange behaviour: say so.
        const message = error instanceof Error ? error.message : String(error);
        const body = stringifyWire({ code: 'SANDBOX_BUG', msg: `sandbox internal error: ${message}`, requestTime: at, data: null });
        outcome = makeOutcome(500, body, { code: 'SANDBOX_BUG' });
      }
    }

    const deliver = (): void => {
      if (outcome.body === null) {
        req.socket.destroy();
      } else {
        res.writeHead(outcome.status, { 'content-type': outcome.contentType, 'content-length': Buffer.byteLength(outcome.body) });
        res.end(outcome.body);
      }
      log.append({
        at,
        method,
        path,
        endpoint: endpoint?.id ?? 'unknown',
        params,
        uid: outcome.uid,
        ipWeight: outcome.ipWeight,
        uidWeight: outcome.uidWeight,
        status: outcome.status,
        code: outcome.code,
        rows: outcome.rows,
        fault: outcome.fault,
        durationMs: Date.now() - arrivedAt,
      });
    };
    if (outcome.delayMs > 0) {
      const timer = setTimeout(() => {
        timers.delete(timer);
        deliver();
      }, outcome.delayMs);
      timers.add(timer);
    } else {
      deliver();
    }
  }

  const server = createServer((req, res) => {
    handleRequest(req, res).catch(() => {
      // Only reading the body can fail here (too large, or the client went away).
      if (!res.headersSent && !res.destroyed) {
        res.writeHead(413, { 'content-type': JSON_TYPE });
        res.end(stringifyWire({ code: '40017', msg: 'Parameter verification failed: the request body is too large', requestTime: state.now(), data: null }));
      }
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = host.includes(':') ? `[${host}]` : host;

  return {
    url: `http://${shownHost}:${port}`,
    exchange,
    requestLog: log.entries,
    setVisibleUntil(ms: number): void {
      state.visibleUntil = ms;
    },
    clearRequestLog(): void {
      log.clear();
    },
    async close(): Promise<void> {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await log.close();
    },
  };
}
