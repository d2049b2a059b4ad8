import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChunkColumns } from '../src/store/chunk-columns.ts';
import { Database } from '../src/store/database.ts';
import { INT128_MAX, INT128_MIN, INT64_MAX, INT64_MIN, sqlLiteral } from './support/sql-literal.ts';

// ChunkColumns reads a result's vectors from their bytes (a string equal to the row before it
// not decoded again, a HUGEINT inside int64 as one bigint): every value must equal what
// node-api's own reading (getRows, through db.values) gives for the same query.

type Row = { s: string | null; b: bigint | null; n: bigint | null; h: bigint | null; f: boolean | null; t: bigint | null };

let db: Database;
beforeEach(async () => {
  db = await Database.open(':memory:', { bookkeeping: false });
  await db.run("SET TimeZone = 'UTC'");
  await db.run('CREATE TABLE t (i INTEGER, s VARCHAR, b BIGINT, n BIGINT, h HUGEINT, f BOOLEAN, t TIMESTAMPTZ)');
});
afterEach(() => db.close());

const QUERY = 'SELECT s, b, n, h, f, t FROM t ORDER BY i';

/** The rows as ChunkColumns reads them, and as node-api's getRows does (the TIMESTAMPTZ as its microseconds). */
async function bothWays(rows: readonly Row[]): Promise<{ columns: unknown[][]; values: unknown[][] }> {
  await db.run('DELETE FROM t');
  for (let start = 0; start < rows.length; start += 500) {
    const values = rows
      .slice(start, start + 500)
      .map((r, i) => `(${start + i}, ${sqlLiteral(r.s, 'VARCHAR')}, ${sqlLiteral(r.b, 'BIGINT')}, ${sqlLiteral(r.n, 'BIGINT')}, ${sqlLiteral(r.h, 'HUGEINT')}, ${sqlLiteral(r.f, 'BOOLEAN')}, ${sqlLiteral(r.t, 'TIMESTAMPTZ')})`)
      .join(', ');
    await db.run(`INSERT INTO t VALUES ${values}`);
  }
  const columns: unknown[][] = [];
  for await (const chunk of db.streamCommittedChunks(QUERY)) {
    const read = new ChunkColumns(chunk);
    const [s, b, n, h, f, t] = [read.strings(0), read.bigints(1), read.numbers(2), read.hugeints(3), read.booleans(4), read.bigints(5)];
    for (let row = 0; row < read.rows; row++) columns.push([s[row], b[row], n[row] === null ? null : BigInt(n[row]!), h[row], f[row], t[row]]);
  }
  const values = (await db.values(QUERY)).map((row) => row.map((value) => (value !== null && typeof value === 'object' && 'micros' in value ? value.micros : value)));
  return { columns, values };
}

describe('ChunkColumns', () => {
  it('reads every value as node-api does: the ranges’ ends, NULLs, inline and long strings, runs of one string, across chunks', async () => {
    const edges: Row[] = [
      { s: 'main', b: 0n, n: 0n, h: 0n, f: false, t: 0n },
      { s: 'main', b: -1n, n: -1n, h: -1n, f: true, t: -1n },
      { s: 'BTCUSDT_SPBL', b: INT64_MIN, n: -(2n ** 53n) + 1n, h: INT64_MIN, f: null, t: -62_135_596_800_000_000n },
      { s: 'BTCUSDT_SPBL', b: INT64_MAX, n: 2n ** 53n - 1n, h: INT64_MAX, f: true, t: 253_402_300_799_999_999n },
      { s: null, b: null, n: null, h: INT64_MAX + 1n, f: false, t: null },
      { s: 'a string longer than twelve bytes, ünïcödé', b: 1n, n: 4_294_967_296n, h: INT64_MIN - 1n, f: true, t: 1n },
      { s: 'a string longer than twelve bytes, ünïcödé', b: 2n, n: -4_294_967_297n, h: INT128_MIN, f: false, t: 2n },
      { s: '', b: 3n, n: 20_454n, h: INT128_MAX, f: true, t: 3n },
      { s: 'twelve bytes', b: 4n, n: 5n, h: 10n ** 30n + 123n, f: null, t: 4n },
      { s: 'sell', b: 5n, n: 6n, h: null, f: true, t: 5n },
    ];
    const rows = Array.from({ length: 5000 }, (_, i) => edges[Math.floor(i / 3) % edges.length]!);
    const { columns, values } = await bothWays(rows);
    expect(columns).toHaveLength(5000);
    expect(columns).toEqual(values);
  });

  it('reads any rows as node-api does (property)', async () => {
    const row = fc.record({
      s: fc.option(fc.oneof(fc.constantFrom('main', 'BTCUSDT_SPBL', 'a longer partition name 🙂'), fc.string({ maxLength: 20 })), { nil: null }),
      b: fc.option(fc.bigInt({ min: INT64_MIN, max: INT64_MAX }), { nil: null }),
      n: fc.option(fc.bigInt({ min: -(2n ** 53n) + 1n, max: 2n ** 53n - 1n }), { nil: null }),
      h: fc.option(fc.oneof(fc.bigInt({ min: INT128_MIN, max: INT128_MAX }), fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n })), { nil: null }),
      f: fc.option(fc.boolean(), { nil: null }),
      t: fc.option(fc.bigInt({ min: 0n, max: 4_102_444_800_000_000n }), { nil: null }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(row, { minLength: 1, maxLength: 2500 }), async (rows) => {
        const { columns, values } = await bothWays(rows);
        expect(columns).toEqual(values);
      }),
      { numRuns: 25, seed: 28 },
    );
  });

  it('refuses a column read as another type, and a BIGINT beyond a safe integer read as a number', async () => {
    await db.run("INSERT INTO t VALUES (0, 'x', 9007199254740993, 9007199254740993, 1, true, NULL)");
    for await (const chunk of db.streamCommittedChunks(QUERY)) {
      const read = new ChunkColumns(chunk);
      expect(() => read.hugeints(0)).toThrow(/VARCHAR, not HUGEINT/);
      expect(() => read.strings(1)).toThrow(/BIGINT, not VARCHAR/);
      expect(() => read.numbers(2)).toThrow(/not a safe integer/);
      expect(read.bigints(1)).toEqual([9007199254740993n]);
    }
  });
});
