import { afterEach, describe, expect, it } from 'vitest';
import { checkModels } from '../src/models/check.ts';
import type { Database } from '../src/store/database.ts';
import { buildAll, insertHistory, openModelDb, queryRows, spotFill } from './support/model-db.ts';

/**
 * Spot realized PnL (marts.spot_lot_matches, spot_realized_pnl_daily / _monthly) on hand-computed
 * ledgers. Convention: a buy of q at p with fee f (base coin) adds q - f units costing q*p; a sell
 * of q at p with fee f (quote coin) disposes of q units for proceeds q*p - f; realized PnL =
 * proceeds - cost of the units disposed; units sold beyond the inventory are unmatched (no cost).
 *
 * BTCUSDT_SPBL, account main, opening position 0.5 BTC costing 10000 USDT, reporting zone Tokyo (UTC+9):
 *   #1001 2025-01-31T10:00Z (Tokyo Jan 31 19:00) buy  1   @ 30000, fee 0.001 BTC -> 0.999 units costing 30000
 *   #1002 2025-01-31T16:00Z (Tokyo Feb 1 01:00)  sell 0.8 @ 40000, fee 32 USDT   -> proceeds 32000 - 32 = 31968
 *   #1003 2025-02-10T00:00Z                      buy  0.5, empty price, total 17500, fee 0 -> 0.5 units costing 17500
 *   #1004 2025-02-20T00:00Z                      sell 1.5 @ 36000, fee 54 USDT   -> proceeds 54000 - 54 = 53946
 *   #1005 2025-02-25T00:00Z                      buy  0.2 @ 38000, fee 0.0002 BTC -> 0.1998 units costing 7600
 * Before #1004 the inventory is 0.5 + 0.999 - 0.8 + 0.5 = 1.199, so 1.5 - 1.199 = 0.301 is sold
 * beyond it: unmatched, with its share of the proceeds 53946 * 0.301 / 1.5 = 10825.164; the matched
 * 1.199 carries 53946 * 1.199 / 1.5 = 43120.836.
 */

let db: Database;
afterEach(() => db?.close());

/** Decimal strings without trailing zeros ('-18.000' -> '-18'), so expectations read like the arithmetic. */
function trimmed<T extends Record<string, unknown>>(rows: T[]): T[] {
  return rows.map((row) => Object.fromEntries(Object.entries(row).map(([key, value]) => [key, typeof value === 'string' && /^-?\d+\.\d+$/.test(value) ? value.replace(/\.?0+$/, '') : value])) as T);
}

const fill = spotFill;

async function ledger(): Promise<void> {
  db = await openModelDb();
  await insertHistory(db, 'spot_fills', [
    fill('BTCUSDT_SPBL', '1001', '2025-01-31T10:00:00Z', 'buy', '1', '30000', '0.001', '30000'),
    fill('BTCUSDT_SPBL', '1002', '2025-01-31T16:00:00Z', 'sell', '0.8', '40000', '32', '32000'),
    fill('BTCUSDT_SPBL', '1003', '2025-02-10T00:00:00Z', 'buy', '0.5', '', '0', '17500'),
    fill('BTCUSDT_SPBL', '1004', '2025-02-20T00:00:00Z', 'sell', '1.5', '36000', '54', '54000'),
    fill('BTCUSDT_SPBL', '1005', '2025-02-25T00:00:00Z', 'buy', '0.2', '38000', '0.0002', '7600'),
  ]);
}

const OPENING = [{ account: 'main', symbol: 'BTCUSDT_SPBL', quantity: '0.5', cost: '10000' }];

const MATCHES = `select sell_fill_id, cast(sell_date as varchar) as sell_date, lot_source, buy_fill_id, quantity, cost, proceeds, realized_pnl
  from marts.spot_lot_matches where symbol = 'BTCUSDT_SPBL' order by sell_at, lot_source = 'unmatched', buy_at nulls first`;
const DAILY = `select cost_method, cast(trade_date as varchar) as trade_date, opening_quantity, opening_cost, quantity_bought, cost_bought,
    quantity_sold, proceeds, cost, realized_pnl, unmatched_quantity, unmatched_proceeds, open_quantity, open_cost
  from marts.spot_realized_pnl_daily where symbol = 'BTCUSDT_SPBL' order by cost_method desc, trade_date`;
const MONTHLY = `select cost_method, cast(trade_month as varchar) as trade_month, quantity_bought, quantity_sold, proceeds, cost, realized_pnl,
    unmatched_quantity, unmatched_proceeds, open_quantity, open_cost
  from marts.spot_realized_pnl_monthly where symbol = 'BTCUSDT_SPBL' order by cost_method desc, trade_month`;

describe('spot realized PnL marts', () => {
  it('FIFO lot matches: opening lot first, fees on both sides, a partly consumed lot, a sell beyond inventory', async () => {
    await ledger();
    await buildAll(db, { reportingTimeZone: 'Asia/Tokyo', costMethods: ['fifo', 'average'], openingPositions: OPENING });
    expect(trimmed(await queryRows(db, MATCHES))).toEqual([
      // #1002 sells 0.8: the opening lot's 0.5 (cost 10000), then 0.3 of #1001's 0.999 units costing 30000:
      // K(0.3) = 30000 * 0.3 / 0.999 = 9009.009009009009|009... (rounded to 12 decimals). Proceeds 31968 shared
      // by quantity: 31968 * 0.5 / 0.8 = 19980 and 31968 - 19980 = 11988. Tokyo day Feb 1.
      { sell_fill_id: '1002', sell_date: '2025-02-01', lot_source: 'opening', buy_fill_id: null, quantity: '0.5', cost: '10000', proceeds: '19980', realized_pnl: '9980' },
      { sell_fill_id: '1002', sell_date: '2025-02-01', lot_source: 'fill', buy_fill_id: '1001', quantity: '0.3', cost: '9009.009009009009', proceeds: '11988', realized_pnl: '2978.990990990991' },
      // #1004 sells 1.5: the rest of #1001, 0.699 units costing 30000 - 9009.009009009009 = 20990.990990990991
      // (the lot's shares add up to its 30000 exactly), and all of #1003 (0.5, 17500, the total of a fill
      // without a price). Proceeds 53946 * 0.699 / 1.5 = 25138.836 and 53946 * 0.5 / 1.5 = 17982.
      { sell_fill_id: '1004', sell_date: '2025-02-20', lot_source: 'fill', buy_fill_id: '1001', quantity: '0.699', cost: '20990.990990990991', proceeds: '25138.836', realized_pnl: '4147.845009009009' },
      { sell_fill_id: '1004', sell_date: '2025-02-20', lot_source: 'fill', buy_fill_id: '1003', quantity: '0.5', cost: '17500', proceeds: '17982', realized_pnl: '482' },
      // 0.301 beyond the inventory: its proceeds 53946 * 0.301 / 1.5 = 10825.164, no cost, no PnL (never a silent 0)
      { sell_fill_id: '1004', sell_date: '2025-02-20', lot_source: 'unmatched', buy_fill_id: null, quantity: '0.301', cost: null, proceeds: '10825.164', realized_pnl: null },
    ]);
  });

  it('per Tokyo day and month, FIFO and moving average on the same ledger, with the open inventory and its cost', async () => {
    await ledger();
    await buildAll(db, { reportingTimeZone: 'Asia/Tokyo', costMethods: ['fifo', 'average'], openingPositions: OPENING });
    const none = { opening_quantity: '0', opening_cost: '0', quantity_bought: '0', cost_bought: '0', quantity_sold: '0', proceeds: '0', cost: '0', realized_pnl: '0', unmatched_quantity: '0', unmatched_proceeds: '0' };
    expect(trimmed(await queryRows(db, DAILY))).toEqual([
      // Jan 31: the opening lot (placed on the first fill's day) and #1001. Open 0.5 + 0.999 = 1.499 costing 40000.
      { cost_method: 'fifo', trade_date: '2025-01-31', ...none, opening_quantity: '0.5', opening_cost: '10000', quantity_bought: '0.999', cost_bought: '30000', open_quantity: '1.499', open_cost: '40000' },
      // Feb 1 (Tokyo): #1002, cost 10000 + 9009.009009009009 = 19009.009009009009, PnL 31968 - 19009.009009009009 = 12958.990990990991;
      // open 0.699 costing 40000 - 19009.009009009009 = 20990.990990990991.
      { cost_method: 'fifo', trade_date: '2025-02-01', ...none, quantity_sold: '0.8', proceeds: '31968', cost: '19009.009009009009', realized_pnl: '12958.990990990991', open_quantity: '0.699', open_cost: '20990.990990990991' },
      // Feb 10: a buy only still gives a row (the inventory changed): open 1.199 costing 20990.990990990991 + 17500.
      { cost_method: 'fifo', trade_date: '2025-02-10', ...none, quantity_bought: '0.5', cost_bought: '17500', open_quantity: '1.199', open_cost: '38490.990990990991' },
      // Feb 20: matched 1.199 for 43120.836 at cost 20990.990990990991 + 17500 = 38490.990990990991, PnL 4629.845009009009;
      // unmatched 0.301 for 10825.164. Nothing left.
      { cost_method: 'fifo', trade_date: '2025-02-20', ...none, quantity_sold: '1.199', proceeds: '43120.836', cost: '38490.990990990991', realized_pnl: '4629.845009009009', unmatched_quantity: '0.301', unmatched_proceeds: '10825.164', open_quantity: '0', open_cost: '0' },
      // Feb 25: #1005 starts a new inventory, 0.2 - 0.0002 = 0.1998 units costing 0.2 * 38000 = 7600 (not used for the unmatched 0.301).
      { cost_method: 'fifo', trade_date: '2025-02-25', ...none, quantity_bought: '0.1998', cost_bought: '7600', open_quantity: '0.1998', open_cost: '7600' },
      // Moving average: 1.499 units costing 40000.
      { cost_method: 'average', trade_date: '2025-01-31', ...none, opening_quantity: '0.5', opening_cost: '10000', quantity_bought: '0.999', cost_bought: '30000', open_quantity: '1.499', open_cost: '40000' },
      // #1002 keeps 0.699 of 1.499 units: 40000 * 0.699 / 1.499 = 18652.434956637758|505... -> 18652.434956637759 left,
      // so the sell cost 40000 - 18652.434956637759 = 21347.565043362241; PnL 31968 - 21347.565043362241 = 10620.434956637759.
      { cost_method: 'average', trade_date: '2025-02-01', ...none, quantity_sold: '0.8', proceeds: '31968', cost: '21347.565043362241', realized_pnl: '10620.434956637759', open_quantity: '0.699', open_cost: '18652.434956637759' },
      { cost_method: 'average', trade_date: '2025-02-10', ...none, quantity_bought: '0.5', cost_bought: '17500', open_quantity: '1.199', open_cost: '36152.434956637759' },
      // #1004 empties the pool: cost 36152.434956637759, PnL 43120.836 - 36152.434956637759 = 6968.401043362241.
      { cost_method: 'average', trade_date: '2025-02-20', ...none, quantity_sold: '1.199', proceeds: '43120.836', cost: '36152.434956637759', realized_pnl: '6968.401043362241', unmatched_quantity: '0.301', unmatched_proceeds: '10825.164', open_quantity: '0', open_cost: '0' },
      { cost_method: 'average', trade_date: '2025-02-25', ...none, quantity_bought: '0.1998', cost_bought: '7600', open_quantity: '0.1998', open_cost: '7600' },
    ]);
    expect(trimmed(await queryRows(db, MONTHLY))).toEqual([
      // Tokyo January: only #1001 (and the opening lot).
      { cost_method: 'fifo', trade_month: '2025-01-01', quantity_bought: '0.999', quantity_sold: '0', proceeds: '0', cost: '0', realized_pnl: '0', unmatched_quantity: '0', unmatched_proceeds: '0', open_quantity: '1.499', open_cost: '40000' },
      // Tokyo February: both sells. PnL 12958.990990990991 + 4629.845009009009 = 17588.836; proceeds 31968 + 43120.836 = 75088.836;
      // cost 19009.009009009009 + 38490.990990990991 = 57500 (everything but the last buy: 10000 + 30000 + 17500).
      { cost_method: 'fifo', trade_month: '2025-02-01', quantity_bought: '0.6998', quantity_sold: '1.999', proceeds: '75088.836', cost: '57500', realized_pnl: '17588.836', unmatched_quantity: '0.301', unmatched_proceeds: '10825.164', open_quantity: '0.1998', open_cost: '7600' },
      { cost_method: 'average', trade_month: '2025-01-01', quantity_bought: '0.999', quantity_sold: '0', proceeds: '0', cost: '0', realized_pnl: '0', unmatched_quantity: '0', unmatched_proceeds: '0', open_quantity: '1.499', open_cost: '40000' },
      // The pool was emptied, so the average method disposed of the same 57500 in total: PnL 10620.434956637759 + 6968.401043362241.
      { cost_method: 'average', trade_month: '2025-02-01', quantity_bought: '0.6998', quantity_sold: '1.999', proceeds: '75088.836', cost: '57500', realized_pnl: '17588.836', unmatched_quantity: '0.301', unmatched_proceeds: '10825.164', open_quantity: '0.1998', open_cost: '7600' },
    ]);
    // The spot models' tests (staging's generic tests of the spot streams are the staging layer's).
    const tests = (await checkModels(db)).filter((result) => /^(intermediate|marts)\/((int_)?spot_|no_floating_point)/.test(result.id));
    expect(tests.map(({ id, status }) => `${id} ${status}`)).toEqual([
      'intermediate/int_spot_average_cost_consistent pass',
      'intermediate/int_spot_average_cost_not_null pass',
      'intermediate/int_spot_average_cost_unique pass',
      'intermediate/int_spot_fifo_segments_costed pass',
      'intermediate/int_spot_fifo_segments_not_null pass',
      'intermediate/int_spot_fifo_segments_quantities pass',
      'intermediate/int_spot_fifo_segments_unique pass',
      'intermediate/int_spot_lot_segments_accepted_values_cost_method pass',
      'intermediate/int_spot_lot_segments_accepted_values_match_rule pass',
      'intermediate/int_spot_lot_segments_not_null pass',
      'intermediate/int_spot_lot_segments_quantities pass',
      'intermediate/int_spot_lot_segments_unique pass',
      'intermediate/int_spot_trades_accepted_values_lot_source pass',
      'intermediate/int_spot_trades_accepted_values_side pass',
      'intermediate/int_spot_trades_inventory pass',
      'intermediate/int_spot_trades_not_null pass',
      'intermediate/int_spot_trades_numbered pass',
      'intermediate/int_spot_trades_unique pass',
      'marts/no_floating_point_columns pass',
      'marts/spot_lot_matches_accepted_values_cost_method pass',
      'marts/spot_lot_matches_accepted_values_lot_source pass',
      'marts/spot_lot_matches_accepted_values_match_rule pass',
      'marts/spot_lot_matches_consistent pass',
      'marts/spot_lot_matches_not_null pass',
      'marts/spot_lot_matches_unique pass',
      'marts/spot_realized_pnl_agrees pass',
      'marts/spot_realized_pnl_daily_accepted_values_cost_method pass',
      'marts/spot_realized_pnl_daily_accepted_values_price_source pass',
      'marts/spot_realized_pnl_daily_not_null pass',
      'marts/spot_realized_pnl_daily_unique pass',
      'marts/spot_realized_pnl_monthly_accepted_values_cost_method pass',
      'marts/spot_realized_pnl_monthly_not_null pass',
      'marts/spot_realized_pnl_monthly_unique pass',
      'marts/spot_realized_pnl_rolls_forward pass',
    ]);
  });

  it('cuts months in UTC by default: the Jan 31 16:00Z sell falls in January; FIFO alone by default', async () => {
    await ledger();
    await buildAll(db, { openingPositions: OPENING });
    expect(trimmed(await queryRows(db, MONTHLY))).toEqual([
      // UTC January: #1001 and #1002. Open 0.699 costing 20990.990990990991.
      { cost_method: 'fifo', trade_month: '2025-01-01', quantity_bought: '0.999', quantity_sold: '0.8', proceeds: '31968', cost: '19009.009009009009', realized_pnl: '12958.990990990991', unmatched_quantity: '0', unmatched_proceeds: '0', open_quantity: '0.699', open_cost: '20990.990990990991' },
      { cost_method: 'fifo', trade_month: '2025-02-01', quantity_bought: '0.6998', quantity_sold: '1.199', proceeds: '43120.836', cost: '38490.990990990991', realized_pnl: '4629.845009009009', unmatched_quantity: '0.301', unmatched_proceeds: '10825.164', open_quantity: '0.1998', open_cost: '7600' },
    ]);
    expect(await queryRows(db, 'select count(*) as n from intermediate.int_spot_average_cost')).toEqual([{ n: '0' }]);
  });

  it('without the opening position the first sell is partly unmatched: 0.8 against 0.999 units is fine, the second runs 0.801 past', async () => {
    await ledger();
    await buildAll(db, { costMethods: ['average'] });
    // Inventory before #1004: 0.999 - 0.8 + 0.5 = 0.699, so 1.5 - 0.699 = 0.801 is unmatched, with 53946 * 0.801 / 1.5 = 28807.164.
    // Average: #1002 keeps 0.199 of 0.999 units costing 30000: 30000 * 0.199 / 0.999 = 5975.975975975975|975... -> cost
    // 30000 - 5975.975975975976 = 24024.024024024024. #1004 disposes of all 5975.975975975976 + 17500 = 23475.975975975976.
    const rows = trimmed(await queryRows(db, `${DAILY.replace("order by", "and quantity_sold > 0 order by")}`));
    expect(rows.map(({ trade_date, quantity_sold, proceeds, cost, unmatched_quantity, unmatched_proceeds }) => ({ trade_date, quantity_sold, proceeds, cost, unmatched_quantity, unmatched_proceeds }))).toEqual([
      { trade_date: '2025-01-31', quantity_sold: '0.8', proceeds: '31968', cost: '24024.024024024024', unmatched_quantity: '0', unmatched_proceeds: '0' },
      // matched 0.699 for 53946 * 0.699 / 1.5 = 25138.836
      { trade_date: '2025-02-20', quantity_sold: '0.699', proceeds: '25138.836', cost: '23475.975975975976', unmatched_quantity: '0.801', unmatched_proceeds: '28807.164' },
    ]);
  });

  it('orders fills of one millisecond by fill id as a number, and a sell before any buy is unmatched', async () => {
    db = await openModelDb();
    await insertHistory(db, 'spot_fills', [
      // As text '10' < '9'; as numbers 9 comes first: the sell finds nothing and the buy stays open.
      fill('ETHUSDT_SPBL', '10', '2025-03-01T00:00:00.123Z', 'buy', '1', '1900', '0'),
      fill('ETHUSDT_SPBL', '9', '2025-03-01T00:00:00.123Z', 'sell', '1', '2000', '0'),
    ]);
    await buildAll(db, { costMethods: ['fifo', 'average'] });
    expect(trimmed(await queryRows(db, 'select sell_fill_id, lot_source, quantity, cost, proceeds from marts.spot_lot_matches'))).toEqual([
      { sell_fill_id: '9', lot_source: 'unmatched', quantity: '1', cost: null, proceeds: '2000' },
    ]);
    expect(trimmed(await queryRows(db, 'select cost_method, quantity_sold, unmatched_quantity, unmatched_proceeds, open_quantity, open_cost from marts.spot_realized_pnl_daily order by cost_method'))).toEqual([
      { cost_method: 'average', quantity_sold: '0', unmatched_quantity: '1', unmatched_proceeds: '2000', open_quantity: '1', open_cost: '1900' },
      { cost_method: 'fifo', quantity_sold: '0', unmatched_quantity: '1', unmatched_proceeds: '2000', open_quantity: '1', open_cost: '1900' },
    ]);
  });

  it('is exact at the extremes: price 1e9 x quantity 1e12 (1e21) and 18-decimal quantities', async () => {
    db = await openModelDb();
    await insertHistory(db, 'spot_fills', [
      fill('WXTUSDT_SPBL', '1', '2025-03-01T00:00:00Z', 'buy', '1000000000000', '1000000000', '0'),
      // 1e-18 units: cost 1e21 * 1e-18 / 1e12 = 1e-9; proceeds 1e-18 * 999999999.999999999999999999 = 0.000000000999...9 -> 0.000000001
      fill('WXTUSDT_SPBL', '2', '2025-03-02T00:00:00Z', 'sell', '0.000000000000000001', '999999999.999999999999999999', '0'),
      // 2.5e11 at 1.2e9: proceeds 3e20, cost 1e21 * 2.5e11 / 1e12 = 2.5e20, PnL 5e19
      fill('WXTUSDT_SPBL', '3', '2025-03-03T00:00:00Z', 'sell', '250000000000', '1200000000', '0'),
    ]);
    await buildAll(db, { costMethods: ['fifo', 'average'] });
    expect(trimmed(await queryRows(db, 'select sell_fill_id, quantity, cost, proceeds, realized_pnl from marts.spot_lot_matches order by sell_fill_id'))).toEqual([
      { sell_fill_id: '2', quantity: '0.000000000000000001', cost: '0.000000001', proceeds: '0.000000001', realized_pnl: '0' },
      { sell_fill_id: '3', quantity: '250000000000', cost: '250000000000000000000', proceeds: '300000000000000000000', realized_pnl: '50000000000000000000' },
    ]);
    // Left: 1e12 - 1e-18 - 2.5e11 units costing 1e21 - 1e-9 - 2.5e20, by both methods.
    expect(trimmed(await queryRows(db, `select cost_method, open_quantity, open_cost, typeof(open_cost) as type from marts.spot_realized_pnl_monthly order by cost_method`))).toEqual([
      { cost_method: 'average', open_quantity: '749999999999.999999999999999999', open_cost: '749999999999999999999.999999999', type: 'DECIMAL(38,12)' },
      { cost_method: 'fifo', open_quantity: '749999999999.999999999999999999', open_cost: '749999999999999999999.999999999', type: 'DECIMAL(38,12)' },
    ]);
  });
});
