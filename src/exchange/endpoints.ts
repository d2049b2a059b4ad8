/**
 * Every endpoint of ../shared/spec/exchange-api.md section 4, with its weights (section 8),
 * envelope (section 2.1) and whether it is signed (section 5). This one table drives signing,
 * unwrapping and the weight budget; nothing else names a path.
 */

/** Which address root an endpoint lives under, and so which budget group counts it. */
export type BaseKind = 'spot' | 'contract';

/** How the body wraps the payload (exchange-api.md 2.1). */
export type EnvelopeKind = 'spot' | 'rebate' | 'none';

/** A static description of one endpoint. */
export interface EndpointSpec {
  method: 'GET' | 'POST';
  path: string;
  base: BaseKind;
  envelope: EnvelopeKind;
  /** Signed with the headers of exchange-api.md section 5. */
  signed: boolean;
  /** Weight charged against the per-IP budget. */
  ipWeight: number;
  /** Weight charged against the per-UID (API key) budget; null where section 8 says "none". */
  uidWeight: number | null;
}

function spot(method: 'GET' | 'POST', path: string, ipWeight: number, uidWeight: number | null, signed = true): EndpointSpec {
  return { method, path, base: 'spot', envelope: path.startsWith('/api/v2/rebate/') ? 'rebate' : 'spot', signed, ipWeight, uidWeight };
}

function contract(method: 'GET' | 'POST', path: string, ipWeight: number, uidWeight: number | null, signed = true): EndpointSpec {
  return { method, path, base: 'contract', envelope: 'none', signed, ipWeight, uidWeight };
}

/** The endpoints, keyed by a stable id used in logs, budgets and pipeline declarations. */
export const ENDPOINTS = {
  'spot.currencies': spot('GET', '/api/v2/public/currencies', 1, null, false), // 4.1
  'spot.placeOrder': spot('POST', '/api/v2/trade/orders', 2, 5), // 4.2
  'spot.batchOrders': spot('POST', '/api/v2/trade/batch-orders', 5, 10), // 4.3
  'spot.cancelBatchOrders': spot('POST', '/api/v2/trade/cancel-batch-orders', 5, 10), // 4.4
  'spot.openOrders': spot('POST', '/api/v2/trade/open-orders', 3, 3), // 4.5
  'spot.orderInfo': spot('POST', '/api/v2/trade/orderInfo', 2, 2), // 4.6
  'spot.fills': spot('POST', '/api/v2/trade/fills', 5, 5), // 4.7
  'spot.assets': spot('GET', '/api/v2/account/assets', 5, 5), // 4.8
  'spot.fundingBills': spot('POST', '/api/v2/account/fundingBills', 5, 5), // 4.9
  'spot.transferRecords': spot('GET', '/api/v2/account/transferRecords', 3, 3), // 4.10
  'futures.placeOrder': contract('POST', '/capi/v2/order/placeOrder', 2, 5), // 4.11
  'futures.contracts': contract('GET', '/capi/v2/market/contracts', 10, null, false), // 4.12
  'futures.cancelBatchOrders': contract('POST', '/capi/v2/order/cancel_batch_orders', 5, 10), // 4.13
  'futures.currentOrders': contract('GET', '/capi/v2/order/current', 2, 2), // 4.14
  'futures.fills': contract('GET', '/capi/v2/order/fills', 5, 5), // 4.15
  'futures.accounts': contract('GET', '/capi/v2/account/accounts', 5, 5), // 4.16
  'rebate.commission': spot('GET', '/api/v2/rebate/affiliate/getAffiliateCommission', 20, 20), // 4.17
  'rebate.referrals': spot('GET', '/api/v2/rebate/affiliate/getChannelUserTradeAndAsset', 20, 20), // 4.18
  // Server time (exchange-notes "Signing"): not in section 8; charged as the lightest public call.
  'spot.time': spot('GET', '/api/v2/public/time', 1, null, false),
} as const satisfies Record<string, EndpointSpec>;

/** An endpoint id. */
export type EndpointId = keyof typeof ENDPOINTS;

/** Whether `id` names an endpoint (for validating pipeline declarations and flags). */
export function isEndpointId(id: string): id is EndpointId {
  return Object.hasOwn(ENDPOINTS, id);
}
