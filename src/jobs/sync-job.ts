import { randomBytes } from 'node:crypto';
import dayjs from 'dayjs';
import utc from 'dayjs/plugin/utc.js';
import { ACCOUNT_FIX, BASE_URL_FIX, type Config } from '../config/config.ts';
import { closestName } from '../closest-name.ts';
import { ConfigError } from '../errors.ts';
import { ExchangeClient } from '../exchange/exchange-client.ts';
import { RateBudget } from '../exchange/rate-budget.ts';
import { validateDeclaration, type StreamDeclaration } from '../extract/stream.ts';
import { ensureRawTables, runSync, type StreamResult, type SyncProgress } from '../extract/sync.ts';
import { refreshStaging } from '../models/build.ts';
import { whilePending } from '../pending-work.ts';
import { Database } from '../store/database.ts';
import { DatabaseLock } from '../store/lock.ts';
import { markInterruptedRuns } from '../store/meta-store.ts';
import { readDrift, type SchemaDrift } from '../store/schema-drift.ts';
import { parseDay } from './parse-day.ts';
import { requireDatabaseLocation } from './paths.ts';
import { SyncStateFile } from './sync-state.ts';

dayjs.extend(utc);

/** What a sync is asked for (the command line's flags). */
export interface SyncRequest {
  /** Backfill from this day (YYYY-MM-DD, UTC) instead of each stream's cursor. */
  since?: string;
  /** Read up to this day (YYYY-MM-DD, UTC, exclusive). @default now */
  until?: string;
  /** Comma-separated stream names. @default every stream */
  streams?: string;
  /** Comma-separated spot symbols. @default config sync.spotSymbols, else discovered */
  spotSymbols?: string;
  /** Forget what was synced for the chosen streams and start over. @default false */
  fullRefresh?: boolean;
}

/** Callbacks and controls of a sync. */
export interface SyncHooks {
  /** Told as streams start, advance and finish. */
  progress?: SyncProgress;
  /** Aborted (with an InterruptedError as reason) to stop starting new work; what is committed stays. */
  signal?: AbortSignal;
}

/**
 * How a sync ended: every stream ok; some failed (partial); all failed; or interrupted by a
 * signal (the streams that were running say `interrupted`).
 */
export type SyncStatus = 'ok' | 'partial' | 'failed' | 'interrupted';

/** A finished sync: the results per account and stream. */
export interface SyncOutcome {
  runId: string;
  status: SyncStatus;
  results: StreamResult[];
  /** Runs of earlier syncs found still `running` (their process was killed) and marked interrupted. */
  recoveredRuns: number;
  /**
   * Fields the exchange sent (in this sync or an earlier one) that the chosen streams'
   * declarations do not list, so their staging models do not read them (meta.schema_drift).
   */
  drift: SchemaDrift[];
}

/**
 * The sync job: validates the request, checks that the exchange answers with these
 * credentials (before the database is touched), takes the database lock, and pulls every
 * chosen stream for every account into the database (src/extract).
 */
export async function syncJob(config: Readonly<Config>, streams: readonly StreamDeclaration[], request: SyncRequest, hooks: SyncHooks = {}): Promise<SyncOutcome> {
  for (const stream of streams) validateDeclaration(stream);
  const chosen = selectStreams(streams, request.streams);
  const sinceMs = request.since === undefined ? undefined : parseDay('--since', request.since);
  const untilMs = request.until === undefined ? undefined : parseDay('--until', request.until);
  if (sinceMs !== undefined && untilMs !== undefined && sinceMs >= untilMs) throw new ConfigError('--since', `${request.since} is not before --until ${request.until}`, { hint: 'give a --since day before the --until day (--until is exclusive)' });
  const spotSymbols = request.spotSymbols === undefined ? (config.sync.spotSymbols ?? undefined) : parseSymbols(request.spotSymbols);
  const defaultStartMs = config.sync.startDate === null ? dayjs.utc().startOf('day').subtract(365, 'day').valueOf() : parseDay('sync.startDate', config.sync.startDate);
  if (config.spotBaseUrl === null) throw new ConfigError('EXLEDGER_SPOT_BASE_URL', 'is not set (nor spotBaseUrl in the config file)', { hint: BASE_URL_FIX.spot });
  if (config.contractBaseUrl === null) throw new ConfigError('EXLEDGER_CONTRACT_BASE_URL', 'is not set (nor contractBaseUrl in the config file)', { hint: BASE_URL_FIX.contract });
  if (config.accounts.length === 0) throw new ConfigError('EXLEDGER_API_KEY', 'no account is configured', { hint: ACCOUNT_FIX });
  requireDatabaseLocation(config.db);

  const budget = new RateBudget(config.budget);
  // Stopped by a signal: requests still waiting for weight are dropped at once (they fail, and
  // their windows stay unread), so the sync ends within a request's time, not a budget's.
  const stopWaiting = () => void budget.close(hooks.signal?.reason);
  hooks.signal?.addEventListener('abort', stopWaiting, { once: true });
  try {
    const clientOptions = {
      spotBaseUrl: config.spotBaseUrl,
      contractBaseUrl: config.contractBaseUrl,
      retry: config.retry,
      timeoutMs: config.timeoutMs,
      deadlineMs: config.deadlineMs,
      maxResponseBytes: config.maxResponseBytes,
      signal: hooks.signal,
    };
    // Preflight: an unreachable address or a refused key fails here, before the database is touched.
    await whilePending('sync: checking that the exchange answers (spot.assets)', async () => {
      for (const account of config.accounts) {
        await new ExchangeClient({ ...clientOptions, credentials: account, budget }).call('spot.assets');
      }
    });
    hooks.signal?.throwIfAborted();

    const lock = DatabaseLock.acquire(config.db, 'sync');
    const runId = `${dayjs.utc().format('YYYYMMDDTHHmmss')}-${randomBytes(3).toString('hex')}`;
    // What this sync is doing, for `exledger status` (the database is closed to other processes meanwhile).
    const state = new SyncStateFile(config.db, { command: 'sync', runId });
    try {
      const db = await Database.open(config.db, { memoryLimit: config.memoryLimit });
      try {
        await ensureRawTables(db, streams);
        await refreshStaging(db);
        const recoveredRuns = await markInterruptedRuns(db);
        const results = await whilePending(`sync ${runId}: reading ${chosen.length} streams into ${config.db}`, () =>
          runSyncUntilDiskFull(db, () => runSync(
            {
              runId,
              streams: chosen,
              accounts: config.accounts,
              sinceMs,
              untilMs,
              fullRefresh: request.fullRefresh === true,
              spotSymbols,
              quoteCoins: config.sync.quoteCoins,
              defaultStartMs,
              lookbackDays: config.sync.lookbackDays,
              maxWindowDays: config.sync.maxWindowDays,
              commitIntervalMs: config.sync.commitSeconds * 1000,
            },
            { db, budget, client: clientOptions, progress: state.tracking(hooks.progress), signal: hooks.signal },
          )),
        );
        // Stopped by a signal: out as soon as what was read is committed (systemd waits, then
        // kills). The staging views and the drift report are the next sync's to bring up to date.
        const stopped = hooks.signal?.aborted === true;
        if (!stopped) await refreshStaging(db);
        const drift = stopped ? [] : await readDrift(db, chosen, config.accounts.map((account) => account.name));
        // Checkpoint here, not silently at close: a full disk is told now.
        await db.checkpoint();
        return { runId, status: statusOf(results, hooks.signal), results, recoveredRuns, drift };
      } catch (error) {
        // A full disk is one error for the whole sync (every stream would meet it), whatever
        // statement met it first: told here, once.
        if (db.diskFullError !== undefined) throw db.diskFullError.during('syncing', SYNC_KEPT);
        throw error;
      } finally {
        db.close();
      }
    } finally {
      state.remove();
      lock.release();
    }
  } finally {
    hooks.signal?.removeEventListener('abort', stopWaiting);
    await budget.close();
  }
}

/** What a sync stopped by a full disk leaves: each window commits with its cursor. */
const SYNC_KEPT = 'nothing of this sync was lost (every window committed before it is kept, with its cursor; the next sync goes on from there)';

/**
 * Runs the streams; once one of them meets a full disk (each stream fails at its next statement
 * from then on), the sync is that one error, not a failed stream each.
 */
async function runSyncUntilDiskFull(db: Database, work: () => Promise<StreamResult[]>): Promise<StreamResult[]> {
  const results = await work();
  if (db.diskFullError !== undefined) throw db.diskFullError;
  return results;
}

function statusOf(results: readonly StreamResult[], signal: AbortSignal | undefined): SyncStatus {
  if (signal?.aborted === true || results.some((result) => result.status === 'interrupted')) return 'interrupted';
  const failed = results.filter((result) => result.status === 'failed').length;
  return failed === 0 ? 'ok' : failed === results.length ? 'failed' : 'partial';
}

function selectStreams(streams: readonly StreamDeclaration[], list: string | undefined): StreamDeclaration[] {
  if (list === undefined || list.trim() === '') return [...streams];
  const names = list.split(',').map((name) => name.trim()).filter((name) => name !== '');
  const known = new Set(streams.map((stream) => stream.name));
  for (const name of names) {
    if (!known.has(name)) {
      const meant = closestName(name, [...known]);
      throw new ConfigError('--streams', `unknown stream "${name}"${meant === undefined ? '' : ` (did you mean ${meant}?)`}; the streams are ${[...known].join(', ')}`, { hint: `give stream names from that list, comma-separated, e.g. --streams ${meant ?? 'spot_fills,futures_fills'}` });
    }
  }
  return streams.filter((stream) => names.includes(stream.name));
}

function parseSymbols(list: string): string[] {
  const symbols = list.split(',').map((symbol) => symbol.trim()).filter((symbol) => symbol !== '');
  for (const symbol of symbols) {
    if (!/^[A-Z0-9]+_SPBL$/.test(symbol)) throw new ConfigError('--spot-symbols', `"${symbol}" is not a spot symbol like BTCUSDT_SPBL`, { hint: 'give upper-case exchange symbols, comma-separated, e.g. --spot-symbols BTCUSDT_SPBL,ETHUSDT_SPBL' });
  }
  return symbols;
}
