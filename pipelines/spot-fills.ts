import type { HistoryStream } from '../src/extract/stream.ts';

/** Spot fills, per symbol (4.7). Pages from 0 with `nextPage`; `totals` is unreliable (exchange-notes.md "Paging and ordering"). */
export const spotFills = {
  kind: 'history',
  name: 'spot_fills',
  description: 'Spot trade executions, one row per fill',
  endpoint: 'spot.fills',
  recordsPath: 'fillsOrderResultList',
  partitions: { kind: 'spot-symbols', param: 'symbol' },
  timeFields: ['cTime'],
  window: { months: 3, startParam: 'after', endParam: 'before' },
  paginator: { kind: 'page-number', pageParam: 'pageIndex', firstPage: 0, sizeParam: 'pageSize', pageSize: 100, more: { flag: 'nextPage' } },
  identity: { kind: 'key', fields: ['fillId'] },
  // The spot models cost a fill as quantity x price (sql/intermediate/int_spot_trades.sql).
  products: [['fillQuantity', 'fillPrice']],
  fields: [
    { name: 'accountId', type: 'id' },
    { name: 'symbol', type: 'text' },
    { name: 'baseCoin', type: 'text' },
    { name: 'quoteCoin', type: 'text' },
    { name: 'orderId', type: 'id' },
    { name: 'fillId', type: 'id' },
    { name: 'orderType', type: 'text', required: false },
    { name: 'side', type: 'text' },
    // Seen as an empty string: the price is then fillTotalAmount / fillQuantity (exchange-notes.md "Numbers").
    { name: 'fillPrice', type: 'amount', required: false, sign: 'non-negative' },
    { name: 'fillQuantity', type: 'amount', sign: 'positive' },
    { name: 'fillTotalAmount', type: 'amount', sign: 'non-negative' },
    { name: 'fees', type: 'amount' },
    { name: 'cTime', type: 'time_ms' },
  ],
  // Maker or taker: the fee itself is what the models use.
  knownFields: ['fillRole'],
} as const satisfies HistoryStream;
