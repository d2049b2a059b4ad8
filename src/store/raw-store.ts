import { listValue } from '@duckdb/node-api';
import type { UndeclaredField } from '../extract/schema-drift.ts';
import type { FieldSpec, HistoryStream, SnapshotStream, StreamDeclaration } from '../extract/stream.ts';
import { writeComments, type ColumnDescription, type TableDescription } from './comments.ts';
import type { Database } from './database.ts';
import { recordDrift } from './schema-drift.ts';

/**
 * The raw layer: one table per stream, holding each record exactly as the exchange sent it
 * (lossless JSON text, unknown fields included), plus bookkeeping columns. Staging models
 * (sql/staging) are the only readers.
 *
 * History tables: raw.<stream>(_account, _partition, _key, _event_ms, _record, _run_id, _fetched_at),
 * one row per (_account, _key). Snapshot tables: raw.<stream>(_account, _partition, _snapshot_at,
 * _seq, _record, _run_id, _fetched_at), one row set per snapshot time.
 */

/** A window's records with the cursor they complete, written in one transaction. */
export interface HistoryBatch {
  table: string;
  account: string;
  partition: string;
  stream: string;
  runId: string;
  records: readonly { key: string; eventMs: number; json: string }[];
  /** The window now read completely. */
  window: { startMs: number; endMs: number };
  /**
   * Replace what the window held instead of adding to it: for totals per range (referrals),
   * where a re-read carries the current totals, not new events.
   */
  replaceWindow?: boolean;
  /** Fields of these records the declaration does not list, recorded in the same transaction (meta.schema_drift). @default none */
  undeclared?: readonly UndeclaredField[];
}

/** A snapshot's records. */
export interface SnapshotBatch {
  table: string;
  account: string;
  partition: string;
  stream: string;
  runId: string;
  takenAtMs: number;
  records: readonly string[];
  /** Fields of these records the declaration does not list, recorded in the same transaction (meta.schema_drift). @default none */
  undeclared?: readonly UndeclaredField[];
}

/** The record of the marker row that stands for an empty snapshot. */
export const EMPTY_MARKER = '{}';

const created = new WeakMap<Database, Set<string>>();

/** Creates the raw table of a history stream if it does not exist, and describes it (its comments). */
export async function ensureHistoryTable(db: Database, stream: Pick<HistoryStream, 'kind' | 'name' | 'description' | 'endpoint' | 'fields' | 'timeFields' | 'identity' | 'partitions'>): Promise<void> {
  const table = stream.name;
  if (!remember(db, table)) return;
  await db.run(`
    CREATE TABLE IF NOT EXISTS raw.${table} (
      _account VARCHAR NOT NULL,
      _partition VARCHAR NOT NULL,
      _key VARCHAR NOT NULL,
      _event_ms BIGINT NOT NULL,
      _record JSON NOT NULL,
      _run_id VARCHAR NOT NULL,
      _fetched_at TIMESTAMPTZ NOT NULL
    );
    CREATE TEMP TABLE IF NOT EXISTS incoming_${table} (_key VARCHAR, _event_ms BIGINT, _record VARCHAR);
  `);
  await writeComments(db, [rawTableDescription(stream)]);
}

/** Creates the raw table of a snapshot stream if it does not exist, and describes it (its comments). */
export async function ensureSnapshotTable(db: Database, stream: Pick<SnapshotStream, 'kind' | 'name' | 'description' | 'endpoint' | 'fields' | 'partitions'>): Promise<void> {
  const table = stream.name;
  if (!remember(db, table)) return;
  await db.run(`
    CREATE TABLE IF NOT EXISTS raw.${table} (
      _account VARCHAR NOT NULL,
      _partition VARCHAR NOT NULL,
      _snapshot_at TIMESTAMPTZ NOT NULL,
      _seq INTEGER NOT NULL,
      _record JSON NOT NULL,
      _run_id VARCHAR NOT NULL,
      _fetched_at TIMESTAMPTZ NOT NULL
    );
  `);
  await writeComments(db, [rawTableDescription(stream)]);
}

/** What a stream's declaration says of a raw table's columns and records, once for every raw table. */
type RawStream = Pick<StreamDeclaration, 'kind' | 'name' | 'description' | 'endpoint' | 'fields' | 'partitions'> & Partial<Pick<HistoryStream, 'timeFields' | 'identity'>>;

/**
 * A raw table's comments, from its stream's declaration (pipelines/): the table says what the
 * stream is and where it comes from, `_record` lists the declared fields with their types (what
 * the sync checks before storing a record), the bookkeeping columns say what they hold.
 */
export function rawTableDescription(stream: RawStream): TableDescription {
  const fieldList = (fields: readonly FieldSpec[]): string =>
    fields.map((field) => `${field.name} (${field.type}${field.required === false ? ', optional' : ''}${field.shape === undefined ? '' : `: ${field.shape.kind === 'list' ? 'a list of ' : ''}${fieldList(field.shape.fields)}`})`).join(', ');
  const partition: ColumnDescription = {
    name: '_partition',
    description:
      stream.partitions.kind === 'none'
        ? "Partition the record was read in: '' (the stream is not split)"
        : `Partition the record was read in: the request's ${stream.partitions.kind === 'spot-symbols' ? stream.partitions.param : stream.partitions.dimensions.map((dimension) => dimension.param).join(' and ')} (param=value,…)`,
  };
  const common = {
    account: { name: '_account', description: 'Account name of the configuration the record was synced for' },
    record: { name: '_record', description: `The record exactly as the exchange sent it (JSON text: numbers keep every digit, fields not declared are kept); declared fields, as the sync checks them: ${fieldList(stream.fields)}` },
    runId: { name: '_run_id', description: 'Sync run that stored the record (meta.runs.run_id)' },
    fetchedAt: { name: '_fetched_at', description: 'When the sync stored the record', unit: 'UTC' },
  };
  const source = `as the exchange endpoint ${stream.endpoint} sent it`;
  if (stream.kind === 'snapshot') {
    return {
      schema: 'raw',
      table: stream.name,
      description: `${stream.description}, ${source}: the current state, stored as a new snapshot when it changed, one row per record of each snapshot. Only the staging models read it.`,
      columns: [
        common.account,
        partition,
        { name: '_snapshot_at', description: 'When the snapshot was taken', unit: 'UTC' },
        { name: '_seq', description: 'Position of the record in its snapshot, from 0; -1 marks an empty snapshot (its _record is {})', unit: 'count' },
        common.record,
        common.runId,
        common.fetchedAt,
      ],
    };
  }
  const identity = stream.identity;
  const key =
    identity === undefined || identity.kind === 'content-occurrence'
      ? 'the record time, a hash of its content and its occurrence among identical records of that millisecond (the exchange sends no id)'
      : identity.kind === 'key'
        ? `the record's ${identity.fields.join(' and ')}`
        : `the requested range's start (ms since 1970-01-01 UTC) and the record's ${identity.fields.join(' and ')} (totals per range)`;
  const time = (stream.timeFields ?? []).length === 0 ? "the start of the range the exchange totalled it over (the record has no time)" : `its ${stream.timeFields!.join(', else ')}`;
  return {
    schema: 'raw',
    table: stream.name,
    description: `${stream.description}, ${source}: one row per record, a record read again stored once. Only the staging models read it.`,
    columns: [
      common.account,
      partition,
      { name: '_key', description: `Identity of the record within the account: ${key}` },
      { name: '_event_ms', description: `Time of the record: ${time}`, unit: 'ms since 1970-01-01 UTC' },
      common.record,
      common.runId,
      common.fetchedAt,
    ],
  };
}

/**
 * Stores a window's records that are not stored yet and moves the partition's cursor over the
 * window, in one transaction: a sync killed at any instant leaves either both or neither.
 * Returns how many rows were new.
 */
export async function writeHistoryWindow(db: Database, batch: HistoryBatch): Promise<number> {
  return db.exclusive(async () => {
    const incoming = `temp.main.incoming_${batch.table}`;
    await db.run(`DELETE FROM ${incoming}`);
    if (batch.records.length > 0) {
      const appender = await db.connection.createAppender(`incoming_${batch.table}`, 'main', 'temp');
      for (const record of batch.records) {
        appender.appendVarchar(record.key);
        appender.appendBigInt(BigInt(record.eventMs));
        appender.appendVarchar(record.json);
        appender.endRow();
      }
      appender.closeSync();
    }
    const [low, high] = eventRange(batch);
    return db.transactionHeld(async () => {
      let deletedKeys: string[] = [];
      if (batch.replaceWindow === true) {
        // Rows of the window that the new read no longer has (or has with other totals) go;
        // identical rows stay as they are, so an unchanged re-read changes nothing.
        const deleted = await db.all<{ _key: string }>(
          `DELETE FROM raw.${batch.table} r
           WHERE r._account = $1 AND r._partition = $2 AND r._event_ms >= $3 AND r._event_ms < $4
             AND NOT EXISTS (SELECT 1 FROM ${incoming} i WHERE i._key = r._key AND i._record = r._record::VARCHAR)
           RETURNING r._key`,
          [batch.account, batch.partition, batch.window.startMs, batch.window.endMs],
        );
        deletedKeys = deleted.map((row) => row._key);
      }
      const inserted = await db.run(
        `INSERT INTO raw.${batch.table}
         SELECT $1, $2, i._key, i._event_ms, i._record::JSON, $3, now()
         FROM ${incoming} i
         WHERE NOT EXISTS (
           SELECT 1 FROM raw.${batch.table} r
           WHERE r._account = $1 AND r._key = i._key AND r._event_ms BETWEEN $4 AND $5
         )`,
        [batch.account, batch.partition, batch.runId, low, high],
      );
      if (inserted > 0 || deletedKeys.length > 0) {
        await recordRawChange(db, { account: batch.account, table: batch.table, kind: 'window', minEventMs: low, maxEventMs: high, rows: inserted, deletedKeys, runId: batch.runId });
      }
      await advanceCursor(db, batch.account, batch.stream, batch.partition, batch.window, batch.runId);
      await recordDrift(db, batch.account, batch.stream, batch.runId, batch.undeclared ?? []);
      return inserted;
    });
  });
}

/**
 * Stores a snapshot when it differs from the latest one of the same partition (so re-running
 * a sync changes nothing), and records the check in the cursor. Returns the rows stored.
 */
export async function writeSnapshot(db: Database, batch: SnapshotBatch): Promise<number> {
  return db.transaction(async () => {
    const latest = await db.all<{ record: string }>(
      `SELECT _record::VARCHAR AS record FROM raw.${batch.table}
       WHERE _account = $1 AND _partition = $2
         AND _snapshot_at = (SELECT max(_snapshot_at) FROM raw.${batch.table} WHERE _account = $1 AND _partition = $2)
       ORDER BY _seq`,
      [batch.account, batch.partition],
    );
    // An empty state (no open orders left) is stored as one marker row with _seq -1 and an
    // empty object, so the history shows when things went away; staging leaves markers out.
    const rows = batch.records.length > 0 ? batch.records : [EMPTY_MARKER];
    const unchanged = latest.length === rows.length && latest.every((row, index) => row.record === rows[index]);
    let stored = 0;
    if (!unchanged) {
      const takenAt = new Date(batch.takenAtMs).toISOString();
      const firstSeq = batch.records.length > 0 ? 0 : -1;
      for (let start = 0; start < rows.length; start += 500) {
        const chunk = rows.slice(start, start + 500);
        const values = chunk.map((_, index) => `($1, $2, $3::TIMESTAMPTZ, ${firstSeq + start + index}, $${index + 5}::JSON, $4, now())`).join(', ');
        await db.run(`INSERT INTO raw.${batch.table} VALUES ${values}`, [batch.account, batch.partition, takenAt, batch.runId, ...chunk]);
      }
      stored = batch.records.length;
      await recordRawChange(db, { account: batch.account, table: batch.table, kind: 'snapshot', minEventMs: batch.takenAtMs, maxEventMs: batch.takenAtMs, rows: rows.length, runId: batch.runId });
    }
    // A snapshot's cursor is simply when the state was last read.
    await db.run(
      `INSERT INTO meta.cursors VALUES ($1, $2, $3, $4, $4, $5, now())
       ON CONFLICT (account, stream, partition_key) DO UPDATE SET covered_until_ms = $4, run_id = $5, updated_at = now()`,
      [batch.account, batch.stream, batch.partition, batch.takenAtMs, batch.runId],
    );
    await recordDrift(db, batch.account, batch.stream, batch.runId, batch.undeclared ?? []);
    return stored;
  });
}

/** One commit's change to a raw table (meta.raw_changes), for the incremental build. */
export interface RawChange {
  account: string;
  /** The raw table's name (raw.<table>). */
  table: string;
  /** window: rows of [minEventMs, maxEventMs] stored (and deletedKeys deleted); snapshot: one stored; reset: every row of the account deleted. */
  kind: 'window' | 'snapshot' | 'reset';
  minEventMs?: number;
  maxEventMs?: number;
  rows: number;
  deletedKeys?: readonly string[];
  runId?: string;
}

/**
 * Logs what a commit changed in a raw table, in the caller's transaction (meta.raw_changes): every
 * writer of raw rows calls it in the transaction that writes them, so the log is never ahead of the
 * rows nor behind them, and a build knows which windows to take again.
 */
export async function recordRawChange(db: Database, change: RawChange): Promise<void> {
  await db.run(
    `INSERT INTO meta.raw_changes VALUES (nextval('meta.raw_change_seq'), $1, $2, $3, $4, $5, $6, $7::VARCHAR[], $8, now())`,
    [change.account, change.table, change.kind, change.minEventMs ?? null, change.maxEventMs ?? null, change.rows, change.deletedKeys === undefined || change.deletedKeys.length === 0 ? null : listValue([...change.deletedKeys]), change.runId ?? null],
  );
}

/** Widens the partition's covered period by a window that touches or overlaps it. */
async function advanceCursor(db: Database, account: string, stream: string, partition: string, window: { startMs: number; endMs: number }, runId: string): Promise<void> {
  await db.run(
    `INSERT INTO meta.cursors VALUES ($1, $2, $3, $5, $4, $6, now())
     ON CONFLICT (account, stream, partition_key) DO UPDATE SET
       covered_until_ms = CASE WHEN $4 <= meta.cursors.covered_until_ms THEN greatest(meta.cursors.covered_until_ms, $5) ELSE meta.cursors.covered_until_ms END,
       covered_from_ms = CASE WHEN $5 >= meta.cursors.covered_from_ms THEN least(meta.cursors.covered_from_ms, $4) ELSE meta.cursors.covered_from_ms END,
       run_id = $6,
       updated_at = now()`,
    [account, stream, partition, window.startMs, window.endMs, runId],
  );
}

function eventRange(batch: HistoryBatch): [number, number] {
  let low = batch.window.startMs;
  let high = batch.window.endMs;
  for (const record of batch.records) {
    if (record.eventMs < low) low = record.eventMs;
    if (record.eventMs > high) high = record.eventMs;
  }
  return [low, high];
}

function remember(db: Database, table: string): boolean {
  let tables = created.get(db);
  if (tables === undefined) {
    tables = new Set();
    created.set(db, tables);
  }
  if (tables.has(table)) return false;
  tables.add(table);
  return true;
}
