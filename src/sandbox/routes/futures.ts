import { invalidParameter, unknownSymbol } from '../api-error.ts';
import { divideToInteger, isPositiveDecimal } from '../decimal.ts';
import { accountOf, type EndpointDef, type RouteContext, type RouteResult } from '../endpoint.ts';
import { NON_FINAL_FUTURES_STATUSES } from '../history-index.ts';
import type { FuturesFillWire, FuturesOrderWire, Timed } from '../model.ts';
import { inRange, pageNewestFirst, selectSpan } from '../paging.ts';
import { readTimeRange } from './time-range.ts';

/**
 * The futures endpoints (exchange-api.md 4.11 to 4.16, plus the server time). Futures answer
 * without an envelope (2.1); tradeId/orderId of fills are bigint and go out as bare integers.
 */

/** 4.11 `type` codes to the order direction of 2.9. */
const ORDER_DIRECTIONS: Record<string, string> = { '1': 'open_long', '2': 'open_short', '3': 'close_long', '4': 'close_short' };
/** 4.11 `order_type` codes to the order control type of 2.9. */
const ORDER_CONTROLS: Record<string, string> = { '0': 'normal', '1': 'postOnly', '2': 'fok', '3': 'ioc' };

function knownContract(context: RouteContext): string {
  const symbol = context.params.string('symbol', { required: true });
  if (!context.state.futuresSymbols.has(symbol)) throw unknownSymbol(symbol);
  return symbol;
}

/** 4.11 place order: the order rests as `open` (the sandbox has no matching engine). */
function placeOrder(context: RouteContext): RouteResult {
  const { params, state } = context;
  const account = accountOf(context);
  const symbol = knownContract(context);
  const clientOid = params.string('client_oid', { required: true, maxLength: 40 });
  const size = params.string('size', { required: true });
  const type = params.oneOf('type', ['1', '2', '3', '4'] as const, { required: true }) as string;
  const orderType = params.oneOf('order_type', ['0', '1', '2', '3'] as const, { required: true }) as string;
  const matchPrice = params.oneOf('match_price', ['0', '1'] as const, { required: true }) as string;
  const price = params.string('price');
  const takeProfit = params.decimal('presetTakeProfitPrice');
  const stopLoss = params.decimal('presetStopLossPrice');
  if (!isPositiveDecimal(size)) throw invalidParameter('size must be a decimal greater than 0');
  if (matchPrice === '0' && price === undefined) throw invalidParameter('price is required for a limit order');
  if (price !== undefined && !isPositiveDecimal(price)) throw invalidParameter('price must be a decimal greater than 0');

  const index = state.index(account);
  const orderId = state.nextOrderId((id) => index.futuresOrdersById.get(id).length > 0);
  const contract = state.exchange.contracts.find((candidate) => candidate.symbol === symbol);
  const faceValue = contract === undefined ? undefined : contract.contract_val;
  const contracts = typeof faceValue === 'string' ? (divideToInteger(size, faceValue) ?? 0n) : 0n;
  const wire: FuturesOrderWire = {
    symbol,
    size,
    client_oid: clientOid,
    createTime: String(context.now),
    filled_qty: '0',
    fee: '0',
    order_id: orderId,
    price: matchPrice === '1' ? '0' : (price ?? '0'),
    price_avg: '0',
    status: 'open',
    type: ORDER_DIRECTIONS[type] as string,
    order_type: ORDER_CONTROLS[orderType] as string,
    totalProfits: '0',
    contracts: Number(contracts),
  };
  if (takeProfit !== undefined) wire.presetTakeProfitPrice = takeProfit;
  if (stopLoss !== undefined) wire.presetStopLossPrice = stopLoss;
  index.addFuturesOrder({ t: context.now, wire });
  return { data: { client_oid: clientOid, order_id: orderId }, rows: null };
}

interface CancelOrderResult {
  err_code: string;
  err_msg: string;
  order_id: string;
  client_oid: string;
  result: boolean;
}

/** 4.13 cancel batch orders: per-order results; orders that are unknown, invisible or already final fail. */
function cancelBatchOrders(context: RouteContext): RouteResult {
  const { params, state } = context;
  const account = accountOf(context);
  const symbol = knownContract(context);
  const ids = params.stringArray('ids');
  const cids = params.stringArray('cids');
  if (ids.length === 0 && cids.length === 0) throw invalidParameter('one of ids and cids is required');
  const index = state.index(account);
  const cancelable = (order: Timed<FuturesOrderWire>): boolean =>
    order.wire.symbol === symbol && order.t <= state.visibleUntil && NON_FINAL_FUTURES_STATUSES.has(order.wire.status);
  const results: CancelOrderResult[] = [];
  const cancel = (order: Timed<FuturesOrderWire> | undefined, orderId: string, clientOid: string): void => {
    if (order === undefined) {
      results.push({ err_code: 'FAILED_ORDER_NOT_FOUND', err_msg: 'the order does not exist or is already final', order_id: orderId, client_oid: clientOid, result: false });
      return;
    }
    index.updateFuturesOrder(order, { ...order.wire, status: 'canceled' });
    results.push({ err_code: '', err_msg: '', order_id: order.wire.order_id, client_oid: order.wire.client_oid, result: true });
  };
  for (const id of ids) cancel(index.futuresOrdersById.get(id).find(cancelable), id, '');
  for (const cid of cids) cancel(index.nonFinalFuturesOrders().find((order) => order.wire.client_oid === cid && cancelable(order)), '', cid);
  const failInfos = results.filter((result) => !result.result);
  return { data: { result: failInfos.length === 0, symbol, orderIds: ids, clientOids: cids, cancelOrderResultList: results, failInfos }, rows: null };
}

/**
 * 4.14 current orders. Without orderId and without a time range: the orders that are not final
 * (pending, open, canceling, untriggered); with either: orders of any status that match.
 * page counts from 0.
 */
function currentOrders(context: RouteContext): RouteResult {
  const { params, state } = context;
  const account = accountOf(context);
  const symbol = params.string('symbol');
  const orderId = params.id('orderId');
  const range = readTimeRange(context, 'startTime', 'endTime');
  const limit = params.integer('limit', { min: 1, max: 100, default: 100 });
  const page = params.integer('page', { min: 0, default: 0 });
  const index = state.index(account);
  const bySymbol = (order: Timed<FuturesOrderWire>): boolean => symbol === undefined || order.wire.symbol === symbol;
  let series: readonly Timed<FuturesOrderWire>[];
  let query = range;
  if (orderId !== undefined) {
    series = index.futuresOrdersById.get(orderId).filter(bySymbol);
  } else if (range.start === undefined && range.end === undefined) {
    // Working orders are current state, not history: the history horizon does not hide them.
    query = { ...range, notBefore: undefined };
    series = index.nonFinalFuturesOrders().filter((order) => bySymbol(order) && inRange(order.t, query));
  } else {
    series = symbol === undefined ? account.futuresOrders : index.futuresOrdersBySymbol.get(symbol);
  }
  const result = pageNewestFirst(series, selectSpan(series, query), page * limit, limit);
  return { data: result.items.map((order) => order.wire), rows: result.items.length };
}

/**
 * 4.15 fills: no page parameter (exchange-notes.md "Paging and ordering"): the newest `limit`
 * matches; nextFlag says more match beyond them; totals is always 0 (not meaningful).
 */
function fills(context: RouteContext): RouteResult {
  const { params, state } = context;
  const account = accountOf(context);
  const symbol = params.string('symbol');
  const orderId = params.id('orderId');
  const range = readTimeRange(context, 'startTime', 'endTime');
  const limit = params.integer('limit', { min: 1, max: 100, default: 100 });
  const index = state.index(account);
  let series: readonly Timed<FuturesFillWire>[];
  if (orderId !== undefined) {
    const ofOrder = index.futuresFillsByOrder.get(orderId);
    series = symbol === undefined ? ofOrder : ofOrder.filter((fill) => fill.wire.symbol === symbol);
  } else {
    series = symbol === undefined ? account.futuresFills : index.futuresFillsBySymbol.get(symbol);
  }
  const result = pageNewestFirst(series, selectSpan(series, range), 0, limit);
  return { data: { list: result.items.map((fill) => fill.wire), nextFlag: result.remaining > 0, totals: 0 }, rows: result.items.length };
}

/** 4.16 account list: the snapshot at the visibility horizon (permission is checked before, 40014). */
function accounts(context: RouteContext): RouteResult {
  return { data: accountOf(context).futuresAccountAt(context.state.snapshotMs()), rows: null };
}

/** 4.12 contract information (public); an unknown symbol gives an empty list. */
function contracts(context: RouteContext): RouteResult {
  const symbol = context.params.string('symbol');
  const list = context.state.exchange.contracts.filter((contract) => symbol === undefined || contract.symbol === symbol);
  return { data: list, rows: list.length };
}

/**
 * Futures server time (exchange-notes.md "Signing"): a bare object with the time three ways,
 * `{"epoch":"1716710918.113","iso":"2024-05-26T08:08:38.113Z","timestamp":1716710918113}`,
 * the shape public clients of the real endpoint read. `timestamp` is the ms number.
 */
function time(context: RouteContext): RouteResult {
  const now = context.now;
  return { data: { epoch: (now / 1000).toFixed(3), iso: new Date(now).toISOString(), timestamp: now }, rows: null };
}

/** The futures endpoints. */
export const FUTURES_ENDPOINTS: EndpointDef[] = [
  { id: 'futures.placeOrder', method: 'POST', path: '/capi/v2/order/placeOrder', group: 'futures', ipWeight: 2, uidWeight: 5, signed: true, mutating: true, handle: placeOrder },
  { id: 'futures.contracts', method: 'GET', path: '/capi/v2/market/contracts', group: 'futures', ipWeight: 10, uidWeight: null, signed: false, mutating: false, handle: contracts },
  { id: 'futures.cancelBatchOrders', method: 'POST', path: '/capi/v2/order/cancel_batch_orders', group: 'futures', ipWeight: 5, uidWeight: 10, signed: true, mutating: true, handle: cancelBatchOrders },
  { id: 'futures.currentOrders', method: 'GET', path: '/capi/v2/order/current', group: 'futures', ipWeight: 2, uidWeight: 2, signed: true, mutating: false, handle: currentOrders },
  { id: 'futures.fills', method: 'GET', path: '/capi/v2/order/fills', group: 'futures', ipWeight: 5, uidWeight: 5, signed: true, mutating: false, handle: fills },
  { id: 'futures.accounts', method: 'GET', path: '/capi/v2/account/accounts', group: 'futures', ipWeight: 5, uidWeight: 5, signed: true, mutating: false, needsFuturesPermission: true, handle: accounts },
  { id: 'futures.time', method: 'GET', path: '/capi/v2/market/time', group: 'futures', ipWeight: 1, uidWeight: null, signed: false, mutating: false, handle: time },
];
