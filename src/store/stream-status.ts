import type { StreamDeclaration } from '../extract/stream.ts';
import type { Database } from './database.ts';
import { readDrift, type SchemaDrift } from './schema-drift.ts';

/** One stream's state for one account. */
export interface StreamStatus {
  account: string;
  stream: string;
  rows: number;
  partitions: number;
  /** The oldest instant every partition is read up to (ISO 8601 UTC), or null before the first sync. */
  coveredUntil: string | null;
  coveredFrom: string | null;
  /** When the stream's last run started (ISO 8601 UTC). */
  lastRunAt: string | null;
  lastStatus: string | null;
  lastError: string | null;
  /**
   * Fields the exchange sent that the declaration does not list (its staging model does not read
   * them), oldest first; empty when the declaration was not given.
   */
  newFields: Omit<SchemaDrift, 'account' | 'stream'>[];
}

/** Reads the status of these streams from the database (read-only). */
export async function readStatus(db: Database, streams: readonly (Pick<StreamDeclaration, 'name' | 'kind'> & Partial<Pick<StreamDeclaration, 'fields' | 'knownFields'>>)[]): Promise<StreamStatus[]> {
  const tables = new Set((await db.all<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'raw'")).map((row) => row.table_name));
  const statuses: StreamStatus[] = [];
  const declared = streams.flatMap((stream) => (stream.fields === undefined ? [] : [{ name: stream.name, fields: stream.fields, knownFields: stream.knownFields }]));
  const drift = await readDrift(db, declared);
  const accounts = (await db.all<{ account: string }>('SELECT DISTINCT account FROM meta.runs UNION SELECT DISTINCT account FROM meta.cursors ORDER BY 1')).map((row) => row.account);
  for (const account of accounts) {
    for (const stream of streams) {
      const rows = tables.has(stream.name)
        ? Number((await db.all<{ n: string }>(`SELECT count(*) AS n FROM raw.${stream.name} WHERE _account = $1 AND ${stream.kind === 'snapshot' ? '_seq >= 0' : 'true'}`, [account]))[0]!.n)
        : 0;
      const cursor = (
        await db.all<{ partitions: string; until_ms: string | null; from_ms: string | null }>(
          'SELECT count(*) AS partitions, min(covered_until_ms) AS until_ms, max(covered_from_ms) AS from_ms FROM meta.cursors WHERE account = $1 AND stream = $2',
          [account, stream.name],
        )
      )[0]!;
      const lastRun = (
        await db.all<{ started_ms: string; status: string; error_message: string | null }>(
          'SELECT epoch_ms(started_at) AS started_ms, status, error_message FROM meta.runs WHERE account = $1 AND stream = $2 ORDER BY started_at DESC LIMIT 1',
          [account, stream.name],
        )
      )[0];
      statuses.push({
        account,
        stream: stream.name,
        rows,
        partitions: Number(cursor.partitions),
        coveredUntil: cursor.until_ms === null ? null : new Date(Number(cursor.until_ms)).toISOString(),
        coveredFrom: cursor.from_ms === null ? null : new Date(Number(cursor.from_ms)).toISOString(),
        lastRunAt: lastRun === undefined ? null : new Date(Number(lastRun.started_ms)).toISOString(),
        // A run still marked running was killed before it finished: its committed windows stay.
        lastStatus: lastRun === undefined ? null : lastRun.status === 'running' ? 'interrupted' : lastRun.status,
        lastError: lastRun?.error_message ?? null,
        newFields: drift.filter((entry) => entry.account === account && entry.stream === stream.name).map(({ account: _account, stream: _stream, ...field }) => field),
      });
    }
  }
  return statuses;
}
