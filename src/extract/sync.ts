import dayjs from 'dayjs';
import utc from 'dayjs/plugin/utc.js';
import type { AccountConfig } from '../config/config.ts';
import { DataError, ExchangeError, ExledgerError, InterruptedError } from '../errors.ts';
import { ExchangeClient, type ExchangeClientOptions } from '../exchange/exchange-client.ts';
import type { RateBudget } from '../exchange/rate-budget.ts';
import { stringifyJsonLossless } from '../exchange/lossless-json.ts';
import type { Database } from '../store/database.ts';
import { readCursor, readFacts, resetStream, writeFacts, writeRun, type RunRecord } from '../store/meta-store.ts';
import { ensureHistoryTable, ensureSnapshotTable, writeHistoryWindow, writeSnapshot } from '../store/raw-store.ts';
import { fetchHistoryWindow, fetchSnapshot, type ExchangeFacts, type FetchContext } from './fetch-window.ts';
import { rememberLearnedRates } from './learned-rates.ts';
import { mapConcurrently } from './map-concurrently.ts';
import { discoverSpotSymbols, partitionsOf, type Partition } from './partitions.ts';
import { toRawRecords, type RawRecord } from './records.ts';
import { collectUndeclared, type JsonType } from './schema-drift.ts';
import type { HistoryStream, StreamDeclaration } from './stream.ts';
import { splitDays, splitWindows, type TimeWindow } from './windows.ts';

dayjs.extend(utc);

const DAY_MS = 86_400_000;
/** meta.facts key prefix of a discovered spot pair the exchange does not list. */
const MISSING_SYMBOL = 'missing_spot_symbol:';
/** Commit once this many rows are read, or this many windows, whichever comes first. */
const COMMIT_ROWS = 5_000;
const COMMIT_WINDOWS = 31;
/**
 * ...or once this long has passed since the partition's last commit, ms: a run killed at any
 * instant keeps what it read until a few seconds before (issue 11: runs killed after 7 to 35 s
 * at a binding budget had committed nothing, their windows still short of the thresholds above).
 */
export const DEFAULT_COMMIT_INTERVAL_MS = 5_000;
/** Windows of one partition read at the same time. */
const FETCH_AHEAD = 8;

/** What a sync is asked to do. */
export interface SyncPlan {
  runId: string;
  streams: readonly StreamDeclaration[];
  accounts: readonly AccountConfig[];
  /** Backfill from here (epoch ms) instead of the cursor. */
  sinceMs?: number;
  /** Read up to here (epoch ms, exclusive). @default now */
  untilMs?: number;
  /** Forget what was synced and start over (from sinceMs or defaultStartMs). */
  fullRefresh: boolean;
  /** Spot symbols to use instead of discovery. */
  spotSymbols?: readonly string[];
  /** Quote coins for symbol discovery. */
  quoteCoins: readonly string[];
  /** Where a history starts when nothing was synced yet (epoch ms). */
  defaultStartMs: number;
  /** Days re-read before each cursor to catch late records. */
  lookbackDays: number;
  /** Longest window in days, inside any reading of the exchange's 3-month range cap (config sync.maxWindowDays). */
  maxWindowDays: number;
  /**
   * Longest a partition goes without committing what it read, ms: consecutive windows are
   * committed together (up to 5,000 rows or 31 windows), but once this long has passed since the
   * partition's last commit, the windows read so far are committed at once (a window read slowly
   * is committed as soon as it is read).
   * @default DEFAULT_COMMIT_INTERVAL_MS (5000)
   */
  commitIntervalMs?: number;
}

/** Everything a sync runs with. */
export interface SyncEnvironment {
  db: Database;
  budget: RateBudget;
  client: Omit<ExchangeClientOptions, 'credentials' | 'budget' | 'onAttempt'>;
  progress?: SyncProgress;
  /** Stop starting new work (Ctrl-C); what is committed stays. */
  signal?: AbortSignal;
}

/** Receives progress: a stream has n windows in all, one more is done. */
export interface SyncProgress {
  start(account: string, stream: string, total: number): void;
  /**
   * `windows` more windows are done, holding `rows` rows; for a history stream, committed up to
   * `committedUntilMs` (the end of the last of them, epoch ms) in one of its partitions.
   */
  advance(account: string, stream: string, rows: number, windows: number, committedUntilMs?: number): void;
  finish(account: string, stream: string, result: StreamResult): void;
}

/** One stream's result for one account. */
export interface StreamResult extends RunRecord {
  warnings: string[];
}

/**
 * Runs a sync: for each account, every stream, each partition, each window; each window's rows
 * and cursor commit together. Streams run concurrently (each endpoint has its own weight
 * budget); a stream's failure is reported in its result and does not stop the others. The
 * budget starts at the rates remembered in meta.facts, and each rate it learns is remembered
 * there (learned-rates.ts). The raw tables of every stream must exist (ensureRawTables).
 */
export async function runSync(plan: SyncPlan, env: SyncEnvironment): Promise<StreamResult[]> {
  // Rates the exchange taught earlier runs (429s) are where this one starts; what it learns is
  // written at once, for the run after it.
  const rates = await rememberLearnedRates(env.db, env.budget, plan.accounts);
  try {
    const results = await Promise.all(plan.accounts.map((account) => syncAccount(plan, env, account)));
    return results.flat();
  } finally {
    await rates.close();
  }
}

/** Creates the raw tables of these streams (symbol discovery reads some of them even when their streams are not selected). */
export async function ensureRawTables(db: Database, streams: readonly StreamDeclaration[]): Promise<void> {
  for (const stream of streams) {
    if (stream.kind === 'history') await ensureHistoryTable(db, stream);
    else await ensureSnapshotTable(db, stream);
  }
}

async function syncAccount(plan: SyncPlan, env: SyncEnvironment, account: AccountConfig): Promise<StreamResult[]> {
  const storedFacts = await readFacts(env.db, account.name);
  const facts: ExchangeFacts = {
    transferOlderThan: storedFacts.transferOlderThan === 'after' || storedFacts.transferOlderThan === 'before' ? storedFacts.transferOlderThan : undefined,
    futuresEndInclusive: storedFacts.futuresEndInclusive === undefined ? undefined : storedFacts.futuresEndInclusive === 'true',
  };
  const nowMs = plan.untilMs ?? Date.now();
  // Discovered pairs the exchange answered 40102 for: not asked again for 30 days.
  const missingSymbols = new Map(
    Object.entries(storedFacts)
      .filter(([fact, learned]) => fact.startsWith(MISSING_SYMBOL) && Date.now() - Date.parse(learned) < 30 * DAY_MS)
      .map(([fact, learned]) => [fact.slice(MISSING_SYMBOL.length), learned]),
  );
  const results = new Map<string, Promise<StreamResult>>();
  // Symbol discovery reads what these streams stored in this run, so it waits for them.
  const discoveryInputs = ['currencies', 'spot_assets', 'funding_bills'];
  let symbolsPromise: Promise<readonly string[]> | undefined;
  const spotSymbols = () => {
    symbolsPromise ??= (async () => {
      if (plan.spotSymbols !== undefined) return plan.spotSymbols;
      await Promise.all(discoveryInputs.map((name) => results.get(name)).filter((result) => result !== undefined));
      const discovered = await discoverSpotSymbols(env.db, account.name, plan.quoteCoins);
      return discovered.filter((symbol) => !missingSymbols.has(symbol));
    })();
    return symbolsPromise;
  };
  const onMissingSymbol = (symbol: string) => {
    if (plan.spotSymbols === undefined) missingSymbols.set(symbol, new Date().toISOString());
  };
  for (const stream of plan.streams) results.set(stream.name, syncStream(plan, env, account, stream, facts, nowMs, spotSymbols, onMissingSymbol));
  const settled = await Promise.all([...results.values()]);
  const learned: Record<string, string> = {};
  for (const [fact, value] of Object.entries(facts)) if (value !== undefined) learned[fact] = String(value);
  for (const [symbol, at] of missingSymbols) learned[`${MISSING_SYMBOL}${symbol}`] = at;
  await writeFacts(env.db, account.name, learned);
  return settled;
}

async function syncStream(
  plan: SyncPlan,
  env: SyncEnvironment,
  account: AccountConfig,
  stream: StreamDeclaration,
  facts: ExchangeFacts,
  nowMs: number,
  spotSymbols: () => Promise<readonly string[]>,
  onMissingSymbol: (symbol: string) => void,
): Promise<StreamResult> {
  const startedAtMs = Date.now();
  const result: StreamResult = {
    runId: plan.runId,
    account: account.name,
    stream: stream.name,
    startedAtMs,
    finishedAtMs: null,
    status: 'running',
    requests: 0,
    weight: 0,
    rowsFetched: 0,
    rowsInserted: 0,
    windows: 0,
    errors: 0,
    errorMessage: null,
    warnings: [],
  };
  await writeRun(env.db, result);
  const client = new ExchangeClient({
    ...env.client,
    credentials: account,
    budget: env.budget,
    onAttempt: (attempt) => {
      result.requests += 1;
      result.weight += Math.max(attempt.ipWeight, attempt.uidWeight);
      if (attempt.error !== undefined) result.errors += 1;
    },
  });
  let contractSymbols: Promise<readonly string[]> | undefined;
  const context = (partition: Partition): FetchContext => ({
    client,
    partitionParams: partition.params,
    facts,
    futuresSymbols: () => (contractSymbols ??= loadContractSymbols(env.db, client)),
    warn: (message) => result.warnings.push(message),
  });
  try {
    if (plan.fullRefresh) await resetStream(env.db, account.name, stream.name, stream.name);
    const partitions = stream.partitions.kind === 'spot-symbols' ? partitionsOf(stream.partitions, await spotSymbols()) : partitionsOf(stream.partitions, []);
    // Discovery waits for other streams: stopped meanwhile, it found nothing because they were
    // stopped, and this stream is stopped too (not "ok, no symbols to read").
    env.signal?.throwIfAborted();
    if (partitions.length === 0) {
      result.warnings.push('no spot symbols to read: discovery found none (sync currencies, spot_assets and funding_bills first) and none are configured (sync.spotSymbols, --spot-symbols)');
    }
    if (stream.kind === 'snapshot') {
      env.progress?.start(account.name, stream.name, partitions.length);
      for (const partition of partitions) {
        env.signal?.throwIfAborted();
        const records = await skipUnknownSymbol(partition, onMissingSymbol, () => fetchSnapshot(stream, context(partition))).catch((error: unknown) => {
          throw refusedData(error, `this snapshot${partition.key === '' ? '' : ` (${partition.key})`}`, 'the previous snapshot stays the latest');
        });
        if (records === null) continue;
        const rows = records.map((record) => stringifyJsonLossless(record));
        result.rowsFetched += rows.length;
        const undeclared = new Map<string, JsonType>();
        collectUndeclared(stream, records, undeclared);
        const stored = await writeSnapshot(env.db, {
          table: stream.name,
          account: account.name,
          partition: partition.key,
          stream: stream.name,
          runId: plan.runId,
          takenAtMs: Date.now(),
          records: rows,
          undeclared: undeclaredList(undeclared),
        });
        result.rowsInserted += stored;
        result.windows += 1;
        env.progress?.advance(account.name, stream.name, rows.length, 1);
      }
    } else {
      const work: { partition: Partition; windows: TimeWindow[] }[] = [];
      for (const partition of partitions) work.push({ partition, windows: await planWindows(plan, env.db, account.name, stream, partition.key, nowMs) });
      env.progress?.start(account.name, stream.name, work.reduce((sum, item) => sum + item.windows.length, 0));
      // Partitions run side by side so the endpoint's budget stays busy; windows of one
      // partition run in order, so its cursor only ever moves over a gap-free period.
      const commitIntervalMs = plan.commitIntervalMs ?? DEFAULT_COMMIT_INTERVAL_MS;
      await mapConcurrently(work, 4, async ({ partition, windows }) => {
        // Consecutive windows are committed together while they are small (a day of referral
        // totals is a handful of rows; a commit per day would be bound by the disk, not the API),
        // but work read is not held back once commitIntervalMs have passed since the last commit.
        let pending: { records: RawRecord[]; span: TimeWindow; count: number; undeclared: Map<string, JsonType> } | null = null;
        let committedAtMs = Date.now();
        const flush = async () => {
          if (pending === null) return;
          const { records, span, count, undeclared } = pending;
          pending = null;
          committedAtMs = Date.now();
          // Read the count first: `total += await …` would read `total` before the await and
          // lose the updates of partitions running beside this one.
          const inserted = await writeHistoryWindow(env.db, {
            table: stream.name,
            account: account.name,
            partition: partition.key,
            stream: stream.name,
            runId: plan.runId,
            records,
            window: span,
            replaceWindow: stream.identity.kind === 'window-key',
            undeclared: undeclaredList(undeclared),
          });
          result.rowsInserted += inserted;
          result.windows += count;
          env.progress?.advance(account.name, stream.name, records.length, count, span.endMs);
        };
        // Waits for a window's records; meanwhile commits the windows already read once they are
        // due, so a slow window does not hold back those before it.
        const readInTime = async <T>(fetching: Promise<T>): Promise<T> => {
          for (;;) {
            if (pending === null) return fetching;
            const dueInMs = committedAtMs + commitIntervalMs - Date.now();
            if (dueInMs <= 0) {
              await flush();
              continue;
            }
            let timer: NodeJS.Timeout | undefined;
            const due = new Promise<'due'>((resolve) => (timer = setTimeout(() => resolve('due'), dueInMs)));
            try {
              if ((await Promise.race([fetching.then(() => 'read' as const), due])) === 'read') return fetching;
            } finally {
              clearTimeout(timer);
            }
          }
        };
        // Read up to FETCH_AHEAD windows at once (cursor-paged endpoints are sequential within a
        // window), but commit strictly in window order so the cursor never skips a gap. The
        // window whose turn it is must not wait behind those read ahead of it (they all wait on
        // one endpoint budget): each request ranks by how far ahead of the turn its window is.
        let turn = 0;
        const fetches: Promise<Record<string, unknown>[] | null>[] = [];
        const fetchAt = (index: number) => {
          const window = windows[index];
          if (window !== undefined && fetches[index] === undefined) {
            const fetching = env.budget.ranked(
              () => index - turn,
              () =>
                skipUnknownSymbol(partition, onMissingSymbol, () =>
                  fetchWithinHorizon(stream, window, context(partition), (startMs) => {
                    result.warnings.push(`${partition.key || 'all'}: history before ${new Date(startMs).toISOString()} is beyond what the exchange keeps (40704); read from there`);
                    window.startMs = startMs;
                  }),
                ).catch((error: unknown) => {
                  throw refusedData(error, `the window ${new Date(window.startMs).toISOString()} to ${new Date(window.endMs).toISOString()}${partition.key === '' ? '' : ` (${partition.key})`}`, 'its cursor stays before it, so the next run reads it again');
                }),
            );
            // Failures are handled when the window's turn comes; do not let them go unobserved.
            fetching.catch(() => undefined);
            fetches[index] = fetching;
          }
        };
        try {
          for (const [index, window] of windows.entries()) {
            env.signal?.throwIfAborted();
            turn = index;
            // The first window alone: a partition that fails at once (an unlisted pair) costs one request.
            for (let ahead = index; ahead < index + (index === 0 ? 1 : FETCH_AHEAD); ahead += 1) fetchAt(ahead);
            const records = await readInTime(fetches[index]!);
            if (records === null) break;
            const raw = toRawRecords(stream, records, window.startMs);
            result.rowsFetched += raw.length;
            if (pending === null) pending = { records: raw, span: { ...window }, count: 1, undeclared: new Map() };
            else {
              pending.records.push(...raw);
              pending.span.endMs = window.endMs;
              pending.count += 1;
            }
            // Fields the declaration does not list commit with the rows that carried them.
            collectUndeclared(stream, records, pending.undeclared);
            if (pending.records.length >= COMMIT_ROWS || pending.count >= COMMIT_WINDOWS || Date.now() - committedAtMs >= commitIntervalMs) await flush();
          }
        } catch (error) {
          // The windows read before a failure or a stop are complete and gap-free: keep them.
          // The stream still fails with the first error, whatever the commit does.
          await flush().catch(() => undefined);
          throw error;
        }
        await flush();
      });
    }
    result.status = 'ok';
  } catch (error) {
    if (env.signal?.aborted === true) {
      // Stopped by a signal: not a failure of the stream; the next sync continues from its
      // cursor. Whatever the stop made fail on its way (a request dropped by the budget, a
      // backoff cut short) is the stop, told by its reason ("interrupted by SIGTERM").
      result.status = 'interrupted';
      result.errorMessage = interruptionOf(env.signal).message;
    } else {
      result.status = 'failed';
      result.errorMessage = error instanceof ExledgerError ? error.message : `unexpected: ${(error as Error).message}`;
      if (!(error instanceof ExledgerError)) result.warnings.push((error as Error).stack ?? '');
    }
  }
  result.finishedAtMs = Date.now();
  await writeRun(env.db, result);
  env.progress?.finish(account.name, stream.name, result);
  return result;
}

/** What stopped the sync: the signal's reason (an InterruptedError), or one said in its words. */
function interruptionOf(signal: AbortSignal): ExledgerError {
  return signal.reason instanceof ExledgerError ? signal.reason : new InterruptedError('abort', 'interrupted');
}

function undeclaredList(found: ReadonlyMap<string, JsonType>): { path: string; jsonType: JsonType }[] {
  return [...found].map(([path, jsonType]) => ({ path, jsonType }));
}

/**
 * A response that breaks the contract (a missing field, a value out of range) refuses the whole
 * window or snapshot it belongs to: the error says which, and that nothing of it was stored.
 */
function refusedData(error: unknown, what: string, consequence: string): unknown {
  if (!(error instanceof DataError)) return error;
  return new DataError(`${error.message}; nothing of ${what} was stored and ${consequence}`, {
    endpoint: error.endpoint,
    hint: 'the exchange sent data that breaks its API contract; if it persists, report the record named here to the exchange (docs/operating.md "What the sync refuses")',
    cause: error,
  });
}

/** The windows to read for one partition: from the cursor (less the lookback) or the backfill start, to now. */
async function planWindows(plan: SyncPlan, db: Database, account: string, stream: HistoryStream, partition: string, nowMs: number): Promise<TimeWindow[]> {
  const cursor = plan.fullRefresh ? null : await readCursor(db, account, stream.name, partition);
  const lookbackDays = stream.lookbackDays ?? plan.lookbackDays;
  let start = plan.sinceMs ?? (cursor === null ? plan.defaultStartMs : Math.max(cursor.coveredUntilMs - lookbackDays * DAY_MS, cursor.coveredFromMs));
  let end = stream.window.settleMinutes === undefined ? nowMs : Math.min(nowMs, Date.now() - stream.window.settleMinutes * 60_000);
  if (stream.window.daily === true) {
    // Totals per range: whole UTC days only, never a partial day (it would be re-read with other totals).
    start = dayjs.utc(start).startOf('day').valueOf();
    end = dayjs.utc(end).startOf('day').valueOf();
    return splitDays(start, end);
  }
  return splitWindows(start, end, stream.window.months, plan.maxWindowDays * DAY_MS);
}

/**
 * Reads one window; if the exchange answers 40704 (only recent history is kept,
 * exchange-notes.md "Paging and ordering"), finds the oldest UTC day it still serves by
 * bisection (a handful of requests, once per partition) and reads from there.
 */
async function fetchWithinHorizon(
  stream: HistoryStream,
  window: TimeWindow,
  context: FetchContext,
  onMoved: (startMs: number) => void,
): Promise<Record<string, unknown>[]> {
  try {
    return await fetchHistoryWindow(stream, window, context);
  } catch (error) {
    if (!(error instanceof ExchangeError && error.code === '40704')) throw error;
  }
  let refused = window.startMs;
  let served = window.endMs;
  while (served - refused > DAY_MS) {
    const middle = dayjs.utc(refused + (served - refused) / 2).startOf('day').valueOf();
    if (middle <= refused || middle >= served) break;
    try {
      await fetchHistoryWindow(stream, { startMs: middle, endMs: Math.min(middle + DAY_MS, window.endMs) }, context);
      served = middle;
    } catch (error) {
      if (!(error instanceof ExchangeError && error.code === '40704')) throw error;
      refused = middle;
    }
  }
  onMoved(served);
  return served >= window.endMs ? [] : fetchHistoryWindow(stream, { startMs: served, endMs: window.endMs }, context);
}

/** 40102 (trading pair does not exist) for a symbol partition: skip the partition, not the stream, and remember the pair. */
async function skipUnknownSymbol<T>(partition: Partition, onMissing: (symbol: string) => void, work: () => Promise<T>): Promise<T | null> {
  try {
    return await work();
  } catch (error) {
    const symbol = partition.params.symbol;
    if (error instanceof ExchangeError && error.code === '40102' && typeof symbol === 'string') {
      onMissing(symbol);
      return null;
    }
    throw error;
  }
}

async function loadContractSymbols(db: Database, client: ExchangeClient): Promise<readonly string[]> {
  const stored = await db.all<{ symbol: string }>(
    `SELECT DISTINCT _record->>'symbol' AS symbol FROM raw.futures_contracts
     WHERE _snapshot_at = (SELECT max(_snapshot_at) FROM raw.futures_contracts) AND _seq >= 0 ORDER BY symbol`,
  );
  if (stored.length > 0) return stored.map((row) => row.symbol);
  const live = await client.call<unknown>('futures.contracts');
  return Array.isArray(live) ? live.map((contract) => String((contract as Record<string, unknown>).symbol)) : [];
}
