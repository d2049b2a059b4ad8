import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expandModelSql } from '../src/models/build.ts';
import { loadProject, SQL_DIR } from '../src/models/project.ts';
import type { ModelSettings, OpeningPosition, Pooling } from '../src/models/settings.ts';
import type { Database } from '../src/store/database.ts';
import { buildAll, openModelDb, queryRows } from './support/model-db.ts';

/**
 * The incremental steps of intermediate.int_spot_fifo_segments and int_spot_average_cost
 * (sql/intermediate/<name>.incremental.sql), run the way the build runs them: fills F1 built whole,
 * fills F2 added, int_spot_trades rebuilt, temp.main.model_pending filled as int_spot_trades leaves
 * it (per pool and symbol touched by F2, from_at = the earliest F2 fill's time, null where that is
 * not after the partition's first fill), then each step's statements in one transaction. The tables
 * must then equal a whole rebuild on F1 + F2, digit for digit (EXCEPT ALL both ways), under both
 * poolings, and also when the pending rows are wider than needed.
 */

/** The models under test, and what their whole builds read. */
const MODELS = ['intermediate.int_spot_fifo_segments', 'intermediate.int_spot_average_cost'] as const;
const UPSTREAM = ['+intermediate.int_spot_trades'];

/** A spot fill of a test ledger; amounts are decimal strings, the time in ms. */
interface Fill {
  account: string;
  symbol: string;
  fillId: string;
  atMs: number;
  side: 'buy' | 'sell';
  quantity: string;
  price: string;
  fees: string;
}

/** A pending row as the test hands it to the steps (account is the pool). */
interface Pending {
  account: string | null;
  symbol: string | null;
  fromAt: string | null;
}

const DAY_MS = 86_400_000;
const T0 = Date.UTC(2025, 0, 1);

let db: Database;
beforeAll(async () => {
  db = await openModelDb();
});
afterAll(() => db?.close());

/** The step's statements, the model template expanded as the build expands it, one by one (each ends a line with `;`). */
function stepStatements(model: string): string[] {
  const [layer, name] = model.split('.') as [string, string];
  const text = expandModelSql(readFileSync(path.join(SQL_DIR, layer, `${name}.incremental.sql`), 'utf8'), loadProject().models.find((candidate) => candidate.id === model)!);
  // Comments out first: a comment line of the model's SQL may end with a semicolon.
  return text
    .replace(/--[^\n]*/g, '')
    .split(/;\s*$/m)
    .map((statement) => statement.trim())
    .filter((statement) => statement.replace(/--[^\n]*/g, '').trim() !== '');
}

async function insertFills(fills: readonly Fill[]): Promise<void> {
  for (let start = 0; start < fills.length; start += 500) await insertFillRows(fills.slice(start, start + 500));
}

async function insertFillRows(fills: readonly Fill[]): Promise<void> {
  if (fills.length === 0) return;
  const rows: string[] = [];
  const values: string[] = [];
  for (const fill of fills) {
    const quote = fill.symbol.replace(/_SPBL$/, '').endsWith('USDT') ? 'USDT' : 'USD';
    const record = {
      accountId: '1',
      symbol: fill.symbol,
      baseCoin: fill.symbol.replace(/_SPBL$/, '').slice(0, -quote.length),
      quoteCoin: quote,
      orderId: `o${fill.fillId}`,
      fillId: fill.fillId,
      orderType: 'limit',
      side: fill.side,
      fillPrice: fill.price,
      fillQuantity: fill.quantity,
      fillTotalAmount: '0',
      fees: fill.fees,
      cTime: String(fill.atMs),
    };
    const at = values.length;
    values.push(fill.account, `${fill.account}/${fill.symbol}/${fill.fillId}`, String(fill.atMs), JSON.stringify(record));
    rows.push(`($${at + 1}, '', $${at + 2}, CAST($${at + 3} AS BIGINT), CAST($${at + 4} AS JSON), 'test-run', now())`);
  }
  await db.run(`INSERT INTO raw.spot_fills VALUES ${rows.join(', ')}`, values);
}

/**
 * What int_spot_trades leaves for its children after F2: per pool and symbol with an F2 fill, the
 * earliest F2 fill's time, null where it is not after the partition's first fill (or it is new).
 */
async function minimalPending(f2: readonly Fill[]): Promise<Pending[]> {
  if (f2.length === 0) return [];
  await db.run('CREATE OR REPLACE TEMP TABLE f2_fills (account VARCHAR, fill_id VARCHAR)');
  await db.run(`INSERT INTO f2_fills VALUES ${f2.map((_, index) => `($${2 * index + 1}, $${2 * index + 2})`).join(', ')}`, f2.flatMap((fill) => [fill.account, fill.fillId]));
  const rows = await queryRows<{ pool: string; symbol: string; from_at: string | null }>(
    db,
    `select t.pool, t.symbol,
        case when min(t.event_at) filter (where f.fill_id is not null) > min(t.event_at) filter (where f.fill_id is null and t.lot_source = 'fill')
          then cast(min(t.event_at) filter (where f.fill_id is not null) as varchar) end as from_at
      from intermediate.int_spot_trades as t
      left join f2_fills as f on f.account = t.account and f.fill_id = t.fill_id
      group by t.pool, t.symbol
      having count(f.fill_id) > 0`,
  );
  return rows.map((row) => ({ account: row.pool, symbol: row.symbol, fromAt: row.from_at }));
}

/** Fills temp.main.model_pending and runs one model's step in one transaction, as the build will. */
async function runStep(model: string, pending: readonly Pending[]): Promise<void> {
  await db.run('CREATE OR REPLACE TEMP TABLE model_pending (account VARCHAR, symbol VARCHAR, from_at TIMESTAMPTZ)');
  for (const row of pending) await db.run('INSERT INTO temp.main.model_pending VALUES ($1, $2, CAST($3 AS TIMESTAMPTZ))', [row.account, row.symbol, row.fromAt]);
  // int_spot_average_cost is computed in TypeScript: its step is the program's incremental().
  const program = loadProject().models.find((candidate) => candidate.id === model)?.program;
  await db.transaction(async () => {
    if (program?.incremental !== undefined) await program.incremental(db);
    else for (const statement of stepStatements(model)) await db.run(statement);
  });
}

/** Rows of `model` not in its whole rebuild and the other way round, and both counts. */
async function differences(): Promise<{ model: string; onlyIncremental: number; onlyWhole: number; rows: number; wholeRows: number }[]> {
  const result = [];
  for (const model of MODELS) {
    const aside = `incremental_${model.split('.')[1]}`;
    const [row] = await queryRows<{ only_incremental: string; only_whole: string; rows: string; whole_rows: string }>(
      db,
      `select
        (select count(*) from (select * from temp.main.${aside} except all select * from ${model})) as only_incremental,
        (select count(*) from (select * from ${model} except all select * from temp.main.${aside})) as only_whole,
        (select count(*) from temp.main.${aside}) as rows,
        (select count(*) from ${model}) as whole_rows`,
    );
    result.push({ model, onlyIncremental: Number(row!.only_incremental), onlyWhole: Number(row!.only_whole), rows: Number(row!.rows), wholeRows: Number(row!.whole_rows) });
  }
  return result;
}

/**
 * F1 built whole, F2 added, each step run with `pending` (by default the minimal rows), then the
 * steps' tables compared with a whole rebuild. Returns the differences (all zero when equal).
 */
async function incrementalVersusWhole(settings: Partial<ModelSettings>, f1: readonly Fill[], f2: readonly Fill[], widen?: (minimal: Pending[]) => Pending[]) {
  await db.run('DELETE FROM raw.spot_fills');
  await insertFills(f1);
  await buildAll(db, settings, { select: [...MODELS.map((model) => `+${model}`)] });
  await insertFills(f2);
  await buildAll(db, settings, { select: UPSTREAM });
  const minimal = await minimalPending(f2);
  const pending = widen === undefined ? minimal : widen(minimal);
  for (const model of MODELS) await runStep(model, pending);
  for (const model of MODELS) await db.run(`CREATE OR REPLACE TEMP TABLE incremental_${model.split('.')[1]} AS SELECT * FROM ${model}`);
  await buildAll(db, settings, { select: [...MODELS] });
  return differences();
}

const SETTINGS = { costMethods: ['fifo', 'average'] as const, reportingTimeZone: 'UTC' };

function expectEqual(found: Awaited<ReturnType<typeof incrementalVersusWhole>>): void {
  expect(found.map((row) => ({ model: row.model, onlyIncremental: row.onlyIncremental, onlyWhole: row.onlyWhole, rows: row.rows }))).toEqual(
    found.map((row) => ({ model: row.model, onlyIncremental: 0, onlyWhole: 0, rows: row.wholeRows })),
  );
}

/** A hand ledger's fill: `day` days after 1 Jan 2025 at `hour`. */
const at = (day: number, hour = 10) => T0 + day * DAY_MS + hour * 3_600_000;
let handId = 1000;
const fill = (account: string, symbol: string, atMs: number, side: 'buy' | 'sell', quantity: string, price: string, fees = '0', fillId = String(handId++)): Fill => ({ account, symbol, fillId, atMs, side, quantity, price, fees });

/**
 * A history long enough for many groups (a sell after a buy starts one): days 0..59, a buy of a
 * third-ish price every day, sells on most days, two accounts on XUSDT and one on YUSDT.
 */
function longHistory(days: number): Fill[] {
  const fills: Fill[] = [];
  for (let day = 0; day < days; day += 1) {
    for (const account of ['a', 'b']) {
      fills.push(fill(account, 'XUSDT_SPBL', at(day, 9), 'buy', `${(day % 7) + 1}.333333333333333333`, `${100 + day}.333333333333333333`, '0.000000000000000001'));
      if (day % 5 !== 3) fills.push(fill(account, 'XUSDT_SPBL', at(day, 15), 'sell', `${(day % 3) + 1}.1`, `${103 + day}.777777777777777777`, '0.01'));
      if (day % 4 === 1) fills.push(fill(account, 'XUSDT_SPBL', at(day, 16), 'sell', '0.7', `${99 + day}.1`));
    }
    fills.push(fill('a', 'YUSDT_SPBL', at(day, 11), day % 3 === 0 ? 'sell' : 'buy', '3', `${10 + (day % 9)}.3`));
  }
  return fills;
}

describe('hand cases', () => {
  const history = longHistory(60);
  const f1 = history.filter((entry) => entry.atMs < at(50));
  const later = history.filter((entry) => entry.atMs >= at(50));

  for (const pooling of ['account', 'universal'] as Pooling[]) {
    const settings = { ...SETTINGS, pooling, openingPositions: [{ account: 'a', symbol: 'XUSDT_SPBL', quantity: '2', cost: '150.333333333333' }] as OpeningPosition[] };

    it(`new days appended (${pooling})`, async () => {
      expectEqual(await incrementalVersusWhole(settings, f1, later));
    }, 60_000);

    it(`late fills older than existing ones, fills at the same instant as existing ones, a new symbol, a fill before a partition's first (${pooling})`, async () => {
      const f2 = [
        fill('a', 'XUSDT_SPBL', at(20, 12), 'buy', '1.5', '97.111111111111111111'),
        fill('b', 'XUSDT_SPBL', at(30, 15), 'sell', '2.25', '120.3'), // the instant of b's day-30 sell
        fill('a', 'YUSDT_SPBL', at(40, 11), 'buy', '1', '12', '0', '1'), // the instant of a's day-40 fill, a shorter id: sorts first
        fill('b', 'ZUSDT_SPBL', at(55), 'buy', '1', '5'),
        fill('b', 'ZUSDT_SPBL', at(56), 'sell', '0.5', '6'),
        fill('b', 'YUSDT_SPBL', at(0, 1), 'sell', '1', '10'), // under pooling universal, before YUSDT's first fill
      ];
      expectEqual(await incrementalVersusWhole(settings, history, f2));
    }, 60_000);

    it(`wider pending rows than needed: from_at earlier, an account for its pool, every symbol, every pool (${pooling})`, async () => {
      const f2 = [fill('a', 'XUSDT_SPBL', at(58, 20), 'sell', '1', '140')];
      // Under pooling universal an account named where its pool ('*') is meant must still name that pool.
      const earlier = (minimal: Pending[]) => minimal.map((row) => ({ ...row, account: pooling === 'universal' ? 'b' : row.account, fromAt: new Date(at(25)).toISOString() }));
      expectEqual(await incrementalVersusWhole(settings, history, f2, earlier));
      const everyPool = () => [{ account: '*', symbol: null, fromAt: new Date(at(45)).toISOString() }];
      expectEqual(await incrementalVersusWhole(settings, history, f2, everyPool));
      const everything = () => [{ account: '*', symbol: null, fromAt: null }];
      expectEqual(await incrementalVersusWhole(settings, history, f2, everything));
    }, 60_000);
  }

  for (const pooling of ['account', 'universal'] as Pooling[]) {
    it(`a partition's last fills removed (a correction): their rows go, nothing is replayed (${pooling})`, async () => {
      const settings = { ...SETTINGS, pooling };
      await db.run('DELETE FROM raw.spot_fills');
      await insertFills(history);
      await buildAll(db, settings, { select: [...MODELS.map((model) => `+${model}`)] });
      // Every XUSDT fill from day 59 noon on is gone: the partition's last events (both accounts').
      const from = at(59, 12);
      await db.run(`DELETE FROM raw.spot_fills WHERE _record->>'symbol' = 'XUSDT_SPBL' AND _event_ms >= ${from}`);
      await buildAll(db, settings, { select: UPSTREAM, fullRefresh: true });
      const pending = pooling === 'universal' ? [{ account: '*', symbol: 'XUSDT_SPBL', fromAt: new Date(from).toISOString() }] : ['a', 'b'].map((account) => ({ account, symbol: 'XUSDT_SPBL', fromAt: new Date(from).toISOString() }));
      for (const model of MODELS) await runStep(model, pending);
      for (const model of MODELS) await db.run(`CREATE OR REPLACE TEMP TABLE incremental_${model.split('.')[1]} AS SELECT * FROM ${model}`);
      await buildAll(db, settings, { select: [...MODELS] });
      const found = await differences();
      expectEqual(found);
      // The rows did go: the step's table has no row past the partition's last event.
      const [row] = await queryRows<{ n: string }>(
        db,
        `select count(*) as n from temp.main.incremental_int_spot_average_cost as a
          where a.event_seq > (select max(t.event_seq) from intermediate.int_spot_trades as t where t.pool = a.pool and t.symbol = a.symbol)`,
      );
      expect(row!.n).toBe('0');
    }, 60_000);
  }

  it('without fifo and average among the cost methods, both tables stay empty', async () => {
    expectEqual(await incrementalVersusWhole({ costMethods: ['lifo'] }, f1, later));
    const [row] = await queryRows<{ n: string }>(db, 'select (select count(*) from intermediate.int_spot_fifo_segments) + (select count(*) from intermediate.int_spot_average_cost) as n');
    expect(row!.n).toBe('0');
  }, 60_000);
});

/** Quantities and prices with many decimals, thirds, and round ones: rounding must matter. */
const decimalArbitrary = (whole: number) =>
  fc.oneof(
    fc.integer({ min: 1, max: whole }).map(String),
    fc.tuple(fc.integer({ min: 0, max: whole }), fc.constantFrom('333333333333333333', '666666666666666667', '1', '999999999999999999', '5')).map(([int, fraction]) => `${int}.${fraction}`),
    fc.tuple(fc.integer({ min: 0, max: whole }), fc.bigInt(1n, 10n ** 18n - 1n)).map(([int, fraction]) => `${int}.${fraction.toString().padStart(18, '0')}`),
  );

interface DrawnFill {
  account: string;
  symbol: string;
  side: 'buy' | 'sell';
  quantity: string;
  price: string;
  fees: string;
  gapMs: number;
  /** Below the ledger's late rate (percent): the fill comes with F2 though it is older than the split. */
  lateDraw: number;
}

const drawnFill: fc.Arbitrary<DrawnFill> = fc.record({
  account: fc.constantFrom('a', 'a', 'a', 'b'),
  symbol: fc.constantFrom('X', 'X', 'X', 'X', 'Y', 'Z'),
  // Runs of one side make groups of several sells and several buys.
  side: fc.constantFrom('buy', 'buy', 'sell') as fc.Arbitrary<'buy' | 'sell'>,
  quantity: decimalArbitrary(30),
  price: decimalArbitrary(500),
  fees: fc.constantFrom('0', '0', '0.000000000000000001', '0.01'),
  gapMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: DAY_MS })),
  lateDraw: fc.integer({ min: 0, max: 99 }),
});

/** Ledgers per build: each has its own symbols, so each build checks several. */
const LEDGERS_PER_BUILD = 6;

/**
 * A random ledger (accounts a and b, symbols X, Y, Z of ledger `index`, 30 to 300 fills: groups
 * enough for 6 or 7 levels of the scan) split into F1 and F2 at a random time: every fill after it
 * is in F2, and some before it too (late fills), so F2 reaches back and splits groups anywhere;
 * fills share instants.
 */
const ledgerArbitrary = (index: number) =>
  fc
    .record({
      fills: fc.array(drawnFill, { minLength: 30, maxLength: 300, size: 'max' }),
      splitAt: fc.double({ min: 0.2, max: 1, noNaN: true }),
      lateRate: fc.constantFrom(0, 0, 3, 30),
      opening: fc.boolean(),
    })
    .map(({ fills, splitAt, lateRate, opening }) => {
      let atMs = T0;
      const all = fills.map((drawn, position) => {
        atMs += drawn.gapMs;
        // A buy's fee is in the base coin, below its quantity.
        const fees = drawn.side === 'buy' && drawn.fees === '0.01' ? '0' : drawn.fees;
        const entry: Fill = { account: drawn.account, symbol: `${drawn.symbol}${index}USDT_SPBL`, fillId: String(1_000_000 * (index + 1) + position * 7), atMs, side: drawn.side, quantity: drawn.quantity, price: drawn.price, fees };
        // Late fills from the second fifth on: most partitions then keep a part before from_at.
        return { entry, late: drawn.lateDraw < lateRate && position >= fills.length / 5 };
      });
      const cut = T0 + Math.floor((atMs - T0) * splitAt);
      const f1 = all.filter(({ entry, late }) => entry.atMs < cut && !late).map(({ entry }) => entry);
      const f2 = all.filter(({ entry, late }) => entry.atMs >= cut || late).map(({ entry }) => entry);
      const openings: OpeningPosition[] = opening ? [{ account: 'a', symbol: `X${index}USDT_SPBL`, quantity: '1.333333333333333333', cost: '100.333333333333' }] : [];
      return { f1, f2, openings };
    });

const buildArbitrary = fc.tuple(...Array.from({ length: LEDGERS_PER_BUILD }, (_, index) => ledgerArbitrary(index)));

describe('random ledgers: incremental equals whole', () => {
  for (const pooling of ['account', 'universal'] as Pooling[]) {
    it(`after a random split (${pooling})`, async () => {
      await fc.assert(
        fc.asyncProperty(buildArbitrary, async (ledgers) => {
          const found = await incrementalVersusWhole(
            { ...SETTINGS, pooling, openingPositions: ledgers.flatMap((ledger) => ledger.openings) },
            ledgers.flatMap((ledger) => ledger.f1),
            ledgers.flatMap((ledger) => ledger.f2),
          );
          expect(found.map((row) => [row.onlyIncremental, row.onlyWhole, row.rows - row.wholeRows])).toEqual(MODELS.map(() => [0, 0, 0]));
        }),
        // Shrinking a build of six ledgers would take minutes: a failure reports the build as drawn.
        { numRuns: 3, endOnFailure: true },
      );
    }, 60_000);
  }
});
