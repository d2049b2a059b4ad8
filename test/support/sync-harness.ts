import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { STREAMS } from '../../pipelines/index.ts';
import { syncJob, type SyncOutcome, type SyncRequest } from '../../src/jobs/sync-job.ts';
import { resolveConfig } from '../../src/config/config.ts';
import { Database } from '../../src/store/database.ts';
import type { RunningSandbox } from '../../src/sandbox/server.ts';
import { tempDir } from './temp-dir.ts';

/** A working folder with a config file pointing exledger at a sandbox, budget lifted unless told otherwise. */
export interface SyncWorkspace {
  dir: string;
  db: string;
  env: Record<string, string>;
}

const DAY = 86_400_000;

/** Creates a temp workspace for syncing `sandbox`'s first account (or `accounts`). */
export function createWorkspace(sandbox: RunningSandbox, options: { budget?: object; lookbackDays?: number; accounts?: number[] } = {}): SyncWorkspace {
  const dir = tempDir('exledger-sync-');
  const db = path.join(dir, 'exledger.duckdb');
  const startDate = new Date(sandbox.exchange.startMs).toISOString().slice(0, 10);
  const accounts = (options.accounts ?? [0]).map((index) => {
    const account = sandbox.exchange.accounts[index]!;
    return { name: `acct${index}`, apiKey: account.apiKey, secret: account.secret, passphrase: account.passphrase };
  });
  writeFileSync(
    path.join(dir, 'exledger.config.json'),
    JSON.stringify({
      spotBaseUrl: sandbox.url,
      contractBaseUrl: sandbox.url,
      accounts,
      budget: options.budget ?? { spot: { quota: 1_000_000, windowMs: 1000 }, contract: { quota: 1_000_000, windowMs: 1000 } },
      retry: { retries: 12, minTimeoutMs: 10, maxTimeoutMs: 200 },
      timeoutMs: 2_000,
      sync: { startDate, lookbackDays: options.lookbackDays ?? 1 },
    }),
  );
  return { dir, db, env: { EXLEDGER_DB: db } };
}

/** Runs one sync in-process, up to the sandbox's end of history unless `until` is given. */
export function syncOnce(workspace: SyncWorkspace, sandbox: RunningSandbox, request: Partial<SyncRequest> = {}): Promise<SyncOutcome> {
  const config = resolveConfig({}, workspace.env, workspace.dir);
  const until = new Date(sandbox.exchange.endMs).toISOString().slice(0, 10);
  return syncJob(config, STREAMS, { until, ...request });
}

/** Opens a database file read-only for one query, then closes it (after every writer let go of it). */
export async function queryDatabase<T = Record<string, unknown>>(file: string, sql: string): Promise<T[]> {
  const db = await Database.open(file, { readOnly: true });
  try {
    return await db.all<T>(sql);
  } finally {
    db.close();
  }
}

/** Opens the workspace's database for a query, then closes it. */
export function queryWorkspace<T = Record<string, unknown>>(workspace: SyncWorkspace, sql: string): Promise<T[]> {
  return queryDatabase<T>(workspace.db, sql);
}

/** A fingerprint of every data table (raw rows less bookkeeping, cursors): equal fingerprints, equal data. */
export async function fingerprint(workspace: SyncWorkspace): Promise<Record<string, string>> {
  const db = await Database.open(workspace.db, { readOnly: true });
  try {
    const tables = await db.all<{ table_name: string; has_key: boolean }>(
      "SELECT table_name, bool_or(column_name = '_key') AS has_key FROM information_schema.columns WHERE table_schema = 'raw' GROUP BY table_name ORDER BY table_name",
    );
    const out: Record<string, string> = {};
    for (const { table_name: table, has_key: hasKey } of tables) {
      // Snapshots are states at a time, not history: compare their latest state only.
      const columns = hasKey ? '_account, _partition, _key, _event_ms, _record::VARCHAR' : '_account, _partition, _seq, _record::VARCHAR';
      const where = hasKey ? '' : `WHERE _snapshot_at = (SELECT max(_snapshot_at) FROM raw.${table})`;
      const [row] = await db.all<{ n: string; h: string }>(`SELECT count(*) AS n, coalesce(sum(hash(${columns})), 0)::VARCHAR AS h FROM raw.${table} ${where}`);
      out[table] = `${row!.n}:${row!.h}`;
    }
    const [cursors] = await db.all<{ h: string }>("SELECT coalesce(sum(hash(account, stream, partition_key, covered_until_ms, covered_from_ms)), 0)::VARCHAR AS h FROM meta.cursors WHERE stream NOT IN ('currencies','futures_contracts','spot_assets','futures_accounts','spot_open_orders','futures_open_orders')");
    out.cursors = cursors!.h;
    return out;
  } finally {
    db.close();
  }
}

export { DAY };

/**
 * A nightly run: syncs everything up to the day before the sandbox's end, lets that last day
 * arrive, clears the request log and syncs again. Returns the second run and the day it added.
 */
export async function syncNightly(workspace: SyncWorkspace, sandbox: RunningSandbox): Promise<{ nightly: SyncOutcome; newDayStartMs: number }> {
  const { endMs } = sandbox.exchange;
  const newDayStartMs = endMs - DAY;
  sandbox.setVisibleUntil(newDayStartMs - 1);
  await syncOnce(workspace, sandbox, { until: isoDay(newDayStartMs) });
  sandbox.setVisibleUntil(endMs - 1);
  sandbox.clearRequestLog();
  const nightly = await syncOnce(workspace, sandbox, { until: isoDay(endMs) });
  return { nightly, newDayStartMs };
}

/** YYYY-MM-DD of an epoch ms, UTC. */
export function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
