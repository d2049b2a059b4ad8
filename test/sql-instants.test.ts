import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SQL_DIR } from '../src/models/project.ts';
import { Database } from '../src/store/database.ts';

/**
 * rows_at_instants_sql (sql/macros/instants.sql): the text of a query that reads a table's rows at
 * some instants, by constants DuckDB skips row groups by. Its callers keep the rows whose keys
 * they found, so the query may return more rows than those at the instants, but never fewer and
 * never one twice; these tests check that on a table of trades in runs (a few days of a trade
 * every 10 seconds, weeks apart) and scattered ones, and that the query's constants are the runs
 * (ranges) or the list, as the macro's comment says.
 */

let db: Database;
const DAY_MS = 86_400_000;
const START = Date.UTC(2025, 0, 1);

beforeAll(async () => {
  db = await Database.open(':memory:', { bookkeeping: false });
  await db.run(readFileSync(path.join(SQL_DIR, 'macros', 'instants.sql'), 'utf8'));
  // k: the row's number; event_at: three runs of a trade every 10 s for two days (January, March
  // and May 2025), a trade every 5 hours in between, two rows without an instant, and ten days of
  // a trade every 30 minutes (July).
  await db.run(`
    CREATE TABLE t AS
    SELECT i AS k, make_timestamptz((${START} + (i // 17280) * 60 * ${DAY_MS} + (i % 17280) * 10000) * 1000) AS event_at FROM range(51840) AS r(i)
    UNION ALL SELECT 100000 + i, make_timestamptz((${START} + i * 18000000) * 1000) FROM range(700) AS r(i)
    UNION ALL SELECT 200000 + i, NULL FROM range(2) AS r(i)
    UNION ALL SELECT 300000 + i, make_timestamptz((${START + 200 * DAY_MS} + i * 1800000) * 1000) FROM range(480) AS r(i)`);
});
afterAll(() => db?.close());

/** The query the macro writes for these rows' instants (by their k), and what it returns. */
async function readAt(keys: readonly number[]): Promise<{ text: string; returned: number[] }> {
  const list = keys.length === 0 ? 'CAST([] AS TIMESTAMPTZ[])' : `(SELECT list(event_at) FROM t WHERE k IN (${keys.join(', ')}))`;
  const [row] = await db.all<{ text: string }>(`SELECT rows_at_instants_sql('t', 'event_at', ${list}) AS text`);
  const returned = await db.all<{ k: string }>(`SELECT k FROM query($1)`, [row!.text]);
  return { text: row!.text, returned: returned.map((r) => Number(r.k)) };
}

/** The rows at those rows' instants (a null instant: the rows without one). */
async function rowsAt(keys: readonly number[]): Promise<number[]> {
  if (keys.length === 0) return [];
  const rows = await db.all<{ k: string }>(`SELECT k FROM t WHERE event_at IN (SELECT event_at FROM t WHERE k IN (${keys.join(', ')})) OR (event_at IS NULL AND EXISTS (SELECT 1 FROM t WHERE event_at IS NULL AND k IN (${keys.join(', ')})))`);
  return rows.map((row) => Number(row.k));
}

const ranges = (text: string) => (text.match(/ <= timestamptz /g) ?? []).length;

async function expectEveryRowOnce(keys: readonly number[]): Promise<{ text: string; returned: number[] }> {
  const read = await readAt(keys);
  expect(new Set(read.returned).size, 'a row returned twice').toBe(read.returned.length);
  const returned = new Set(read.returned);
  const missing = (await rowsAt(keys)).filter((k) => !returned.has(k));
  expect(missing, 'rows at the instants that the query left out').toEqual([]);
  return read;
}

describe('rows_at_instants_sql (sql/macros/instants.sql)', () => {
  it('reads nothing for no instant, and a few instants (a null among them) by their list', async () => {
    expect((await readAt([])).returned).toEqual([]);
    const read = await expectEveryRowOnce([5, 17280 + 9, 100_003, 200_000]);
    expect(read.text).toContain(' in (');
    expect(ranges(read.text)).toBe(0);
    // The rows at those instants (5,400 is at 100,003's), and the rows without an instant: nothing else.
    expect(read.returned.sort((a, b) => a - b)).toEqual([5, 5400, 17289, 100_003, 200_000, 200_001]);
  });

  it('reads thousands of instants in a few runs by one range each, returning only the rows of those runs', async () => {
    // A day of the January run (8,640 trades) and 300 trades of the May run: two runs.
    const keys = [...Array.from({ length: 8640 }, (_, i) => 2000 + i), ...Array.from({ length: 300 }, (_, i) => 2 * 17280 + 500 + i)];
    const read = await expectEveryRowOnce(keys);
    expect(read.text).not.toContain(' in (');
    expect(ranges(read.text)).toBe(2);
    // Every trade in the two runs' ranges (the trades every 5 hours among them too), none outside.
    const inside = (await db.all<{ n: string }>(`SELECT count(*) AS n FROM t WHERE event_at BETWEEN (SELECT event_at FROM t WHERE k = 2000) AND (SELECT event_at FROM t WHERE k = 10639) OR event_at BETWEEN (SELECT event_at FROM t WHERE k = ${2 * 17280 + 500}) AND (SELECT event_at FROM t WHERE k = ${2 * 17280 + 799})`))[0]!.n;
    expect(read.returned.length).toBe(Number(inside));
  });

  it('falls back to the list where the instants fall in more runs than ranges are worth (scattered ones)', async () => {
    // 300 trades 5 hours apart: 300 runs.
    const read = await expectEveryRowOnce(Array.from({ length: 300 }, (_, i) => 100_000 + i));
    expect(read.text).toContain(' in (');
    expect(ranges(read.text)).toBe(0);
  });

  it('reads a run of more than 7 days by the list: a range would return every row of those days', async () => {
    // 480 trades 30 minutes apart: one run of 10 days.
    const read = await expectEveryRowOnce(Array.from({ length: 480 }, (_, i) => 300_000 + i));
    expect(read.text).toContain(' in (');
    expect(ranges(read.text)).toBe(0);
    expect(read.returned.length).toBe(480);
  });

  it('returns every row at the instants, once, for any set of them (runs, scattered, nulls)', async () => {
    const key = fc.oneof(fc.integer({ min: 0, max: 51839 }), fc.integer({ min: 100_000, max: 100_699 }), fc.integer({ min: 300_000, max: 300_479 }), fc.constant(200_000));
    const run = fc.tuple(fc.integer({ min: 0, max: 51000 }), fc.integer({ min: 1, max: 800 })).map(([from, length]) => Array.from({ length }, (_, i) => from + i));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(key.map((k) => [k]), run), { maxLength: 12 }), async (parts) => {
        await expectEveryRowOnce([...new Set(parts.flat())]);
      }),
      { numRuns: 25 },
    );
  });
});
