import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { describePublish } from '../src/jobs/run-job.ts';
import { chooseCompaction, deadRows, describeCompaction } from '../src/store/compaction.ts';
import { Database } from '../src/store/database.ts';
import { tempDir } from './support/temp-dir.ts';

/**
 * The compaction policy (src/store/compaction.ts) on a real DuckDB file: deleted rows stay stored
 * through checkpoints until a table is thinned past the threshold, and are then given back at the
 * next checkpoint that writes the table.
 */
const ROWS = 1_000_000;

/** A database file with one table of ROWS rows, checkpointed (every row in the file). */
async function tableOfRows(): Promise<Database> {
  const db = await Database.open(path.join(tempDir('exledger-compaction-'), 'test.duckdb'), { bookkeeping: false });
  await db.run(`CREATE SCHEMA marts; CREATE TABLE marts.rows AS SELECT range AS id, range % 7 AS kind, 'row ' || range AS label FROM range(${ROWS})`);
  await db.run('CHECKPOINT');
  return db;
}

async function settingOf(db: Database): Promise<string> {
  const [row] = await db.all<{ value: string }>("SELECT current_setting('max_vacuum_tasks') AS value");
  return String(row!.value);
}

describe('compaction', () => {
  it('counts the deleted rows a table still stores, and none once it is compacted', async () => {
    const db = await tableOfRows();
    try {
      expect(await deadRows(db)).toEqual([]);
      // Spread over every row group, as a night's replaced rows are after a whole rebuild.
      await db.run('DELETE FROM marts.rows WHERE id % 4 = 1');
      expect(await deadRows(db)).toEqual([{ table: 'marts.rows', live: 750_000, dead: 250_000 }]);
    } finally {
      db.close();
    }
  });

  it('leaves a few deleted rows stored through the checkpoint (no vacuum), and says so by choosing none', async () => {
    const db = await tableOfRows();
    try {
      // 5%: below the share, and below a row group's worth.
      await db.run('DELETE FROM marts.rows WHERE id % 20 = 3');
      expect(await chooseCompaction(db)).toEqual([]);
      expect(await settingOf(db)).toBe('0');
      await db.run('DELETE FROM marts.rows WHERE id = 0');
      await db.run('CHECKPOINT');
      expect(await deadRows(db)).toEqual([{ table: 'marts.rows', live: 949_999, dead: 50_001 }]);
      expect(Number((await db.all<{ n: string }>('SELECT count(*) AS n FROM marts.rows'))[0]!.n)).toBe(949_999);
    } finally {
      db.close();
    }
  });

  it('compacts a table thinned past the share at the next checkpoint that writes it', async () => {
    const db = await tableOfRows();
    try {
      await db.run('SET max_vacuum_tasks = 0');
      await db.run('DELETE FROM marts.rows WHERE id % 4 = 1');
      await db.run('CHECKPOINT');
      const thinned = await chooseCompaction(db);
      expect(thinned).toEqual([{ table: 'marts.rows', live: 750_000, dead: 250_000 }]);
      expect(describeCompaction(thinned)).toBe('compacting marts.rows (33% of its rows deleted and still stored): its thinned row groups are written again as it changes');
      expect(await settingOf(db)).toBe('100');
      // The next change to the table (a night's): its checkpoint gives the room back, all but
      // less than a row group's worth (DuckDB merges row groups only where that saves one).
      await db.run('DELETE FROM marts.rows WHERE id = 0');
      await db.run('CHECKPOINT');
      const left = await deadRows(db);
      expect(left.map((table) => table.table)).toEqual(left.length === 0 ? [] : ['marts.rows']);
      expect(left[0]?.dead ?? 0).toBeLessThan(122_880 / 10);
      const [sums] = await db.all<{ n: string; total: string }>('SELECT count(*) AS n, sum(id) AS total FROM marts.rows');
      expect(sums).toEqual({ n: '749999', total: String((ROWS * (ROWS - 1)) / 2 - (250_000 * (1 + 999_997)) / 2) });
      // Compacted, the table is below the share again: the checkpoints after it do not vacuum.
      expect(await chooseCompaction(db)).toEqual([]);
      expect(await settingOf(db)).toBe('0');
    } finally {
      db.close();
    }
  });

  it('is said on the publish line when the copy is compacted, and not otherwise', () => {
    const tables = { changed: 2, of: 79, rows: 1_234 };
    expect(describePublish({ how: 'incremental', tables })).toBe('incremental (2 of 79 tables brought up to date, 1,234 rows copied)');
    const compacted = [
      { table: 'intermediate.int_spot_lot_segments', live: 1_000_000, dead: 150_000 },
      { table: 'marts.spot_lot_matches', live: 1_000_000, dead: 125_000 },
    ];
    expect(describePublish({ how: 'incremental', tables, compacted })).toBe(
      'incremental (2 of 79 tables brought up to date, 1,234 rows copied); compacting intermediate.int_spot_lot_segments (15% of its rows deleted and still stored), marts.spot_lot_matches (13% of its rows deleted and still stored): their thinned row groups are written again as they change',
    );
  });
});
