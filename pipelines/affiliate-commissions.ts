import type { HistoryStream } from '../src/extract/stream.ts';

/**
 * Affiliate commission (4.17): ranges capped at 3 months, productType defaults to SPOT so each
 * product is asked for separately, no id (identical records are genuine). The time is `dealTime`
 * in the real payload and `date` in the spec's field table: either is accepted.
 */
export const affiliateCommissions = {
  kind: 'history',
  name: 'affiliate_commissions',
  description: 'Commission earned on invited users, one row per commission record',
  endpoint: 'rebate.commission',
  recordsPath: 'channelCommissionInfoItems',
  partitions: {
    kind: 'values',
    dimensions: [
      { param: 'productType', values: ['SPOT', 'FUTURES'] },
      { param: 'coin', values: ['USDT', 'BTC'] },
    ],
  },
  timeFields: ['dealTime', 'date'],
  window: { months: 3, startParam: 'startTime', endParam: 'endTime', settleMinutes: 60 },
  paginator: { kind: 'page-number', pageParam: 'page', firstPage: 1, sizeParam: 'pageSize', pageSize: 100, more: { pages: 'pages' } },
  identity: { kind: 'content-occurrence' },
  fields: [
    { name: 'uid', type: 'id' },
    { name: 'dealTime', type: 'time_ms', required: false },
    { name: 'date', type: 'time_ms', required: false },
    { name: 'coin', type: 'text' },
    { name: 'productType', type: 'text', required: false },
    { name: 'fee', type: 'amount' },
    { name: 'commission', type: 'amount' },
    { name: 'rate', type: 'amount', required: false },
    { name: 'symbol', type: 'text', required: false },
    { name: 'sourceType', type: 'integer', required: false },
    { name: 'takerAmount', type: 'amount', required: false },
    { name: 'makerAmount', type: 'amount', required: false },
  ],
} as const satisfies HistoryStream;
