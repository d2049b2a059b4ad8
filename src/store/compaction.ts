import { quoteIdentifier } from './sql-text.ts';
import type { Database } from './database.ts';

/**
 * When DuckDB gives back the room of deleted rows. At a checkpoint it "vacuums" each table that
 * changed: it merges row groups that deletions thinned out and writes them again. An incremental
 * build deletes the rows it replaces (on the 10M benchmark history a night replaces ~140k rows of
 * marts.spot_lot_matches, from uk's look-back of a few days), and after a whole rebuild those rows
 * lie spread over many row groups (a row group holds a few days of one method and symbol), so
 * vacuuming at every checkpoint rewrote row groups of millions of rows each night: 5.8 s of the
 * night's build (traced at load 3.5: spot_lot_matches 3.3 s, the lot segments 2.5 s), and 3 to 5 s
 * of the publish that applies the same changes to the published copy (its commit 5.1 to 6.7 s ->
 * 2.0 s). docs/operating.md "Deleted rows and compaction".
 *
 * So a build or a publish checkpoints without vacuuming, unless a table has reached
 * COMPACT_AT_DEAD_SHARE: deleted rows still stored, at least that share of its live rows and at
 * least a row group's worth (fewer could not save a row group). Reads then scan at most that much
 * more, and the rewrite is paid on one night in many. DuckDB vacuums only what a checkpoint
 * writes, so a thinned table is compacted the next time it changes.
 */
export const COMPACT_AT_DEAD_SHARE = 0.1;

/** DuckDB's rows per row group (its default): fewer deleted rows than this cannot free one. */
const ROW_GROUP_ROWS = 122_880;

/** DuckDB's default max_vacuum_tasks: vacuum as DuckDB does. */
const DEFAULT_VACUUM_TASKS = 100;

/** A table whose deleted rows are still stored. */
export interface ThinnedTable {
  /** `schema.table` */
  table: string;
  live: number;
  /** Deleted rows still stored in its row groups. */
  dead: number;
}

/**
 * Sets whether the checkpoints of this DuckDB instance vacuum, from the tables of `catalog` (the
 * current database by default): on when one is thinned past COMPACT_AT_DEAD_SHARE, off otherwise.
 * Returns the thinned tables (empty: no vacuum). Call it before the work that changes the tables:
 * a commit may checkpoint (DuckDB's WAL threshold).
 */
export async function chooseCompaction(db: Database, catalog?: string): Promise<ThinnedTable[]> {
  const thinned = (await deadRows(db, catalog)).filter((table) => table.dead >= ROW_GROUP_ROWS && table.dead >= COMPACT_AT_DEAD_SHARE * table.live);
  await db.run(`SET max_vacuum_tasks = ${thinned.length > 0 ? DEFAULT_VACUUM_TASKS : 0}`);
  return thinned;
}

/**
 * The deleted rows each table of `catalog` still stores: its row ids run from 0 to the rows its
 * row groups hold (deleted ones included) and a vacuum renumbers them, so the last row id + 1 less
 * the live rows counts them (a few short when the last rows were deleted). Tables without deleted
 * rows are left out.
 */
export async function deadRows(db: Database, catalog?: string): Promise<ThinnedTable[]> {
  const tables = await db.all<{ schema_name: string; table_name: string }>(
    `SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = ${catalog === undefined ? 'current_database()' : '$1'} AND NOT temporary`,
    catalog === undefined ? [] : [catalog],
  );
  if (tables.length === 0) return [];
  const prefix = catalog === undefined ? '' : `${quoteIdentifier(catalog)}.`;
  const counts = tables.map(
    (table) =>
      `SELECT '${`${table.schema_name}.${table.table_name}`.replace(/'/g, "''")}' AS "table", count(*) AS live, coalesce(max(rowid) + 1, 0) AS slots FROM ${prefix}${quoteIdentifier(table.schema_name)}.${quoteIdentifier(table.table_name)}`,
  );
  const rows = await db.all<{ table: string; live: string; slots: string }>(`SELECT * FROM (${counts.join(' UNION ALL ')}) WHERE slots > live ORDER BY "table"`);
  return rows.map((row) => ({ table: row.table, live: Number(row.live), dead: Number(row.slots) - Number(row.live) }));
}

/**
 * What a build or publish says when its checkpoints compact: `compacting marts.spot_lot_matches
 * (12% of its rows deleted and still stored): its thinned row groups are written again as it changes`.
 */
export function describeCompaction(tables: readonly ThinnedTable[]): string {
  const names = tables.map((table) => `${table.table} (${formatShare(table.dead, table.live)} of its rows deleted and still stored)`).join(', ');
  return `compacting ${names}: ${tables.length === 1 ? 'its' : 'their'} thinned row groups are written again as ${tables.length === 1 ? 'it changes' : 'they change'}`;
}

function formatShare(part: number, whole: number): string {
  return `${whole === 0 ? 100 : Math.round((100 * part) / whole)}%`;
}
