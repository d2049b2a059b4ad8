import type { SnapshotStream } from '../src/extract/stream.ts';

/** Current futures orders (4.14): pages from 0, up to 100 a page; a short page is the last. */
export const futuresOpenOrders = {
  kind: 'snapshot',
  name: 'futures_open_orders',
  description: 'Futures orders not yet final, one row set per snapshot',
  endpoint: 'futures.currentOrders',
  recordsPath: '',
  partitions: { kind: 'none' },
  paginator: { kind: 'page-number', pageParam: 'page', firstPage: 0, sizeParam: 'limit', pageSize: 100, more: { fullPage: true } },
  fields: [
    { name: 'order_id', type: 'id' },
    { name: 'symbol', type: 'text' },
    { name: 'size', type: 'amount', sign: 'positive' },
    { name: 'client_oid', type: 'text', required: false },
    { name: 'createTime', type: 'time_ms' },
    { name: 'filled_qty', type: 'amount', required: false },
    { name: 'fee', type: 'amount', required: false },
    { name: 'price', type: 'amount', required: false },
    { name: 'price_avg', type: 'amount', required: false },
    { name: 'status', type: 'text' },
    { name: 'type', type: 'text' },
    { name: 'order_type', type: 'text', required: false },
  ],
  // Sizes in contracts and running profit: the open orders' view shows sizes in coins.
  knownFields: ['contracts', 'filledQtyContracts', 'totalProfits'],
} as const satisfies SnapshotStream;
