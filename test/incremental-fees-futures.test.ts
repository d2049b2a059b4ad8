import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { ModelResult } from '../src/models/build.ts';
import type { ModelSettings } from '../src/models/settings.ts';
import type { Database } from '../src/store/database.ts';
import { buildAll, futuresAccountRecord, insertHistory, insertSnapshot, openModelDb, queryRows, spotFill } from './support/model-db.ts';

/**
 * The incremental steps of the futures and fees chains (sql/<layer>/<name>.incremental.sql), through
 * the real build: a whole build, more history logged as the sync logs it, a second build (which must
 * take it incrementally), then each table compared, row for row (EXCEPT ALL both ways, equal counts),
 * with a whole rebuild of the same history (--full-refresh).
 */

/** The models with an incremental step here. */
const MODELS = [
  'intermediate.int_futures_fill_days',
  'intermediate.int_futures_position_months',
  'intermediate.int_fees_legs',
  'intermediate.int_fees_periods',
  'marts.fees_daily',
  'marts.fees_monthly',
  'marts.futures_pnl_daily',
  'marts.futures_pnl_monthly',
] as const;

/** Each build covers these marts and what they read: the rest of the project would only add time. */
const SELECT = ['+marts.fees_daily', '+marts.fees_monthly', '+marts.futures_pnl_monthly', '+intermediate.int_futures_position_months'];

let db: Database;
afterEach(() => db?.close());

/** What a fill does to its position: a long opened by a buy and closed by a sell, a short the other way. */
type FillSide = 'OPEN_LONG' | 'CLOSE_LONG' | 'OPEN_SHORT' | 'CLOSE_SHORT';

function futuresFill(tradeId: string, symbol: string, at: string, value: string, fee: string, pnl = '0', liquidateFee = '0', side: FillSide = 'OPEN_LONG'): object {
  const long = side.endsWith('LONG');
  return {
    tradeId,
    orderId: `9${tradeId}`,
    symbol,
    marginMode: 'SHARED',
    separatedMode: 'COMBINED',
    positionSide: long ? 'LONG' : 'SHORT',
    orderSide: long === side.startsWith('OPEN') ? 'BUY' : 'SELL',
    fillSize: '1',
    fillValue: value,
    fillFee: fee,
    liquidateFee,
    realizePnl: pnl,
    direction: side,
    liquidateType: liquidateFee === '0' ? '' : 'FORCE_LIQUIDATE',
    legacyOrdeDirection: side,
    createdTime: String(Date.parse(at)),
  };
}

function bill(billId: string, coin: string, bizType: string, at: string, delta: string, fees: string): object {
  return { billId, coinId: coin === 'USDT' ? 2 : 1, coinName: coin, bizType, deltaAmount: delta, afterAmount: '0', fees, cTime: String(Date.parse(at)) };
}

/** Contracts, coin names and futures collateral (funding rows): snapshots, taken before the first build only. */
async function snapshots(): Promise<void> {
  await insertSnapshot(db, 'futures_contracts', '2026-02-01T00:00:00Z', [
    { symbol: 'cmt_btcusdt', underlying_index: 'BTC', quote_currency: 'USDT', coin: 'USDT', contract_val: '0.0001', forwardContractFlag: true },
    { symbol: 'cmt_ethusdt', underlying_index: 'ETH', quote_currency: 'USDT', coin: 'USDT', contract_val: '0.001', forwardContractFlag: true },
    // Coin-margined: the fee in BTC, the volume in USD.
    { symbol: 'cmt_btcusd', underlying_index: 'BTC', quote_currency: 'USD', coin: 'BTC', contract_val: '100', forwardContractFlag: false },
  ]);
  await insertSnapshot(db, 'currencies', '2026-02-01T00:00:00Z', [{ coinId: '2', coinName: 'USDT', transfer: 'true', chains: [] }]);
  for (const [at, cum] of [['2026-02-20T00:00:00Z', '5'], ['2026-02-28T23:30:00Z', '7.5'], ['2026-03-02T04:00:00Z', '6.25']] as const) {
    await insertSnapshot(db, 'futures_accounts', at, [futuresAccountRecord(cum)]);
    await insertSnapshot(db, 'futures_accounts', at, [futuresAccountRecord(cum === '5' ? '1' : '2')], { account: 'alt' });
  }
}

/** The first history: two accounts, spot, futures and bills from late February into March. */
async function firstHistory(): Promise<void> {
  await snapshots();
  await insertHistory(db, 'spot_fills', [
    spotFill('BTCUSDT_SPBL', 's1', '2026-02-27T10:00:00Z', 'buy', '1', '40000', '0.001'),
    // 23:30Z: Feb 28 in UTC, Feb 28 18:30 in New York, Mar 1 in Tokyo.
    spotFill('BTCUSDT_SPBL', 's2', '2026-02-28T23:30:00Z', 'sell', '0.4', '41000', '16.4'),
    spotFill('ETHBTC_SPBL', 's3', '2026-03-01T03:00:00Z', 'buy', '2', '0.05', '0.002'),
    spotFill('BTCUSDT_SPBL', 's4', '2026-03-02T12:00:00Z', 'sell', '0.1', '42000', '4.2'),
  ]);
  await insertHistory(db, 'spot_fills', [spotFill('BTCUSDT_SPBL', 'a1', '2026-02-28T12:00:00Z', 'buy', '2', '40500', '0.002')], { account: 'alt' });
  await insertHistory(db, 'futures_fills', [
    futuresFill('f1', 'cmt_btcusdt', '2026-02-27T12:00:00Z', '30000', '18'),
    futuresFill('f2', 'cmt_btcusdt', '2026-02-28T23:30:00Z', '12200', '2.44', '200'),
    futuresFill('f3', 'cmt_btcusd', '2026-03-01T12:00:00Z', '1000', '0.00001'),
    futuresFill('f4', 'cmt_btcusdt', '2026-03-02T12:00:00Z', '17400', '10.44', '-600', '8.7'),
  ]);
  await insertHistory(db, 'futures_fills', [futuresFill('g1', 'cmt_ethusdt', '2026-03-01T01:00:00Z', '6000', '3.6')], { account: 'alt' });
  await insertHistory(db, 'funding_bills', [
    bill('b1', 'USDT', 'withdraw', '2026-02-27T12:00:00Z', '-101', '1'),
    bill('b2', 'BTC', 'withdraw', '2026-03-01T23:30:00Z', '-0.0105', '0.0005'),
  ]);
}

interface Scenario {
  spot?: [string, object[]][];
  futures?: [string, object[]][];
  bills?: [string, object[]][];
}

async function insertScenario(scenario: Scenario): Promise<void> {
  for (const [account, records] of scenario.spot ?? []) await insertHistory(db, 'spot_fills', records, { account });
  for (const [account, records] of scenario.futures ?? []) await insertHistory(db, 'futures_fills', records, { account });
  for (const [account, records] of scenario.bills ?? []) await insertHistory(db, 'funding_bills', records, { account });
}

interface Difference {
  model: string;
  incremental: string;
  whole: string;
  extra: string;
  missing: string;
}

/**
 * The second build's results, and how each model's table after it differs from a whole rebuild
 * of the same history (none when equal).
 */
async function buildAgainAndCompare(settings: Partial<ModelSettings>, second: () => Promise<void>): Promise<{ results: ModelResult[]; differences: Difference[] }> {
  await second();
  const results = await buildAll(db, settings, { select: SELECT });
  for (const model of MODELS) await db.run(`CREATE OR REPLACE TABLE main.copy_${model.split('.')[1]} AS SELECT * FROM ${model}`);
  await buildAll(db, settings, { select: SELECT, fullRefresh: true });
  const differences: Difference[] = [];
  for (const model of MODELS) {
    const copy = `main.copy_${model.split('.')[1]}`;
    const [row] = await queryRows<Omit<Difference, 'model'>>(
      db,
      `SELECT
         (SELECT count(*) FROM ${copy}) AS incremental,
         (SELECT count(*) FROM ${model}) AS whole,
         (SELECT count(*) FROM (SELECT * FROM ${copy} EXCEPT ALL SELECT * FROM ${model})) AS extra,
         (SELECT count(*) FROM (SELECT * FROM ${model} EXCEPT ALL SELECT * FROM ${copy})) AS missing`,
    );
    if (row!.incremental !== row!.whole || row!.extra !== '0' || row!.missing !== '0') differences.push({ model, ...row! });
  }
  return { results, differences };
}

function howOf(results: readonly ModelResult[]): Record<string, string | undefined> {
  return Object.fromEntries(MODELS.map((model) => [model, results.find((result) => result.id === model)?.how]));
}

const ALL_INCREMENTAL = Object.fromEntries(MODELS.map((model) => [model, 'incremental']));

/** Models a bill alone leaves as they were: the futures side does not read bills. */
const FUTURES_ONLY = new Set<string>(['intermediate.int_futures_fill_days', 'intermediate.int_futures_position_months', 'marts.futures_pnl_daily', 'marts.futures_pnl_monthly']);

const SCENARIOS: Record<string, Scenario> = {
  // A new day (and a new month in Tokyo) on every product, for both accounts.
  'a new day': {
    spot: [['main', [spotFill('BTCUSDT_SPBL', 's10', '2026-03-03T09:00:00Z', 'sell', '0.1', '43000', '4.3')]], ['alt', [spotFill('BTCUSDT_SPBL', 'a10', '2026-03-03T10:00:00Z', 'sell', '1', '43000', '43')]]],
    futures: [['main', [futuresFill('f10', 'cmt_btcusdt', '2026-03-03T09:00:00Z', '5000', '3', '50')]], ['alt', [futuresFill('g10', 'cmt_ethusdt', '2026-03-03T23:59:00Z', '7000', '4.2', '-10')]]],
    bills: [['main', [bill('b10', 'USDT', 'withdraw', '2026-03-03T11:00:00Z', '-51', '1')]]],
  },
  // Fills older than existing ones, into days (and February) already built, at the same instant as others.
  'late fills into old days': {
    spot: [['main', [spotFill('BTCUSDT_SPBL', 's11', '2026-02-28T23:30:00Z', 'sell', '0.1', '41000', '4.1'), spotFill('ETHBTC_SPBL', 's12', '2026-02-27T01:00:00Z', 'buy', '1', '0.05', '0.001')]]],
    futures: [
      ['main', [futuresFill('f11', 'cmt_btcusdt', '2026-02-27T12:00:00Z', '1000', '0.6'), futuresFill('f12', 'cmt_btcusd', '2026-02-28T04:00:00Z', '200', '0.000002'), futuresFill('f14', 'cmt_btcusdt', '2026-02-28T01:00:00Z', '1010', '0.6', '15', '0', 'CLOSE_LONG')]],
      ['alt', [futuresFill('g12', 'cmt_ethusdt', '2026-02-28T08:00:00Z', '3000', '1.8', '0', '0', 'OPEN_SHORT'), futuresFill('g13', 'cmt_ethusdt', '2026-03-01T00:30:00Z', '2990', '1.8', '-4', '0', 'CLOSE_SHORT')]],
    ],
  },
  // A contract and a spot symbol the account never traded (the contract listed, the spot pair new).
  'a new symbol': {
    spot: [['alt', [spotFill('ETHUSDT_SPBL', 'a11', '2026-03-01T05:00:00Z', 'buy', '3', '2000', '0.003')]]],
    futures: [['main', [futuresFill('f13', 'cmt_ethusdt', '2026-03-01T05:00:00Z', '4000', '2.4', '0')]], ['alt', [futuresFill('g11', 'cmt_newusdt', '2026-03-02T05:00:00Z', '100', '0.06')]]],
  },
  // A bill alone, late, in an old month.
  'a bill': {
    bills: [['alt', [bill('c1', 'USDT', 'withdraw', '2026-02-26T22:00:00Z', '-11', '1'), bill('c2', 'BTC', 'transfer_out', '2026-03-01T23:45:00Z', '-0.2', '0.0001')]]],
  },
};

describe('incremental fees and futures models', () => {
  // New York with a reporting currency: the wider pending set below, and the random histories.
  const variants: [string, Partial<ModelSettings>][] = [
    ['UTC', {}],
    ['Tokyo, pooling universal, reporting currency USDT (prices derived from the spot fills)', { reportingTimeZone: 'Asia/Tokyo', pooling: 'universal', reportingCurrency: 'USDT' }],
  ];
  for (const [variant, settings] of variants) {
    it(`${variant}: each scenario, taken incrementally after the last, equals a whole rebuild`, async () => {
      db = await openModelDb();
      await firstHistory();
      await buildAll(db, settings, { select: SELECT });
      // One history, the scenarios arriving one after another (each build starts from the whole rebuild before it).
      for (const [name, scenario] of Object.entries(SCENARIOS)) {
        const { results, differences } = await buildAgainAndCompare(settings, () => insertScenario(scenario));
        const expected = name === 'a bill' ? Object.fromEntries(MODELS.map((model) => [model, FUTURES_ONLY.has(model) ? 'unchanged' : 'incremental'])) : ALL_INCREMENTAL;
        expect({ name, how: howOf(results) }).toEqual({ name, how: expected });
        expect({ name, differences }).toEqual({ name, differences: [] });
      }
    }, 240_000);
  }

  it('a third build with nothing new leaves every model unchanged; a build after only futures fills leaves the spot side unchanged', async () => {
    db = await openModelDb();
    await firstHistory();
    await buildAll(db, {}, { select: SELECT });
    expect(new Set(Object.values(howOf(await buildAll(db, {}, { select: SELECT }))))).toEqual(new Set(['unchanged']));
    await insertScenario({ futures: [['main', [futuresFill('f20', 'cmt_btcusdt', '2026-03-05T09:00:00Z', '5000', '3')]]] });
    const results = await buildAll(db, {}, { select: SELECT });
    expect(results.find((result) => result.id === 'intermediate.int_spot_trades')?.how).toBe('unchanged');
    expect(howOf(results)).toEqual(ALL_INCREMENTAL);
    expect(await queryRows(db, "SELECT cast(fill_date AS VARCHAR) AS fill_date, fill_count, volume FROM intermediate.int_futures_fill_days WHERE fill_date = '2026-03-05'")).toEqual([
      { fill_date: '2026-03-05', fill_count: '1', volume: '5000.000000000000' },
    ]);
  }, 60_000);

  it('New York, reporting currency USDT: a new day and late fills, with a pending set wider than what changed (every account, every symbol, earlier, from the beginning), give the tables of a whole rebuild', async () => {
    const settings: Partial<ModelSettings> = { reportingTimeZone: 'America/New_York', reportingCurrency: 'USDT' };
    db = await openModelDb();
    await firstHistory();
    await buildAll(db, settings, { select: SELECT });
    const { results, differences } = await buildAgainAndCompare(settings, async () => {
      await insertScenario(SCENARIOS['a new day']!);
      await insertScenario(SCENARIOS['late fills into old days']!);
      // What the framework may hand on beyond the minimum (docs/plans/incremental-builds.md, "The contract").
      for (const model of MODELS) {
        await db.run(
          `INSERT INTO settings.model_pending (model, account, symbol, from_at) VALUES ($1, '*', NULL, '2026-02-28T02:00:00Z'), ($1, 'alt', 'cmt_btcusdt', NULL), ($1, 'main', NULL, '2026-02-27T23:00:00Z'), ($1, 'nobody', 'nothing', '2026-03-01T00:00:00Z')`,
          [model],
        );
      }
    });
    expect(howOf(results)).toEqual(ALL_INCREMENTAL);
    expect(differences).toEqual([]);
  }, 60_000);
});

/** A random history, split into what the first build sees and what arrives before the second. */
const eventArbitrary = fc.record({
  kind: fc.constantFrom('spot', 'futures', 'bill'),
  account: fc.constantFrom('main', 'alt'),
  symbol: fc.constantFrom(0, 1),
  // Minutes from Feb 26 00:00Z over 13 days: across the month's end in every zone here, and New York's
  // change to summer time (Mar 8).
  minute: fc.integer({ min: 0, max: 13 * 24 * 60 }),
  side: fc.constantFrom('buy', 'sell'),
  units: fc.integer({ min: 1, max: 5000 }),
  later: fc.boolean(),
});

type HistoryEvent = typeof eventArbitrary extends fc.Arbitrary<infer T> ? T : never;

function record(event: HistoryEvent, index: number): object {
  const at = new Date(Date.parse('2026-02-26T00:00:00Z') + event.minute * 60_000).toISOString();
  const amount = `${event.units}.${String(index % 100).padStart(2, '0')}`;
  if (event.kind === 'spot') return spotFill(['BTCUSDT_SPBL', 'ETHBTC_SPBL'][event.symbol]!, `p${index}`, at, event.side as 'buy' | 'sell', `0.${event.units}`, amount, `0.000${event.units}`);
  // A sell closes a long (more than was opened makes its size unknown from then on).
  if (event.kind === 'futures') return futuresFill(`p${index}`, ['cmt_btcusdt', 'cmt_btcusd'][event.symbol]!, at, amount, `0.0${event.units}`, event.side === 'buy' ? amount : `-${amount}`, '0', event.side === 'buy' ? 'OPEN_LONG' : 'CLOSE_LONG');
  return bill(`p${index}`, ['USDT', 'BTC'][event.symbol]!, event.side === 'buy' ? 'withdraw' : 'transfer_out', at, `-${amount}`, `0.00${event.units}`);
}

async function insertEvents(events: readonly { event: HistoryEvent; index: number }[]): Promise<void> {
  const stream = { spot: 'spot_fills', futures: 'futures_fills', bill: 'funding_bills' } as const;
  for (const kind of ['spot', 'futures', 'bill'] as const) {
    for (const account of ['main', 'alt']) {
      const records = events.filter(({ event }) => event.kind === kind && event.account === account).map(({ event, index }) => record(event, index));
      if (records.length > 0) await insertHistory(db, stream[kind], records, { account });
    }
  }
}

describe('incremental fees and futures models, random histories', () => {
  it('equal a whole rebuild whatever arrives late, in any zone, pooling and reporting currency', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(eventArbitrary, { minLength: 1, maxLength: 30 }),
        fc.constantFrom('UTC', 'America/New_York', 'Asia/Kathmandu'),
        fc.constantFrom<'account' | 'universal'>('account', 'universal'),
        fc.constantFrom<string | null>(null, 'USDT'),
        async (events, zone, pooling, currency) => {
          const settings: Partial<ModelSettings> = { reportingTimeZone: zone, pooling, reportingCurrency: currency };
          const indexed = events.map((event, index) => ({ event, index }));
          db = await openModelDb();
          try {
            await snapshots();
            await insertEvents(indexed.filter(({ event }) => !event.later));
            await buildAll(db, settings, { select: SELECT });
            const { differences } = await buildAgainAndCompare(settings, () => insertEvents(indexed.filter(({ event }) => event.later)));
            expect(differences).toEqual([]);
          } finally {
            db.close();
          }
        },
      ),
      // No shrinking: each run is three builds, and the first failing history already names the model.
      { numRuns: 5, endOnFailure: true },
    );
  }, 240_000);
});
