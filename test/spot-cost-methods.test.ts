import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkModels } from '../src/models/check.ts';
import type { Database } from '../src/store/database.ts';
import { runCli } from './support/cli-process.ts';
import { buildAll, insertHistory, openModelDb, queryRows, spotFill } from './support/model-db.ts';
import { startSandboxProcess, type SandboxProcess } from './support/sandbox-process.ts';
import { queryDatabase } from './support/sync-harness.ts';

/**
 * The lot methods lifo, hifo and uk (sql/intermediate/int_spot_lot_segments.ts) on published worked
 * examples, their published answers written here, and on hand-computed edge cases. Every ledger is
 * its own symbol of account main, all built once with every cost method, reporting zone
 * Europe/London. Convention (README): a buy of q at p with fee f (base coin) adds q - f units
 * costing q*p; a sell of q at p with fee f (quote coin) disposes of q units for q*p - f.
 */

let db: Database;

/** A spot fill of `symbol` in USD (`XUSD_SPBL`: X), without fees by default. */
const fill = (symbol: string, fillId: string, at: string, side: 'buy' | 'sell', quantity: string, price: string, fees = '0'): object => spotFill(symbol, fillId, at, side, quantity, price, fees);

// HMRC Cryptoassets Manual, pooling examples (gov.uk/hmrc-internal-manuals/cryptoassets-manual/crypto22250):
// each opening position is the example's section 104 pool; "20XX" is 2025; amounts are £ as USD
// (price = amount / quantity). HMRC shows whole pounds: the exact figures are written below them.
const HMRC = [
  // CRYPTO22252: pool 5,000 for £500. 23 June: dispose 1,000 for £800, acquire 1,600 for £1,000, dispose 500 for £600.
  fill('HMRCBUSD_SPBL', '201', '2025-06-23T08:00:00Z', 'sell', '1000', '0.8'),
  fill('HMRCBUSD_SPBL', '202', '2025-06-23T13:00:00Z', 'buy', '1600', '0.625'),
  fill('HMRCBUSD_SPBL', '203', '2025-06-23T19:00:00Z', 'sell', '500', '1.2'),
  // CRYPTO22253: pool 2,000 for £1,000. 31 Mar dispose 1,000 for £400; 20 Apr dispose 500 for £150;
  // 21 Apr acquire 700 for £175; 28 Apr acquire 500 for £100; 1 May acquire 500 for £150.
  fill('HMRCCUSD_SPBL', '301', '2025-03-31T12:00:00Z', 'sell', '1000', '0.4'),
  fill('HMRCCUSD_SPBL', '302', '2025-04-20T12:00:00Z', 'sell', '500', '0.3'),
  fill('HMRCCUSD_SPBL', '303', '2025-04-21T12:00:00Z', 'buy', '700', '0.25'),
  fill('HMRCCUSD_SPBL', '304', '2025-04-28T12:00:00Z', 'buy', '500', '0.2'),
  fill('HMRCCUSD_SPBL', '305', '2025-05-01T12:00:00Z', 'buy', '500', '0.3'),
  // CRYPTO22254: pool 8,000 for £1,000. 31 Jan: dispose 5,000 for £500; acquire 4,000 for £320, 1,000
  // for £75, 1,000 for £70; dispose 2,000 for £142; acquire 500 for £35.
  fill('HMRCDUSD_SPBL', '401', '2025-01-31T09:00:00Z', 'sell', '5000', '0.1'),
  fill('HMRCDUSD_SPBL', '402', '2025-01-31T10:00:00Z', 'buy', '4000', '0.08'),
  fill('HMRCDUSD_SPBL', '403', '2025-01-31T11:00:00Z', 'buy', '1000', '0.075'),
  fill('HMRCDUSD_SPBL', '404', '2025-01-31T12:00:00Z', 'buy', '1000', '0.07'),
  fill('HMRCDUSD_SPBL', '405', '2025-01-31T13:00:00Z', 'sell', '2000', '0.071'),
  fill('HMRCDUSD_SPBL', '406', '2025-01-31T14:00:00Z', 'buy', '500', '0.07'),
  // CRYPTO22255: pool 14,000 for £200,000. 30 Aug dispose 4,000 for £160,000; 11 Sep acquire 500 for £17,500.
  fill('HMRCEUSD_SPBL', '501', '2025-08-30T12:00:00Z', 'sell', '4000', '40'),
  fill('HMRCEUSD_SPBL', '502', '2025-09-11T12:00:00Z', 'buy', '500', '35'),
  // CRYPTO22256: pool 100,000 for £300,000. 31 Jul acquire 10,000 for £45,000 and dispose 30,000 for
  // £150,000; 5 Aug dispose 20,000 for £100,000; 6 Aug acquire 50,000 for £225,000; 7 Aug dispose 100,000 for £150,000.
  fill('HMRCFUSD_SPBL', '601', '2025-07-31T10:00:00Z', 'buy', '10000', '4.5'),
  fill('HMRCFUSD_SPBL', '602', '2025-07-31T11:00:00Z', 'sell', '30000', '5'),
  fill('HMRCFUSD_SPBL', '603', '2025-08-05T12:00:00Z', 'sell', '20000', '5'),
  fill('HMRCFUSD_SPBL', '604', '2025-08-06T12:00:00Z', 'buy', '50000', '4.5'),
  fill('HMRCFUSD_SPBL', '605', '2025-08-07T12:00:00Z', 'sell', '100000', '1.5'),
];

const HMRC_POOLS = [
  { account: 'main', symbol: 'HMRCBUSD_SPBL', quantity: '5000', cost: '500' },
  { account: 'main', symbol: 'HMRCCUSD_SPBL', quantity: '2000', cost: '1000' },
  { account: 'main', symbol: 'HMRCDUSD_SPBL', quantity: '8000', cost: '1000' },
  { account: 'main', symbol: 'HMRCEUSD_SPBL', quantity: '14000', cost: '200000' },
  { account: 'main', symbol: 'HMRCFUSD_SPBL', quantity: '100000', cost: '300000' },
];

// RP2 (github.com/eprbell/rp2, input/test_hifo.ods, sheets B2 and B3) and its golden reports
// input/golden/us/test_hifo_hifo_rp2_full_report.ods and test_hifo_lifo_rp2_full_report.ods ("Bx Tax",
// Gain / Loss Detail). As fills: a buy's USD In With Fee is q*p (the fee is in the cost, as here:
// 10 for 10,010 is a price of 1,001); the Interest of 2019-08-03 is a buy at its spot price (RP2
// gives it that cost basis); Donate and Gift are sells at their spot price; the Sell of 7.99 with a
// crypto fee of 0.01 at 2,500 is a sell of 8 with a quote fee of 25 (RP2 disposes of the fee's
// units with no proceeds).
function rp2(asset: 'B2' | 'B3', prices: readonly string[]): object[] {
  const symbol = `${asset}USD_SPBL`;
  const id = asset === 'B2' ? 20 : 30;
  const buys = ['2018-06-03', '2018-08-03', '2019-06-03', '2019-08-03', '2020-06-03'].map((day, index) => fill(symbol, `${id}0${index}`, `${day}T11:23:00Z`, 'buy', '10', prices[index]!));
  const sells = [
    fill(symbol, `${id}10`, '2018-07-03T11:23:00Z', 'sell', '5', '1500'),
    fill(symbol, `${id}11`, '2018-09-03T11:23:00Z', 'sell', '8', '2500', '25'),
    fill(symbol, `${id}12`, '2019-04-03T11:23:00Z', 'sell', '1', '2750'),
    fill(symbol, `${id}13`, '2019-09-03T11:23:00Z', 'sell', '15', '3500'),
    fill(symbol, `${id}14`, '2020-04-11T07:10:00Z', 'sell', '9', '4500'),
    fill(symbol, `${id}15`, '2020-07-11T07:10:00Z', 'sell', '11', '5500'),
  ];
  return [...buys, ...sells];
}

// Hand-computed edge cases.
const EDGES = [
  // A sell before any buy: 1 @ 100 on 1 Mar, then buy 2 @ 90 on 2 Mar, sell 1 @ 110 on 20 Apr.
  fill('EDGEAUSD_SPBL', '701', '2025-03-01T12:00:00Z', 'sell', '1', '100'),
  fill('EDGEAUSD_SPBL', '702', '2025-03-02T12:00:00Z', 'buy', '2', '90'),
  fill('EDGEAUSD_SPBL', '703', '2025-04-20T12:00:00Z', 'sell', '1', '110'),
  // Many fills in one millisecond, ordered by fill id as a number (9 < 10 < 100 < 101; as text 10 < 100 < 101 < 9):
  // buys 1 @ 2 (#9), 1 @ 3 (#10), 1 @ 1 (#100), then sell 1.5 @ 4 (#101).
  fill('EDGEBUSD_SPBL', '9', '2025-05-05T12:00:00.123Z', 'buy', '1', '2'),
  fill('EDGEBUSD_SPBL', '10', '2025-05-05T12:00:00.123Z', 'buy', '1', '3'),
  fill('EDGEBUSD_SPBL', '100', '2025-05-05T12:00:00.123Z', 'buy', '1', '1'),
  fill('EDGEBUSD_SPBL', '101', '2025-05-05T12:00:00.123Z', 'sell', '1.5', '4'),
  // A fee in the base coin: buy 1 @ 100 fee 0.01 (0.99 units costing 100) on 1 Jun, buy 1 @ 200 on
  // 2 Jun, sell 1 @ 150 on 20 Jul (more than 30 days later).
  fill('EDGECUSD_SPBL', '801', '2025-06-01T12:00:00Z', 'buy', '1', '100', '0.01'),
  fill('EDGECUSD_SPBL', '802', '2025-06-02T12:00:00Z', 'buy', '1', '200'),
  fill('EDGECUSD_SPBL', '803', '2025-07-20T12:00:00Z', 'sell', '1', '150'),
  // A 30-day match across a year end: opening 2 costing 60; sell 1 @ 50 on 20 Dec 2025 (late evening:
  // still 20 Dec in London); buy 1 @ 40 on 19 Jan 2026 (day 30), buy 1 @ 45 on 20 Jan 2026 (day 31).
  fill('EDGEDUSD_SPBL', '901', '2025-12-20T23:30:00Z', 'sell', '1', '50'),
  fill('EDGEDUSD_SPBL', '902', '2026-01-19T23:30:00Z', 'buy', '1', '40'),
  fill('EDGEDUSD_SPBL', '903', '2026-01-20T00:30:00Z', 'buy', '1', '45'),
  // A sell after local midnight in summer: buy 1 @ 10 on 1 Jul, sell 1 @ 15 at 23:30 UTC, which is
  // 00:30 on 2 Jul in London (BST).
  fill('EDGEEUSD_SPBL', '951', '2025-07-01T10:00:00Z', 'buy', '1', '10'),
  fill('EDGEEUSD_SPBL', '952', '2025-07-01T23:30:00Z', 'sell', '1', '15'),
];

beforeAll(async () => {
  db = await openModelDb();
  await insertHistory(db, 'spot_fills', [...HMRC, ...rp2('B2', ['1001', '2000', '3003', '4000', '5005']), ...rp2('B3', ['5005', '4000', '3003', '2000', '1001']), ...EDGES]);
  await buildAll(db, {
    reportingTimeZone: 'Europe/London',
    costMethods: ['fifo', 'average', 'lifo', 'hifo', 'uk'],
    openingPositions: [...HMRC_POOLS, { account: 'main', symbol: 'EDGEDUSD_SPBL', quantity: '2', cost: '60' }],
  });
}, 120_000);
afterAll(() => db?.close());

/** '-18.500000000000' -> '-18.5', so expectations read like the arithmetic. */
const trim = (value: string | null) => (value !== null && /^-?\d+\.\d+$/.test(value) ? value.replace(/\.?0+$/, '') : value);

async function daily(symbol: string, method: string) {
  const rows = await queryRows(
    db,
    `select cast(trade_date as varchar) as day, quantity_sold, proceeds, cost, realized_pnl, unmatched_quantity, open_quantity, open_cost
      from marts.spot_realized_pnl_daily where symbol = '${symbol}' and cost_method = '${method}' and (quantity_sold > 0 or unmatched_quantity > 0) order by trade_date`,
  );
  return rows.map((row) => Object.fromEntries(Object.entries(row).map(([key, value]) => [key, trim(value)])));
}

async function matches(symbol: string, method: string) {
  const rows = await queryRows(
    db,
    `select sell_fill_id, match_rule, lot_source, buy_fill_id, quantity, cost, proceeds, realized_pnl from marts.spot_lot_matches
      where symbol = '${symbol}' and cost_method = '${method}' order by sell_at, match_rule, buy_at nulls first`,
  );
  return rows.map((row) => Object.fromEntries(Object.entries(row).map(([key, value]) => [key, trim(value)])));
}

describe('uk (HMRC share pooling): the Cryptoassets Manual examples CRYPTO22252-22256', () => {
  it('CRYPTO22252 same day rule: disposals and acquisitions of a day as one, the rest to the pool', async () => {
    // Published: consideration £1,400, costs £1,000 x 1,500 / 1,600 = £938 (exactly 937.5), gain £462
    // (exactly 462.5); the pool then holds 5,100 token B costing £562 (exactly 562.5).
    expect(await daily('HMRCBUSD_SPBL', 'uk')).toEqual([
      { day: '2025-06-23', quantity_sold: '1500', proceeds: '1400', cost: '937.5', realized_pnl: '462.5', unmatched_quantity: '0', open_quantity: '5100', open_cost: '562.5' },
    ]);
    // Per fill the day's single disposal is split in fill order: the morning's 1,000 then the evening's 500.
    expect((await matches('HMRCBUSD_SPBL', 'uk')).map(({ sell_fill_id, match_rule, buy_fill_id, quantity, cost }) => ({ sell_fill_id, match_rule, buy_fill_id, quantity, cost }))).toEqual([
      { sell_fill_id: '201', match_rule: 'same_day', buy_fill_id: '202', quantity: '1000', cost: '625' },
      { sell_fill_id: '203', match_rule: 'same_day', buy_fill_id: '202', quantity: '500', cost: '312.5' },
    ]);
  });

  it('CRYPTO22253 30 day rule: earliest acquisition first, across a month end', async () => {
    // Published: 31 March gain £165 (costs £175 + £100 x 300 / 500 = £60); 20 April gain £20 (costs
    // £100 x 200 / 500 = £40 + £150 x 300 / 500 = £90); the other 200 of 1 May go to the pool
    // (2,000 + 200 units, £1,000 + £60).
    expect(await daily('HMRCCUSD_SPBL', 'uk')).toEqual([
      { day: '2025-03-31', quantity_sold: '1000', proceeds: '400', cost: '235', realized_pnl: '165', unmatched_quantity: '0', open_quantity: '1000', open_cost: '765' },
      { day: '2025-04-20', quantity_sold: '500', proceeds: '150', cost: '130', realized_pnl: '20', unmatched_quantity: '0', open_quantity: '500', open_cost: '635' },
    ]);
    expect((await matches('HMRCCUSD_SPBL', 'uk')).map(({ sell_fill_id, match_rule, buy_fill_id, quantity, cost }) => ({ sell_fill_id, match_rule, buy_fill_id, quantity, cost }))).toEqual([
      { sell_fill_id: '301', match_rule: 'thirty_day', buy_fill_id: '303', quantity: '700', cost: '175' },
      { sell_fill_id: '301', match_rule: 'thirty_day', buy_fill_id: '304', quantity: '300', cost: '60' },
      { sell_fill_id: '302', match_rule: 'thirty_day', buy_fill_id: '304', quantity: '200', cost: '40' },
      { sell_fill_id: '302', match_rule: 'thirty_day', buy_fill_id: '305', quantity: '300', cost: '90' },
    ]);
    const [end] = await queryRows(db, "select open_quantity, open_cost from marts.spot_realized_pnl_monthly where symbol = 'HMRCCUSD_SPBL' and cost_method = 'uk' and trade_month = '2025-05-01'");
    expect({ quantity: trim(end!.open_quantity!), cost: trim(end!.open_cost!) }).toEqual({ quantity: '2200', cost: '1060' });
  });

  it('CRYPTO22254 same day rule, then the section 104 pool', async () => {
    // Published: consideration £500 + £142 = £642; costs same day £500, pool £1,000 x 500 / 8,000 = £63
    // (exactly 62.5); gain £79 (exactly 79.5); pool 7,500 token D costing £937 (exactly 937.5).
    expect(await daily('HMRCDUSD_SPBL', 'uk')).toEqual([
      { day: '2025-01-31', quantity_sold: '7000', proceeds: '642', cost: '562.5', realized_pnl: '79.5', unmatched_quantity: '0', open_quantity: '7500', open_cost: '937.5' },
    ]);
  });

  it('CRYPTO22255 30 day rule, then the section 104 pool', async () => {
    // Published: costs 30 day £17,500 and pool £200,000 x 3,500 / 14,000 = £50,000, gain £92,500; pool
    // 10,500 token E costing £150,000 (after the 11 September acquisition the 30-day rule took).
    expect(await daily('HMRCEUSD_SPBL', 'uk')).toEqual([
      { day: '2025-08-30', quantity_sold: '4000', proceeds: '160000', cost: '67500', realized_pnl: '92500', unmatched_quantity: '0', open_quantity: '10000', open_cost: '132500' },
    ]);
    const [end] = await queryRows(db, "select open_quantity, open_cost from marts.spot_realized_pnl_monthly where symbol = 'HMRCEUSD_SPBL' and cost_method = 'uk' and trade_month = '2025-09-01'");
    expect({ quantity: trim(end!.open_quantity!), cost: trim(end!.open_cost!) }).toEqual({ quantity: '10500', cost: '150000' });
  });

  it('CRYPTO22256 same day, 30 day and the pool together', async () => {
    // Published: 31 July gain £15,000 (same day £45,000, 30 day £225,000 x 20,000 / 50,000 = £90,000);
    // 5 August costs £90,000 (gain £100,000 - £90,000 = £10,000); the other 10,000 of 6 August join
    // the pool. Hand-computed for 7 August: the pool is 110,000 costing £300,000 + £45,000 = £345,000,
    // 100,000 of it cost £345,000 x 100,000 / 110,000 = 313,636.363636363636|36 (to 1e-12).
    expect(await daily('HMRCFUSD_SPBL', 'uk')).toEqual([
      { day: '2025-07-31', quantity_sold: '30000', proceeds: '150000', cost: '135000', realized_pnl: '15000', unmatched_quantity: '0', open_quantity: '80000', open_cost: '210000' },
      { day: '2025-08-05', quantity_sold: '20000', proceeds: '100000', cost: '90000', realized_pnl: '10000', unmatched_quantity: '0', open_quantity: '60000', open_cost: '120000' },
      {
        day: '2025-08-07',
        quantity_sold: '100000',
        proceeds: '150000',
        cost: '313636.363636363636',
        realized_pnl: '-163636.363636363636',
        unmatched_quantity: '0',
        open_quantity: '10000',
        open_cost: '31363.636363636364',
      },
    ]);
  });
});

describe('lifo and hifo: RP2 golden reports (test_hifo, B2 and B3)', () => {
  // Published realized gains per (taxable event, acquired lot), in order, the Interest row left out.
  const published = {
    B2: { hifo: ['5 2495', '8 3975', '1 750', '10 -5000', '5 2485', '5 7485', '1 2500', '3 10497', '10 4950', '1 4499'] },
    B3: {
      hifo: ['5 -17525', '5 -12540.625', '3 -4509.375', '1 -1250', '6 -3000', '9 4473', '1 1497', '8 20000', '2 7000', '9 40491'],
      lifo: ['5 -17525', '8 -12025', '1 -1250', '10 15000', '5 2485', '5 7485', '1 500', '3 -1515', '10 44990', '1 495'],
    },
  };
  // B2's prices only rise, so its LIFO golden report has the same rows as its HIFO one.
  const cases = [
    ['B2', 'hifo', published.B2.hifo],
    ['B2', 'lifo', published.B2.hifo],
    ['B3', 'hifo', published.B3.hifo],
    ['B3', 'lifo', published.B3.lifo],
  ] as const;
  for (const [asset, method, gains] of cases) {
    it(`${asset} ${method}`, async () => {
      const rows = await matches(`${asset}USD_SPBL`, method);
      expect(rows.map((row) => row.match_rule)).toEqual(gains.map(() => 'lot'));
      // The report lists a sell's lots in the order taken, the mart is keyed: compare as sorted lists.
      expect(rows.map((row) => `${row.quantity} ${row.realized_pnl}`).sort()).toEqual([...gains].sort());
    });
  }
});

describe('edge cases, every lot method', () => {
  it('a sell before any buy: unmatched for fifo, lifo and hifo; uk matches it with the buy of the next day', async () => {
    for (const method of ['fifo', 'lifo', 'hifo']) {
      expect(await daily('EDGEAUSD_SPBL', method)).toEqual([
        { day: '2025-03-01', quantity_sold: '0', proceeds: '0', cost: '0', realized_pnl: '0', unmatched_quantity: '1', open_quantity: '0', open_cost: '0' },
        // 110 - 90
        { day: '2025-04-20', quantity_sold: '1', proceeds: '110', cost: '90', realized_pnl: '20', unmatched_quantity: '0', open_quantity: '1', open_cost: '90' },
      ]);
    }
    // uk: 100 - 90 on 1 March (30-day rule; open figures below zero until the buy of 2 March), the
    // buy's other unit joins the pool and is sold on 20 April: 110 - 90.
    expect(await daily('EDGEAUSD_SPBL', 'uk')).toEqual([
      { day: '2025-03-01', quantity_sold: '1', proceeds: '100', cost: '90', realized_pnl: '10', unmatched_quantity: '0', open_quantity: '-1', open_cost: '-90' },
      { day: '2025-04-20', quantity_sold: '1', proceeds: '110', cost: '90', realized_pnl: '20', unmatched_quantity: '0', open_quantity: '0', open_cost: '0' },
    ]);
  });

  it('many fills in one millisecond: ordered by fill id as a number', async () => {
    // Sell 1.5 @ 4 = 6. fifo: #9 1 @ 2 + #10 0.5 @ 3 = 3.5; lifo: #100 1 @ 1 + #10 0.5 @ 3 = 2.5;
    // hifo: #10 1 @ 3 + #9 0.5 @ 2 = 4; uk: same day, the day's 3 units cost 6: 1.5 cost 3.
    const pnl = async (method: string) => (await daily('EDGEBUSD_SPBL', method)).map((row) => [row.cost, row.realized_pnl]);
    expect(await pnl('fifo')).toEqual([['3.5', '2.5']]);
    expect(await pnl('lifo')).toEqual([['2.5', '3.5']]);
    expect(await pnl('hifo')).toEqual([['4', '2']]);
    expect(await pnl('uk')).toEqual([['3', '3']]);
    expect((await matches('EDGEBUSD_SPBL', 'lifo')).map((row) => `${row.buy_fill_id} ${row.quantity}`).sort()).toEqual(['10 0.5', '100 1']);
  });

  it('a fee in the base coin: 0.99 units costing 100', async () => {
    // Sell 1 @ 150. fifo: 0.99 of #801 (100) + 0.01 of #802 (2) = 102; lifo and hifo: 1 of #802 = 200;
    // uk (no buy within 30 days): the pool's 1.99 units cost 300, 1 of them 300 / 1.99 = 150.753768844221|1 (1e-12).
    const pnl = async (method: string) => (await daily('EDGECUSD_SPBL', method)).map((row) => [row.cost, row.realized_pnl, row.open_quantity]);
    expect(await pnl('fifo')).toEqual([['102', '48', '0.99']]);
    expect(await pnl('lifo')).toEqual([['200', '-50', '0.99']]);
    expect(await pnl('hifo')).toEqual([['200', '-50', '0.99']]);
    expect(await pnl('uk')).toEqual([['150.753768844221', '-0.753768844221', '0.99']]);
  });

  it('a 30-day match across a year end: day 30 matches, day 31 does not', async () => {
    // uk: the sell of 20 Dec 2025 is matched with the buy of 19 Jan 2026 (day 30): 50 - 40 = 10;
    // the buy of 20 Jan (day 31) joins the pool. lifo takes the opening lot (60 / 2 = 30): 50 - 30 = 20.
    expect((await matches('EDGEDUSD_SPBL', 'uk')).map((row) => [row.match_rule, row.buy_fill_id, row.cost, row.realized_pnl])).toEqual([['thirty_day', '902', '40', '10']]);
    expect((await matches('EDGEDUSD_SPBL', 'lifo')).map((row) => [row.lot_source, row.cost, row.realized_pnl])).toEqual([['opening', '30', '20']]);
  });

  it('a sell is on its day in the reporting zone, every method (23:30 UTC in summer is the next day in London)', async () => {
    for (const method of ['fifo', 'average', 'lifo', 'hifo', 'uk']) {
      expect(await daily('EDGEEUSD_SPBL', method)).toEqual([
        { day: '2025-07-02', quantity_sold: '1', proceeds: '15', cost: '10', realized_pnl: '5', unmatched_quantity: '0', open_quantity: '0', open_cost: '0' },
      ]);
    }
  });

  it('the SQL checks pass on every method', async () => {
    const failing = (await checkModels(db)).filter((result) => result.status !== 'pass' && /spot|no_floating_point/.test(result.id));
    expect(failing.map(({ id, status, sample }) => ({ id, status, sample }))).toEqual([]);
  });
});

describe('exledger build --cost-method, as deployed', () => {
  let exchange: SandboxProcess;
  let dir: string;
  const cli = (args: string[]) => runCli(args, { cwd: dir, env: exchange.settings });
  const database = () => path.join(dir, 'ledger.duckdb');

  beforeAll(async () => {
    exchange = await startSandboxProcess(['--end', '2026-11-01']);
    dir = mkdtempSync(path.join(tmpdir(), 'exledger-cost-methods-'));
    writeFileSync(
      path.join(dir, 'exledger.config.json'),
      JSON.stringify({ db: './ledger.duckdb', retry: { retries: 8, minTimeoutMs: 50, maxTimeoutMs: 500 }, sync: { startDate: '2026-10-01' }, models: { costMethods: ['hifo'] } }),
    );
    const sync = await cli(['sync', '--quiet', '--streams', 'currencies,spot_assets,spot_fills']);
    expect(sync.code, sync.stderr).toBe(0);
  }, 180_000);
  afterAll(async () => {
    expect(await exchange?.stop()).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  });

  it('builds the configured method, then every lot method side by side; an unknown one is exit 2 and changes nothing', async () => {
    const configured = await cli(['build', '--quiet']);
    expect(configured.code, configured.stderr).toBe(0);
    expect(await queryDatabase(database(), 'SELECT DISTINCT cost_method FROM marts.spot_realized_pnl_daily')).toEqual([{ cost_method: 'hifo' }]);

    const all = await cli(['build', '--quiet', '--cost-method', 'fifo', 'lifo', 'hifo', 'uk']);
    expect(all.code, all.stderr).toBe(0);
    expect((await cli(['check', '--quiet'])).code).toBe(0);
    // Each method disposes of every unit sold exactly once: matched plus unmatched is what was sold.
    const sold = await queryDatabase<{ cost_method: string; quantity: string; rows: string }>(
      database(),
      'SELECT cost_method, sum(quantity)::VARCHAR AS quantity, (count(*) > 0)::VARCHAR AS rows FROM marts.spot_lot_matches GROUP BY ALL ORDER BY cost_method',
    );
    const [total] = await queryDatabase<{ quantity: string }>(database(), "SELECT sum(quantity_out_e18)::VARCHAR AS quantity FROM intermediate.int_spot_trades WHERE side = 'sell'");
    expect(sold.map((row) => row.cost_method)).toEqual(['fifo', 'hifo', 'lifo', 'uk']);
    for (const row of sold) expect(BigInt(row.quantity.replace('.', '')) * 10n ** BigInt(18 - (row.quantity.split('.')[1]?.length ?? 0))).toBe(BigInt(total!.quantity));

    const before = await queryDatabase(database(), 'SELECT model, cost_methods, built_at::VARCHAR AS built_at FROM settings.model_builds ORDER BY model');
    const bad = await cli(['build', '--cost-method', 'lofo']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/lofo/);
    expect(bad.stderr).toMatch(/fifo, average, lifo, hifo, uk|"fifo", "average", "lifo", "hifo", "uk"/);
    expect(await queryDatabase(database(), 'SELECT model, cost_methods, built_at::VARCHAR AS built_at FROM settings.model_builds ORDER BY model')).toEqual(before);
  }, 240_000);
});
