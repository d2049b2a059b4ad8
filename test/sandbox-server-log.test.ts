import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../src/sandbox/server.ts';
import { buildFixture, call, parseLossless, signerOf } from './support/sandbox-fixture.ts';

// The request log: what the server saw, for tests to assert on (STYLE.md "Tests").

const exchange = buildFixture();
const main = signerOf(exchange, 0);
const directory = mkdtempSync(join(tmpdir(), 'sandbox-log-'));
const logFile = join(directory, 'requests.jsonl');
let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ exchange, requestLogFile: logFile });
});
afterAll(async () => {
  await sandbox.close();
  rmSync(directory, { recursive: true, force: true });
});

describe('request log', () => {
  it('records each exchange request with params, uid, weights, status, code and rows', async () => {
    sandbox.clearRequestLog();
    await call(sandbox.url, 'POST', '/api/v2/trade/fills', { as: main, body: '{"symbol":"BTCUSDT_SPBL","pageSize":3,"orderId":602929507946463001}' });
    await call(sandbox.url, 'GET', '/api/v2/account/transferRecords', { as: main, query: 'limit=5&coinId=2' });
    await call(sandbox.url, 'GET', '/capi/v2/order/fills', { as: main, query: { limit: 2 } });
    await call(sandbox.url, 'GET', '/api/v2/rebate/affiliate/getChannelUserTradeAndAsset', { as: main });
    await call(sandbox.url, 'GET', '/capi/v2/account/accounts', { as: main });
    await call(sandbox.url, 'POST', '/api/v2/trade/fills', { as: main, body: { symbol: 'BTCUSDT_SPBL', pageSize: 500 } });
    await call(sandbox.url, 'GET', '/api/v2/public/currencies');
    await call(sandbox.url, 'GET', '/nowhere?x=1');
    await fetch(`${sandbox.url}/__sandbox/info`);

    const log = sandbox.requestLog;
    expect(log.map((entry) => entry.endpoint)).toEqual([
      'spot.fills',
      'spot.transferRecords',
      'futures.fills',
      'rebate.referrals',
      'futures.accounts',
      'spot.fills',
      'spot.currencies',
      'unknown',
    ]);
    const [fills, transfers, futuresFills, referrals, accounts, invalid, currencies, unknown] = log;
    expect(fills).toMatchObject({ method: 'POST', path: '/api/v2/trade/fills', uid: '7001', ipWeight: 5, uidWeight: 5, status: 200, code: '00000', rows: 3, fault: null });
    expect(fills!.params.symbol).toBe('BTCUSDT_SPBL');
    expect(String(fills!.params.orderId)).toBe('602929507946463001');
    expect(transfers).toMatchObject({ method: 'GET', path: '/api/v2/account/transferRecords', params: { limit: '5', coinId: '2' }, rows: 5, code: '00000' });
    expect(futuresFills).toMatchObject({ code: null, rows: 2, status: 200 });
    expect(referrals).toMatchObject({ code: '200', status: 200 });
    expect(accounts).toMatchObject({ code: null, rows: null });
    expect(invalid).toMatchObject({ status: 400, code: '40017', rows: null, ipWeight: 5, uidWeight: 5 });
    expect(currencies).toMatchObject({ uid: null, ipWeight: 1, uidWeight: 0, rows: 2 });
    expect(unknown).toMatchObject({ path: '/nowhere', status: 404, ipWeight: 0 });
    for (const entry of log) {
      expect(entry.durationMs).toBeGreaterThanOrEqual(0);
      expect(Math.abs(entry.at - Date.now())).toBeLessThan(10_000);
    }
    expect(log.map((entry) => entry.seq)).toEqual([...log.keys()].map((index) => log[0]!.seq + index));
    expect(JSON.stringify(log)).not.toContain(exchange.accounts[0]!.secret);
  });

  it('serves the log at /__sandbox/requests, clears it, and appends JSON lines to the file', async () => {
    sandbox.clearRequestLog();
    await call(sandbox.url, 'POST', '/api/v2/trade/fills', { as: main, body: '{"symbol":"BTCUSDT_SPBL","orderId":18446744073709551615}' });
    const served = parseLossless(await (await fetch(`${sandbox.url}/__sandbox/requests`)).text()) as { endpoint: string; params: { orderId: bigint } }[];
    expect(served).toHaveLength(1);
    expect(served[0]!.params.orderId).toBe(18446744073709551615n);
    const lastSeq = sandbox.requestLog[0]!.seq;

    expect((await fetch(`${sandbox.url}/__sandbox/requests/clear`, { method: 'POST' })).status).toBe(200);
    expect(sandbox.requestLog).toHaveLength(0);
    await call(sandbox.url, 'GET', '/api/v2/public/time');
    expect(sandbox.requestLog.map((entry) => entry.seq)).toEqual([lastSeq + 1]);

    await sandbox.close();
    const lines = readFileSync(logFile, 'utf8').trim().split('\n');
    expect(lines.length).toBe(lastSeq + 1);
    expect(lines[lines.length - 1]).toContain('"endpoint":"spot.time"');
    expect(lines.some((line) => line.includes('"orderId":18446744073709551615'))).toBe(true);
    sandbox = await startSandbox({ exchange });
  });

  it('describes itself at /__sandbox/info', async () => {
    const info = (await (await fetch(`${sandbox.url}/__sandbox/info`)).json()) as Record<string, unknown>;
    expect(info).toMatchObject({
      seed: 42,
      scale: 'small',
      startMs: exchange.startMs,
      endMs: exchange.endMs,
      visibleUntil: null,
      accounts: [
        { uid: '7001', canReadFutures: true, counts: { spotFills: 40, fundingBills: 43, transferRecords: 27, futuresFills: 250 } },
        { uid: '7002', canReadFutures: false },
      ],
    });
    expect(JSON.stringify(info)).not.toContain(exchange.accounts[0]!.secret);
    expect(sandbox.requestLog.some((entry) => entry.path.startsWith('/__sandbox'))).toBe(false);
  });
});
