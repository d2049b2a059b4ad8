import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FaultKind } from '../src/sandbox/faults.ts';
import { startSandbox, type RunningSandbox } from '../src/sandbox/server.ts';
import { buildFixture, call, DAY_MS, signerOf, startOfUtcDay, type CallOptions } from './support/sandbox-fixture.ts';

// Heavy faults (~20%: 5xx, resets, slow and truncated answers) never produce a wrong answer
// that parses: retrying until a 200 that parses always gives the fault-free answer, and a
// faulted trading request does nothing.

const endMs = startOfUtcDay();
const main = signerOf(buildFixture({ endMs }), 0);
let reference: RunningSandbox;
let faulty: RunningSandbox;

beforeAll(async () => {
  reference = await startSandbox({ exchange: buildFixture({ endMs }) });
  faulty = await startSandbox({ exchange: buildFixture({ endMs }), faults: 'heavy', faultSeed: 7, slowFaultMs: [5, 40] });
});
afterAll(async () => {
  await reference.close();
  await faulty.close();
});

type Query = ['GET' | 'POST', string, CallOptions];

const QUERIES: Query[] = [
  ['POST', '/api/v2/trade/fills', { body: { symbol: 'BTCUSDT_SPBL', pageSize: 7 } }],
  ['POST', '/api/v2/trade/fills', { body: { symbol: 'BTCUSDT_SPBL', pageSize: 7, pageIndex: 3 } }],
  ['POST', '/api/v2/account/fundingBills', { body: { pageIndex: 2, pageSize: 20 } }],
  ['GET', '/api/v2/account/transferRecords', { query: { limit: 10 } }],
  ['GET', '/capi/v2/order/fills', { query: { limit: 100 } }],
  ['GET', '/capi/v2/order/current', {}],
  ['GET', '/api/v2/rebate/affiliate/getAffiliateCommission', { query: { startTime: endMs - 60 * DAY_MS, endTime: endMs } }],
  ['GET', '/api/v2/rebate/affiliate/getChannelUserTradeAndAsset', { query: { startTime: endMs - 60 * DAY_MS, endTime: endMs } }],
  ['GET', '/api/v2/account/assets', {}],
  ['GET', '/capi/v2/account/accounts', {}],
  ['GET', '/api/v2/public/currencies', {}],
  ['GET', '/capi/v2/market/contracts', {}],
];

/** The answer without the envelope's clock fields, which differ between any two requests. */
function comparable(json: unknown): unknown {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return json;
  const { requestTime: _requestTime, timestamp: _timestamp, ...rest } = json as Record<string, unknown>;
  return rest;
}

/** Retries until a 200 whose body parses; every such answer is returned (there must be exactly one per call). */
async function untilOk(url: string, [method, path, options]: Query): Promise<{ json: unknown; attempts: number }> {
  for (let attempts = 1; attempts <= 50; attempts += 1) {
    try {
      const result = await call(url, method, path, { as: main, ...options });
      if (result.status === 200 && result.json !== undefined) return { json: result.json, attempts };
      expect([200, 500, 502, 503]).toContain(result.status);
    } catch (error) {
      expect((error as NodeJS.ErrnoException).code).toMatch(/ECONNRESET|socket hang up|EPIPE/);
    }
  }
  throw new Error(`${path}: no clean answer in 50 attempts`);
}

describe('faults', () => {
  it('heavy: every clean answer equals the fault-free one; every fault kind occurs', async () => {
    const expected = new Map<number, unknown>();
    for (const [index, query] of QUERIES.entries()) {
      const result = await call(reference.url, query[0], query[1], { as: main, ...query[2] });
      expect(result.status).toBe(200);
      expected.set(index, comparable(result.json));
    }
    let retried = 0;
    const kinds = new Set<FaultKind>();
    for (let round = 0; round < 12 && (kinds.size < 4 || round < 3); round += 1) {
      for (const [index, query] of QUERIES.entries()) {
        const { json, attempts } = await untilOk(faulty.url, query);
        expect(comparable(json), query[1]).toEqual(expected.get(index));
        retried += attempts - 1;
      }
      for (const entry of faulty.requestLog) if (entry.fault !== null) kinds.add(entry.fault);
    }
    expect([...kinds].sort()).toEqual(['malformed', 'reset', 'server-error', 'slow']);
    expect(retried).toBeGreaterThan(0);
    const total = faulty.requestLog.length;
    const faulted = faulty.requestLog.filter((entry) => entry.fault !== null).length;
    // ~20%: loose bounds, the sequence is deterministic for the seed.
    expect(faulted / total).toBeGreaterThan(0.08);
    expect(faulted / total).toBeLessThan(0.35);
    const resets = faulty.requestLog.filter((entry) => entry.fault === 'reset');
    expect(resets.every((entry) => entry.status === 0 && entry.rows === null)).toBe(true);
    const slow = faulty.requestLog.filter((entry) => entry.fault === 'slow');
    expect(slow.every((entry) => entry.durationMs >= 4)).toBe(true);
  });

  it('heavy: a faulted trading request does nothing', async () => {
    faulty.clearRequestLog();
    const placed: string[] = [];
    for (let index = 0; index < 40; index += 1) {
      const clientOrderId = `fault-${index}`;
      const { json } = await untilOk(faulty.url, [
        'POST',
        '/api/v2/trade/orders',
        { body: { symbol: 'ETHUSDT_SPBL', side: 'buy', orderType: 'limit', force: 'normal', price: '1', quantity: '1', clientOrderId } },
      ]);
      expect((json as { data: { clientOrderId: string } }).data.clientOrderId).toBe(clientOrderId);
      placed.push(clientOrderId);
    }
    const faults = faulty.requestLog.filter((entry) => entry.fault !== null && entry.fault !== 'slow');
    expect(faults.length).toBeGreaterThan(0);
    // The book holds each order exactly once: no faulted attempt placed anything.
    const book = faulty.exchange.accounts[0]!.spotOpenOrders.get('ETHUSDT_SPBL') ?? [];
    expect(book.map((order) => order.clientOrderId).sort()).toEqual([...placed].sort());
  });

  it('the fault sequence is deterministic for a seed, and light is rare', async () => {
    const sequence = async (faults: 'light' | 'heavy', faultSeed: number): Promise<(FaultKind | null)[]> => {
      const server = await startSandbox({ exchange: buildFixture({ endMs }), faults, faultSeed, slowFaultMs: [1, 2] });
      try {
        for (let index = 0; index < 60; index += 1) {
          await call(server.url, 'GET', '/capi/v2/market/time').catch(() => undefined);
        }
        return server.requestLog.map((entry) => entry.fault);
      } finally {
        await server.close();
      }
    };
    const first = await sequence('heavy', 3);
    expect(await sequence('heavy', 3)).toEqual(first);
    expect(await sequence('heavy', 4)).not.toEqual(first);
    const light = await sequence('light', 3);
    expect(light.filter((fault) => fault !== null).length).toBeLessThan(8);
  });

  it('never faults the admin endpoints', async () => {
    for (let index = 0; index < 30; index += 1) {
      const response = await fetch(`${faulty.url}/__sandbox/info`);
      expect(response.status).toBe(200);
      await response.json();
    }
  });
});
