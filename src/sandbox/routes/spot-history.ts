import { unknownSymbol } from '../api-error.ts';
import { accountOf, type EndpointDef, type RouteContext, type RouteResult } from '../endpoint.ts';
import { lowerBound, pageNewestFirst, selectSpan, upperBound } from '../paging.ts';
import { checkHorizon, readTimeRange } from './time-range.ts';

/** The bizType values of exchange-api.md 4.9. */
const FUNDING_BIZ_TYPES = ['deposit', 'withdraw', 'transfer_in', 'transfer_out', 'buy', 'sell', 'c2c_buy', 'c2c_sell'] as const;

/**
 * 4.7 spot fills. `after`/`before` are the start/end times (bounds per the `bounds` option);
 * pageIndex counts from 0 (exchange-notes.md "Paging and ordering"); `totals` is always 0, as
 * the real exchange was seen to send (use nextPage and short pages, never totals).
 */
function spotFills(context: RouteContext): RouteResult {
  const { params, state } = context;
  const account = accountOf(context);
  const symbol = params.string('symbol', { required: true });
  const orderId = params.id('orderId');
  const range = readTimeRange(context, 'after', 'before');
  const pageIndex = params.integer('pageIndex', { min: 0, default: 0 });
  const pageSize = params.integer('pageSize', { min: 1, max: 100, default: 10 });
  // A pair that does not exist is an error, not an empty page (exchange-notes.md "Paging and ordering").
  if (!state.spotSymbols.has(symbol)) throw unknownSymbol(symbol);
  // Late fills (SandboxOptions.lateSpotFillsMs) are left out until they are published.
  const series = state.publishedSpotFills(orderId === undefined ? (account.spotFills.get(symbol) ?? []) : state.index(account).spotFillsOfOrder(symbol, orderId));
  const page = pageNewestFirst(series, selectSpan(series, range), pageIndex * pageSize, pageSize);
  return {
    data: { fillsOrderResultList: page.items.map((fill) => fill.wire), nextPage: page.remaining > 0, totals: 0 },
    rows: page.items.length,
  };
}

/** 4.9 funding bills: pageIndex counts from 1 (exchange-notes.md "Paging and ordering"); total counts every match. */
function fundingBills(context: RouteContext): RouteResult {
  const { params, state } = context;
  const account = accountOf(context);
  const coinId = params.integer('coinId', { min: 0 });
  const bizType = params.oneOf('bizType', FUNDING_BIZ_TYPES);
  const range = readTimeRange(context, 'startTime', 'endTime');
  const pageIndex = params.integer('pageIndex', { min: 1, default: 1 });
  const pageSize = params.integer('pageSize', { min: 1, max: 100, default: 10 });
  const key = coinId === undefined && bizType === undefined ? null : JSON.stringify([coinId ?? null, bizType ?? null]);
  const series = state
    .index(account)
    .fundingBills.get(key, (bill) => (coinId === undefined || Number(bill.wire.coinId) === coinId) && (bizType === undefined || bill.wire.bizType === bizType));
  const span = selectSpan(series, range);
  const page = pageNewestFirst(series, span, (pageIndex - 1) * pageSize, pageSize);
  return {
    data: { total: span.hi - span.lo, page: pageIndex, pageSize, hasNextPage: page.remaining > 0, items: page.items.map((bill) => bill.wire) },
    rows: page.items.length,
  };
}

/**
 * 4.10 transfer records: no id, no paging flag, cursors on tradeTime (exchange-notes.md
 * "Paging and ordering"). Documented mode: `after` = strictly older than, the newest `limit`
 * of them; `before` = strictly newer than, the `limit` nearest above the cursor (still sent
 * newest first); both = strictly between, the newest `limit`. 'reversed' swaps the two names,
 * as the newer API documents.
 */
function transferRecords(context: RouteContext): RouteResult {
  const { params, state } = context;
  const account = accountOf(context);
  const coinId = params.integer('coinId', { min: 0 });
  const fromType = params.string('fromType');
  const after = params.time('after');
  const before = params.time('before');
  const limit = params.integer('limit', { min: 1, max: 500, default: 100 });
  const documented = state.behaviour.transferCursor === 'documented';
  const olderThan = documented ? after : before;
  const newerThan = documented ? before : after;
  checkHorizon(context, newerThan ?? olderThan);

  // Records carry coinName, not coinId: map through the currency list; an unknown id matches nothing.
  const coinName = coinId === undefined ? undefined : state.coinNameById.get(String(coinId));
  if (coinId !== undefined && coinName === undefined) return { data: [], rows: 0 };
  const key = coinName === undefined && fromType === undefined ? null : JSON.stringify([coinName ?? null, fromType ?? null]);
  const series = state
    .index(account)
    .transferRecords.get(key, (record) => (coinName === undefined || record.wire.coinName === coinName) && (fromType === undefined || record.wire.fromType === fromType));

  const notBefore = state.historyNotBefore();
  let lo = notBefore === undefined ? 0 : lowerBound(series, notBefore);
  let hi = upperBound(series, state.visibleUntil);
  if (olderThan !== undefined) hi = Math.min(hi, lowerBound(series, olderThan));
  if (newerThan !== undefined) lo = Math.max(lo, upperBound(series, newerThan));
  const records = [];
  if (olderThan === undefined && newerThan !== undefined) {
    // Only a lower cursor: the records just above it, so a client can walk forward in time.
    for (let index = Math.min(hi, lo + limit) - 1; index >= lo; index -= 1) records.push(series[index]!.wire);
  } else {
    for (let index = hi - 1; index >= Math.max(lo, hi - limit); index -= 1) records.push(series[index]!.wire);
  }
  return { data: records, rows: records.length };
}

/** The spot history endpoints. */
export const SPOT_HISTORY_ENDPOINTS: EndpointDef[] = [
  { id: 'spot.fills', method: 'POST', path: '/api/v2/trade/fills', group: 'spot', ipWeight: 5, uidWeight: 5, signed: true, mutating: false, handle: spotFills },
  { id: 'spot.fundingBills', method: 'POST', path: '/api/v2/account/fundingBills', group: 'spot', ipWeight: 5, uidWeight: 5, signed: true, mutating: false, handle: fundingBills },
  { id: 'spot.transferRecords', method: 'GET', path: '/api/v2/account/transferRecords', group: 'spot', ipWeight: 3, uidWeight: 3, signed: true, mutating: false, handle: transferRecords },
];
