import { DecimalSum } from '../decimal.ts';
import { accountOf, type EndpointDef, type RouteContext, type RouteResult } from '../endpoint.ts';
import type { ReferralActivity } from '../model.ts';
import { pageNewestFirst, selectSpan } from '../paging.ts';
import { readAffiliateRange } from './time-range.ts';

/**
 * The affiliate rebate endpoints (exchange-api.md 4.17, 4.18): rebate envelope, pages from 1
 * (exchange-notes.md "Paging and ordering").
 */

/** Range cap of 4.17 in calendar months (exchange-notes.md: "capped at 3 months per request"). */
const COMMISSION_MAX_MONTHS = 3;

/** 4.17 commission records of one productType (SPOT by default; FUTURES must be asked for separately). */
function commission(context: RouteContext): RouteResult {
  const { params, state } = context;
  const account = accountOf(context);
  const uid = params.id('uid');
  const coin = params.string('coin');
  const productType = params.oneOf('productType', ['SPOT', 'FUTURES'] as const) ?? 'SPOT';
  const range = readAffiliateRange(context, COMMISSION_MAX_MONTHS);
  const page = params.integer('page', { min: 1, default: 1 });
  const pageSize = params.integer('pageSize', { min: 1, max: 100, default: 100 });
  const series = state
    .index(account)
    .commissions.get(
      JSON.stringify([productType, uid ?? null, coin ?? null]),
      (record) => record.productType === productType && (uid === undefined || record.wire.uid === uid) && (coin === undefined || record.wire.coin === coin),
    );
  const span = selectSpan(series, range);
  const total = span.hi - span.lo;
  const result = pageNewestFirst(series, span, (page - 1) * pageSize, pageSize);
  return {
    data: { pages: Math.ceil(total / pageSize), pageSize, total, channelCommissionInfoItems: result.items.map((record) => record.wire) },
    rows: result.items.length,
  };
}

/** The summed fields of a referral record (2.12). */
const REFERRAL_AMOUNTS = ['depositAmount', 'withdrawalAmount', 'spotTradingAmount', 'futuresTradingAmount', 'commission'] as const;

type ReferralAmount = (typeof REFERRAL_AMOUNTS)[number];

type ReferralRecord = { uid: string } & Record<ReferralAmount, string>;

/** Orders uids (strings of digits) as numbers: shorter first, then by digits. */
function compareUids(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

/**
 * 4.18 referral data: per invited uid with activity in the range, the exact sums over the range
 * (exchange-notes.md: totals, not events; overlapping ranges double count), sorted by uid.
 */
function referrals(context: RouteContext): RouteResult {
  const { params, state } = context;
  const account = accountOf(context);
  const uid = params.id('uid');
  const range = readAffiliateRange(context, null);
  const page = params.integer('page', { min: 1, default: 1 });
  const pageSize = params.integer('pageSize', { min: 1, max: 100, default: 100 });
  const series: readonly ReferralActivity[] = uid === undefined ? account.referralActivity : state.index(account).referralsByUid.get(uid);
  const span = selectSpan(series, range);
  const sums = new Map<string, Record<ReferralAmount, DecimalSum>>();
  for (let position = span.lo; position < span.hi; position += 1) {
    const activity = series[position] as ReferralActivity;
    let sum = sums.get(activity.uid);
    if (sum === undefined) {
      sum = Object.fromEntries(REFERRAL_AMOUNTS.map((field) => [field, new DecimalSum()])) as Record<ReferralAmount, DecimalSum>;
      sums.set(activity.uid, sum);
    }
    for (const field of REFERRAL_AMOUNTS) sum[field].add(activity[field]);
  }
  const records = [...sums.entries()]
    .sort(([a], [b]) => compareUids(a, b))
    .map(([uidOfRecord, sum]): ReferralRecord => ({
      uid: uidOfRecord,
      depositAmount: sum.depositAmount.toString(),
      withdrawalAmount: sum.withdrawalAmount.toString(),
      spotTradingAmount: sum.spotTradingAmount.toString(),
      futuresTradingAmount: sum.futuresTradingAmount.toString(),
      commission: sum.commission.toString(),
    }));
  const items = records.slice((page - 1) * pageSize, page * pageSize);
  return { data: { pages: Math.ceil(records.length / pageSize), pageSize, total: records.length, records: items }, rows: items.length };
}

/** The affiliate endpoints. */
export const REBATE_ENDPOINTS: EndpointDef[] = [
  { id: 'rebate.commission', method: 'GET', path: '/api/v2/rebate/affiliate/getAffiliateCommission', group: 'rebate', ipWeight: 20, uidWeight: 20, signed: true, mutating: false, handle: commission },
  { id: 'rebate.referrals', method: 'GET', path: '/api/v2/rebate/affiliate/getChannelUserTradeAndAsset', group: 'rebate', ipWeight: 20, uidWeight: 20, signed: true, mutating: false, handle: referrals },
];
