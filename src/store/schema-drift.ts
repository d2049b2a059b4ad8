import { declaredPaths, type JsonType, type UndeclaredField } from '../extract/schema-drift.ts';
import type { StreamDeclaration } from '../extract/stream.ts';
import type { Database } from './database.ts';

/**
 * meta.schema_drift: per account, stream and field path, the fields the exchange sent that the
 * declaration did not list when they came, when first and last seen, and a value's JSON type
 * (never the value). Written in the transaction of the rows that carried them (raw-store.ts).
 * What is reported is read against the current declaration, so a field the declaration now
 * lists drops out of every report by itself.
 */

/** One undeclared field of one stream, as reported. */
export interface SchemaDrift {
  account: string;
  stream: string;
  /** `rebateTier`, or `collateral[].cum_bonus_amount` inside a declared shape. */
  field: string;
  /** The JSON type of the value last seen (never the value). */
  jsonType: JsonType;
  firstSeenAt: string;
  firstSeenRunId: string;
  lastSeenAt: string;
  lastSeenRunId: string;
}

/**
 * Records undeclared fields seen in a batch of run `runId`; for a caller inside the transaction
 * that stores the batch's rows, so both commit together or not at all.
 */
export async function recordDrift(db: Database, account: string, stream: string, runId: string, fields: readonly UndeclaredField[]): Promise<void> {
  for (const field of fields) {
    await db.run(
      `INSERT INTO meta.schema_drift VALUES ($1, $2, $3, $4, $5, now(), $5, now())
       ON CONFLICT (account, stream, field_path) DO UPDATE SET json_type = $4, last_seen_run_id = $5, last_seen_at = now()`,
      [account, stream, field.path, field.jsonType, runId],
    );
  }
}

/**
 * The undeclared fields recorded for these streams that their declarations still do not list,
 * oldest first (read-only; an older database without the table has none).
 */
export async function readDrift(db: Database, streams: readonly (Pick<StreamDeclaration, 'name' | 'fields'> & Partial<Pick<StreamDeclaration, 'knownFields'>>)[], accounts?: readonly string[]): Promise<SchemaDrift[]> {
  const exists = await db.all("SELECT 1 FROM information_schema.tables WHERE table_schema = 'meta' AND table_name = 'schema_drift'");
  if (exists.length === 0) return [];
  const rows = await db.all<{ account: string; stream: string; field_path: string; json_type: JsonType; first_ms: string; first_run: string; last_ms: string; last_run: string }>(
    `SELECT account, stream, field_path, json_type, epoch_ms(first_seen_at) AS first_ms, first_seen_run_id AS first_run, epoch_ms(last_seen_at) AS last_ms, last_seen_run_id AS last_run
     FROM meta.schema_drift ORDER BY account, stream, first_seen_at, field_path`,
  );
  const declared = new Map(streams.map((stream) => [stream.name, declaredPaths(stream)]));
  return rows
    .filter((row) => declared.get(row.stream)?.has(row.field_path) === false && (accounts === undefined || accounts.includes(row.account)))
    .map((row) => ({
      account: row.account,
      stream: row.stream,
      field: row.field_path,
      jsonType: row.json_type,
      firstSeenAt: new Date(Number(row.first_ms)).toISOString(),
      firstSeenRunId: row.first_run,
      lastSeenAt: new Date(Number(row.last_ms)).toISOString(),
      lastSeenRunId: row.last_run,
    }));
}
