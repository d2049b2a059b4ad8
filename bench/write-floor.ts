/**
 * The write floor of a full build: how long DuckDB takes only to write the tables a built database
 * keeps (every table of staging, intermediate and marts), with nothing to compute. Each table is
 * first read into an in-memory temp table (not timed), then copied from it into a new database
 * file (`create table … as select * from` the temp table, timed, with its commit). The sum is what
 * any build that keeps these tables spends writing them, whatever its SQL: beside the build's own
 * target it tells whether the target can be met without keeping less. The tables are written as
 * the build writes them: without DuckDB's bitpacking (src/store/storage-settings.ts) and with
 * preserve_insertion_order off (src/jobs/build-job.ts). (Until 2026-12-02 the floor used DuckDB's
 * defaults, bitpacking and insertion order kept: the rows measured so were of another write than
 * the build's.) Once timed, each table is
 * dropped from the new file and the file checkpointed (not timed), so that its blocks hold the next
 * one: the disk needs room for the largest table, not for all of them (the 30M history's tables
 * are ~30 GB). The new file is removed at the end, also when a write fails.
 *
 * Run as a child process, as the build and the baseline are (measure-command.ts):
 *
 *   node --import tsx bench/write-floor.ts <built database> <new database file>
 *
 * opens the built database (it only reads it), with a DuckDB memory_limit of 16 GB rather than
 * the build's 4 GB: a temp table holds one whole table in memory (10M rows of int_spot_trades are
 * ~4 GB), and should not spill to disk. Prints one JSON line: each table's rows, columns and ms, and their total.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Database } from '../src/store/database.ts';
import { SET_WRITE_COMPRESSION } from '../src/store/storage-settings.ts';
import { removeDatabaseFiles } from './build-data.ts';
import { measureScript, type MeasuredScript } from './measure-command.ts';

/** One table written. */
export interface FloorTable {
  table: string;
  rows: number;
  columns: number;
  ms: number;
}

/** What the child prints on its last line. */
export interface WriteFloorOutput {
  tables: FloorTable[];
  totalMs: number;
  rows: number;
}

const THIS_FILE = fileURLToPath(import.meta.url);
/** Enough for the largest table read into memory whole (the build-10m database's int_spot_trades). */
const FLOOR_MEMORY_LIMIT = '16GB';
const MODEL_SCHEMAS = ['staging', 'intermediate', 'marts'];
/** The condition on `schema_name` both listings below filter with. */
const inModelSchemas = `schema_name in (${MODEL_SCHEMAS.map((schema) => `'${schema}'`).join(', ')})`;
/**
 * The most rows a table may have for its write to be timed from memory: the 10M history's largest,
 * `spot_lot_matches`' 39M rows, took the process to 16.9 GB. A larger one (117M rows at 30M, ~50 GB)
 * would spill to disk beside the built database, and its time would be the spill's, not a write's.
 */
export const FLOOR_MAX_TABLE_ROWS = 50_000_000;
/** How the child says why it measured nothing (its stderr's last line starts so). */
const NOT_MEASURED = 'write floor not measured:';

/**
 * Writes every model table of the open database `db` into `target` (a new file), timing each write
 * with the build's write settings (set on `db`'s connection, and left so: it is the floor's own);
 * refuses (NOT_MEASURED) a database whose largest model table has more than `maxTableRows` rows.
 */
export async function measureWriteFloor(db: Database, target: string, maxTableRows = FLOOR_MAX_TABLE_ROWS): Promise<WriteFloorOutput> {
  removeDatabaseFiles(target);
  await db.run(SET_WRITE_COMPRESSION);
  await db.run('SET preserve_insertion_order = false');
  await db.run(`attach '${target.replaceAll("'", "''")}' as write_floor`);
  try {
    const tables = await db.all<{ schema_name: string; table_name: string; columns: string }>(
      `select schema_name, table_name, count(*) as columns
       from duckdb_columns()
       where database_name = current_database() and ${inModelSchemas}
         and (schema_name, table_name) in (select schema_name, table_name from duckdb_tables() where database_name = current_database())
       group by all
       order by schema_name, table_name`,
    );
    const [largest] = await db.all<{ name: string; rows: string }>(
      `select schema_name || '.' || table_name as name, estimated_size::varchar as rows
       from duckdb_tables()
       where database_name = current_database() and ${inModelSchemas}
       order by estimated_size desc limit 1`,
    );
    if (largest !== undefined && Number(largest.rows) > maxTableRows) {
      throw new Error(`${NOT_MEASURED} ${largest.name} has ${Number(largest.rows).toLocaleString('en-US')} rows, more than the ${maxTableRows.toLocaleString('en-US')} a table may have to be held in memory (${FLOOR_MEMORY_LIMIT}) before its write is timed`);
    }
    const measured: FloorTable[] = [];
    for (const { schema_name: schema, table_name: name, columns } of tables) {
      const source = `${schema}.${name}`;
      await db.run(`create or replace temp table write_floor_source as select * from ${source}`);
      const [count] = await db.all<{ rows: string }>('select count(*) as rows from write_floor_source');
      const rows = Number(count?.rows ?? 0);
      if (rows === 0) continue;
      const written = `write_floor.main.${schema}__${name}`;
      const started = performance.now();
      await db.run(`create table ${written} as select * from write_floor_source`);
      measured.push({ table: source, rows, columns: Number(columns), ms: performance.now() - started });
      await db.run(`drop table ${written}`);
      await db.run('checkpoint write_floor');
    }
    return {
      tables: measured,
      totalMs: measured.reduce((sum, table) => sum + table.ms, 0),
      rows: measured.reduce((sum, table) => sum + table.rows, 0),
    };
  } finally {
    await db.run('drop table if exists write_floor_source');
    await db.run('detach write_floor');
    removeDatabaseFiles(target);
  }
}

/** A measured child run of the write floor, with what it printed. */
export type WriteFloorRun = MeasuredScript<WriteFloorOutput>;

/** Why a write floor run gave no result: the child's own reason, or how it ended. */
export function floorFailure(run: WriteFloorRun): string {
  const reason = run.stderrTail.split('\n').find((line) => line.includes(NOT_MEASURED));
  if (reason !== undefined) return `not measured: ${reason.slice(reason.indexOf(NOT_MEASURED) + NOT_MEASURED.length).trim()}`;
  return run.timedOut ? 'failed: timed out' : `failed (exit ${run.exitCode ?? 'killed'})`;
}

/** Runs the write floor in a child process over the built `database`, writing into `target`. */
export function measureWriteFloorProcess(database: string, target: string, timeoutSeconds: number): Promise<WriteFloorRun> {
  return measureScript<WriteFloorOutput>([THIS_FILE, database, target], timeoutSeconds);
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === THIS_FILE) {
  const [database, target] = process.argv.slice(2);
  if (database === undefined || target === undefined) throw new Error('usage: write-floor.ts <built database> <new database file>');
  if (!existsSync(database)) throw new Error(`no database at ${database}: give the file a build wrote`);
  const db = await Database.open(database, { memoryLimit: FLOOR_MEMORY_LIMIT });
  try {
    console.log(JSON.stringify(await measureWriteFloor(db, target)));
  } catch (error) {
    // One line, the last of stderr, for floorFailure to find.
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  } finally {
    db.close();
  }
}
