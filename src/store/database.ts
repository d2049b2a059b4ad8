import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance, type DuckDBAppender, type DuckDBConnection, type DuckDBDataChunk, type DuckDBValue } from '@duckdb/node-api';
import { diskFullOf } from '../disk-full.ts';
import { heapGarbage } from '../heap-garbage.ts';
import { DatabaseBusyError, type DiskFullError } from '../errors.ts';
import { ACCOUNT_COLUMN, writeComments, type TableDescription } from './comments.ts';
import { PERIOD_CLOSE_DESCRIPTIONS, PERIOD_CLOSE_TABLES } from './period-closes.ts';

/**
 * The DuckDB database: one instance and one connection per process. Schemas:
 * - `raw`: what the exchange sent, one table per stream, exactly (see raw-tables.ts);
 * - `meta`: cursors, runs and learned facts about the exchange;
 * - `staging`, `intermediate`, `marts`: the SQL models (sql/).
 */
/** DuckDB's memory limit where none is configured (the config's `memoryLimit` default). */
export const DEFAULT_MEMORY_LIMIT = '4GB';

export class Database {
  /** Every database open in this process, for interruptOpenQueries. */
  private static readonly opened = new Set<Database>();
  private queue: Promise<unknown> = Promise.resolve();
  private readonly holder = new AsyncLocalStorage<Database>();
  /** The first "disk full" met: every later statement fails with it at once (see `guarded`). */
  private diskFull: DiskFullError | undefined;
  /** Statements to run once the open transaction is rolled back (withSetting). */
  private readonly afterRollback: string[] = [];
  /** DuckDB's temporary folder (where big queries spill), for naming it when it fills the disk. */
  private tempDirectory: string | undefined;
  /** The memory_limit it was opened with (see `withMemoryReserved`). */
  private memoryLimit = DEFAULT_MEMORY_LIMIT;
  /** Statements running now (see `close`). */
  private running = 0;
  /** close() was called while statements ran: the connection closes when the last one ends. */
  private closing = false;

  private constructor(
    private readonly instance: DuckDBInstance,
    readonly connection: DuckDBConnection,
    /** The file, or ':memory:'. */
    readonly location: string,
  ) {}

  /** Opens (creating if needed) the database and its bookkeeping tables. */
  static async open(
    location: string,
    options: {
      readOnly?: boolean;
      /** DuckDB memory_limit, e.g. '4GB'. @default DEFAULT_MEMORY_LIMIT (never DuckDB's 80% of RAM) */
      memoryLimit?: string;
      /** Create the bookkeeping tables (schema meta) when opened for writing; false for a session that only attaches other files (the publish's). @default true */
      bookkeeping?: boolean;
    } = {},
  ): Promise<Database> {
    if (location !== ':memory:' && options.readOnly !== true) mkdirSync(path.dirname(path.resolve(location)), { recursive: true });
    let instance: DuckDBInstance;
    try {
      instance = await DuckDBInstance.create(location, options.readOnly === true ? { access_mode: 'READ_ONLY' } : {});
    } catch (error) {
      // Opening replays the write-ahead log, which may need room.
      const full = diskFullOf(error, { file: location, doing: 'opening the database', kept: 'nothing was changed' });
      if (full !== undefined) throw full;
      // DuckDB lets one process write a file, and no other process open it meanwhile.
      if (/lock/i.test((error as Error).message)) {
        throw new DatabaseBusyError(location, 'is open in another process (a running sync, or a client holding it for writing)', {
          hint: 'wait for it to finish, then try again',
          cause: error,
        });
      }
      throw error;
    }
    const connection = await instance.connect();
    const database = new Database(instance, connection, location);
    Database.opened.add(database);
    // Casts between TIMESTAMP and TIMESTAMPTZ follow the session zone: make it UTC, whatever the machine's.
    await connection.run("SET TimeZone = 'UTC'");
    // Every opening is bounded: a command that forgot the configured limit still does not take 80% of the machine.
    database.memoryLimit = (options.memoryLimit ?? DEFAULT_MEMORY_LIMIT).replace(/'/g, '');
    await connection.run(`SET memory_limit = '${database.memoryLimit}'`);
    // What DuckDB frees goes back to the system from jemalloc's background threads as it is freed,
    // not when a thread next allocates: without them, a whole check of the 10M benchmark history
    // peaked 0.5 to 0.7 GB higher in two runs of five (5.28 and 5.47e9 bytes against 4.74 to
    // 4.78e9), with them 4.68 to 4.75e9 in five (docs/benchmarks.md, the notes under the table).
    await connection.run('SET allocator_background_threads = true');
    database.tempDirectory = (await connection.runAndReadAll("SELECT current_setting('temp_directory') AS dir")).getRowObjectsJson()[0]?.dir as string | undefined;
    if (options.readOnly !== true && options.bookkeeping !== false) await database.migrate();
    return database;
  }

  /** Runs statements; returns the number of rows the last one changed. */
  run(sql: string, values?: DuckDBValue[]): Promise<number> {
    return this.exclusive(() => this.guarded(async () => (await this.connection.run(sql, values)).rowsChanged));
  }

  /** Runs a query and returns its rows as objects; DECIMAL, BIGINT and times come back as exact strings. */
  all<T = Record<string, unknown>>(sql: string, values?: DuckDBValue[]): Promise<T[]> {
    return this.exclusive(() => this.guarded(async () => (await this.connection.runAndReadAll(sql, values)).getRowObjectsJson() as T[]));
  }

  /** Runs a query and returns its rows as DuckDB's values (a BLOB as its bytes, a BIGINT as a bigint), for what JSON would copy. */
  values(sql: string, values?: DuckDBValue[]): Promise<DuckDBValue[][]> {
    return this.exclusive(() => this.guarded(async () => (await this.connection.runAndReadAll(sql, values)).getRows()));
  }

  /**
   * Streams a query's rows, chunk by chunk, on a connection of its own: it reads what is committed
   * (not an open transaction of this one), and the main connection stays free to write meanwhile
   * (a statement there would end a stream of its own). For a model computed in TypeScript reading
   * an upstream model's table while it appends its own. The JS heap's garbage is kept within a
   * bound as the rows go through (src/heap-garbage.ts).
   */
  async *streamCommitted(sql: string, values?: DuckDBValue[]): AsyncGenerator<DuckDBValue[][]> {
    for await (const chunk of this.streamCommittedChunks(sql, values)) yield chunk.getRows();
  }

  /**
   * streamCommitted's chunks themselves, each valid until the next is asked for: to read a column
   * at a time (src/store/chunk-columns.ts) where millions of rows go through.
   */
  async *streamCommittedChunks(sql: string, values?: DuckDBValue[]): AsyncGenerator<DuckDBDataChunk> {
    const reader = await this.instance.connect();
    try {
      const result = await this.guarded(() => reader.stream(sql, values));
      for (;;) {
        const chunk = await this.guarded(() => result.fetchChunk());
        if (chunk === null || chunk.rowCount === 0) return;
        yield chunk;
        // What the reader made of the rows it was given is garbage once it asks for more.
        heapGarbage.check();
      }
    } finally {
      reader.closeSync();
    }
  }

  /**
   * An appender into a table on the main connection: its rows belong to the open transaction. Use
   * it inside withInsertionOrder, or DuckDB holds every row appended in memory until the commit.
   */
  appender(schema: string, table: string, catalog?: string): Promise<DuckDBAppender> {
    return this.guarded(() => this.connection.createAppender(table, schema, catalog));
  }

  /**
   * Runs `work` with DuckDB's preserve_insertion_order on (or, `preserve` false, off), then puts
   * the setting back. A build runs with it off (src/jobs/build-job.ts: tables made by CREATE
   * TABLE AS are written in parallel), but then DuckDB keeps the rows an appender adds to a table
   * in the open transaction in memory until the commit, instead of writing each row group to the
   * file as it fills (measured: 29M lot segments of the 10M benchmark history held 2 GB and more,
   * and the build failed with "failed to pin block" at memoryLimit 4GB; with it on, they stay under
   * 100 MB). It
   * also keeps a copy's rows in the order they are read; off, a COPY to a file writes on every
   * thread as its threads finish (a report's full detail, roll-up.ts: half the time).
   */
  async withInsertionOrder<T>(work: () => Promise<T>, preserve = true): Promise<T> {
    const [setting] = await this.all<{ value: string }>("SELECT current_setting('preserve_insertion_order')::VARCHAR AS value");
    return this.withSetting(`preserve_insertion_order = ${preserve}`, `preserve_insertion_order = ${setting?.value === 'false' ? 'false' : 'true'}`, work);
  }

  /**
   * Runs `work` (a model computed in TypeScript, whose work lives in the JS heap) with DuckDB's
   * memory_limit lowered by `reserve` bytes (never below half the limit it was opened with), then
   * puts the limit back: the process's memory is DuckDB's share plus the JS heap, and DuckDB
   * otherwise fills its whole limit with blocks it keeps cached (the table being written, the rows
   * streamed), the heap coming on top (measured on the 10M benchmark's lot matching at 4GB: DuckDB
   * 3.5 GB and the heap 1.6 GB, a peak of 5.68 GiB).
   */
  async withMemoryReserved<T>(reserve: number, work: () => Promise<T>): Promise<T> {
    const limit = bytesOf(this.memoryLimit);
    if (limit === undefined) return work();
    const lowered = Math.max(Math.floor(limit / 2), limit - reserve);
    return this.withSetting(`memory_limit = '${lowered}B'`, `memory_limit = '${this.memoryLimit}'`, work);
  }

  /** Runs `work` after `SET <set>`, then `SET <restore>`, also when it fails. */
  private async withSetting<T>(set: string, restore: string, work: () => Promise<T>): Promise<T> {
    await this.run(`SET ${set}`);
    let result: T;
    try {
      result = await work();
    } catch (error) {
      // A failed statement aborts the transaction, and DuckDB then refuses every other one, a SET
      // too: the setting is put back after the rollback (transactionHeld), and the error that
      // aborted it is the one told.
      try {
        await this.run(`SET ${restore}`);
      } catch {
        this.afterRollback.push(`SET ${restore}`);
      }
      throw error;
    }
    await this.run(`SET ${restore}`);
    return result;
  }

  /**
   * The first "disk full" this database met (a DiskFullError naming the database file), if any.
   * From then on every statement fails with it at once: a job stops at the first full-disk error
   * instead of trying its remaining work (and after a failed checkpoint DuckDB refuses every
   * statement anyway, with "database has been invalidated").
   */
  get diskFullError(): DiskFullError | undefined {
    return this.diskFull;
  }

  /**
   * Writes everything committed into the database file (DuckDB also does it when closing, but
   * silently: a checkpoint that fails there leaves the WAL and says nothing). A failure is a
   * DiskFullError when the disk is full; what was committed stays in the WAL, which the next
   * open replays.
   */
  async checkpoint(): Promise<void> {
    await this.run('CHECKPOINT');
  }

  /** Runs one statement; a full disk becomes (and stays) a DiskFullError naming the database. */
  private async guarded<T>(work: () => Promise<T>): Promise<T> {
    if (this.diskFull !== undefined) throw this.diskFull;
    if (this.closing) throw new Error(`${this.location}: the database was closed before this statement ran`);
    this.running += 1;
    try {
      return await work();
    } catch (error) {
      const full = diskFullOf(error, { file: this.location, doing: 'writing the database', kept: 'what was committed before is kept', tempDirectory: this.tempDirectory });
      if (full === undefined) throw error;
      this.diskFull = full;
      throw full;
    } finally {
      this.running -= 1;
      if (this.closing && this.running === 0) this.closeNow();
    }
  }

  /**
   * Runs `work` in one transaction: everything it wrote commits together or not at all. This is
   * what makes a sync safe to kill at any instant (rows and the cursor covering them commit
   * together). Transactions of concurrent streams are queued: one connection, one at a time.
   */
  transaction<T>(work: () => Promise<T>): Promise<T> {
    return this.exclusive(() => this.transactionHeld(work));
  }

  /**
   * Runs `work` with the connection to itself: no statement of another stream can run inside
   * its transaction (one failing there would abort it). Re-entrant: calls made from inside
   * `work` run at once.
   */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    if (this.holder.getStore() === this) return work();
    const result = this.queue.then(() => this.holder.run(this, work));
    this.queue = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  /** A transaction for a caller that already holds `exclusive`. */
  async transactionHeld<T>(work: () => Promise<T>): Promise<T> {
    await this.run('BEGIN TRANSACTION');
    try {
      const result = await work();
      await this.run('COMMIT');
      return result;
    } catch (error) {
      // The original error is the one to report. DuckDB may have ended the transaction already
      // (a failed COMMIT, an IO error: "cannot rollback - no transaction is active") or refuse
      // every statement (a failed checkpoint: "database has been invalidated"); either way
      // nothing of it was committed, and the rollback's own error says nothing more.
      try {
        await this.connection.run('ROLLBACK');
      } catch {
        // see above
      }
      // Settings an aborted transaction refused to put back (withInsertionOrder).
      for (const statement of this.afterRollback.splice(0)) {
        try {
          await this.connection.run(statement);
        } catch {
          // the database refuses every statement: nothing more will run on it
        }
      }
      throw error;
    }
  }

  /**
   * Interrupts the query every open database is running (DuckDB stops it at its next check).
   * For a process about to exit on a signal: DuckDB finishes a running query before its
   * instance can be torn down, so without this an exit would wait for the whole query.
   */
  static interruptOpenQueries(): void {
    for (const database of Database.opened) database.connection.interrupt();
  }

  /**
   * Closes the connection and the instance, at once when no statement is running. A job that
   * fails while one of its statements still runs (another of its queries failed first) gets here
   * before that statement ends: closing the connection under it made DuckDB destroy the
   * connection from inside the running statement and wait on its own lock, and the process hung
   * at exit after printing its error. So the running statement is interrupted, the close waits
   * for it to end, and statements not yet started are refused.
   */
  close(): void {
    Database.opened.delete(this);
    if (this.running === 0) return this.closeNow();
    this.closing = true;
    this.connection.interrupt();
  }

  private closeNow(): void {
    this.closing = true;
    this.connection.closeSync();
    this.instance.closeSync();
  }

  private async migrate(): Promise<void> {
    await this.run(`
      CREATE SCHEMA IF NOT EXISTS raw;
      CREATE SCHEMA IF NOT EXISTS meta;
      CREATE SCHEMA IF NOT EXISTS staging;
      CREATE TABLE IF NOT EXISTS meta.cursors (
        account VARCHAR NOT NULL,
        stream VARCHAR NOT NULL,
        partition_key VARCHAR NOT NULL,
        -- Everything before this instant has been read (epoch ms, exclusive).
        covered_until_ms BIGINT NOT NULL,
        -- Where the covered period starts (epoch ms, inclusive).
        covered_from_ms BIGINT NOT NULL,
        run_id VARCHAR NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL,
        PRIMARY KEY (account, stream, partition_key)
      );
      CREATE TABLE IF NOT EXISTS meta.runs (
        run_id VARCHAR NOT NULL,
        account VARCHAR NOT NULL,
        stream VARCHAR NOT NULL,
        started_at TIMESTAMPTZ NOT NULL,
        finished_at TIMESTAMPTZ,
        status VARCHAR NOT NULL,
        requests BIGINT NOT NULL,
        weight BIGINT NOT NULL,
        rows_fetched BIGINT NOT NULL,
        rows_inserted BIGINT NOT NULL,
        windows BIGINT NOT NULL,
        errors BIGINT NOT NULL,
        error_message VARCHAR,
        duration_ms BIGINT,
        PRIMARY KEY (run_id, account, stream)
      );
      CREATE TABLE IF NOT EXISTS meta.facts (
        account VARCHAR NOT NULL,
        fact VARCHAR NOT NULL,
        value VARCHAR NOT NULL,
        learned_at TIMESTAMPTZ NOT NULL,
        PRIMARY KEY (account, fact)
      );
      -- What each commit of raw rows changed, written in the same transaction as the rows (so it is
      -- never ahead of them nor behind): the build reads the changes after the last one a model took
      -- (docs/plans/incremental-builds.md). kind: window (rows of [min_event_ms, max_event_ms] were
      -- stored, and deleted_keys deleted), snapshot (a snapshot was stored), reset (every row of the
      -- account in raw_table was deleted: sync --full-refresh).
      CREATE SEQUENCE IF NOT EXISTS meta.raw_change_seq;
      CREATE TABLE IF NOT EXISTS meta.raw_changes (
        change_seq BIGINT NOT NULL,
        account VARCHAR NOT NULL,
        raw_table VARCHAR NOT NULL,
        kind VARCHAR NOT NULL,
        min_event_ms BIGINT,
        max_event_ms BIGINT,
        rows_stored BIGINT NOT NULL,
        deleted_keys VARCHAR[],
        run_id VARCHAR,
        recorded_at TIMESTAMPTZ NOT NULL
      );
      -- Fields the exchange sent that the stream's declaration did not list (schema-drift.ts):
      -- the path and a value's JSON type, never the value.
      CREATE TABLE IF NOT EXISTS meta.schema_drift (
        account VARCHAR NOT NULL,
        stream VARCHAR NOT NULL,
        field_path VARCHAR NOT NULL,
        json_type VARCHAR NOT NULL,
        first_seen_run_id VARCHAR NOT NULL,
        first_seen_at TIMESTAMPTZ NOT NULL,
        last_seen_run_id VARCHAR NOT NULL,
        last_seen_at TIMESTAMPTZ NOT NULL,
        PRIMARY KEY (account, stream, field_path)
      );
      ${PERIOD_CLOSE_TABLES}
    `);
    await writeComments(this, [...META_TABLES, ...PERIOD_CLOSE_DESCRIPTIONS]);
  }
}

const EPOCH_MS = 'ms since 1970-01-01 UTC';
const stream = { name: 'stream', description: 'Stream name (pipelines/), also its raw table raw.<stream>' };

/** What the bookkeeping tables of schema meta mean, written as their comments (src/store/comments.ts). */
export const META_TABLES: readonly TableDescription[] = [
  {
    schema: 'meta',
    table: 'cursors',
    description: 'How far each stream has been read, per account and partition: the sync reads on from here. Key: (account, stream, partition_key).',
    columns: [
      ACCOUNT_COLUMN,
      stream,
      { name: 'partition_key', description: "Partition the requests were split by: '' for one, else param=value,… (e.g. symbol=BTCUSDT_SPBL)" },
      { name: 'covered_until_ms', description: 'Everything before this instant has been read (exclusive); for a snapshot stream, when it was last read', unit: EPOCH_MS },
      { name: 'covered_from_ms', description: 'Where the covered period starts (inclusive)', unit: EPOCH_MS },
      { name: 'run_id', description: 'Sync run that last moved the cursor (meta.runs.run_id)' },
      { name: 'updated_at', description: 'When the cursor last moved', unit: 'UTC' },
    ],
  },
  {
    schema: 'meta',
    table: 'runs',
    description: 'What each sync run did per account and stream: requests, rows, errors. Key: (run_id, account, stream).',
    columns: [
      { name: 'run_id', description: 'Sync run: its start time and a random suffix' },
      ACCOUNT_COLUMN,
      stream,
      { name: 'started_at', description: 'When the stream started in this run', unit: 'UTC' },
      { name: 'finished_at', description: 'When it ended; null while running (or when its process was killed)', unit: 'UTC' },
      { name: 'status', description: 'How it ended: running, ok, failed, skipped, interrupted (stopped by a signal, or killed)' },
      { name: 'requests', description: 'HTTP requests sent to the exchange', unit: 'count' },
      { name: 'weight', description: "Rate-limit weight of those requests, as the exchange's documentation counts it", unit: 'count' },
      { name: 'rows_fetched', description: 'Records read from the exchange (re-read records included)', unit: 'count' },
      { name: 'rows_inserted', description: 'Records stored that were not stored before', unit: 'count' },
      { name: 'windows', description: 'Time windows (or snapshots) read completely', unit: 'count' },
      { name: 'errors', description: 'Errors met (a retried request that then succeeded is not one)', unit: 'count' },
      { name: 'error_message', description: 'The error that ended the stream, when it failed or was interrupted; secrets never appear' },
      { name: 'duration_ms', description: 'finished_at less started_at', unit: 'ms' },
    ],
  },
  {
    schema: 'meta',
    table: 'facts',
    description: "What the sync learned about the exchange, per account (rate limits from its 429s, spot pairs it does not list), used by the next sync. Key: (account, fact).",
    columns: [
      { ...ACCOUNT_COLUMN, description: 'Account name of the configuration; * for facts about the per-IP budgets' },
      { name: 'fact', description: 'What was learned, its prefix naming its kind (learned_rate:<endpoint> a rate learned from its 429s, missing_spot_symbol:<symbol> a traded pair the exchange does not list)' },
      { name: 'value', description: 'Its value, as text' },
      { name: 'learned_at', description: 'When it was learned', unit: 'UTC' },
    ],
  },
  {
    schema: 'meta',
    table: 'raw_changes',
    description: 'What each commit of raw rows changed, written in the same transaction as the rows: an incremental build takes the changes after the last one a model took. One row per commit.',
    columns: [
      { name: 'change_seq', description: 'Order of the change (meta.raw_change_seq), increasing', unit: 'count' },
      ACCOUNT_COLUMN,
      { name: 'raw_table', description: 'Raw table changed (raw.<raw_table>)' },
      { name: 'kind', description: 'window: rows of [min_event_ms, max_event_ms] stored (and deleted_keys deleted); snapshot: a snapshot stored; reset: every row of the account deleted (sync --full-refresh)' },
      { name: 'min_event_ms', description: 'Earliest record time the change covers; null for a reset', unit: EPOCH_MS },
      { name: 'max_event_ms', description: 'Latest record time the change covers; null for a reset', unit: EPOCH_MS },
      { name: 'rows_stored', description: 'Rows stored by the commit', unit: 'count' },
      { name: 'deleted_keys', description: 'Keys (raw._key) of rows the commit deleted (a re-read range of totals); null when none' },
      { name: 'run_id', description: 'Sync run that made the change (meta.runs.run_id); null for a reset' },
      { name: 'recorded_at', description: 'When the change was committed', unit: 'UTC' },
    ],
  },
  {
    schema: 'meta',
    table: 'schema_drift',
    description: "Fields the exchange sent that the stream's declaration (pipelines/) does not list: the path and a value's JSON type, never the value. Key: (account, stream, field_path).",
    columns: [
      ACCOUNT_COLUMN,
      stream,
      { name: 'field_path', description: 'Path of the field in the record (position[].side inside a list)' },
      { name: 'json_type', description: 'JSON type of a value seen (string, number, boolean, object, array, null)' },
      { name: 'first_seen_run_id', description: 'Sync run that first saw it (meta.runs.run_id)' },
      { name: 'first_seen_at', description: 'When it was first seen', unit: 'UTC' },
      { name: 'last_seen_run_id', description: 'Sync run that last saw it (meta.runs.run_id)' },
      { name: 'last_seen_at', description: 'When it was last seen', unit: 'UTC' },
    ],
  },
];

/** Bytes of a size as DuckDB reads memory_limit (`4GB`: 4e9; `4GiB`: 4 × 1024³); undefined for another form. */
export function bytesOf(size: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*([KMGT]i?)?B$/i.exec(size.trim());
  if (match === null) return undefined;
  const unit = (match[2] ?? '').toUpperCase();
  const power = ' KMGT'.indexOf(unit[0] ?? ' ');
  return Math.round(Number(match[1]) * (unit.endsWith('I') ? 1024 : 1000) ** Math.max(power, 0));
}
