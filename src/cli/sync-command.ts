import { randomBytes } from 'node:crypto';
import dayjs from 'dayjs';
import utc from 'dayjs/plugin/utc.js';
import { STREAMS } from '../../pipelines/index.ts';
import type { Config } from '../config/config.ts';
import { ConfigError } from '../errors.ts';
import { ExchangeClient } from '../exchange/exchange-client.ts';
import { RateBudget } from '../exchange/rate-budget.ts';
import { validateDeclaration, type StreamDeclaration } from '../extract/stream.ts';
import { ensureRawTables, runSync, type StreamResult } from '../extract/sync.ts';
import { createStagingViews } from '../models/build.ts';
import { Database } from '../store/database.ts';
import { DatabaseLock } from '../store/lock.ts';
import { defineCommand } from './command.ts';
import { configFromArgs, withConfigOptions } from './config-options.ts';
import { EXIT } from './exit-codes.ts';
import { parseDay } from './parse-day.ts';
import { createSyncProgress } from './sync-progress.ts';

dayjs.extend(utc);

/** What a sync is asked for on the command line. */
export interface SyncRequest {
  since?: string;
  until?: string;
  streams?: string;
  spotSymbols?: string;
  fullRefresh?: boolean;
  /** Show progress bars. */
  progress: boolean;
}

/** A finished sync: the results per account and stream. */
export interface SyncOutcome {
  runId: string;
  results: StreamResult[];
  exitCode: number;
}

/**
 * Validates the request, checks the exchange answers with these credentials (before touching
 * the database), takes the database lock and runs the sync.
 */
export async function syncWithConfig(config: Readonly<Config>, request: SyncRequest): Promise<SyncOutcome> {
  for (const stream of STREAMS) validateDeclaration(stream);
  const streams = selectStreams(request.streams);
  const sinceMs = request.since === undefined ? undefined : parseDay('--since', request.since);
  const untilMs = request.until === undefined ? undefined : parseDay('--until', request.until);
  if (sinceMs !== undefined && untilMs !== undefined && sinceMs >= untilMs) throw new ConfigError('--since', `${request.since} is not before --until ${request.until}`);
  const spotSymbols = request.spotSymbols === undefined ? (config.sync.spotSymbols ?? undefined) : parseSymbols(request.spotSymbols);
  if (config.spotBaseUrl === null) throw new ConfigError('EXLEDGER_SPOT_BASE_URL', 'is not set (nor spotBaseUrl in the config file)');
  if (config.contractBaseUrl === null) throw new ConfigError('EXLEDGER_CONTRACT_BASE_URL', 'is not set (nor contractBaseUrl in the config file)');
  if (config.accounts.length === 0) {
    throw new ConfigError('EXLEDGER_API_KEY', 'no account is configured', { hint: 'set EXLEDGER_API_KEY, EXLEDGER_API_SECRET and EXLEDGER_API_PASSPHRASE, or "accounts" in the config file' });
  }

  const budget = new RateBudget(config.budget);
  const clientOptions = { spotBaseUrl: config.spotBaseUrl, contractBaseUrl: config.contractBaseUrl, retry: config.retry, timeoutMs: config.timeoutMs };
  // Preflight: an unreachable address or a refused key fails here, before the database is touched.
  for (const account of config.accounts) {
    await new ExchangeClient({ ...clientOptions, credentials: account, budget }).call('spot.assets');
  }

  const lock = DatabaseLock.acquire(config.db, 'sync');
  const db = await Database.open(config.db, { memoryLimit: config.memoryLimit });
  await prepareDatabase(db);
  const progress = createSyncProgress(request.progress);
  const abort = new AbortController();
  const onSignal = () => abort.abort(new ConfigError('sync', 'interrupted'));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const runId = `${dayjs.utc().format('YYYYMMDDTHHmmss')}-${randomBytes(3).toString('hex')}`;
    const defaultStartMs = config.sync.startDate === null ? dayjs.utc().startOf('day').subtract(365, 'day').valueOf() : parseDay('sync.startDate', config.sync.startDate);
    const results = await runSync(
      {
        runId,
        streams,
        accounts: config.accounts,
        sinceMs,
        untilMs,
        fullRefresh: request.fullRefresh === true,
        spotSymbols,
        quoteCoins: config.sync.quoteCoins,
        defaultStartMs,
        lookbackDays: config.sync.lookbackDays,
        maxWindowDays: config.sync.maxWindowDays,
      },
      { db, budget, client: clientOptions, progress, signal: abort.signal },
    );
    await createStagingViews(db);
    const failed = results.filter((result) => result.status === 'failed').length;
    const exitCode = failed === 0 ? EXIT.ok : failed === results.length ? EXIT.failure : EXIT.partial;
    return { runId, results, exitCode };
  } finally {
    progress.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    db.close();
    lock.release();
    await budget.close();
  }
}

/** Creates every stream's raw table and the staging views over them. */
export async function prepareDatabase(db: Database): Promise<void> {
  await ensureRawTables(db, STREAMS);
  await createStagingViews(db);
}

function selectStreams(list: string | undefined): StreamDeclaration[] {
  if (list === undefined || list.trim() === '') return [...STREAMS];
  const names = list.split(',').map((name) => name.trim()).filter((name) => name !== '');
  const known = new Set(STREAMS.map((stream) => stream.name));
  for (const name of names) {
    if (!known.has(name)) throw new ConfigError('--streams', `unknown stream "${name}"; the streams are ${[...known].join(', ')}`);
  }
  return STREAMS.filter((stream) => names.includes(stream.name));
}

function parseSymbols(list: string): string[] {
  const symbols = list.split(',').map((symbol) => symbol.trim()).filter((symbol) => symbol !== '');
  for (const symbol of symbols) {
    if (!/^[A-Z0-9]+_SPBL$/.test(symbol)) throw new ConfigError('--spot-symbols', `"${symbol}" is not a spot symbol like BTCUSDT_SPBL`);
  }
  return symbols;
}

/** The summary table printed after a sync. */
export function formatSyncSummary(outcome: SyncOutcome): string {
  const header = ['account', 'stream', 'status', 'windows', 'requests', 'weight', 'fetched', 'new rows', 'seconds'];
  const rows = outcome.results.map((result) => [
    result.account,
    result.stream,
    result.status,
    String(result.windows),
    String(result.requests),
    String(result.weight),
    String(result.rowsFetched),
    String(result.rowsInserted),
    (((result.finishedAtMs ?? result.startedAtMs) - result.startedAtMs) / 1000).toFixed(1),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]) => cells.map((cell, column) => (column < 3 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ');
  const out = [`run ${outcome.runId}`, line(header), ...rows.map(line)];
  for (const result of outcome.results) {
    if (result.errorMessage !== null) out.push(`error in ${result.account}/${result.stream}: ${result.errorMessage}`);
    for (const warning of result.warnings) out.push(`note in ${result.account}/${result.stream}: ${warning}`);
  }
  return out.join('\n');
}

/** `exledger sync`. */
export const syncCommand = defineCommand({
  command: 'sync',
  describe: 'Pull new exchange history and snapshots into DuckDB (incremental; safe to kill and rerun)',
  builder: (yargs) =>
    withConfigOptions(yargs)
      .option('since', { type: 'string', describe: 'Backfill from this day (YYYY-MM-DD, UTC) instead of each stream\'s cursor' })
      .option('until', { type: 'string', describe: 'Read up to this day (YYYY-MM-DD, UTC, exclusive) [default: now]' })
      .option('streams', { type: 'string', describe: `Only these streams, comma-separated: ${STREAMS.map((stream) => stream.name).join(', ')}` })
      .option('spot-symbols', { type: 'string', describe: 'Spot symbols to read, comma-separated (e.g. BTCUSDT_SPBL) [default: discovered]' })
      .option('full-refresh', { type: 'boolean', default: false, describe: 'Forget what was synced for the chosen streams and start over' })
      .option('json', { type: 'boolean', default: false, describe: 'Print the result per stream as JSON instead of a table' }),
  handler: async (args) => {
    const config = configFromArgs(args);
    const outcome = await syncWithConfig(config, {
      since: args.since,
      until: args.until,
      streams: args.streams,
      spotSymbols: args.spotSymbols,
      fullRefresh: args.fullRefresh,
      progress: !args.json && process.stdout.isTTY === true,
    });
    console.log(args.json ? JSON.stringify({ runId: outcome.runId, results: outcome.results }, null, 2) : formatSyncSummary(outcome));
    return outcome.exitCode;
  },
});
