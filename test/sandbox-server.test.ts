import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../src/sandbox/server.ts';
import { buildFixture, call, DAY_MS, signerOf, type CallResult } from './support/sandbox-fixture.ts';

// Envelopes (exchange-api.md 2.1), authentication (exchange-notes.md "Signing") and the error
// codes of exchange-notes.md "Errors", against a real server on 127.0.0.1:0.

const exchange = buildFixture();
const main = signerOf(exchange, 0);
const noFutures = signerOf(exchange, 1);
let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ exchange });
});
afterAll(async () => {
  await sandbox.close();
});

function expectError(result: CallResult, status: number, code: string): void {
  expect(result.status).toBe(status);
  expect(result.json).toMatchObject({ code, data: null });
  const body = result.json as { msg: unknown; requestTime: unknown };
  expect(typeof body.msg).toBe('string');
  expect(typeof body.requestTime).toBe('number');
  // Never echo secrets, passphrases or signatures.
  for (const account of exchange.accounts) {
    expect(result.text).not.toContain(account.secret);
    expect(result.text).not.toContain(account.passphrase);
  }
}

describe('envelopes', () => {
  it('spot time: spot envelope with the server ms as data', async () => {
    const before = Date.now();
    const result = await call(sandbox.url, 'GET', '/api/v2/public/time');
    expect(result.status).toBe(200);
    const body = result.json as { code: string; msg: string; requestTime: number; data: number };
    expect(body).toMatchObject({ code: '00000', msg: 'success' });
    expect(body.data).toBeGreaterThanOrEqual(before);
    expect(body.data).toBeLessThanOrEqual(Date.now());
  });

  it('futures time: bare object with epoch, iso and timestamp', async () => {
    const result = await call(sandbox.url, 'GET', '/capi/v2/market/time');
    const body = result.json as { epoch: string; iso: string; timestamp: number };
    expect(Object.keys(body).sort()).toEqual(['epoch', 'iso', 'timestamp']);
    expect(Math.abs(body.timestamp - Date.now())).toBeLessThan(5000);
    expect(new Date(body.iso).getTime()).toBe(body.timestamp);
    expect(body.epoch).toBe((body.timestamp / 1000).toFixed(3));
  });

  it('currencies (public): spot envelope around the currency list', async () => {
    const result = await call(sandbox.url, 'GET', '/api/v2/public/currencies');
    expect(result.json).toEqual({ code: '00000', msg: 'success', requestTime: expect.any(Number), data: exchange.currencies });
  });

  it('contracts (public): a bare array, filtered by symbol', async () => {
    const all = await call(sandbox.url, 'GET', '/capi/v2/market/contracts');
    expect(all.json).toEqual(exchange.contracts);
    const one = await call(sandbox.url, 'GET', '/capi/v2/market/contracts', { query: { symbol: 'cmt_ethusdt' } });
    expect((one.json as { symbol: string }[]).map((contract) => contract.symbol)).toEqual(['cmt_ethusdt']);
    const none = await call(sandbox.url, 'GET', '/capi/v2/market/contracts', { query: { symbol: 'cmt_nopeusdt' } });
    expect(none.json).toEqual([]);
  });

  it('assets: spot envelope around the snapshot', async () => {
    const result = await call(sandbox.url, 'GET', '/api/v2/account/assets', { as: main });
    expect(result.json).toMatchObject({ code: '00000', msg: 'success', data: [{ coinId: 2, coinName: 'USDT', available: '43.5' }] });
  });

  it('futures accounts: the bare object; 40014 without futures permission', async () => {
    const result = await call(sandbox.url, 'GET', '/capi/v2/account/accounts', { as: main });
    expect(result.status).toBe(200);
    expect(result.json).toMatchObject({ account: { user_id: '7001' }, collateral: [{ coin: 'USDT' }], position: [], version: String(exchange.endMs - 1) });
    expectError(await call(sandbox.url, 'GET', '/capi/v2/account/accounts', { as: noFutures }), 403, '40014');
  });

  it('rebate: {code "200", data, timestamp} and no msg', async () => {
    const result = await call(sandbox.url, 'GET', '/api/v2/rebate/affiliate/getAffiliateCommission', { as: main });
    expect(result.status).toBe(200);
    const body = result.json as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['code', 'data', 'timestamp']);
    expect(body.code).toBe('200');
  });

  it('futures fills: bare payload', async () => {
    const result = await call(sandbox.url, 'GET', '/capi/v2/order/fills', { as: main, query: { limit: 1 } });
    expect(Object.keys(result.json as object).sort()).toEqual(['list', 'nextFlag', 'totals']);
  });
});

describe('authentication', () => {
  const fillsPath = '/api/v2/trade/fills';
  const fillsBody = { symbol: 'BTCUSDT_SPBL', pageSize: 2 };

  it('40001 for each missing header, naming it', async () => {
    for (const [header, shown] of [
      ['ACCESS-KEY', 'ACCESS_KEY'],
      ['ACCESS-SIGN', 'ACCESS_SIGN'],
      ['ACCESS-TIMESTAMP', 'ACCESS_TIMESTAMP'],
      ['ACCESS-PASSPHRASE', 'ACCESS_PASSPHRASE'],
    ] as const) {
      const result = await call(sandbox.url, 'POST', fillsPath, { as: main, body: fillsBody, headers: { [header]: undefined } });
      expectError(result, 400, '40001');
      expect((result.json as { msg: string }).msg).toContain(shown);
    }
    expectError(await call(sandbox.url, 'GET', '/api/v2/account/assets'), 400, '40001');
  });

  it('40006 for an unknown key', async () => {
    expectError(await call(sandbox.url, 'POST', fillsPath, { as: { ...main, apiKey: 'key-unknown' }, body: fillsBody }), 401, '40006');
  });

  it('40008 for a timestamp more than 30 s off, or not an integer', async () => {
    expectError(await call(sandbox.url, 'POST', fillsPath, { as: main, body: fillsBody, clockOffsetMs: -31_000 }), 401, '40008');
    expectError(await call(sandbox.url, 'POST', fillsPath, { as: main, body: fillsBody, clockOffsetMs: 31_000 }), 401, '40008');
    expectError(await call(sandbox.url, 'POST', fillsPath, { as: main, body: fillsBody, timestamp: `${Date.now()}.5` }), 401, '40008');
    expectError(await call(sandbox.url, 'POST', fillsPath, { as: main, body: fillsBody, timestamp: 'now' }), 401, '40008');
    const within = await call(sandbox.url, 'POST', fillsPath, { as: main, body: fillsBody, clockOffsetMs: -25_000 });
    expect(within.status).toBe(200);
  });

  it('40012 for a wrong passphrase', async () => {
    expectError(await call(sandbox.url, 'POST', fillsPath, { as: { ...main, passphrase: 'wrong' }, body: fillsBody }), 401, '40012');
  });

  it('40009 for a wrong secret, a tampered body or a tampered query; the signature is never echoed', async () => {
    const wrongSecret = await call(sandbox.url, 'POST', fillsPath, { as: { ...main, secret: 'wrong' }, body: fillsBody });
    expectError(wrongSecret, 401, '40009');
    const tamperedBody = await call(sandbox.url, 'POST', fillsPath, { as: main, body: fillsBody, signBody: JSON.stringify({ ...fillsBody, pageSize: 3 }) });
    expectError(tamperedBody, 401, '40009');
    const tamperedQuery = await call(sandbox.url, 'GET', '/api/v2/account/transferRecords', { as: main, query: 'limit=5', signQuery: 'limit=6' });
    expectError(tamperedQuery, 401, '40009');
    expect(wrongSecret.text).not.toMatch(/[A-Za-z0-9+/]{43}=/);
  });

  it('signs the query string exactly as sent (any order, any encoding), with "?" only when there is one', async () => {
    const unsorted = await call(sandbox.url, 'GET', '/api/v2/account/transferRecords', { as: main, query: 'limit=5&coinId=2' });
    expect(unsorted.status).toBe(200);
    expect((unsorted.json as { data: unknown[] }).data).toHaveLength(5);
    // Signing the sorted form while sending another order is a different string: refused.
    expectError(await call(sandbox.url, 'GET', '/api/v2/account/transferRecords', { as: main, query: 'limit=5&coinId=2', signQuery: 'coinId=2&limit=5' }), 401, '40009');
    const encoded = await call(sandbox.url, 'GET', '/api/v2/account/transferRecords', { as: main, query: 'fromType=USD%5FMIX&limit=3' });
    expect(encoded.status).toBe(200);
    expect((encoded.json as { data: { fromType: string }[] }).data.every((record) => record.fromType === 'USD_MIX')).toBe(true);
    const noQuery = await call(sandbox.url, 'GET', '/api/v2/account/transferRecords', { as: main });
    expect(noQuery.status).toBe(200);
  });

  it('signs the exact body bytes, whitespace and key order included', async () => {
    const text = '{ "pageSize": 2,\n  "symbol": "BTCUSDT_SPBL" }';
    const result = await call(sandbox.url, 'POST', fillsPath, { as: main, body: text });
    expect(result.status).toBe(200);
    expect((result.json as { data: { fillsOrderResultList: unknown[] } }).data.fillsOrderResultList).toHaveLength(2);
    expectError(await call(sandbox.url, 'POST', fillsPath, { as: main, body: text, signBody: JSON.stringify(JSON.parse(text)) }), 401, '40009');
  });

  it('public endpoints need no headers', async () => {
    expect((await call(sandbox.url, 'GET', '/api/v2/public/currencies')).status).toBe(200);
    expect((await call(sandbox.url, 'GET', '/capi/v2/market/contracts')).status).toBe(200);
    expect((await call(sandbox.url, 'GET', '/capi/v2/market/time')).status).toBe(200);
  });
});

describe('errors', () => {
  it('40017 for parameters out of range, of the wrong type or missing', async () => {
    const fills = (body: Record<string, unknown> | string) => call(sandbox.url, 'POST', '/api/v2/trade/fills', { as: main, body });
    expectError(await fills({}), 400, '40017');
    expectError(await fills({ symbol: 'BTCUSDT_SPBL', pageSize: 0 }), 400, '40017');
    expectError(await fills({ symbol: 'BTCUSDT_SPBL', pageSize: 101 }), 400, '40017');
    expectError(await fills({ symbol: 'BTCUSDT_SPBL', pageIndex: -1 }), 400, '40017');
    expectError(await fills({ symbol: 'BTCUSDT_SPBL', pageSize: 1.5 }), 400, '40017');
    expectError(await fills({ symbol: 'BTCUSDT_SPBL', after: 'yesterday' }), 400, '40017');
    expectError(await fills({ symbol: 42 }), 400, '40017');
    expectError(await fills('{"symbol": "BTCUSDT_SPBL"'), 400, '40017');
    expectError(await fills('[1, 2]'), 400, '40017');
    expectError(await call(sandbox.url, 'POST', '/api/v2/account/fundingBills', { as: main, body: { pageIndex: 0 } }), 400, '40017');
    expectError(await call(sandbox.url, 'POST', '/api/v2/account/fundingBills', { as: main, body: { bizType: 'airdrop' } }), 400, '40017');
    expectError(await call(sandbox.url, 'GET', '/api/v2/account/transferRecords', { as: main, query: { limit: 501 } }), 400, '40017');
    expectError(await call(sandbox.url, 'GET', '/capi/v2/order/fills', { as: main, query: { limit: 101 } }), 400, '40017');
    expectError(await call(sandbox.url, 'GET', '/capi/v2/order/current', { as: main, query: { page: -1 } }), 400, '40017');
    expectError(await call(sandbox.url, 'POST', '/api/v2/trade/open-orders', { as: main, body: { symbol: 'BTCUSDT_SPBL', limit: 0 } }), 400, '40017');
    expectError(await call(sandbox.url, 'POST', '/api/v2/trade/orderInfo', { as: main, body: {} }), 400, '40017');
    expectError(await call(sandbox.url, 'GET', '/api/v2/rebate/affiliate/getAffiliateCommission', { as: main, query: { productType: 'MARGIN' } }), 400, '40017');
  });

  it('40102 for a spot pair that does not exist (not an empty page)', async () => {
    expectError(await call(sandbox.url, 'POST', '/api/v2/trade/fills', { as: main, body: { symbol: 'DOGEUSDT_SPBL' } }), 400, '40102');
    expectError(await call(sandbox.url, 'POST', '/api/v2/trade/open-orders', { as: main, body: { symbol: 'btcusdt' } }), 400, '40102');
    const empty = await call(sandbox.url, 'POST', '/api/v2/trade/fills', { as: main, body: { symbol: 'XRPUSDT_SPBL' } });
    expect(empty.json).toMatchObject({ code: '00000', data: { fillsOrderResultList: [], nextPage: false, totals: 0 } });
  });

  it('40707 when the start is after the end, in every group', async () => {
    const end = exchange.endMs - DAY_MS;
    expectError(await call(sandbox.url, 'POST', '/api/v2/trade/fills', { as: main, body: { symbol: 'BTCUSDT_SPBL', after: end + 1, before: end } }), 400, '40707');
    expectError(await call(sandbox.url, 'GET', '/capi/v2/order/fills', { as: main, query: { startTime: end + 1, endTime: end } }), 400, '40707');
    expectError(await call(sandbox.url, 'GET', '/api/v2/rebate/affiliate/getAffiliateCommission', { as: main, query: { startTime: end + 1, endTime: end } }), 400, '40707');
  });

  it('404 for a path the exchange does not have, or the wrong method', async () => {
    expectError(await call(sandbox.url, 'GET', '/api/v2/trade/nothing'), 404, '40404');
    expectError(await call(sandbox.url, 'GET', '/api/v2/trade/fills', { as: main }), 404, '40404');
  });
});

describe('history horizon and clock skew', () => {
  it('40704 for history older than the horizon; without a start, older records are simply gone', async () => {
    const horizon = await startSandbox({ exchange: buildFixture(), historyHorizonDays: 30 });
    try {
      const old = exchange.endMs - 45 * DAY_MS;
      expectError(await call(horizon.url, 'POST', '/api/v2/trade/fills', { as: main, body: { symbol: 'BTCUSDT_SPBL', after: old } }), 400, '40704');
      expectError(await call(horizon.url, 'POST', '/api/v2/account/fundingBills', { as: main, body: { endTime: old } }), 400, '40704');
      expectError(await call(horizon.url, 'GET', '/capi/v2/order/fills', { as: main, query: { startTime: old } }), 400, '40704');
      expectError(await call(horizon.url, 'GET', '/api/v2/account/transferRecords', { as: main, query: { after: old } }), 400, '40704');
      const recent = await call(horizon.url, 'POST', '/api/v2/account/fundingBills', { as: main, body: { pageSize: 100 } });
      const cutoff = Date.now() - 30 * DAY_MS;
      const items = (recent.json as { data: { items: { cTime: string }[]; total: number } }).data.items;
      expect(items.length).toBeGreaterThan(0);
      expect(items.every((bill) => Number(bill.cTime) >= cutoff - 5000)).toBe(true);
      expect(items.length).toBeLessThan(43);
    } finally {
      await horizon.close();
    }
  });

  it('clock skew moves the server clock: signed requests must use server time', async () => {
    const skewed = await startSandbox({ exchange: buildFixture(), clockSkewMs: 120_000 });
    try {
      const time = await call(skewed.url, 'GET', '/api/v2/public/time');
      const serverMs = (time.json as { data: number }).data;
      expect(serverMs - Date.now()).toBeGreaterThan(110_000);
      expectError(await call(skewed.url, 'GET', '/api/v2/account/assets', { as: main }), 401, '40008');
      expect((await call(skewed.url, 'GET', '/api/v2/account/assets', { as: main, clockOffsetMs: 120_000 })).status).toBe(200);
    } finally {
      await skewed.close();
    }
  });
});
