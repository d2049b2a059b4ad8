import type { HistoryStream } from '../src/extract/stream.ts';

/**
 * Futures fills (4.15): no page parameter. The extractor moves endTime back and narrows a
 * crowded millisecond by symbol and orderId (exchange-notes.md "Paging and ordering").
 * tradeId/orderId arrive as bare JSON integers above 2^53.
 */
export const futuresFills = {
  kind: 'history',
  name: 'futures_fills',
  description: 'Futures trade executions, one row per fill',
  endpoint: 'futures.fills',
  recordsPath: 'list',
  partitions: { kind: 'none' },
  timeFields: ['createdTime'],
  window: { months: 3, startParam: 'startTime', endParam: 'endTime' },
  paginator: { kind: 'end-time-cursor', limitParam: 'limit', limit: 100, moreFlag: 'nextFlag', narrowBy: ['symbol', 'orderId'] },
  identity: { kind: 'key', fields: ['tradeId'] },
  fields: [
    { name: 'tradeId', type: 'id' },
    { name: 'orderId', type: 'id' },
    { name: 'symbol', type: 'text' },
    { name: 'marginMode', type: 'text', required: false },
    { name: 'separatedMode', type: 'text', required: false },
    { name: 'positionSide', type: 'text' },
    { name: 'orderSide', type: 'text' },
    { name: 'fillSize', type: 'amount', sign: 'positive' },
    { name: 'fillValue', type: 'amount', sign: 'non-negative' },
    { name: 'fillFee', type: 'amount' },
    { name: 'liquidateFee', type: 'amount', required: false },
    { name: 'realizePnl', type: 'amount' },
    { name: 'direction', type: 'text', required: false },
    { name: 'liquidateType', type: 'text', required: false },
    { name: 'legacyOrdeDirection', type: 'text', required: false },
    { name: 'createdTime', type: 'time_ms' },
  ],
} as const satisfies HistoryStream;
