import type { IncomingMessage, ServerResponse } from 'node:http';
import { isLosslessNumber } from 'lossless-json';
import type { RequestLog } from './request-log.ts';
import type { SandboxState } from './sandbox-state.ts';
import { parseBodyLossless, stringifyWire } from './wire-json.ts';

/**
 * The sandbox's own endpoints under /__sandbox/: no authentication, no weight, not logged,
 * never faulted. They let tests and people look at what the server saw and move its clock of
 * visible history.
 */

/** The path prefix of the admin endpoints. */
export const ADMIN_PREFIX = '/__sandbox/';

/** What the admin endpoints act on. */
export interface AdminContext {
  state: SandboxState;
  log: RequestLog;
  /** The behaviour options in force, for /__sandbox/info. */
  settings: Record<string, unknown>;
}

function send(res: ServerResponse, status: number, payload: unknown): void {
  const body = stringifyWire(payload);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** Record counts and uid of each account. */
function describeAccounts(state: SandboxState): unknown[] {
  return state.exchange.accounts.map((account) => {
    let spotFills = 0;
    for (const fills of account.spotFills.values()) spotFills += fills.length;
    let spotOpenOrders = 0;
    for (const orders of account.spotOpenOrders.values()) spotOpenOrders += orders.length;
    return {
      uid: account.uid,
      canReadFutures: account.canReadFutures,
      counts: {
        spotFills,
        fundingBills: account.fundingBills.length,
        transferRecords: account.transferRecords.length,
        futuresFills: account.futuresFills.length,
        futuresOrders: account.futuresOrders.length,
        spotOpenOrders,
        spotClosedOrders: account.spotOrdersById.size,
        commissions: account.commissions.length,
        referralActivity: account.referralActivity.length,
      },
    };
  });
}

/**
 * Serves one admin request:
 * GET requests (the log), POST requests/clear, POST visible-until {"ms": number | null}
 * (null restores "everything visible"), GET info.
 */
export function handleAdmin(context: AdminContext, req: IncomingMessage, res: ServerResponse, path: string, rawBody: Buffer): void {
  const route = `${req.method ?? ''} ${path.slice(ADMIN_PREFIX.length)}`;
  const { state, log } = context;
  switch (route) {
    case 'GET requests':
      send(res, 200, log.entries);
      return;
    case 'POST requests/clear':
      log.clear();
      send(res, 200, { ok: true });
      return;
    case 'POST visible-until': {
      let ms: unknown;
      try {
        ms = (parseBodyLossless(rawBody.toString('utf8')) as { ms?: unknown } | null)?.ms;
      } catch {
        send(res, 400, { error: 'the body must be JSON: {"ms": <epoch ms> | null}' });
        return;
      }
      if (ms === null) {
        state.visibleUntil = Number.POSITIVE_INFINITY;
      } else if (isLosslessNumber(ms) && Number.isFinite(Number(ms.value))) {
        state.visibleUntil = Number(ms.value);
      } else {
        send(res, 400, { error: 'the body must be JSON: {"ms": <epoch ms> | null}' });
        return;
      }
      send(res, 200, { visibleUntil: Number.isFinite(state.visibleUntil) ? state.visibleUntil : null });
      return;
    }
    case 'GET info': {
      const { exchange } = state;
      send(res, 200, {
        seed: exchange.seed,
        scale: exchange.scale,
        startMs: exchange.startMs,
        endMs: exchange.endMs,
        visibleUntil: Number.isFinite(state.visibleUntil) ? state.visibleUntil : null,
        serverTime: state.now(),
        settings: context.settings,
        spotSymbols: exchange.spotSymbols.map((symbol) => symbol.symbol),
        futuresSymbols: [...state.futuresSymbols],
        accounts: describeAccounts(state),
      });
      return;
    }
    default:
      send(res, 404, { error: `no admin endpoint ${route}` });
  }
}
