import type { HistoryStream } from '../src/extract/stream.ts';

/**
 * Transfer records (4.10): no id and no paging flag; `after`/`before` are tradeTime cursors
 * whose direction the newer API documents the other way round, so the extractor checks which
 * one the exchange uses (exchange-notes.md "Paging and ordering"). Identical records are genuine.
 */
export const transferRecords = {
  kind: 'history',
  name: 'transfer_records',
  description: 'Transfers between the spot and futures accounts, one row per transfer',
  endpoint: 'spot.transferRecords',
  recordsPath: '',
  partitions: { kind: 'none' },
  timeFields: ['tradeTime'],
  window: { months: 3, startParam: 'before', endParam: 'after' },
  paginator: { kind: 'trade-time-cursor', limitParam: 'limit', limit: 500 },
  identity: { kind: 'content-occurrence' },
  fields: [
    { name: 'coinName', type: 'text' },
    { name: 'status', type: 'text' },
    { name: 'toType', type: 'text', required: false },
    { name: 'toSymbol', type: 'text', required: false },
    { name: 'fromType', type: 'text', required: false },
    { name: 'fromSymbol', type: 'text', required: false },
    { name: 'amount', type: 'amount' },
    { name: 'tradeTime', type: 'time_ms' },
  ],
} as const satisfies HistoryStream;
