import { afterEach, describe, expect, it } from 'vitest';
import { checkModels } from '../src/models/check.ts';
import type { Database } from '../src/store/database.ts';
import { buildAll, futuresAccountRecord, futuresFill, insertHistory, insertSnapshot, openModelDb, queryRows } from './support/model-db.ts';

/**
 * marts.futures_pnl_daily / _monthly on a hand-computed ledger: one long on cmt_btcusdt opened, partly
 * closed across a Tokyo month boundary, then force-liquidated; one short on cmt_ethusdt; funding from
 * three snapshots of the USDT collateral. Amounts as the exchange sends them (strings); rates 0.06%
 * taker fee and 0.05% liquidation fee.
 */

let db: Database;
afterEach(() => db?.close());

/** Decimal strings without trailing zeros ('-18.000' -> '-18'), so expectations read like the arithmetic. */
function trimmed<T extends Record<string, unknown>>(rows: T[]): T[] {
  return rows.map((row) => Object.fromEntries(Object.entries(row).map(([key, value]) => [key, typeof value === 'string' && /^-?\d+\.\d+$/.test(value) ? value.replace(/\.?0+$/, '') : value])) as T);
}

const fill = futuresFill;

async function ledger(): Promise<void> {
  db = await openModelDb();
  await insertSnapshot(db, 'futures_contracts', '2026-02-20T00:00:00Z', [
    { symbol: 'cmt_btcusdt', underlying_index: 'BTC', quote_currency: 'USDT', coin: 'USDT', contract_val: '0.0001', forwardContractFlag: true },
    { symbol: 'cmt_ethusdt', underlying_index: 'ETH', quote_currency: 'USDT', coin: 'USDT', contract_val: '0.001', forwardContractFlag: true },
  ]);
  await insertSnapshot(db, 'currencies', '2026-02-20T00:00:00Z', [{ coinId: '2', coinName: 'USDT', transfer: 'true', chains: [] }]);
  await insertHistory(db, 'futures_fills', [
    // Open short 2 ETH at 3000: value 6000, fee 6000 * 0.0006 = 3.6, realizePnl 0 (opening fills realize nothing).
    fill('101', 'cmt_ethusdt', '2026-01-15T02:00:00Z', 'OPEN_SHORT', '2', '6000', '3.6', '0'),
    // Open long 0.5 BTC at 60000: value 30000, fee 18. 10:00Z is 19:00 on Jan 31 in Tokyo.
    fill('102', 'cmt_btcusdt', '2026-01-31T10:00:00Z', 'OPEN_LONG', '0.5', '30000', '18', '0'),
    // Close 0.2 at 61000: value 12200, fee 7.32, realizePnl (61000 - 60000) * 0.2 = 200.
    // 16:30Z on Jan 31 is 01:30 on Feb 1 in Tokyo: January in UTC, February in Tokyo.
    fill('103', 'cmt_btcusdt', '2026-01-31T16:30:00Z', 'CLOSE_LONG', '0.2', '12200', '7.32', '200'),
    // Forced liquidation of the other 0.3 at 58000: value 17400, fee 10.44, liquidation fee 17400 * 0.0005 = 8.7,
    // realizePnl (58000 - 60000) * 0.3 = -600.
    fill('104', 'cmt_btcusdt', '2026-02-10T03:00:00Z', 'CLOSE_LONG', '0.3', '17400', '10.44', '-600', '8.7'),
  ]);
  // The running funding total counts what the account paid: 5 by Jan 20, 7.5 by the second snapshot (2.5 paid),
  // 6.25 by Feb 15 (1.25 received). The second snapshot, 20:00Z on Jan 31, is 05:00 on Feb 1 in Tokyo.
  await insertSnapshot(db, 'futures_accounts', '2026-01-20T00:00:00Z', [futuresAccountRecord('5')]);
  await insertSnapshot(db, 'futures_accounts', '2026-01-31T20:00:00Z', [futuresAccountRecord('7.5')]);
  await insertSnapshot(db, 'futures_accounts', '2026-02-15T00:00:00Z', [futuresAccountRecord('6.25')]);
  // Another account with a single snapshot and one fill: nothing to compare the snapshot with, so no funding row.
  await insertSnapshot(db, 'futures_accounts', '2026-02-15T00:00:00Z', [futuresAccountRecord('123')], { account: 'solo' });
  await insertHistory(db, 'futures_fills', [fill('201', 'cmt_btcusdt', '2026-02-03T00:00:00Z', 'OPEN_LONG', '0.1', '6000', '3.6', '0')], { account: 'solo' });
}

const DAILY = `select account, margin_coin, symbol, cast(pnl_date as varchar) as pnl_date, fill_count, volume, realized_pnl, trading_fees,
    liquidation_fees, funding, net_result, cast(funding_from_at as varchar) as funding_from_at, cast(funding_to_at as varchar) as funding_to_at
  from marts.futures_pnl_daily order by account, pnl_date, symbol nulls last`;
const MONTHLY = `select account, margin_coin, symbol, cast(pnl_month as varchar) as pnl_month, fill_count, volume, realized_pnl, trading_fees,
    liquidation_fees, funding, net_result from marts.futures_pnl_monthly order by account, pnl_month, symbol nulls last`;

describe('futures PnL marts', () => {
  it('per contract and Tokyo day: realized PnL, fees, liquidation fee; funding per margin coin on the later snapshot\'s day', async () => {
    await ledger();
    await buildAll(db, { reportingTimeZone: 'Asia/Tokyo' });
    const contract = { funding: null, funding_from_at: null, funding_to_at: null };
    const funding = { symbol: null, fill_count: null, volume: null, realized_pnl: null, trading_fees: null, liquidation_fees: null };
    expect(trimmed(await queryRows(db, DAILY))).toEqual([
      // net = 0 - 3.6 - 0 = -3.6
      { account: 'main', margin_coin: 'USDT', symbol: 'cmt_ethusdt', pnl_date: '2026-01-15', fill_count: '1', volume: '6000', realized_pnl: '0', trading_fees: '3.6', liquidation_fees: '0', net_result: '-3.6', ...contract },
      // net = 0 - 18 = -18
      { account: 'main', margin_coin: 'USDT', symbol: 'cmt_btcusdt', pnl_date: '2026-01-31', fill_count: '1', volume: '30000', realized_pnl: '0', trading_fees: '18', liquidation_fees: '0', net_result: '-18', ...contract },
      // net = 200 - 7.32 = 192.68
      { account: 'main', margin_coin: 'USDT', symbol: 'cmt_btcusdt', pnl_date: '2026-02-01', fill_count: '1', volume: '12200', realized_pnl: '200', trading_fees: '7.32', liquidation_fees: '0', net_result: '192.68', ...contract },
      // funding = -(7.5 - 5) = -2.5 paid, on Tokyo's Feb 1 (the later snapshot), covering Jan 20 to Jan 31 20:00Z
      { account: 'main', margin_coin: 'USDT', pnl_date: '2026-02-01', ...funding, funding: '-2.5', net_result: '-2.5', funding_from_at: '2026-01-20 00:00:00+00', funding_to_at: '2026-01-31 20:00:00+00' },
      // net = -600 - 10.44 - 8.7 = -619.14
      { account: 'main', margin_coin: 'USDT', symbol: 'cmt_btcusdt', pnl_date: '2026-02-10', fill_count: '1', volume: '17400', realized_pnl: '-600', trading_fees: '10.44', liquidation_fees: '8.7', net_result: '-619.14', ...contract },
      // funding = -(6.25 - 7.5) = 1.25 received; 00:00Z on Feb 15 is 09:00 in Tokyo
      { account: 'main', margin_coin: 'USDT', pnl_date: '2026-02-15', ...funding, funding: '1.25', net_result: '1.25', funding_from_at: '2026-01-31 20:00:00+00', funding_to_at: '2026-02-15 00:00:00+00' },
      // solo: one snapshot only, so no funding row at all (unknown, not 0)
      { account: 'solo', margin_coin: 'USDT', symbol: 'cmt_btcusdt', pnl_date: '2026-02-03', fill_count: '1', volume: '6000', realized_pnl: '0', trading_fees: '3.6', liquidation_fees: '0', net_result: '-3.6', ...contract },
    ]);
    const monthFunding = { symbol: null, fill_count: null, volume: null, realized_pnl: null, trading_fees: null, liquidation_fees: null };
    expect(trimmed(await queryRows(db, MONTHLY))).toEqual([
      { account: 'main', margin_coin: 'USDT', symbol: 'cmt_btcusdt', pnl_month: '2026-01-01', fill_count: '1', volume: '30000', realized_pnl: '0', trading_fees: '18', liquidation_fees: '0', funding: null, net_result: '-18' },
      { account: 'main', margin_coin: 'USDT', symbol: 'cmt_ethusdt', pnl_month: '2026-01-01', fill_count: '1', volume: '6000', realized_pnl: '0', trading_fees: '3.6', liquidation_fees: '0', funding: null, net_result: '-3.6' },
      // February in Tokyo: fills 103 and 104. volume 12200 + 17400 = 29600; realized 200 - 600 = -400;
      // fees 7.32 + 10.44 = 17.76; net -400 - 17.76 - 8.7 = -426.46
      { account: 'main', margin_coin: 'USDT', symbol: 'cmt_btcusdt', pnl_month: '2026-02-01', fill_count: '2', volume: '29600', realized_pnl: '-400', trading_fees: '17.76', liquidation_fees: '8.7', funding: null, net_result: '-426.46' },
      // funding -2.5 + 1.25 = -1.25
      { account: 'main', margin_coin: 'USDT', pnl_month: '2026-02-01', ...monthFunding, funding: '-1.25', net_result: '-1.25' },
      { account: 'solo', margin_coin: 'USDT', symbol: 'cmt_btcusdt', pnl_month: '2026-02-01', fill_count: '1', volume: '6000', realized_pnl: '0', trading_fees: '3.6', liquidation_fees: '0', funding: null, net_result: '-3.6' },
    ]);
    // The futures models' tests by name; staging's generic tests of the futures streams must pass too.
    const results = await checkModels(db);
    expect(results.filter((result) => result.id.startsWith('staging/futures_') && result.status !== 'pass')).toEqual([]);
    const tests = results.filter((result) => /^(intermediate|marts)\/(int_)?futures_(pnl|fill|funding)/.test(result.id));
    expect(tests.map(({ id, status }) => `${id} ${status}`)).toEqual([
      'intermediate/futures_funding_changes_telescope pass',
      'intermediate/int_futures_fill_days_not_null pass',
      'intermediate/int_futures_fill_days_unique pass',
      'intermediate/int_futures_funding_changes_not_null pass',
      'intermediate/int_futures_funding_changes_unique pass',
      'marts/futures_pnl_daily_accepted_values_price_source pass',
      'marts/futures_pnl_daily_not_null pass',
      'marts/futures_pnl_daily_unique pass',
      'marts/futures_pnl_monthly_not_null pass',
      'marts/futures_pnl_monthly_unique pass',
      'marts/futures_pnl_net_result pass',
      'marts/futures_pnl_totals_agree pass',
    ]);
  });

  it('cuts months in UTC by default: the Jan 31 close and the first funding fall in January', async () => {
    await ledger();
    await buildAll(db);
    const rows = trimmed(await queryRows(db, `${MONTHLY.replace(' order by', " where account = 'main' order by")}`));
    expect(rows.map(({ symbol, pnl_month, fill_count, realized_pnl, trading_fees, liquidation_fees, funding, net_result }) => ({ symbol, pnl_month, fill_count, realized_pnl, trading_fees, liquidation_fees, funding, net_result }))).toEqual([
      // fills 102 and 103: realized 0 + 200; fees 18 + 7.32 = 25.32; net 200 - 25.32 = 174.68
      { symbol: 'cmt_btcusdt', pnl_month: '2026-01-01', fill_count: '2', realized_pnl: '200', trading_fees: '25.32', liquidation_fees: '0', funding: null, net_result: '174.68' },
      { symbol: 'cmt_ethusdt', pnl_month: '2026-01-01', fill_count: '1', realized_pnl: '0', trading_fees: '3.6', liquidation_fees: '0', funding: null, net_result: '-3.6' },
      // the Jan 20 -> Jan 31 20:00Z change, -2.5, is January's in UTC
      { symbol: null, pnl_month: '2026-01-01', fill_count: null, realized_pnl: null, trading_fees: null, liquidation_fees: null, funding: '-2.5', net_result: '-2.5' },
      // fill 104: -600 - 10.44 - 8.7 = -619.14
      { symbol: 'cmt_btcusdt', pnl_month: '2026-02-01', fill_count: '1', realized_pnl: '-600', trading_fees: '10.44', liquidation_fees: '8.7', funding: null, net_result: '-619.14' },
      { symbol: null, pnl_month: '2026-02-01', fill_count: null, realized_pnl: null, trading_fees: null, liquidation_fees: null, funding: '1.25', net_result: '1.25' },
    ]);
  });

  it('parses amounts exactly on the fast (at most 9 + 9 digits) and the wide path of staging.futures_fills', async () => {
    db = await openModelDb();
    const texts = ['0', '-600', '123456789', '1234567890', '-0.000000001', '0.0000000001', '123456789.123456789', '-12345678.123456789', '1234567890.1', '-9999999999.999999999999999999'];
    await insertHistory(db, 'futures_fills', texts.map((text, i) => fill(String(400 + i), 'cmt_btcusdt', '2026-02-01T00:00:00Z', 'CLOSE_LONG', text, '1', text, text, text)));
    await buildAll(db);
    const rows = await queryRows<{ fill_size: string; fill_fee: string; liquidate_fee: string; realize_pnl: string }>(db, 'select fill_size, fill_fee, liquidate_fee, realize_pnl from staging.futures_fills order by trade_id');
    const exact = (text: string) => {
      const [whole, fraction = ''] = text.split('.');
      return `${whole}.${fraction.padEnd(18, '0')}`;
    };
    expect(rows).toEqual(texts.map((text) => ({ fill_size: exact(text), fill_fee: exact(text), liquidate_fee: exact(text), realize_pnl: exact(text) })));
  });

  it('sums notionals of 1e21 per fill without overflow (price 1e9 x size 1e12)', async () => {
    db = await openModelDb();
    await insertSnapshot(db, 'futures_contracts', '2026-02-20T00:00:00Z', [{ symbol: 'cmt_btcusdt', quote_currency: 'USDT', coin: 'USDT', contract_val: '0.0001' }]);
    // Twelve fills of 1e21 on one day: their sum, 1.2e22, is beyond DECIMAL(38,16) itself.
    const fills = Array.from({ length: 11 }, (_, i) => fill(String(301 + i), 'cmt_btcusdt', '2026-02-01T00:00:00Z', 'OPEN_LONG', '1000000000000', '1000000000000000000000', '600000000000000000', '0'));
    // value 1e21 + 0.0000000001 (the exchange's last digits survive the sum)
    fills.push(fill('312', 'cmt_btcusdt', '2026-02-01T00:00:01Z', 'OPEN_LONG', '1000000000000', '1000000000000000000000.0000000001', '600000000000000000', '0'));
    await insertHistory(db, 'futures_fills', fills);
    await buildAll(db);
    // 12 * 1e21 + 1e-10 = 12000000000000000000000.0000000001; fees 12 * 6e17 = 7.2e18
    expect(await queryRows(db, 'select volume, trading_fees from marts.futures_pnl_monthly')).toEqual([{ volume: '12000000000000000000000.000000000100', trading_fees: '7200000000000000000.000000000000000000' }]);
  });
});
