import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../src/sandbox/server.ts';
import { buildFixture, call, signerOf } from './support/sandbox-fixture.ts';

// Weights (exchange-api.md section 8) and budgets (exchange-notes.md "Rate limits"): per
// endpoint, per IP and separately per UID, over a sliding window; 429 costs nothing.

const exchange = buildFixture();
const main = signerOf(exchange, 0);
const second = signerOf(exchange, 1);
let sandbox: RunningSandbox | undefined;

afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const fills = (url: string, options: Parameters<typeof call>[3] = {}) =>
  call(url, 'POST', '/api/v2/trade/fills', { as: main, body: { symbol: 'BTCUSDT_SPBL' }, ...options });

describe('rate limits', () => {
  it('answers 429 over budget, does not charge the refusal, and recovers after the window', async () => {
    sandbox = await startSandbox({ exchange: buildFixture(), spotQuota: 20, windowMs: 500 });
    const statuses: number[] = [];
    for (let index = 0; index < 6; index += 1) statuses.push((await fills(sandbox.url)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    const refused = await fills(sandbox.url);
    expect(refused.json).toMatchObject({ code: '429', data: null });
    const log = sandbox.requestLog.filter((entry) => entry.endpoint === 'spot.fills');
    expect(log.map((entry) => [entry.status, entry.ipWeight, entry.uidWeight])).toEqual([
      [200, 5, 5],
      [200, 5, 5],
      [200, 5, 5],
      [200, 5, 5],
      [429, 0, 0],
      [429, 0, 0],
      [429, 0, 0],
    ]);
    // Another endpoint has its own budget.
    expect((await call(sandbox.url, 'POST', '/api/v2/account/fundingBills', { as: main, body: {} })).status).toBe(200);
    await sleep(550);
    expect((await fills(sandbox.url)).status).toBe(200);
  });

  it('counts per UID across IPs and per IP across UIDs', async () => {
    sandbox = await startSandbox({ exchange: buildFixture(), spotQuota: 10, windowMs: 500 });
    // One UID from two addresses: the UID budget (10 = two fills) runs out first.
    expect((await fills(sandbox.url, { localAddress: '127.0.0.1' })).status).toBe(200);
    expect((await fills(sandbox.url, { localAddress: '127.0.0.2' })).status).toBe(200);
    expect((await fills(sandbox.url, { localAddress: '127.0.0.3' })).status).toBe(429);
    // Another UID from a fresh address is fine; from the first address, its IP budget is spent.
    const otherUid = { as: second, body: { symbol: 'BTCUSDT_SPBL' } };
    expect((await fills(sandbox.url, { ...otherUid, localAddress: '127.0.0.4' })).status).toBe(200);
    await sleep(550);
    expect((await fills(sandbox.url, { localAddress: '127.0.0.1' })).status).toBe(200);
    expect((await fills(sandbox.url, { localAddress: '127.0.0.1' })).status).toBe(200);
    expect((await fills(sandbox.url, { ...otherUid, localAddress: '127.0.0.1' })).status).toBe(429);
  });

  it('charges IP weight for failed authentication, and public endpoints per IP only', async () => {
    sandbox = await startSandbox({ exchange: buildFixture(), spotQuota: 20, futuresQuota: 30, windowMs: 500 });
    for (let index = 0; index < 4; index += 1) expect((await fills(sandbox.url, { as: { ...main, secret: 'wrong' } })).status).toBe(401);
    expect((await fills(sandbox.url)).status).toBe(429);
    const failed = sandbox.requestLog.filter((entry) => entry.status === 401);
    expect(failed.every((entry) => entry.ipWeight === 5 && entry.uidWeight === 0 && entry.uid === null)).toBe(true);
    const contracts = [];
    for (let index = 0; index < 4; index += 1) contracts.push((await call(sandbox.url, 'GET', '/capi/v2/market/contracts')).status);
    expect(contracts).toEqual([200, 200, 200, 429]);
  });

  it('charges the weights of section 8 for every endpoint', async () => {
    sandbox = await startSandbox({ exchange: buildFixture() });
    const now = Date.now();
    const requests: [string, 'GET' | 'POST', string, Record<string, unknown> | undefined, number, number][] = [
      ['spot.currencies', 'GET', '/api/v2/public/currencies', undefined, 1, 0],
      ['spot.placeOrder', 'POST', '/api/v2/trade/orders', { symbol: 'ETHUSDT_SPBL', side: 'buy', orderType: 'limit', force: 'normal', price: '1', quantity: '1', clientOrderId: 'w' }, 2, 5],
      ['spot.batchOrders', 'POST', '/api/v2/trade/batch-orders', { symbol: 'ETHUSDT_SPBL', orderList: [{ side: 'buy', orderType: 'limit', force: 'normal', price: '1', quantity: '1', clientOrderId: 'w2' }] }, 5, 10],
      ['spot.cancelBatchOrders', 'POST', '/api/v2/trade/cancel-batch-orders', { symbol: 'ETHUSDT_SPBL', clientOids: ['w'] }, 5, 10],
      ['spot.openOrders', 'POST', '/api/v2/trade/open-orders', { symbol: 'ETHUSDT_SPBL' }, 3, 3],
      ['spot.orderInfo', 'POST', '/api/v2/trade/orderInfo', { clientOrderId: 'w2' }, 2, 2],
      ['spot.fills', 'POST', '/api/v2/trade/fills', { symbol: 'ETHUSDT_SPBL' }, 5, 5],
      ['spot.assets', 'GET', '/api/v2/account/assets', undefined, 5, 5],
      ['spot.fundingBills', 'POST', '/api/v2/account/fundingBills', {}, 5, 5],
      ['spot.transferRecords', 'GET', '/api/v2/account/transferRecords', undefined, 3, 3],
      ['futures.placeOrder', 'POST', '/capi/v2/order/placeOrder', { symbol: 'cmt_ethusdt', client_oid: 'w', size: '1', type: '2', order_type: '3', match_price: '1' }, 2, 5],
      ['futures.contracts', 'GET', '/capi/v2/market/contracts', undefined, 10, 0],
      ['futures.cancelBatchOrders', 'POST', '/capi/v2/order/cancel_batch_orders', { symbol: 'cmt_ethusdt', cids: ['w'] }, 5, 10],
      ['futures.currentOrders', 'GET', '/capi/v2/order/current', undefined, 2, 2],
      ['futures.fills', 'GET', '/capi/v2/order/fills', undefined, 5, 5],
      ['futures.accounts', 'GET', '/capi/v2/account/accounts', undefined, 5, 5],
      ['rebate.commission', 'GET', '/api/v2/rebate/affiliate/getAffiliateCommission', undefined, 20, 20],
      ['rebate.referrals', 'GET', '/api/v2/rebate/affiliate/getChannelUserTradeAndAsset', undefined, 20, 20],
      ['spot.time', 'GET', '/api/v2/public/time', undefined, 1, 0],
      ['futures.time', 'GET', '/capi/v2/market/time', undefined, 1, 0],
    ];
    for (const [, method, path, body] of requests) {
      const result = await call(sandbox.url, method, path, { as: main, body: body as Record<string, unknown> | undefined });
      expect(result.status, path).toBe(200);
    }
    expect(sandbox.requestLog.map((entry) => [entry.endpoint, entry.ipWeight, entry.uidWeight])).toEqual(requests.map(([id, , , , ip, uid]) => [id, ip, uid]));
    expect(sandbox.requestLog.every((entry) => entry.at >= now)).toBe(true);
  });
});
