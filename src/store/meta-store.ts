import { recordRawChange } from './raw-store.ts';
import type { Database } from './database.ts';

/** Reads and writes the bookkeeping in schema `meta` (cursors, runs, learned facts). */

/** The covered period of one (account, stream, partition). */
export interface Cursor {
  coveredFromMs: number;
  coveredUntilMs: number;
}

/** One stream's outcome in one run, as meta.runs stores it. */
export interface RunRecord {
  runId: string;
  account: string;
  stream: string;
  startedAtMs: number;
  finishedAtMs: number | null;
  /** `interrupted`: stopped by a signal, or found still `running` by a later sync (its process was killed). */
  status: 'running' | 'ok' | 'failed' | 'skipped' | 'interrupted';
  requests: number;
  weight: number;
  rowsFetched: number;
  rowsInserted: number;
  windows: number;
  errors: number;
  errorMessage: string | null;
}

export async function readCursor(db: Database, account: string, stream: string, partition: string): Promise<Cursor | null> {
  const rows = await db.all<{ covered_from_ms: string; covered_until_ms: string }>(
    'SELECT covered_from_ms, covered_until_ms FROM meta.cursors WHERE account = $1 AND stream = $2 AND partition_key = $3',
    [account, stream, partition],
  );
  const row = rows[0];
  return row === undefined ? null : { coveredFromMs: Number(row.covered_from_ms), coveredUntilMs: Number(row.covered_until_ms) };
}

/** Forgets a stream for an account: its raw rows and cursors (for --full-refresh), in one transaction. */
export async function resetStream(db: Database, account: string, stream: string, table: string): Promise<void> {
  await db.transaction(async () => {
    await db.run(`DELETE FROM raw.${table} WHERE _account = $1`, [account]);
    await db.run('DELETE FROM meta.cursors WHERE account = $1 AND stream = $2', [account, stream]);
    await recordRawChange(db, { account, table, kind: 'reset', rows: 0 });
  });
}

/** Inserts or replaces one stream's run record. */
export async function writeRun(db: Database, run: RunRecord): Promise<void> {
  await db.transaction(async () => {
    await db.run(
      `INSERT OR REPLACE INTO meta.runs VALUES ($1, $2, $3, make_timestamptz($4 * 1000), CASE WHEN $5 IS NULL THEN NULL ELSE make_timestamptz($5 * 1000) END,
        $6, $7, $8, $9, $10, $11, $12, $13, CASE WHEN $5 IS NULL THEN NULL ELSE $5 - $4 END)`,
      [
        run.runId,
        run.account,
        run.stream,
        run.startedAtMs,
        run.finishedAtMs,
        run.status,
        run.requests,
        run.weight,
        run.rowsFetched,
        run.rowsInserted,
        run.windows,
        run.errors,
        run.errorMessage,
      ],
    );
  });
}

/** Facts learned about the exchange for one account (see fetch-window.ts ExchangeFacts). */
export async function readFacts(db: Database, account: string): Promise<Record<string, string>> {
  const rows = await db.all<{ fact: string; value: string }>('SELECT fact, value FROM meta.facts WHERE account = $1', [account]);
  return Object.fromEntries(rows.map((row) => [row.fact, row.value]));
}

export async function writeFacts(db: Database, account: string, facts: Record<string, string>): Promise<void> {
  await db.transaction(async () => {
    for (const [fact, value] of Object.entries(facts)) {
      await db.run('INSERT OR REPLACE INTO meta.facts VALUES ($1, $2, $3, now())', [account, fact, value]);
    }
  });
}

/**
 * Marks the runs still `running` as `interrupted`. Called under the sync lock, when no other
 * sync can be running: such a row is left by a process that was killed (SIGKILL, a power cut)
 * before it could record how its stream ended. Its committed windows stay. Returns how many.
 */
export async function markInterruptedRuns(db: Database): Promise<number> {
  return db.run(
    `UPDATE meta.runs SET status = 'interrupted',
       error_message = coalesce(error_message, 'the process ended before this stream finished (killed or crashed); what it committed stays')
     WHERE status = 'running'`,
  );
}

/** One fact to set, or to forget (value null). */
export interface FactChange {
  account: string;
  fact: string;
  value: string | null;
}

/** Sets and forgets facts of any accounts, in one transaction. */
export async function changeFacts(db: Database, changes: readonly FactChange[]): Promise<void> {
  await db.transaction(async () => {
    for (const { account, fact, value } of changes) {
      if (value === null) await db.run('DELETE FROM meta.facts WHERE account = $1 AND fact = $2', [account, fact]);
      else await db.run('INSERT OR REPLACE INTO meta.facts VALUES ($1, $2, $3, now())', [account, fact, value]);
    }
  });
}
