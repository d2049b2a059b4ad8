import type { HistoryStream } from '../src/extract/stream.ts';

/** Funding account bills (4.9). Pages from 1 with `hasNextPage`. */
export const fundingBills = {
  kind: 'history',
  name: 'funding_bills',
  description: 'Funding account balance changes, one row per bill',
  endpoint: 'spot.fundingBills',
  recordsPath: 'items',
  partitions: { kind: 'none' },
  timeFields: ['cTime'],
  window: { months: 3, startParam: 'startTime', endParam: 'endTime' },
  paginator: { kind: 'page-number', pageParam: 'pageIndex', firstPage: 1, sizeParam: 'pageSize', pageSize: 100, more: { flag: 'hasNextPage' }, totalRecords: 'total' },
  identity: { kind: 'key', fields: ['billId'] },
  fields: [
    { name: 'billId', type: 'id' },
    { name: 'coinId', type: 'integer' },
    { name: 'coinName', type: 'text' },
    { name: 'bizType', type: 'text' },
    { name: 'deltaAmount', type: 'amount' },
    { name: 'afterAmount', type: 'amount' },
    { name: 'fees', type: 'amount' },
    { name: 'cTime', type: 'time_ms' },
  ],
  // Sent on trade bills; the models take trade sizes from the fills themselves.
  knownFields: ['fillSize', 'fillValue'],
} as const satisfies HistoryStream;
