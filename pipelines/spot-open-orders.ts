import type { SnapshotStream } from '../src/extract/stream.ts';

/** Open spot orders per symbol (4.5): pages from 0 (`pageNo`), up to 100 a page. */
export const spotOpenOrders = {
  kind: 'snapshot',
  name: 'spot_open_orders',
  description: 'Unfilled and partly filled spot orders, one row set per snapshot',
  endpoint: 'spot.openOrders',
  recordsPath: 'orderInfoResultList',
  partitions: { kind: 'spot-symbols', param: 'symbol' },
  paginator: { kind: 'page-number', pageParam: 'pageNo', firstPage: 0, sizeParam: 'limit', pageSize: 100, more: { flag: 'nextPage' } },
  fields: [
    { name: 'orderId', type: 'id' },
    { name: 'symbol', type: 'text' },
    { name: 'clientOrderId', type: 'text', required: false },
    { name: 'price', type: 'amount', required: false },
    { name: 'quantity', type: 'amount', sign: 'positive' },
    { name: 'orderType', type: 'text', required: false },
    { name: 'side', type: 'text' },
    { name: 'status', type: 'text' },
    { name: 'fillQuantity', type: 'amount', required: false },
    { name: 'fillTotalAmount', type: 'amount', required: false },
    { name: 'cTime', type: 'time_ms' },
  ],
  // Fill prices so far and the update time: the view shows the order as placed.
  knownFields: ['accountId', 'latestFillPrice', 'maxFillPrice', 'minFillPrice', 'uTime'],
} as const satisfies SnapshotStream;
