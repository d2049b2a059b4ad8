import { BIGINT, BOOLEAN, DuckDBTimestampTZValue, HUGEINT, TIMESTAMPTZ, VARCHAR, type DuckDBValue } from '@duckdb/node-api';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Database } from '../src/store/database.ts';
import { RowChunks } from '../src/store/row-chunks.ts';
import { INT128_MAX, INT128_MIN, INT64_MAX, INT64_MIN, sqlLiteral } from './support/sql-literal.ts';

// RowChunks writes each value into DuckDB's vector memory itself (typed arrays copied whole, a
// constant vector for a string the chunk's rows share, its own validity masks): every value must
// come back from DuckDB as the same SQL value an INSERT of its literal stores.

const COLUMNS = 's VARCHAR, b BIGINT, t TIMESTAMPTZ, h HUGEINT, f BOOLEAN';
const TYPES = [VARCHAR, BIGINT, TIMESTAMPTZ, HUGEINT, BOOLEAN];
type Row = [string | null, bigint | null, bigint | null, bigint | null, boolean | null];

let db: Database;
beforeEach(async () => {
  db = await Database.open(':memory:', { bookkeeping: false });
  // (The literals' timestamps: microseconds since 1970 in UTC.)
  await db.run("SET TimeZone = 'UTC'");
  await db.run(`CREATE TABLE appended (n INTEGER, ${COLUMNS}); CREATE TABLE inserted (n INTEGER, ${COLUMNS})`);
});
afterEach(() => db.close());

/** Appends the rows with RowChunks and inserts them as SQL literals; returns the rows that differ (both ways) and the counts. */
async function appendAndCompare(rows: readonly Row[]): Promise<{ differ: number; appended: number }> {
  await db.run('DELETE FROM appended; DELETE FROM inserted');
  const chunks = new RowChunks(await db.appender('main', 'appended'), [INTEGER_TYPE, ...TYPES]);
  rows.forEach(([s, b, t, h, f], n) => chunks.add([BigInt(n), s, b, t === null ? null : new DuckDBTimestampTZValue(t), h, f] as DuckDBValue[]));
  chunks.flushSync();
  chunks.closeSync();
  for (let start = 0; start < rows.length; start += 500) {
    const values = rows
      .slice(start, start + 500)
      .map(([s, b, t, h, f], i) => `(${start + i}, ${sqlLiteral(s, 'VARCHAR')}, ${sqlLiteral(b, 'BIGINT')}, ${sqlLiteral(t, 'TIMESTAMPTZ')}, ${sqlLiteral(h, 'HUGEINT')}, ${sqlLiteral(f, 'BOOLEAN')})`)
      .join(', ');
    await db.run(`INSERT INTO inserted VALUES ${values}`);
  }
  const [counts] = await db.all<{ differ: string; appended: string }>(`
    SELECT (SELECT count(*) FROM ((SELECT * FROM appended EXCEPT ALL SELECT * FROM inserted) UNION ALL (SELECT * FROM inserted EXCEPT ALL SELECT * FROM appended))) AS differ,
           (SELECT count(*) FROM appended) AS appended`);
  return { differ: Number(counts!.differ), appended: Number(counts!.appended) };
}

// (n: which row it is, so that rows equal in every other column are told apart.)
const INTEGER_TYPE = BIGINT;

describe('RowChunks', () => {
  it('stores every value as an INSERT of its literal does: the ranges’ ends, NULLs, strings shared by a chunk and not, across chunks', async () => {
    const edges: Row[] = [
      ['main', 0n, 0n, 0n, false],
      ['main', -1n, -1n, -1n, true],
      ['main', INT64_MIN, -62_135_596_800_000_000n, INT64_MIN, null],
      ['main', INT64_MAX, 253_402_300_799_999_999n, INT64_MAX, true],
      [null, null, null, INT64_MAX + 1n, false],
      ['BTCUSDT_SPBL', 1n, 2n, INT64_MIN - 1n, true],
      ['a string longer than twelve bytes, with ünïcödé and a quote: \'', 3n, 4n, INT128_MIN, false],
      ['', 5n, 6n, INT128_MAX, true],
      ['main', 7n, 8n, 10n ** 30n + 123_456_789n, null],
      ['main', 9n, 10n, -(10n ** 30n) - 987_654_321n, true],
    ];
    // 5,000 rows: two full chunks and part of a third. The first chunk's strings are all one
    // (a constant vector), the second's vary, the third's hold NULLs.
    const rows: Row[] = [];
    for (let n = 0; n < 5000; n++) {
      const edge = edges[n % edges.length]!;
      const s = n < 2048 ? 'pool-1' : n < 4096 ? (n % 3 === 0 ? 'lifo' : 'hifo') : edge[0];
      rows.push([s, edge[1], edge[2], edge[3], edge[4]]);
    }
    expect(await appendAndCompare(rows)).toEqual({ differ: 0, appended: 5000 });
    // The constant chunk really is one string, and NULLs stay NULL (not '' or 0).
    const [summary] = await db.all<{ pools: string; null_strings: string; null_hugeints: string; null_booleans: string }>(`
      SELECT count(*) FILTER (WHERE n < 2048 AND s = 'pool-1') AS pools, count(*) FILTER (WHERE s IS NULL) AS null_strings,
             count(*) FILTER (WHERE h IS NULL) AS null_hugeints, count(*) FILTER (WHERE f IS NULL) AS null_booleans
      FROM appended`);
    expect(summary).toEqual({ pools: '2048', null_strings: '90', null_hugeints: '0', null_booleans: '1000' });
  });

  it('leaves no NULL of one chunk in the next: a chunk of NULLs, then one without any', async () => {
    const rows: Row[] = [];
    for (let n = 0; n < 2048; n++) rows.push(n % 2 === 0 ? [null, null, null, null, null] : ['x', 1n, 2n, 3n, true]);
    for (let n = 0; n < 2048; n++) rows.push(['y', BigInt(n), BigInt(n), BigInt(n), n % 3 === 0]);
    expect(await appendAndCompare(rows)).toEqual({ differ: 0, appended: 4096 });
    const [nulls] = await db.all<{ n: string }>('SELECT count(*) AS n FROM appended WHERE n >= 2048 AND (s IS NULL OR b IS NULL OR t IS NULL OR h IS NULL OR f IS NULL)');
    expect(nulls).toEqual({ n: '0' });
  });

  it('keeps any rows exact (property)', async () => {
    const value = fc.record({
      s: fc.option(fc.constantFrom('main', '*', 'BTCUSDT_SPBL', 'same_day', 'a longer partition name 🙂'), { nil: null }),
      b: fc.option(fc.bigInt({ min: INT64_MIN, max: INT64_MAX }), { nil: null }),
      t: fc.option(fc.bigInt({ min: 0n, max: 4_102_444_800_000_000n }), { nil: null }),
      h: fc.option(fc.oneof(fc.bigInt({ min: INT128_MIN, max: INT128_MAX }), fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n })), { nil: null }),
      f: fc.option(fc.boolean(), { nil: null }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(value, { minLength: 1, maxLength: 2500 }), async (records) => {
        const rows = records.map((r): Row => [r.s, r.b, r.t, r.h, r.f]);
        expect(await appendAndCompare(rows)).toEqual({ differ: 0, appended: rows.length });
      }),
      { numRuns: 25, seed: 28 },
    );
  });

  it('refuses a value its column cannot hold, loudly', async () => {
    const chunks = new RowChunks(await db.appender('main', 'appended'), [INTEGER_TYPE, ...TYPES]);
    expect(() => chunks.add([0n, 'x', 1n, null, 2n ** 127n, true])).toThrow(/outside the HUGEINT range/);
    expect(() => chunks.add([0n, 'x', 1 as unknown as bigint, null, 1n, true])).toThrow();
    expect(() => chunks.add([0n, 5 as unknown as string, 1n, null, 1n, true])).toThrow(/a string/);
    chunks.closeSync();
  });
});
