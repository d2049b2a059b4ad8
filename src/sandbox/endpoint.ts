import type { SandboxAccount } from './model.ts';
import type { ParamReader } from './params.ts';
import type { SandboxState } from './sandbox-state.ts';

/**
 * Which envelope an endpoint answers with (exchange-api.md 2.1) and which quota counts it:
 * spot and rebate share the /api/v2 quota, futures has the /capi/v2 one.
 */
export type EndpointGroup = 'spot' | 'rebate' | 'futures';

/** What a route handler gets. */
export interface RouteContext {
  state: SandboxState;
  /** The authenticated account; null on the public endpoints. */
  account: SandboxAccount | null;
  params: ParamReader;
  /** Server time of the request, epoch ms. */
  now: number;
}

/** What a route handler returns: the payload (before the envelope) and how many records it holds. */
export interface RouteResult {
  data: unknown;
  /** Records returned (the main list's length), null for payloads that are not lists. */
  rows: number | null;
}

/** One endpoint of the sandbox. */
export interface EndpointDef {
  /** Stable id, the same as the client's endpoint table (e.g. 'spot.fills', 'futures.fills', 'rebate.commission'). */
  id: string;
  method: 'GET' | 'POST';
  path: string;
  group: EndpointGroup;
  /** Weight(IP) of exchange-api.md section 8. */
  ipWeight: number;
  /** Weight(UID) of section 8; null where it says "none". */
  uidWeight: number | null;
  /** Carries the authentication headers of section 5. */
  signed: boolean;
  /** Changes state (trading); a faulted request must then do nothing. */
  mutating: boolean;
  /** Needs the key's futures read permission (4.16; 40014 otherwise). */
  needsFuturesPermission?: boolean;
  handle(context: RouteContext): RouteResult;
}

/** The authenticated account of a signed endpoint's context. */
export function accountOf(context: RouteContext): SandboxAccount {
  if (context.account === null) throw new Error('a signed endpoint ran without an authenticated account');
  return context.account;
}
