import type { EndpointDef } from './endpoint.ts';
import { FUTURES_ENDPOINTS } from './routes/futures.ts';
import { REBATE_ENDPOINTS } from './routes/rebate.ts';
import { SPOT_HISTORY_ENDPOINTS } from './routes/spot-history.ts';
import { SPOT_PUBLIC_ENDPOINTS } from './routes/spot-public.ts';
import { SPOT_TRADING_ENDPOINTS } from './routes/spot-trading.ts';

/**
 * Every endpoint the sandbox serves: the 18 of exchange-api.md section 4 with the weights of
 * section 8, plus the two server-time endpoints of exchange-notes.md "Signing" (IP weight 1,
 * not counted per UID).
 */
export const SANDBOX_ENDPOINTS: readonly EndpointDef[] = [
  ...SPOT_PUBLIC_ENDPOINTS,
  ...SPOT_TRADING_ENDPOINTS,
  ...SPOT_HISTORY_ENDPOINTS,
  ...FUTURES_ENDPOINTS,
  ...REBATE_ENDPOINTS,
];

const BY_ROUTE = new Map(SANDBOX_ENDPOINTS.map((endpoint) => [`${endpoint.method} ${endpoint.path}`, endpoint]));

/** The endpoint of a method and path (exact match; paths are case-sensitive), or undefined. */
export function findEndpoint(method: string, path: string): EndpointDef | undefined {
  return BY_ROUTE.get(`${method} ${path}`);
}
