import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthError, ExchangeError } from '../src/errors.ts';
import { ExchangeClient } from '../src/exchange/exchange-client.ts';
import { RateBudget } from '../src/exchange/rate-budget.ts';
import { signRequest } from '../src/exchange/sign.ts';
import { generateExchange } from '../src/sandbox/generate.ts';
import type { RunningSandbox } from '../src/sandbox/server.ts';
import { clientFor, startTestSandbox, TEST_END_MS } from './support/sandbox.ts';

const TWO_POW_53 = 2n ** 53n;

/** A loopback port nobody listens on: bind one, then let it go. */
async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('ExchangeClient against the sandbox', () => {
  let sandbox: RunningSandbox;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
  });
  afterAll(async () => {
    await sandbox.close();
  });

  function requestsTo(endpoint: string) {
    return sandbox.requestLog.filter((entry) => entry.endpoint === endpoint);
  }

  describe('envelopes', () => {
    it('unwraps the spot envelope (code "00000") to its data', async () => {
      const assets = await clientFor(sandbox).call<unknown[]>('spot.assets');
      expect(Array.isArray(assets)).toBe(true);
      expect(assets.length).toBeGreaterThan(0);
      expect(assets[0]).toHaveProperty('coinName');
    });

    it('unwraps the rebate envelope (code "200", no msg) to its data', async () => {
      const data = await clientFor(sandbox).call<{ channelCommissionInfoItems: unknown[]; total: number }>('rebate.commission', {
        startTime: TEST_END_MS - 60 * 86_400_000,
        endTime: TEST_END_MS - 1,
      });
      expect(Array.isArray(data.channelCommissionInfoItems)).toBe(true);
      expect(typeof data.total).toBe('number');
    });

    it('returns the bare futures body (no envelope)', async () => {
      const data = await clientFor(sandbox).call<{ list: unknown[]; nextFlag: boolean }>('futures.fills', { limit: 100 });
      expect(Array.isArray(data.list)).toBe(true);
      expect(typeof data.nextFlag).toBe('boolean');
      const contracts = await clientFor(sandbox).call<unknown[]>('futures.contracts');
      expect(Array.isArray(contracts)).toBe(true);
    });
  });

  it('keeps 64-bit futures ids exact (bare JSON integers above 2^53)', async () => {
    const account = sandbox.exchange.accounts[0]!;
    const newest = account.futuresFills.at(-1)!;
    const data = await clientFor(sandbox).call<{ list: Record<string, unknown>[] }>('futures.fills', {
      startTime: newest.t,
      endTime: newest.t,
      limit: 100,
    });
    const served = data.list.map((fill) => fill.tradeId);
    const expected = account.futuresFills.filter((fill) => fill.t === newest.t).map((fill) => fill.wire.tradeId);
    expect(served.every((id) => typeof id === 'bigint' && id > TWO_POW_53)).toBe(true);
    expect(new Set(served)).toEqual(new Set(expected));
  });

  it('sends what it signs: a GET with a query string and a POST with a body are both accepted', async () => {
    const client = clientFor(sandbox);
    const symbol = sandbox.exchange.spotSymbols[0]!.symbol;
    await expect(client.call('spot.transferRecords', { limit: 500, after: TEST_END_MS })).resolves.toBeInstanceOf(Array);
    await expect(client.call('spot.fills', { symbol, after: TEST_END_MS - 86_400_000 * 90, before: TEST_END_MS, pageSize: 100 })).resolves.toHaveProperty(
      'fillsOrderResultList',
    );
  });

  it('stops at once on a wrong secret: AuthError 40009, one request, no secret in the message', async () => {
    const account = sandbox.exchange.accounts[0]!;
    const wrongSecret = 'not-the-secret-0123456789';
    const client = clientFor(sandbox, { credentials: { apiKey: account.apiKey, secret: wrongSecret, passphrase: account.passphrase } });
    sandbox.clearRequestLog();
    const error = await client.call('spot.assets').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AuthError);
    expect(error).toMatchObject({ code: '40009', status: 401, isRetryable: false, endpoint: 'spot.assets' });
    expect((error as Error).message).toMatch(/signature/);
    expect((error as Error).message).not.toContain(wrongSecret);
    expect((error as Error).message).not.toContain(account.passphrase);
    expect(sandbox.requestLog).toHaveLength(1);
  });

  it.each([
    ['an unknown key', { apiKey: 'bg_0000000000000000' }, '40006'],
    ['a wrong passphrase', { passphrase: 'wrong-passphrase' }, '40012'],
  ])('raises a final AuthError for %s', async (_name, change, code) => {
    const account = sandbox.exchange.accounts[0]!;
    const client = clientFor(sandbox, { credentials: { apiKey: account.apiKey, secret: account.secret, passphrase: account.passphrase, ...change } });
    sandbox.clearRequestLog();
    await expect(client.call('spot.fundingBills', { pageSize: 10 })).rejects.toMatchObject({ name: 'AuthError', code, isRetryable: false });
    expect(sandbox.requestLog).toHaveLength(1);
  });

  it('raises a final ExchangeError for a parameter error and for an unknown symbol', async () => {
    const client = clientFor(sandbox);
    sandbox.clearRequestLog();
    const tooBig = await client.call('spot.fills', { symbol: sandbox.exchange.spotSymbols[0]!.symbol, pageSize: 1000 }).catch((caught: unknown) => caught);
    expect(tooBig).toBeInstanceOf(ExchangeError);
    expect(tooBig).toMatchObject({ code: '40017', isRetryable: false });
    const unknown = await client.call('spot.fills', { symbol: 'NOPEUSDT_SPBL' }).catch((caught: unknown) => caught);
    expect(unknown).toMatchObject({ code: '40102', isRetryable: false });
    expect(requestsTo('spot.fills')).toHaveLength(2);
  });

  it('raises an AuthError for a key without futures permission', async () => {
    const exchange = generateExchange({ seed: 3, scale: 'small', endMs: TEST_END_MS });
    exchange.accounts[0]!.canReadFutures = false;
    const restricted = await startTestSandbox({ exchange });
    try {
      await expect(clientFor(restricted).call('futures.accounts')).rejects.toMatchObject({ name: 'AuthError', code: '40014', status: 403 });
      expect(restricted.requestLog).toHaveLength(1);
    } finally {
      await restricted.close();
    }
  });

  it('gives a final, clear error for an address nobody listens on', async () => {
    const url = `http://127.0.0.1:${await unusedPort()}`;
    const client = new ExchangeClient({ spotBaseUrl: url, contractBaseUrl: url, budget: new RateBudget() });
    await expect(client.call('spot.currencies')).rejects.toMatchObject({ code: 'ECONNREFUSED', isRetryable: false });
    expect(client.stats().requests).toBe(1);
  });
});

describe('ExchangeClient recovery', () => {
  it('corrects its clock when the server is 2 minutes ahead (40008, then the server time)', async () => {
    const sandbox = await startTestSandbox({ clockSkewMs: 120_000 });
    try {
      const client = clientFor(sandbox);
      await expect(client.call('spot.assets')).resolves.toBeInstanceOf(Array);
      expect(Math.abs(client.clockOffset - 120_000)).toBeLessThan(2_000);
      const codes = sandbox.requestLog.map((entry) => entry.code);
      expect(codes[0]).toBe('40008');
      expect(codes.at(-1)).toBe('00000');
    } finally {
      await sandbox.close();
    }
  });

  it('accepts the signature vector when the server clock is set to its timestamp', async () => {
    // The vector of exchange-sign.test.ts, sent for real: the sandbox's clock is moved to the
    // vector's timestamp so the fixed signature is fresh.
    const exchange = generateExchange({ seed: 3, scale: 'small', endMs: TEST_END_MS });
    const account = exchange.accounts[0]!;
    account.secret = 'sandbox-secret-9f2c';
    const sandbox = await startTestSandbox({ exchange, clockSkewMs: 1_700_000_000_000 - Date.now() });
    try {
      const headers = { 'ACCESS-KEY': account.apiKey, 'ACCESS-PASSPHRASE': account.passphrase, 'ACCESS-TIMESTAMP': '1700000000000', 'Content-Type': 'application/json', locale: 'en-US' };
      const query = 'after=1699990000000&coinId=2&limit=500';
      const good = await fetch(`${sandbox.url}/api/v2/account/transferRecords?${query}`, { headers: { ...headers, 'ACCESS-SIGN': 'cMll+Q195VseijmijDht9NwgvmlvNc1WfMrdXOs6SfI=' } });
      expect(good.status).toBe(200);
      expect(await good.json()).toMatchObject({ code: '00000' });
      const body = '{"symbol":"BTCUSDT_SPBL","after":1699900000000,"before":1700000000000,"pageIndex":0,"pageSize":100}';
      const post = await fetch(`${sandbox.url}/api/v2/trade/fills`, { method: 'POST', headers: { ...headers, 'ACCESS-SIGN': 'Q6l3vXOzKA/G2jLG0iGB9ythZa8U2hLT9MYVtSBN2aM=' }, body });
      expect(await post.json()).toMatchObject({ code: '00000' });
      // One byte more in the query and the same signature is refused.
      const tampered = await fetch(`${sandbox.url}/api/v2/account/transferRecords?${query}0`, { headers: { ...headers, 'ACCESS-SIGN': 'cMll+Q195VseijmijDht9NwgvmlvNc1WfMrdXOs6SfI=' } });
      expect(tampered.status).toBe(401);
      expect(await tampered.json()).toMatchObject({ code: '40009' });
      expect(signRequest(account.secret, { timestamp: '1700000000000', method: 'GET', requestPath: '/api/v2/account/transferRecords', query, body: '' })).toBe(
        'cMll+Q195VseijmijDht9NwgvmlvNc1WfMrdXOs6SfI=',
      );
    } finally {
      await sandbox.close();
    }
  });

  it('retries 5xx, resets, timeouts and malformed bodies until it gets the right answer', async () => {
    const clean = await startTestSandbox();
    const faulty = await startTestSandbox({ faults: 'heavy', faultSeed: 11 });
    try {
      const expected = await clientFor(clean).call('spot.fundingBills', { pageSize: 100, pageIndex: 1 });
      const client = clientFor(faulty, { timeoutMs: 800 });
      for (let i = 0; i < 40; i += 1) {
        expect(await client.call('spot.fundingBills', { pageSize: 100, pageIndex: 1 })).toEqual(expected);
      }
      const faults = new Set(faulty.requestLog.map((entry) => entry.fault).filter((fault) => fault !== null));
      expect(client.stats().failedAttempts).toBeGreaterThan(0);
      expect(faults.size).toBeGreaterThanOrEqual(3);
    } finally {
      await Promise.all([clean.close(), faulty.close()]);
    }
  });

  it('slows down on 429 and still completes every request', async () => {
    const sandbox = await startTestSandbox({ spotQuota: 50, windowMs: 500 });
    try {
      // The client believes the quota is 200 per 500 ms: four times what the server allows.
      const client = clientFor(sandbox, { budget: new RateBudget({ spot: { quota: 200, windowMs: 500 } }) });
      const results = await Promise.all(Array.from({ length: 60 }, () => client.call('spot.assets')));
      expect(results).toHaveLength(60);
      expect(client.stats().rateLimited).toBeGreaterThan(0);
      expect(sandbox.requestLog.filter((entry) => entry.status === 429).length).toBe(client.stats().rateLimited);
      expect(sandbox.requestLog.filter((entry) => entry.status === 200)).toHaveLength(60);
    } finally {
      await sandbox.close();
    }
  });
});
