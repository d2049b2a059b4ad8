import { ENDPOINTS, type EndpointId } from '../../src/exchange/endpoints.ts';
import type { ExchangeClient } from '../../src/exchange/exchange-client.ts';
import type { RunningSandbox } from '../../src/sandbox/server.ts';

/** One endpoint's share of a budget drive, as the sandbox's request log saw it. */
export interface EndpointUsage {
  endpoint: EndpointId;
  requests: number;
  weight: number;
  /** Budget of this endpoint, weight per second (quota / window of its binding scope). */
  budgetPerSecond: number;
}

/** What a drive measured. */
export interface BudgetDriveResult {
  requests: number;
  rateLimited: number;
  elapsedMs: number;
  weight: number;
  budgetPerSecond: number;
  /** Achieved weight rate / budget rate. */
  utilization: number;
  endpoints: EndpointUsage[];
}

/** Read endpoints the drive uses, with harmless parameters. */
function driveCalls(sandbox: RunningSandbox): [EndpointId, Record<string, string | number>][] {
  const symbol = sandbox.exchange.spotSymbols[0]!.symbol;
  const end = sandbox.exchange.endMs - 1;
  return [
    ['spot.currencies', {}],
    ['spot.assets', {}],
    ['spot.fills', { symbol, pageSize: 10 }],
    ['spot.fundingBills', { pageSize: 10 }],
    ['spot.transferRecords', { limit: 10 }],
    ['spot.openOrders', { symbol, limit: 10 }],
    ['futures.contracts', {}],
    ['futures.currentOrders', { limit: 10 }],
    ['futures.fills', { limit: 10 }],
    ['futures.accounts', {}],
    ['rebate.commission', { startTime: end - 7 * 86_400_000, endTime: end }],
    ['rebate.referrals', { startTime: end - 86_400_000, endTime: end }],
  ];
}

/**
 * Sends `total` requests at once across the read endpoints, each endpoint's share in proportion
 * to how many requests its budget allows per second, so that all finish together and every
 * budget is the binding one. Measures from the sandbox's request log.
 */
export async function driveBudget(sandbox: RunningSandbox, client: ExchangeClient, total: number, quotas: { spot: number; contract: number; windowMs: number }): Promise<BudgetDriveResult> {
  const calls = driveCalls(sandbox);
  const perSecond = (endpoint: EndpointId) => (ENDPOINTS[endpoint].base === 'spot' ? quotas.spot : quotas.contract) / (quotas.windowMs / 1000);
  const bindingWeight = (endpoint: EndpointId) => Math.max(ENDPOINTS[endpoint].ipWeight, ENDPOINTS[endpoint].uidWeight ?? 0);
  const requestRates = calls.map(([endpoint]) => perSecond(endpoint) / bindingWeight(endpoint));
  const rateSum = requestRates.reduce((sum, rate) => sum + rate, 0);
  const counts = requestRates.map((rate) => Math.round((total * rate) / rateSum));

  sandbox.clearRequestLog();
  await Promise.all(calls.flatMap(([endpoint, params], index) => Array.from({ length: counts[index]! }, () => client.call(endpoint, params))));

  const log = sandbox.requestLog;
  const first = Math.min(...log.map((entry) => entry.at));
  const last = Math.max(...log.map((entry) => entry.at));
  const elapsedMs = last - first;
  const endpoints = calls.map(([endpoint]) => {
    const entries = log.filter((entry) => entry.endpoint === endpoint && entry.status === 200);
    return { endpoint, requests: entries.length, weight: entries.length * bindingWeight(endpoint), budgetPerSecond: perSecond(endpoint) };
  });
  const weight = endpoints.reduce((sum, usage) => sum + usage.weight, 0);
  const budgetPerSecond = endpoints.reduce((sum, usage) => sum + usage.budgetPerSecond, 0);
  return {
    requests: log.length,
    rateLimited: log.filter((entry) => entry.status === 429).length,
    elapsedMs,
    weight,
    budgetPerSecond,
    utilization: weight / (elapsedMs / 1000) / budgetPerSecond,
    endpoints,
  };
}

/** A printable table of a drive. */
export function formatBudgetDrive(title: string, result: BudgetDriveResult): string {
  const lines = [title, `${'endpoint'.padEnd(24)}${'requests'.padStart(9)}${'weight'.padStart(8)}${'budget/s'.padStart(10)}`];
  for (const usage of result.endpoints) {
    lines.push(`${usage.endpoint.padEnd(24)}${String(usage.requests).padStart(9)}${String(usage.weight).padStart(8)}${usage.budgetPerSecond.toFixed(0).padStart(10)}`);
  }
  const seconds = result.elapsedMs / 1000;
  lines.push(
    `${result.requests} requests (${result.rateLimited} answered 429) in ${seconds.toFixed(2)} s: ${(result.requests / seconds).toFixed(0)} requests/s, ` +
      `${(result.weight / seconds).toFixed(0)} weight/s of a ${result.budgetPerSecond.toFixed(0)} weight/s budget = ${(result.utilization * 100).toFixed(1)}% utilisation`,
  );
  return lines.join('\n');
}
