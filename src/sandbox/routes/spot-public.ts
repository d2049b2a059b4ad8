import { accountOf, type EndpointDef, type RouteContext, type RouteResult } from '../endpoint.ts';

/** 4.1 currencies (public). */
function currencies(context: RouteContext): RouteResult {
  const list = context.state.exchange.currencies;
  return { data: list, rows: list.length };
}

/** Spot server time (exchange-notes.md "Signing"): data is the server's epoch ms, as in samples/api_v2_public_time.json. */
function time(context: RouteContext): RouteResult {
  return { data: context.now, rows: null };
}

/** 4.8 assets: the snapshot at the visibility horizon, so balances agree with the history served. */
function assets(context: RouteContext): RouteResult {
  const list = accountOf(context).assetsAt(context.state.snapshotMs());
  return { data: list, rows: list.length };
}

/** The spot endpoints that are neither trading nor history. */
export const SPOT_PUBLIC_ENDPOINTS: EndpointDef[] = [
  { id: 'spot.currencies', method: 'GET', path: '/api/v2/public/currencies', group: 'spot', ipWeight: 1, uidWeight: null, signed: false, mutating: false, handle: currencies },
  { id: 'spot.time', method: 'GET', path: '/api/v2/public/time', group: 'spot', ipWeight: 1, uidWeight: null, signed: false, mutating: false, handle: time },
  { id: 'spot.assets', method: 'GET', path: '/api/v2/account/assets', group: 'spot', ipWeight: 5, uidWeight: 5, signed: true, mutating: false, handle: assets },
];
