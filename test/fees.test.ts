import { afterEach, describe, expect, it } from 'vitest';
import { checkModels } from '../src/models/check.ts';
import type { Database } from '../src/store/database.ts';
import { REPORTS } from '../reports/index.ts';
import { readFigures } from '../src/export/summary-sheet.ts';
import { buildAll, insertHistory, insertSnapshot, openModelDb, queryRows } from './support/model-db.ts';

/**
 * marts.fees_daily / _monthly on a hand-computed ledger. Spot fees are charged in the coin received
 * (exchange-notes "Fee and sign conventions"): the base coin on buys, the quote coin on sells. Spot rate 0.1%
 * (0.05% on one maker sell), futures taker 0.06%, maker 0.02%, liquidation 0.05%.
 */

let db: Database;
afterEach(() => db?.close());

/** Decimal strings without trailing zeros ('-18.000' -> '-18'), so expectations read like the arithmetic. */
function trimmed<T extends Record<string, unknown>>(rows: T[]): T[] {
  return rows.map((row) => Object.fromEntries(Object.entries(row).map(([key, value]) => [key, typeof value === 'string' && /^-?\d+\.\d+$/.test(value) ? value.replace(/\.?0+$/, '') : value])) as T);
}

function spotFill(fillId: string, symbol: string, at: string, side: 'buy' | 'sell', price: string, quantity: string, total: string, fees: string): object {
  const [base, quote] = symbol === 'ETHBTC_SPBL' ? ['ETH', 'BTC'] : ['BTC', 'USDT'];
  return { accountId: '1', symbol, baseCoin: base, quoteCoin: quote, orderId: `9${fillId}`, fillId, orderType: 'limit', side, fillPrice: price, fillQuantity: quantity, fillTotalAmount: total, fees, cTime: String(Date.parse(at)) };
}

function futuresFill(tradeId: string, symbol: string, at: string, value: string, fee: string, liquidateFee = '0'): object {
  return {
    tradeId,
    orderId: `9${tradeId}`,
    symbol,
    marginMode: 'SHARED',
    separatedMode: 'COMBINED',
    positionSide: 'LONG',
    orderSide: 'BUY',
    fillSize: '1',
    fillValue: value,
    fillFee: fee,
    liquidateFee,
    realizePnl: '0',
    direction: 'OPEN_LONG',
    liquidateType: '',
    legacyOrdeDirection: 'OPEN_LONG',
    createdTime: String(Date.parse(at)),
  };
}

function bill(billId: string, coin: string, bizType: string, at: string, delta: string, after: string, fees: string): object {
  return { billId, coinId: coin === 'USDT' ? 2 : 1, coinName: coin, bizType, deltaAmount: delta, afterAmount: after, fees, cTime: String(Date.parse(at)) };
}

async function ledger(): Promise<void> {
  db = await openModelDb();
  await insertSnapshot(db, 'futures_contracts', '2026-03-10T00:00:00Z', [
    { symbol: 'cmt_btcusdt', quote_currency: 'USDT', coin: 'USDT', contract_val: '0.0001', forwardContractFlag: true },
    // Coin-margined: the fee is in BTC, the fill value in USD.
    { symbol: 'cmt_btcusd', quote_currency: 'USD', coin: 'BTC', contract_val: '100', forwardContractFlag: false },
  ]);
  await insertHistory(db, 'spot_fills', [
    // Buy 0.5 BTC at 40000: total 20000 USDT, fee 0.5 * 0.001 = 0.0005 BTC. 03:00Z is 22:00 on Feb 28 in New York.
    spotFill('1', 'BTCUSDT_SPBL', '2026-03-01T03:00:00Z', 'buy', '40000', '0.5', '20000', '0.0005'),
    // Sell 0.2 BTC at 42000: total 8400, fee 8.4 USDT.
    spotFill('2', 'BTCUSDT_SPBL', '2026-03-01T06:00:00Z', 'sell', '42000', '0.2', '8400', '8.4'),
    // Buy 2 ETH at 0.05 BTC: total 0.1 BTC, fee 0.002 ETH.
    spotFill('3', 'ETHBTC_SPBL', '2026-03-01T07:00:00Z', 'buy', '0.05', '2', '0.1', '0.002'),
    // Sell 1 ETH at 0.06 BTC (price sent empty): total 0.06 BTC, fee 0.00006 BTC.
    spotFill('4', 'ETHBTC_SPBL', '2026-03-01T08:00:00Z', 'sell', '', '1', '0.06', '0.00006'),
    // Maker sell 0.1 BTC at 42000: total 4200, fee 4200 * 0.0005 = 2.1 USDT.
    spotFill('5', 'BTCUSDT_SPBL', '2026-03-01T09:00:00Z', 'sell', '42000', '0.1', '4200', '2.1'),
  ]);
  await insertHistory(db, 'futures_fills', [
    // 12:00Z is 07:00 in New York. 30000 * 0.0006 = 18; 12200 * 0.0002 = 2.44.
    futuresFill('11', 'cmt_btcusdt', '2026-03-02T12:00:00Z', '30000', '18'),
    futuresFill('12', 'cmt_btcusdt', '2026-03-02T12:00:00Z', '12200', '2.44'),
    // Forced liquidation: fee 17400 * 0.0006 = 10.44, liquidation fee 17400 * 0.0005 = 8.7.
    futuresFill('13', 'cmt_btcusdt', '2026-03-03T12:00:00Z', '17400', '10.44', '8.7'),
    futuresFill('14', 'cmt_btcusd', '2026-03-02T12:00:00Z', '1000', '0.00001'),
  ]);
  await insertHistory(db, 'funding_bills', [
    bill('21', 'BTC', 'deposit', '2026-02-20T00:00:00Z', '1', '1', '0'),
    // The quote leg of spot fill 2: its fee is the fill's, counted under spot, not again here.
    bill('22', 'USDT', 'sell', '2026-03-01T06:00:00Z', '8391.6', '8391.6', '8.4'),
    // A withdrawal of 100 with a fee of 1: delta -101 (the fee is inside it), fees 1.
    bill('23', 'USDT', 'withdraw', '2026-03-04T12:00:00Z', '-101', '8290.6', '1'),
  ]);
}

const COLUMNS = 'account, product, coin, fees_paid, liquidation_fees, traded_volume, fee_basis_volume, effective_fee_rate, fee_count';

describe('fees marts', () => {
  it('per product, coin and New York day: spot fees on both sides, futures with liquidation fees, funding-account fees, exact rates', async () => {
    await ledger();
    await buildAll(db, { reportingTimeZone: 'America/New_York' });
    const rows = trimmed(await queryRows(db, `select cast(fee_date as varchar) as fee_date, ${COLUMNS} from marts.fees_daily order by fee_date, product, coin`));
    const main = { account: 'main', liquidation_fees: '0' };
    expect(rows).toEqual([
      // Feb 28 in New York: the buy. Its fee is in BTC over its 0.5 BTC bought: 0.0005 / 0.5 = 0.001.
      { ...main, fee_date: '2026-02-28', product: 'spot', coin: 'BTC', fees_paid: '0.0005', traded_volume: '0', fee_basis_volume: '0.5', effective_fee_rate: '0.001', fee_count: '1' },
      // ... and its 20000 USDT of volume sits on the USDT row, with no USDT fee: no rate.
      { ...main, fee_date: '2026-02-28', product: 'spot', coin: 'USDT', fees_paid: '0', traded_volume: '20000', fee_basis_volume: '0', effective_fee_rate: null, fee_count: '0' },
      // BTC: the ETHBTC sell's fee 0.00006 over its total 0.06; traded 0.1 + 0.06 = 0.16 BTC (both ETHBTC fills).
      { ...main, fee_date: '2026-03-01', product: 'spot', coin: 'BTC', fees_paid: '0.00006', traded_volume: '0.16', fee_basis_volume: '0.06', effective_fee_rate: '0.001', fee_count: '1' },
      // ETH: the ETHBTC buy's fee 0.002 over the 2 ETH bought; ETH quotes nothing.
      { ...main, fee_date: '2026-03-01', product: 'spot', coin: 'ETH', fees_paid: '0.002', traded_volume: '0', fee_basis_volume: '2', effective_fee_rate: '0.001', fee_count: '1' },
      // USDT: sells 8400 + 4200 = 12600, fees 8.4 + 2.1 = 10.5; 10.5 / 12600 = 0.000833333... (18 decimals, rounded)
      { ...main, fee_date: '2026-03-01', product: 'spot', coin: 'USDT', fees_paid: '10.5', traded_volume: '12600', fee_basis_volume: '12600', effective_fee_rate: '0.000833333333333333', fee_count: '2' },
      // Coin-margined: the fee is in BTC, the volume in USD, so neither row has a rate.
      { ...main, fee_date: '2026-03-02', product: 'futures', coin: 'BTC', fees_paid: '0.00001', traded_volume: '0', fee_basis_volume: null, effective_fee_rate: null, fee_count: '1' },
      { ...main, fee_date: '2026-03-02', product: 'futures', coin: 'USD', fees_paid: '0', traded_volume: '1000', fee_basis_volume: '0', effective_fee_rate: null, fee_count: '0' },
      // 18 + 2.44 = 20.44 over 30000 + 12200 = 42200: 0.000484360189573459715... rounds up at the 18th decimal
      { ...main, fee_date: '2026-03-02', product: 'futures', coin: 'USDT', fees_paid: '20.44', traded_volume: '42200', fee_basis_volume: '42200', effective_fee_rate: '0.00048436018957346', fee_count: '2' },
      // 10.44 + 8.7 = 19.14 paid, 8.7 of it liquidation; 19.14 / 17400 = 0.0011
      { ...main, fee_date: '2026-03-03', product: 'futures', coin: 'USDT', fees_paid: '19.14', liquidation_fees: '8.7', traded_volume: '17400', fee_basis_volume: '17400', effective_fee_rate: '0.0011', fee_count: '1' },
      // The withdrawal fee; the sell bill's 8.4 is spot fill 2's fee and the deposit had none.
      { ...main, fee_date: '2026-03-04', product: 'funding', coin: 'USDT', fees_paid: '1', traded_volume: null, fee_basis_volume: null, effective_fee_rate: null, fee_count: '1' },
    ]);

    const monthly = trimmed(await queryRows(db, `select cast(fee_month as varchar) as fee_month, ${COLUMNS} from marts.fees_monthly order by fee_month, product, coin`));
    expect(monthly.map(({ fee_month, product, coin, fees_paid, fee_basis_volume, effective_fee_rate }) => `${fee_month} ${product} ${coin} ${fees_paid} / ${fee_basis_volume} = ${effective_fee_rate}`)).toEqual([
      '2026-02-01 spot BTC 0.0005 / 0.5 = 0.001',
      '2026-02-01 spot USDT 0 / 0 = null',
      '2026-03-01 funding USDT 1 / null = null',
      '2026-03-01 futures BTC 0.00001 / null = null',
      '2026-03-01 futures USD 0 / 0 = null',
      // 20.44 + 19.14 = 39.58 over 42200 + 17400 = 59600: 0.000664093959731543624... rounds up
      '2026-03-01 futures USDT 39.58 / 59600 = 0.000664093959731544',
      '2026-03-01 spot BTC 0.00006 / 0.06 = 0.001',
      '2026-03-01 spot ETH 0.002 / 2 = 0.001',
      '2026-03-01 spot USDT 10.5 / 12600 = 0.000833333333333333',
    ]);
    expect(monthly.find((row) => row.product === 'futures' && row.coin === 'USDT')).toMatchObject({ liquidation_fees: '8.7', traded_volume: '59600', fee_count: '3' });

    const tests = (await checkModels(db)).filter((result) => /\/(int_)?fees_/.test(result.id));
    expect(tests.map(({ id, status }) => `${id} ${status}`)).toEqual([
      'intermediate/int_fees_legs_accepted_values_coin_leg pass',
      'intermediate/int_fees_legs_accepted_values_product pass',
      'intermediate/int_fees_legs_not_null pass',
      'intermediate/int_fees_legs_unique pass',
      'intermediate/int_fees_periods_accepted_values_period pass',
      'intermediate/int_fees_periods_accepted_values_product pass',
      'intermediate/int_fees_periods_not_null pass',
      'intermediate/int_fees_periods_unique pass',
      'marts/fees_daily_accepted_values_price_source pass',
      'marts/fees_daily_accepted_values_product pass',
      'marts/fees_daily_not_null pass',
      'marts/fees_daily_unique pass',
      'marts/fees_match_sources pass',
      'marts/fees_monthly_accepted_values_product pass',
      'marts/fees_monthly_not_null pass',
      'marts/fees_monthly_sums_daily pass',
      'marts/fees_monthly_unique pass',
    ]);
  });

  it("the fees Summary gives the funding account's fees a line, and its traded volume (not applicable: it does not trade) none, not an unknown", async () => {
    await ledger();
    await buildAll(db, {});
    const [funding] = await queryRows(db, "select cast(sum(traded_volume) as varchar) as volume, cast(sum(fees_paid) as varchar) as fees from marts.fees_monthly where product = 'funding'");
    expect(funding).toEqual({ volume: null, fees: '1.000000000000000000' });
    const figures = await readFigures(db, REPORTS.find((report) => report.name === 'fees')!, { label: '2026-03', from: '2026-03-01', to: '2026-03-31' });
    expect(figures.filter((figure) => figure.group.startsWith('funding')).map((figure) => [figure.label, figure.group, figure.value])).toEqual([['Fees paid', 'funding · USDT', '1.000000000000000000']]);
    expect(figures.filter((figure) => figure.label === 'Traded volume (quote notional)').every((figure) => figure.value !== null)).toBe(true);
  });

  it('cuts months in UTC by default: the Feb 28 (New York) buy is March\'s', async () => {
    await ledger();
    await buildAll(db);
    const spot = trimmed(await queryRows(db, `select ${COLUMNS} from marts.fees_monthly where product = 'spot' order by coin`));
    expect(spot.map(({ coin, fees_paid, traded_volume, fee_basis_volume, effective_fee_rate }) => ({ coin, fees_paid, traded_volume, fee_basis_volume, effective_fee_rate }))).toEqual([
      // 0.0005 + 0.00006 = 0.00056 over 0.5 + 0.06 = 0.56
      { coin: 'BTC', fees_paid: '0.00056', traded_volume: '0.16', fee_basis_volume: '0.56', effective_fee_rate: '0.001' },
      { coin: 'ETH', fees_paid: '0.002', traded_volume: '0', fee_basis_volume: '2', effective_fee_rate: '0.001' },
      // traded 20000 + 8400 + 4200 = 32600; the rate is over the sells only (the buy's fee is in BTC)
      { coin: 'USDT', fees_paid: '10.5', traded_volume: '32600', fee_basis_volume: '12600', effective_fee_rate: '0.000833333333333333' },
    ]);
  });

  it('computes the rate exactly on notionals of 1e21 per fill', async () => {
    db = await openModelDb();
    await insertSnapshot(db, 'futures_contracts', '2026-03-10T00:00:00Z', [{ symbol: 'cmt_btcusdt', quote_currency: 'USDT', coin: 'USDT', contract_val: '0.0001' }]);
    await insertHistory(db, 'futures_fills', [
      futuresFill('31', 'cmt_btcusdt', '2026-03-02T12:00:00Z', '1000000000000000000000', '300000000000000000'),
      futuresFill('32', 'cmt_btcusdt', '2026-03-02T12:00:01Z', '1000000000000000000000', '300000000000000000'),
      futuresFill('33', 'cmt_btcusdt', '2026-03-02T12:00:02Z', '1000000000000000000000', '400000000000000000'),
    ]);
    await buildAll(db);
    // fees 3e17 + 3e17 + 4e17 = 1e18 over 3e21: 1/3000 = 0.000333333333333333333...
    expect(trimmed(await queryRows(db, 'select fees_paid, traded_volume, effective_fee_rate from marts.fees_monthly'))).toEqual([
      { fees_paid: '1000000000000000000', traded_volume: '3000000000000000000000', effective_fee_rate: '0.000333333333333333' },
    ]);
  });
});
