import { afterEach, describe, expect, it } from 'vitest';
import { checkModels } from '../src/models/check.ts';
import type { Database } from '../src/store/database.ts';
import { buildAll, insertHistory, openModelDb, queryRows } from './support/model-db.ts';

/**
 * marts.affiliate_rebates_monthly and marts.affiliate_referrals_monthly on hand-computed records: commission
 * records (no id, an identical twin among them, productType only in the request) across a Tokyo month boundary,
 * and referral totals per invited user and UTC day.
 */

let db: Database;
afterEach(() => db?.close());

/** Decimal strings without trailing zeros ('-18.000' -> '-18'), so expectations read like the arithmetic. */
function trimmed<T extends Record<string, unknown>>(rows: T[]): T[] {
  return rows.map((row) => Object.fromEntries(Object.entries(row).map(([key, value]) => [key, typeof value === 'string' && /^-?\d+\.\d+$/.test(value) ? value.replace(/\.?0+$/, '') : value])) as T);
}

/** A commission record as the exchange sends it (the sample's shape: dealTime, no productType). */
function commission(uid: string, at: string, coin: string, symbol: string, sourceType: number, rate: string, fee: string, paid: string, taker: string, maker: string): object {
  return { uid, dealTime: String(Date.parse(at)), coin, fee, commission: paid, rate, symbol, sourceType, takerAmount: taker, makerAmount: maker };
}

function referral(uid: string, deposit: string, withdrawal: string, spot: string, futures: string, paid: string): object {
  return { uid, depositAmount: deposit, withdrawalAmount: withdrawal, spotTradingAmount: spot, futuresTradingAmount: futures, commission: paid };
}

async function ledger(): Promise<void> {
  db = await openModelDb();
  const spot = { partition: 'productType=SPOT' };
  const futures = { partition: 'productType=FUTURES' };
  // fee = taker * 0.001 + maker * 0.001; commission = fee * rate.
  const twin = commission('7001', '2026-01-31T14:59:59.999Z', 'USDT', 'BTCUSDT_SPBL', 1, '0.4', '1.5', '0.6', '1000', '500');
  await insertHistory(db, 'affiliate_commissions', [
    // 1000 * 0.001 + 1000 * 0.001 = 2; 2 * 0.4 = 0.8
    commission('7001', '2026-01-10T08:00:00Z', 'USDT', 'BTCUSDT_SPBL', 1, '0.4', '2', '0.8', '1000', '1000'),
    // 23:59:59.999 on Jan 31 in Tokyo: 1000 * 0.001 + 500 * 0.001 = 1.5; 1.5 * 0.4 = 0.6. Twice: two genuine records.
    twin,
    twin,
    // The ETHBTC pair settles in BTC: 0.08 * 0.001 + 0.02 * 0.001 = 0.0001; 0.0001 * 0.5 = 0.00005
    commission('7003', '2026-02-03T00:00:00Z', 'BTC', 'ETHBTC_SPBL', 1, '0.5', '0.0001', '0.00005', '0.08', '0.02'),
  ], spot);
  await insertHistory(db, 'affiliate_commissions', [
    // 00:30 on Feb 1 in Tokyo, still Jan 31 in UTC. A sub-agent's user: 4000 * 0.0006 + 3000 * 0.0002 = 3; 3 * 0.1 = 0.3
    commission('7002', '2026-01-31T15:30:00Z', 'USDT', 'cmt_btcusdt', 2, '0.1', '3', '0.3', '4000', '3000'),
  ], futures);

  // Referral totals: one record per invited user and UTC day (the request's day).
  const day = (iso: string) => ({ eventMs: Date.parse(`${iso}T00:00:00Z`) });
  await insertHistory(db, 'affiliate_referrals', [referral('7001', '100', '0', '1000', '0', '0.4')], day('2026-01-30'));
  await insertHistory(db, 'affiliate_referrals', [referral('7001', '0', '40', '0', '500', '0.1')], day('2026-01-31'));
  await insertHistory(db, 'affiliate_referrals', [referral('7001', '0', '0', '200.5', '0', '0.08')], day('2026-02-01'));
  await insertHistory(db, 'affiliate_referrals', [referral('7002', '50', '0', '0', '0', '0')], day('2026-02-01'));
}

const REBATES = `select cast(commission_month as varchar) as commission_month, coin, product_type, source_type, symbol, commission, fee,
    taker_volume, maker_volume, record_count, invited_user_count from marts.affiliate_rebates_monthly order by commission_month, product_type, coin`;
const REFERRALS = `select uid, cast(activity_month as varchar) as activity_month, deposit_amount, withdrawal_amount, spot_volume, futures_volume,
    commission, active_days from marts.affiliate_referrals_monthly order by uid, activity_month`;

/** Referral months are the UTC days' months in every reporting zone. */
const EXPECTED_REFERRALS = [
  // Jan 30 + Jan 31: deposits 100, withdrawals 40, spot 1000, futures 500, commission 0.4 + 0.1 = 0.5
  { uid: '7001', activity_month: '2026-01-01', deposit_amount: '100', withdrawal_amount: '40', spot_volume: '1000', futures_volume: '500', commission: '0.5', active_days: '2' },
  { uid: '7001', activity_month: '2026-02-01', deposit_amount: '0', withdrawal_amount: '0', spot_volume: '200.5', futures_volume: '0', commission: '0.08', active_days: '1' },
  { uid: '7002', activity_month: '2026-02-01', deposit_amount: '50', withdrawal_amount: '0', spot_volume: '0', futures_volume: '0', commission: '0', active_days: '1' },
];

describe('affiliate marts', () => {
  it('commission per Tokyo month, coin, product type, source type and symbol; referrals per user and UTC-day month', async () => {
    await ledger();
    await buildAll(db, { reportingTimeZone: 'Asia/Tokyo' });
    expect(trimmed(await queryRows(db, REBATES))).toEqual([
      // three records, the twins counted twice: commission 0.8 + 0.6 + 0.6 = 2, fee 2 + 1.5 + 1.5 = 5,
      // taker 1000 * 3 = 3000, maker 1000 + 500 + 500 = 2000
      { commission_month: '2026-01-01', coin: 'USDT', product_type: 'SPOT', source_type: 1, symbol: 'BTCUSDT_SPBL', commission: '2', fee: '5', taker_volume: '3000', maker_volume: '2000', record_count: '3', invited_user_count: '1' },
      { commission_month: '2026-02-01', coin: 'USDT', product_type: 'FUTURES', source_type: 2, symbol: 'cmt_btcusdt', commission: '0.3', fee: '3', taker_volume: '4000', maker_volume: '3000', record_count: '1', invited_user_count: '1' },
      { commission_month: '2026-02-01', coin: 'BTC', product_type: 'SPOT', source_type: 1, symbol: 'ETHBTC_SPBL', commission: '0.00005', fee: '0.0001', taker_volume: '0.08', maker_volume: '0.02', record_count: '1', invited_user_count: '1' },
    ]);
    expect(trimmed(await queryRows(db, REFERRALS))).toEqual(EXPECTED_REFERRALS);
    // The marts' tests by name; staging's generic tests of the affiliate streams must pass too.
    const results = await checkModels(db);
    expect(results.filter((result) => result.id.startsWith('staging/affiliate_') && result.status !== 'pass')).toEqual([]);
    const tests = results.filter((result) => /^marts\/affiliate_/.test(result.id));
    expect(tests.map(({ id, status }) => `${id} ${status}`)).toEqual([
      'marts/affiliate_rebates_monthly_accepted_values_source_type pass',
      'marts/affiliate_rebates_monthly_accepted_values_source_type_name pass',
      'marts/affiliate_rebates_monthly_not_null pass',
      'marts/affiliate_rebates_monthly_unique pass',
      'marts/affiliate_referrals_monthly_not_null pass',
      'marts/affiliate_referrals_monthly_unique pass',
      'marts/affiliate_totals_agree pass',
    ]);
  });

  it('in UTC the 15:30Z futures record is January\'s; referral months do not move', async () => {
    await ledger();
    await buildAll(db);
    const rebates = trimmed(await queryRows(db, REBATES));
    expect(rebates.map(({ commission_month, product_type, coin, commission: paid, record_count }) => `${commission_month} ${product_type} ${coin} ${paid} x${record_count}`)).toEqual([
      '2026-01-01 FUTURES USDT 0.3 x1',
      '2026-01-01 SPOT USDT 2 x3',
      '2026-02-01 SPOT BTC 0.00005 x1',
    ]);
    expect(trimmed(await queryRows(db, REFERRALS))).toEqual(EXPECTED_REFERRALS);
  });
});
