import { invalidParameter, unknownSymbol } from '../api-error.ts';
import { isPositiveDecimal } from '../decimal.ts';
import { accountOf, type EndpointDef, type RouteContext, type RouteResult } from '../endpoint.ts';
import { newSpotOrderWire, type SandboxAccount, type SpotOrderWire } from '../model.ts';
import { ParamReader } from '../params.ts';
import type { SandboxState } from '../sandbox-state.ts';

/**
 * Spot trading (exchange-api.md 4.2 to 4.6) against the in-memory open-order book. The sandbox
 * has no matching engine: a placed order rests as `open` until it is canceled.
 */

/** Most orders one batch may carry (exchange-api.md does not say; 20 is a common exchange cap). */
export const MAX_BATCH_ORDERS = 20;

interface OrderFields {
  side: 'buy' | 'sell';
  orderType: 'limit' | 'market';
  force: string;
  price: string | undefined;
  quantity: string;
  clientOrderId: string;
}

/** Validates the order fields of 4.2 (also each item of 4.3). */
function readOrderFields(params: ParamReader): OrderFields {
  const side = params.oneOf('side', ['buy', 'sell'] as const, { required: true }) as OrderFields['side'];
  const orderType = params.oneOf('orderType', ['limit', 'market'] as const, { required: true }) as OrderFields['orderType'];
  const force = params.oneOf('force', ['normal', 'postOnly', 'fok', 'ioc'] as const, { required: true }) as string;
  const price = params.string('price');
  const quantity = params.string('quantity', { required: true });
  const clientOrderId = params.string('clientOrderId', { required: true });
  if (orderType === 'limit' && price === undefined) throw invalidParameter(`${params.label('price')} is required for a limit order`);
  if (price !== undefined && !isPositiveDecimal(price)) throw invalidParameter(`${params.label('price')} must be a decimal greater than 0`);
  if (!isPositiveDecimal(quantity)) throw invalidParameter(`${params.label('quantity')} must be a decimal greater than 0`);
  return { side, orderType, force, price, quantity, clientOrderId };
}

function knownSymbol(context: RouteContext): string {
  const symbol = context.params.string('symbol', { required: true });
  if (!context.state.spotSymbols.has(symbol)) throw unknownSymbol(symbol);
  return symbol;
}

function isSpotOrderIdTaken(account: SandboxAccount, id: string): boolean {
  if (account.spotOrdersById.has(id)) return true;
  for (const orders of account.spotOpenOrders.values()) if (orders.some((order) => order.orderId === id)) return true;
  return false;
}

/** Puts a new open order on the book and answers its id as a bare JSON integer (exchange-api.md types it Long). */
function restOrder(state: SandboxState, account: SandboxAccount, symbol: string, fields: OrderFields, now: number): { orderId: bigint; clientOrderId: string } {
  const orderId = state.nextOrderId((id) => isSpotOrderIdTaken(account, id));
  const order = newSpotOrderWire({
    accountId: account.spotAccountId,
    symbol,
    orderId,
    clientOrderId: fields.clientOrderId,
    price: fields.price ?? '0',
    quantity: fields.quantity,
    orderType: fields.orderType,
    side: fields.side,
    status: 'open',
    atMs: now,
  });
  let book = account.spotOpenOrders.get(symbol);
  if (book === undefined) {
    book = [];
    account.spotOpenOrders.set(symbol, book);
  }
  book.push(order);
  return { orderId: BigInt(orderId), clientOrderId: fields.clientOrderId };
}

/** 4.2 place order. */
function placeOrder(context: RouteContext): RouteResult {
  const account = accountOf(context);
  const symbol = knownSymbol(context);
  const fields = readOrderFields(context.params);
  return { data: restOrder(context.state, account, symbol, fields, context.now), rows: null };
}

/** 4.3 batch orders: every item is validated before any is placed, so a refused batch places nothing. */
function batchOrders(context: RouteContext): RouteResult {
  const account = accountOf(context);
  const symbol = knownSymbol(context);
  const items = context.params.objectArray('orderList', { required: true, max: MAX_BATCH_ORDERS });
  const orders = items.map((item, index) => readOrderFields(ParamReader.fromBody(item, `orderList[${index}].`)));
  const resultList = orders.map((fields) => restOrder(context.state, account, symbol, fields, context.now));
  return { data: { resultList }, rows: resultList.length };
}

/** 4.4 cancel batch orders: per-order outcome; unknown orders fail with FAILED_ORDER_NOT_FOUND (exchange-api.md 7.4). */
function cancelBatchOrders(context: RouteContext): RouteResult {
  const account = accountOf(context);
  const symbol = knownSymbol(context);
  const orderIds = context.params.stringArray('orderIds');
  const clientOids = context.params.stringArray('clientOids');
  if (orderIds.length === 0 && clientOids.length === 0) throw invalidParameter('one of orderIds and clientOids is required');
  const book = account.spotOpenOrders.get(symbol) ?? [];
  const index = context.state.index(account);
  const successList: string[] = [];
  const failureList: { orderId: string | null; clientOid: string | null; errMsg: string }[] = [];
  const cancel = (position: number): string => {
    const [order] = book.splice(position, 1) as [SpotOrderWire];
    index.closeSpotOrder({ ...order, status: 'canceled', uTime: String(context.now) });
    return order.orderId;
  };
  for (const orderId of orderIds) {
    const position = book.findIndex((order) => order.orderId === orderId);
    if (position < 0) failureList.push({ orderId, clientOid: null, errMsg: 'FAILED_ORDER_NOT_FOUND' });
    else successList.push(cancel(position));
  }
  for (const clientOid of clientOids) {
    const position = book.findIndex((order) => order.clientOrderId === clientOid);
    if (position < 0) failureList.push({ orderId: null, clientOid, errMsg: 'FAILED_ORDER_NOT_FOUND' });
    else successList.push(cancel(position));
  }
  return { data: { successList, failureList }, rows: null };
}

/** 4.5 open orders: newest first by cTime; pageNo from 0; nextPage is the next page number or null. */
function openOrders(context: RouteContext): RouteResult {
  const account = accountOf(context);
  const symbol = knownSymbol(context);
  const limit = context.params.integer('limit', { min: 1, max: 100, default: 100 });
  const pageNo = context.params.integer('pageNo', { min: 0, default: 0 });
  const book = account.spotOpenOrders.get(symbol) ?? [];
  const sorted = book
    .map((order, position) => ({ order, position, time: Number(order.cTime) }))
    .sort((a, b) => b.time - a.time || b.position - a.position)
    .map((entry) => entry.order);
  const offset = pageNo * limit;
  const items = sorted.slice(offset, offset + limit);
  return { data: { orderInfoResultList: items, nextPage: offset + limit < sorted.length ? pageNo + 1 : null, totals: null }, rows: items.length };
}

/** 4.6 order detail: open orders first, then closed ones; both ids given must both match. */
function orderInfo(context: RouteContext): RouteResult {
  const account = accountOf(context);
  const orderId = context.params.id('orderId');
  const clientOrderId = context.params.string('clientOrderId');
  if (orderId === undefined && clientOrderId === undefined) throw invalidParameter('one of orderId and clientOrderId is required');
  const matches = (order: SpotOrderWire): boolean =>
    (orderId === undefined || order.orderId === orderId) && (clientOrderId === undefined || order.clientOrderId === clientOrderId);
  const found: SpotOrderWire[] = [];
  for (const book of account.spotOpenOrders.values()) for (const order of book) if (matches(order)) found.push(order);
  if (orderId !== undefined) {
    const closed = account.spotOrdersById.get(orderId);
    if (closed !== undefined && matches(closed)) found.push(closed);
  } else if (clientOrderId !== undefined) {
    for (const order of context.state.index(account).closedSpotOrdersByClientId(clientOrderId)) found.push(order);
  }
  return { data: found, rows: found.length };
}

/** The spot trading endpoints. */
export const SPOT_TRADING_ENDPOINTS: EndpointDef[] = [
  { id: 'spot.placeOrder', method: 'POST', path: '/api/v2/trade/orders', group: 'spot', ipWeight: 2, uidWeight: 5, signed: true, mutating: true, handle: placeOrder },
  { id: 'spot.batchOrders', method: 'POST', path: '/api/v2/trade/batch-orders', group: 'spot', ipWeight: 5, uidWeight: 10, signed: true, mutating: true, handle: batchOrders },
  { id: 'spot.cancelBatchOrders', method: 'POST', path: '/api/v2/trade/cancel-batch-orders', group: 'spot', ipWeight: 5, uidWeight: 10, signed: true, mutating: true, handle: cancelBatchOrders },
  { id: 'spot.openOrders', method: 'POST', path: '/api/v2/trade/open-orders', group: 'spot', ipWeight: 3, uidWeight: 3, signed: true, mutating: false, handle: openOrders },
  { id: 'spot.orderInfo', method: 'POST', path: '/api/v2/trade/orderInfo', group: 'spot', ipWeight: 2, uidWeight: 2, signed: true, mutating: false, handle: orderInfo },
];
