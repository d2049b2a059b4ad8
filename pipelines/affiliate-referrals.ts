import type { HistoryStream } from '../src/extract/stream.ts';

/**
 * Referral data (4.18): totals per invited user over the requested range, not events, so
 * overlapping ranges would double count. Fetched per calendar day (UTC); a row is (day, uid).
 */
export const affiliateReferrals = {
  kind: 'history',
  name: 'affiliate_referrals',
  description: 'Per invited user and day: deposits, withdrawals, spot and futures volume, commission',
  endpoint: 'rebate.referrals',
  recordsPath: 'records',
  partitions: { kind: 'none' },
  timeFields: [],
  window: { months: 1, daily: true, startParam: 'startTime', endParam: 'endTime' },
  paginator: { kind: 'page-number', pageParam: 'page', firstPage: 1, sizeParam: 'pageSize', pageSize: 100, more: { pages: 'pages' } },
  identity: { kind: 'window-key', fields: ['uid'] },
  fields: [
    { name: 'uid', type: 'id' },
    { name: 'depositAmount', type: 'amount' },
    { name: 'withdrawalAmount', type: 'amount' },
    { name: 'spotTradingAmount', type: 'amount' },
    { name: 'futuresTradingAmount', type: 'amount' },
    { name: 'commission', type: 'amount' },
  ],
} as const satisfies HistoryStream;
