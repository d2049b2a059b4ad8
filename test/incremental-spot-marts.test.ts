import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPricesFile } from '../src/models/prices-file.ts';
import { expandModelSql } from '../src/models/build.ts';
import { loadProject } from '../src/models/project.ts';
import type { CostMethod, ModelSettings, Pooling } from '../src/models/settings.ts';
import type { Database } from '../src/store/database.ts';
import { buildAll, insertHistory, openModelDb, queryRows, spotFill } from './support/model-db.ts';
import { spotLedgerArbitrary, type SpotFill, type SpotLedger } from './support/spot-reference.ts';

/**
 * Incremental steps of the spot marts (sql/marts/<name>.incremental.sql) against whole rebuilds,
 * called as the build calls them (docs/plans/incremental-builds.md, "The contract"):
 *   1. fills F1, whole build;
 *   2. fills F2 (new days, late fills older than kept ones, fills at the instant of kept ones, new
 *      symbols and accounts);
 *   3. every upstream of the marts rebuilt whole (the marts keep their F1 tables);
 *   4. temp.main.model_pending as the parents leave it: per pool (account, or '*' under pooling
 *      universal) and symbol touched by F2, the earliest F2 instant there (NULL when not after the
 *      partition's first fill), with uk chosen also 30 days earlier from the start of that day
 *      (int_spot_lot_segments' rows: they hide the exact frontier, so cases without uk test it), with a
 *      reporting currency int_prices' row ('*', NULL, start of F2's first day: derived prices of
 *      F2's days changed), then each step in its own transaction (the monthly step gets what the
 *      daily one left);
 *   5. the marts compared, row for row and digit for digit, with a whole rebuild on F1 + F2.
 */

const COST_METHODS: readonly CostMethod[] = ['fifo', 'average', 'lifo', 'hifo', 'uk'];
const MARTS = ['spot_lot_matches', 'spot_realized_pnl_daily', 'spot_realized_pnl_monthly'] as const;
const MART_IDS = MARTS.map((name) => `marts.${name}`);
/** Every upstream of the three marts (staging, trades, segments, average cost, prices). */
const UPSTREAMS = { select: MART_IDS.map((id) => `+${id}`), exclude: MART_IDS, fullRefresh: true };
/** Each mart's step as the build runs it: its `{{ model(…) }}` template expanded to the model's own SQL. */
const STEPS = new Map(
  MARTS.map((name) => {
    const model = loadProject().models.find((candidate) => candidate.id === `marts.${name}`)!;
    return [name, expandModelSql(model.incrementalSql!, model)];
  }),
);
const TIME_ZONE = 'America/New_York';

interface Pending {
  account: string | null;
  symbol: string | null;
  from_at: string | null;
  /** A bounded change (int_spot_lot_segments' uk sells before the night): its rows up to here only. */
  to_at?: string | null;
}

interface Fill {
  account: string;
  record: SpotFill & { symbol: string };
}

let db: Database;
const folders: string[] = [];
beforeAll(async () => {
  db = await openModelDb();
});
afterAll(() => {
  db?.close();
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A prices file in the reporting currency USD. */
function pricesFile(lines: readonly string[]): ModelSettings['prices'] {
  const dir = mkdtempSync(path.join(tmpdir(), 'exledger-prices-'));
  folders.push(dir);
  const file = path.join(dir, 'prices.csv');
  writeFileSync(file, ['date,coin,currency,price', ...lines, ''].join('\n'));
  return readPricesFile(file);
}

function settingsFor(pooling: Pooling, currency: boolean, prices: readonly string[] = [], openingPositions: ModelSettings['openingPositions'] = [], costMethods = COST_METHODS): Partial<ModelSettings> {
  return {
    costMethods,
    openingPositions,
    pooling,
    reportingTimeZone: TIME_ZONE,
    reportingCurrency: currency ? 'USD' : null,
    prices: currency ? pricesFile(prices) : null,
  };
}

async function resetRaw(): Promise<void> {
  await db.run('DELETE FROM raw.spot_fills');
}

/** Fills into raw.spot_fills in one statement. */
async function insertFills(fills: readonly Fill[]): Promise<void> {
  if (fills.length === 0) return;
  const rows: string[] = [];
  const values: string[] = [];
  for (const { account, record } of fills) {
    const full = { accountId: '1', orderId: `o${record.fillId}`, orderType: record.fillPrice === '' ? '' : 'limit', ...record };
    const at = values.length;
    values.push(account, `${record.symbol}/${record.fillId}`, record.cTime, JSON.stringify(full));
    rows.push(`($${at + 1}, '', $${at + 2}, CAST($${at + 3} AS BIGINT), CAST($${at + 4} AS JSON), 'test-run', now())`);
  }
  await db.run(`INSERT INTO raw.spot_fills VALUES ${rows.join(', ')}`, values);
}

/**
 * What the marts' parents leave in model_pending after F2 (see the top of this file). `pooling`
 * decides the pool, `uk` adds lot segments' widened rows, `currency` int_prices' row.
 */
async function parentsPending(f1: readonly Fill[], f2: readonly Fill[], pooling: Pooling, uk: boolean, currency: boolean): Promise<Pending[]> {
  const pool = (fill: Fill) => (pooling === 'universal' ? '*' : fill.account);
  const first = new Map<string, number>();
  const changed = new Map<string, number>();
  for (const fill of [...f1, ...f2]) {
    const key = `${pool(fill)}\u0000${fill.record.symbol}`;
    first.set(key, Math.min(first.get(key) ?? Infinity, Number(fill.record.cTime)));
  }
  for (const fill of f2) {
    const key = `${pool(fill)}\u0000${fill.record.symbol}`;
    changed.set(key, Math.min(changed.get(key) ?? Infinity, Number(fill.record.cTime)));
  }
  const pending: Pending[] = [];
  for (const [key, at] of changed) {
    const [account, symbol] = key.split('\u0000') as [string, string];
    const fromAt = at > first.get(key)! ? new Date(at).toISOString() : null;
    pending.push({ account, symbol, from_at: fromAt });
    if (fromAt !== null && uk) pending.push({ account, symbol, from_at: await dayStart(fromAt, 30) });
  }
  if (currency && f2.length > 0) {
    const earliest = new Date(Math.min(...f2.map((fill) => Number(fill.record.cTime)))).toISOString();
    pending.push({ account: '*', symbol: null, from_at: await dayStart(earliest, 0) });
  }
  return pending;
}

/** The start of the reporting-zone day `days` before the day of `at`. */
async function dayStart(at: string, days: number): Promise<string> {
  const [row] = await queryRows<{ at: string }>(
    db,
    `select cast(timezone('${TIME_ZONE}', cast(cast(timezone('${TIME_ZONE}', timestamptz '${at}') as date) - ${days} as timestamp)) as varchar) as at`,
  );
  return row!.at;
}

async function setPending(rows: readonly Pending[]): Promise<void> {
  await db.run('CREATE OR REPLACE TEMP TABLE model_pending (account VARCHAR, symbol VARCHAR, from_at TIMESTAMPTZ, to_at TIMESTAMPTZ)');
  for (const row of rows) await db.run('INSERT INTO temp.main.model_pending VALUES ($1, $2, CAST($3 AS TIMESTAMPTZ), CAST($4 AS TIMESTAMPTZ))', [row.account, row.symbol, row.from_at, row.to_at ?? null]);
}

/** Runs the marts' steps as the build would: each with its parents' pending rows, monthly with daily's. */
async function runSteps(pending: readonly Pending[]): Promise<void> {
  await setPending(pending);
  await db.transaction(() => db.run(STEPS.get('spot_lot_matches')!));
  await setPending(pending);
  await db.transaction(() => db.run(STEPS.get('spot_realized_pnl_daily')!));
  await db.transaction(() => db.run(STEPS.get('spot_realized_pnl_monthly')!));
  await db.run('DROP TABLE temp.main.model_pending');
}

/** Inserts fills as a sync stores them (each logged as a raw change), so that the build takes them incrementally. */
async function insertLogged(fills: readonly Fill[]): Promise<void> {
  for (const { account, record } of fills) await insertHistory(db, 'spot_fills', [record], { account });
}

/** Per mart: rows only in the incremental table, rows only in the whole rebuild, and both counts. */
async function differences(): Promise<Record<string, { onlyIncremental: unknown[]; onlyWhole: unknown[]; counts: [string, string] }>> {
  const found: Record<string, { onlyIncremental: unknown[]; onlyWhole: unknown[]; counts: [string, string] }> = {};
  for (const name of MARTS) {
    const onlyIncremental = await queryRows(db, `select * from (from incremental_${name} except all from marts.${name}) limit 5`);
    const onlyWhole = await queryRows(db, `select * from (from marts.${name} except all from incremental_${name}) limit 5`);
    const [counts] = await queryRows<{ a: string; b: string }>(db, `select (select count(*) from incremental_${name}) as a, (select count(*) from marts.${name}) as b`);
    if (onlyIncremental.length > 0 || onlyWhole.length > 0 || counts!.a !== counts!.b) found[name] = { onlyIncremental, onlyWhole, counts: [counts!.a, counts!.b] };
  }
  return found;
}

/**
 * The whole recipe: F1 built whole, F2 added, upstreams rebuilt, the steps run with `pending`
 * (the parents' rows unless given), the marts set aside and compared with a whole rebuild.
 */
async function incrementalAgainstWhole(f1: readonly Fill[], f2: readonly Fill[], settings: Partial<ModelSettings>, extraPending: readonly Pending[] = []): Promise<ReturnType<typeof differences>> {
  await resetRaw();
  await insertFills(f1);
  await buildAll(db, settings, { select: MART_IDS.map((id) => `+${id}`), fullRefresh: true });
  await insertFills(f2);
  await buildAll(db, settings, UPSTREAMS);
  const pending = await parentsPending(f1, f2, settings.pooling!, settings.costMethods!.includes('uk'), settings.reportingCurrency !== null);
  await runSteps([...pending, ...extraPending]);
  for (const name of MARTS) await db.run(`CREATE OR REPLACE TEMP TABLE incremental_${name} AS FROM marts.${name}`);
  await buildAll(db, settings, { select: MART_IDS, fullRefresh: true });
  return differences();
}

const at = (day: string, time = '12:00:00') => `2025-${day}T${time}Z`;
const fill = (account: string, symbol: string, id: string, when: string, side: 'buy' | 'sell', quantity: string, price: string, fees = '0'): Fill => ({
  account,
  record: spotFill(symbol, id, when, side, quantity, price, fees) as Fill['record'],
});

/** A hand ledger over two months, two accounts, two symbols. */
const F1: Fill[] = [
  fill('a', 'BTCUSDT_SPBL', '1', at('01-05'), 'buy', '1', '30000', '0.001'),
  fill('a', 'BTCUSDT_SPBL', '2', at('01-20'), 'buy', '2', '31000'),
  fill('a', 'BTCUSDT_SPBL', '3', at('02-03'), 'sell', '1.5', '35000', '5'),
  fill('b', 'BTCUSDT_SPBL', '4', at('01-10'), 'buy', '1', '29000'),
  fill('b', 'BTCUSDT_SPBL', '5', at('02-10'), 'sell', '0.5', '36000'),
  fill('a', 'ETHUSDT_SPBL', '6', at('01-07'), 'buy', '10', '2000'),
  fill('a', 'ETHUSDT_SPBL', '7', at('02-15'), 'sell', '4', '2500'),
  fill('a', 'ETHUSDT_SPBL', '8', at('02-16'), 'sell', '8', '2600'),
];

/** New days, a late fill (before a kept sell), a fill at a kept fill's instant, a new symbol. */
const F2: Fill[] = [
  fill('a', 'BTCUSDT_SPBL', '9', at('02-20'), 'sell', '0.5', '37000'),
  fill('a', 'BTCUSDT_SPBL', '10', at('01-25'), 'buy', '1', '30500'),
  fill('b', 'BTCUSDT_SPBL', '11', at('02-10'), 'buy', '0.25', '36000'),
  fill('a', 'ETHUSDT_SPBL', '12', at('02-16', '23:30:00'), 'buy', '3', '2550'),
  fill('b', 'SOLUSDT_SPBL', '13', at('02-17'), 'buy', '5', '100'),
  fill('b', 'SOLUSDT_SPBL', '14', at('02-18'), 'sell', '6', '110'),
];

const PRICES = ['2025-01-20,USDT,USD,0.999', '2025-02-03,USDT,USD,1.001', '2025-02-20,USDT,USD,0.998', '2025-02-18,SOL,USD,111'];

describe('spot marts: incremental steps equal whole rebuilds', () => {
  // Two of the four pooling and currency pairs (the random ledgers below draw all four).
  for (const [pooling, currency] of [['account', false], ['universal', true]] as const) {
    it(`hand ledger, pooling ${pooling}, ${currency ? 'reporting currency USD' : 'no reporting currency'}: every cost method`, async () => {
      expect(await incrementalAgainstWhole(F1, F2, settingsFor(pooling, currency, PRICES))).toEqual({});
      // F2 is in the marts: sell 9 (a, 0.5 BTC on 02-20) took one lot per method under pooling
      // account (fifo, lifo, hifo: fill 2, uk: the pool). Under universal lifo and hifo took
      // 0.25 from b's fill 11 (the latest, and dearest, lot) and 0.25 from a's fill 2 (lifo) or 10 (hifo).
      const [row] = await queryRows(db, "select count(*) filter (where sell_fill_id = '9') as matches, count(distinct cost_method) as methods from marts.spot_lot_matches");
      expect(row).toEqual({ matches: pooling === 'account' ? '4' : '6', methods: '4' });
    });
  }

  for (const pooling of ['account', 'universal'] as const) {
    it(`hand ledger, pooling ${pooling}, without uk and reporting currency (their rows hide the exact frontier)`, async () => {
      expect(await incrementalAgainstWhole(F1, F2, settingsFor(pooling, false, [], [], ['fifo', 'average', 'lifo', 'hifo']))).toEqual({});
    });
  }

  it('a night whose sells take from lots bought long before (lifo and hifo reach a lot of 116 days before that fifo does not name, every method an opening lot): the marts equal a whole rebuild', async () => {
    // spot_lot_matches finds most lots' instants among the trades of the 40 days before its
    // frontier (a lot a FIFO segment names has its instant there), and the others apart: the
    // opening lot (no instant), and the lot of 01-05, which the sell of 01-07 left to lifo and hifo
    // (it took fill 26, the latest and dearest) but not to fifo (it took fill 21).
    const old: Fill[] = [
      fill('a', 'BTCUSDT_SPBL', '21', at('01-05'), 'buy', '1', '20000'),
      fill('a', 'BTCUSDT_SPBL', '26', at('01-06'), 'buy', '1', '60000'),
      fill('a', 'BTCUSDT_SPBL', '27', at('01-07'), 'sell', '1', '50000'),
      fill('a', 'BTCUSDT_SPBL', '22', at('04-25'), 'buy', '0.5', '30000'),
      fill('a', 'ETHUSDT_SPBL', '23', at('04-26'), 'buy', '1', '2000'),
    ];
    const night: Fill[] = [fill('a', 'BTCUSDT_SPBL', '24', at('05-01'), 'sell', '1.2', '40000'), fill('a', 'ETHUSDT_SPBL', '25', at('05-01'), 'sell', '2.5', '2100')];
    const opening = [{ account: 'a', symbol: 'ETHUSDT_SPBL', quantity: '2', cost: '3000' }];
    for (const pooling of ['account', 'universal'] as const) {
      expect(await incrementalAgainstWhole(old, night, settingsFor(pooling, false, [], opening))).toEqual({});
      // lifo and hifo alike: 0.5 of 04-25 (the latest, and dearer), then 0.7 of 01-05.
      const taken = await queryRows<{ cost_method: string; buy_fill_id: string | null; lot_source: string; quantity: string }>(
        db,
        "select cost_method, buy_fill_id, lot_source, cast(quantity as varchar) as quantity from marts.spot_lot_matches where sell_fill_id in ('24', '25') and cost_method in ('lifo', 'hifo') order by all",
      );
      expect(taken).toEqual([
        { cost_method: 'hifo', buy_fill_id: '21', lot_source: 'fill', quantity: '0.700000000000000000' },
        { cost_method: 'hifo', buy_fill_id: '22', lot_source: 'fill', quantity: '0.500000000000000000' },
        { cost_method: 'hifo', buy_fill_id: '23', lot_source: 'fill', quantity: '1.000000000000000000' },
        { cost_method: 'hifo', buy_fill_id: null, lot_source: 'opening', quantity: '1.500000000000000000' },
        { cost_method: 'lifo', buy_fill_id: '21', lot_source: 'fill', quantity: '0.700000000000000000' },
        { cost_method: 'lifo', buy_fill_id: '22', lot_source: 'fill', quantity: '0.500000000000000000' },
        { cost_method: 'lifo', buy_fill_id: '23', lot_source: 'fill', quantity: '1.000000000000000000' },
        { cost_method: 'lifo', buy_fill_id: null, lot_source: 'opening', quantity: '1.500000000000000000' },
      ]);
    }
  });

  it('wider pending rows than needed (earlier from_at, symbol NULL, account *, from_at NULL) give the same tables', async () => {
    const wide: Pending[] = [
      { account: 'a', symbol: 'ETHUSDT_SPBL', from_at: '2025-01-01T00:00:00Z' },
      { account: 'b', symbol: null, from_at: '2025-02-01T00:00:00Z' },
      { account: '*', symbol: 'BTCUSDT_SPBL', from_at: null },
    ];
    expect(await incrementalAgainstWhole(F1, F2, settingsFor('account', true, PRICES), wide)).toEqual({});
    expect(await incrementalAgainstWhole(F1, F2, settingsFor('universal', false), [{ account: '*', symbol: null, from_at: null }])).toEqual({});
  });

  it('through the build itself (sync-logged fills, an incremental build after F2): the marts equal a whole rebuild', async () => {
    // The marts take their step only when every parent was brought up to date incrementally
    // (a parent rebuilt whole hands on "everything"), so until int_spot_fifo_segments and
    // int_spot_average_cost have steps this checks the build's whole path, and then the steps.
    await resetRaw();
    const settings = settingsFor('universal', true, PRICES);
    await insertLogged(F1);
    await buildAll(db, settings, { select: MART_IDS.map((id) => `+${id}`), fullRefresh: true });
    await insertLogged(F2);
    const results = await buildAll(db, settings, { select: MART_IDS.map((id) => `+${id}`) });
    expect(results.filter((result) => MART_IDS.includes(result.id)).map((result) => result.status)).toEqual(['ok', 'ok', 'ok']);
    for (const name of MARTS) await db.run(`CREATE OR REPLACE TEMP TABLE incremental_${name} AS FROM marts.${name}`);
    await buildAll(db, settings, { select: MART_IDS.map((id) => `+${id}`), fullRefresh: true });
    expect(await differences()).toEqual({});
  });

  it('through the build, uk matching a sell of 20 days before with a new buy: the sell is handed on as a bounded change, and the marts equal a whole rebuild', async () => {
    // 25 Jan: 4 sold, 1 from the buy of 3 Feb (30-day rule), 3 from the pool. The night of 14 Feb
    // buys 2 and sells 1: uk gives the sell of that day one (same day) and the sell of 25 Jan the
    // other (the earliest disposal of the 30 days before), whose segments change; the sell of
    // 5 Feb (from the pool, at the same average cost) does not.
    const U = 'UKZUSD_SPBL';
    const before: Fill[] = [
      fill('a', U, '41', at('01-05'), 'buy', '10', '100'),
      fill('a', U, '42', at('01-25'), 'sell', '4', '120'),
      fill('a', U, '43', at('02-03'), 'buy', '1', '90'),
      fill('a', U, '44', at('02-05'), 'sell', '1', '130'),
    ];
    const night: Fill[] = [fill('a', U, '45', at('02-14'), 'buy', '2', '95'), fill('a', U, '46', at('02-14', '15:00:00'), 'sell', '1', '140')];
    await resetRaw();
    const settings = settingsFor('account', false);
    await insertLogged(before);
    await buildAll(db, settings, { select: MART_IDS.map((id) => `+${id}`), fullRefresh: true });
    await insertLogged(night);
    const results = await buildAll(db, settings, { select: MART_IDS.map((id) => `+${id}`) });
    expect(results.filter((result) => ['intermediate.int_spot_lot_segments', 'marts.spot_lot_matches'].includes(result.id)).map((result) => result.how)).toEqual(['incremental', 'incremental']);
    // What both recorded: the sell of 25 Jan alone (bounded), and the night from its first fill on.
    const recorded = await queryRows(
      db,
      `select model, account, symbol, strftime(from_at at time zone 'UTC', '%m-%d %H:%M') as "from", strftime(to_at at time zone 'UTC', '%m-%d %H:%M') as "to"
       from settings.model_changes
       where model in ('intermediate.int_spot_lot_segments', 'marts.spot_lot_matches') and symbol = '${U}'
           and change_seq > (select max(change_seq) from settings.model_changes where account is null)
       order by all`,
    );
    expect(recorded).toEqual([
      { model: 'intermediate.int_spot_lot_segments', account: 'a', symbol: U, from: '01-25 12:00', to: '01-25 12:00' },
      { model: 'intermediate.int_spot_lot_segments', account: 'a', symbol: U, from: '02-14 12:00', to: null },
      { model: 'marts.spot_lot_matches', account: 'a', symbol: U, from: '01-25 12:00', to: '01-25 12:00' },
      { model: 'marts.spot_lot_matches', account: 'a', symbol: U, from: '02-14 12:00', to: null },
    ]);
    const ukOf = (sell: string) =>
      queryRows(db, `select match_rule, buy_fill_id, cast(quantity as varchar) as quantity from marts.spot_lot_matches where cost_method = 'uk' and sell_fill_id = '${sell}' order by all`);
    expect(await ukOf('42')).toEqual([
      { match_rule: 'pool', buy_fill_id: null, quantity: '2.000000000000000000' },
      { match_rule: 'thirty_day', buy_fill_id: '43', quantity: '1.000000000000000000' },
      { match_rule: 'thirty_day', buy_fill_id: '45', quantity: '1.000000000000000000' },
    ]);
    for (const name of MARTS) await db.run(`CREATE OR REPLACE TEMP TABLE incremental_${name} AS FROM marts.${name}`);
    await buildAll(db, settings, { select: MART_IDS.map((id) => `+${id}`), fullRefresh: true });
    expect(await differences()).toEqual({});
  });

  it('nothing pending for an account and symbol leaves its rows as they were', async () => {
    // No F2: the steps with a pending row of a symbol that did not change rewrite it identically.
    expect(await incrementalAgainstWhole(F1, [], settingsFor('account', true, PRICES), [{ account: 'a', symbol: 'ETHUSDT_SPBL', from_at: '2025-02-16T00:00:00Z' }])).toEqual({});
  });
});

/**
 * Random ledgers: six (account, symbol) slots, two symbols shared by two accounts (one pool under
 * pooling universal). MID is S0's base and S1's and S3's quote coin: with a reporting currency its
 * price is derived from S0's fills of the day (QUOTE has file prices on most days), so F2's fills
 * on an old day change old days' values. Each fill is in F1 or F2 at random (late fills, fills at
 * a kept fill's instant); a slot may be all F1 or all F2 (a new symbol or account). Extra pending
 * rows are wider than needed: account '*', symbol NULL, from_at NULL or early.
 */
const SLOTS = [
  { account: 'acct0', symbol: 'S0', baseCoin: 'MID', quoteCoin: 'QUOTE' },
  { account: 'acct1', symbol: 'S0', baseCoin: 'MID', quoteCoin: 'QUOTE' },
  { account: 'acct0', symbol: 'S1', baseCoin: 'B1', quoteCoin: 'MID' },
  { account: 'acct2', symbol: 'S1', baseCoin: 'B1', quoteCoin: 'MID' },
  { account: 'acct1', symbol: 'S2', baseCoin: 'B2', quoteCoin: 'QUOTE' },
  { account: 'acct2', symbol: 'S3', baseCoin: 'B3', quoteCoin: 'MID' },
] as const;
const RUNS = 5;

const slotArbitrary = (index: number) =>
  fc.record({
    ledger: spotLedgerArbitrary(SLOTS[index]!.account, SLOTS[index]!.symbol, index),
    split: fc.oneof({ weight: 4, arbitrary: fc.array(fc.boolean(), { minLength: 24, maxLength: 24 }) }, { weight: 1, arbitrary: fc.constantFrom(Array(24).fill(false), Array(24).fill(true)) }),
  });

const widePendingArbitrary = fc.array(
  fc.record({
    account: fc.constantFrom<string | null>('*', 'acct0', 'acct1', 'acct2'),
    symbol: fc.constantFrom<string | null>(null, 'S0', 'S1', 'S2', 'S3'),
    from_at: fc.option(fc.integer({ min: Date.UTC(2024, 11, 1), max: Date.UTC(2026, 2, 1) }).map((ms) => new Date(ms).toISOString()), { freq: 4 }),
  }),
  { maxLength: 3 },
);

const runArbitrary = fc.record({
  slots: fc.tuple(...SLOTS.map((_, index) => slotArbitrary(index))),
  pooling: fc.constantFrom<Pooling>('account', 'universal'),
  currency: fc.boolean(),
  uk: fc.boolean(),
  wide: widePendingArbitrary,
  // Days of the year without a QUOTE price (day % priceGap === 0 has none).
  priceGap: fc.integer({ min: 2, max: 5 }),
});

/** QUOTE's closes in USD over 2025 and early 2026, every day but each priceGap-th, distinct prices. */
function quoteCloses(priceGap: number): string[] {
  const lines: string[] = [];
  for (let day = 0; day < 430; day += 1) {
    if (day % priceGap === 0) continue;
    lines.push(`${new Date(Date.UTC(2025, 0, 1) + day * 86_400_000).toISOString().slice(0, 10)},QUOTE,USD,1.${String(day).padStart(3, '0')}7`);
  }
  return lines;
}

describe('spot marts: incremental steps equal whole rebuilds on random ledgers', () => {
  it(`${RUNS} random F1/F2 splits over six ledgers, random pooling, reporting currency and uk or not (its 30-day widening hides the exact frontier), wide pending rows`, async () => {
    await fc.assert(
      fc.asyncProperty(runArbitrary, async ({ slots, pooling, currency, uk, wide, priceGap }) => {
        const f1: Fill[] = [];
        const f2: Fill[] = [];
        const ledgers: SpotLedger[] = slots.map(({ ledger }, index) => ({ ...ledger, baseCoin: SLOTS[index]!.baseCoin, quoteCoin: SLOTS[index]!.quoteCoin }));
        ledgers.forEach((ledger, index) => {
          ledger.fills.forEach((drawn, at) => {
            // int_prices overflows (INT128, fill_total_amount_e16 * 100) on the generator's largest
            // totals (1e21), and a derived price on the largest PnLs: valued runs keep totals below 1e15.
            if (currency && BigInt(drawn.fillTotalAmount.split('.')[0]!) >= 10n ** 15n) return;
            const record = { ...drawn, symbol: ledger.symbol, baseCoin: ledger.baseCoin, quoteCoin: ledger.quoteCoin };
            (slots[index]!.split[at] ? f2 : f1).push({ account: ledger.account, record });
          });
        });
        const openings = ledgers.flatMap((ledger) => (ledger.opening === undefined ? [] : [{ account: ledger.account, symbol: ledger.symbol, ...ledger.opening }]));
        expect(await incrementalAgainstWhole(f1, f2, settingsFor(pooling, currency, quoteCloses(priceGap), openings, uk ? COST_METHODS : COST_METHODS.filter((method) => method !== 'uk')), wide)).toEqual({});
      }),
      { numRuns: RUNS },
    );
  }, 120_000);
});

