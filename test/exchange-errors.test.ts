import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { AuthError, DataError, ExchangeError, RateLimitError } from '../src/errors.ts';
import { ExchangeClient, type AttemptEvent } from '../src/exchange/exchange-client.ts';
import { RateBudget } from '../src/exchange/rate-budget.ts';
import { startHostileServer } from './support/hostile-server.ts';

/**
 * A real HTTP server on loopback that answers with a script of responses, one per request:
 * the shapes a misbehaving exchange can send that the sandbox never does on its own (a body
 * without `data`, a code sent as a number, an HTML error page).
 */
type Scripted = { status: number; body: string } | 'reset';

let server: Server | undefined;

async function scriptedExchange(script: Scripted[]): Promise<{ url: string; requests: () => number }> {
  let served = 0;
  server = createServer((request, response) => {
    const next = script[Math.min(served, script.length - 1)]!;
    served += 1;
    request.resume();
    if (next === 'reset') {
      request.socket.destroy();
      return;
    }
    response.writeHead(next.status, { 'Content-Type': 'application/json' });
    response.end(next.body);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests: () => served };
}

afterEach(async () => {
  if (server !== undefined) await new Promise((resolve) => server!.close(resolve));
  server = undefined;
});

function client(url: string, attempts: AttemptEvent[]): ExchangeClient {
  return new ExchangeClient({
    spotBaseUrl: url,
    contractBaseUrl: url,
    credentials: { apiKey: 'key-1', secret: 'secret-1', passphrase: 'pass-1' },
    budget: new RateBudget({ spot: { quota: 1_000_000, windowMs: 10 }, contract: { quota: 1_000_000, windowMs: 10 } }),
    retry: { retries: 5, minTimeoutMs: 1, maxTimeoutMs: 5 },
    timeoutMs: 2_000,
    onAttempt: (event) => attempts.push(event),
  });
}

const OK = { status: 200, body: '{"code":"00000","msg":"success","requestTime":1700000000000,"data":[{"coinName":"USDT"}]}' };

describe('error classes for each kind of answer', () => {
  it('retries 429, 5xx, a reset and a truncated body, typing each, then returns the data', async () => {
    const exchange = await scriptedExchange([
      { status: 429, body: '{"code":"429","msg":"Too Many Requests","requestTime":1,"data":null}' },
      { status: 503, body: '<html><body>503 Service Temporarily Unavailable</body></html>' },
      'reset',
      { status: 200, body: '{"code":"00000","msg":"success","data":[{"coinNa' },
      OK,
    ]);
    const attempts: AttemptEvent[] = [];
    await expect(client(exchange.url, attempts).call('spot.assets')).resolves.toEqual([{ coinName: 'USDT' }]);
    const errors = attempts.map((attempt) => attempt.error);
    expect(errors[0]).toBeInstanceOf(RateLimitError);
    expect(errors[1]).toMatchObject({ name: 'ExchangeError', status: 503, code: 'HTTP_503', isRetryable: true });
    expect(errors[2]).toMatchObject({ name: 'ExchangeError', status: 0, isRetryable: true });
    expect(errors[3]).toMatchObject({ name: 'ExchangeError', code: 'MALFORMED_BODY', isRetryable: true });
    expect(errors[4]).toBeUndefined();
    expect(exchange.requests()).toBe(5);
  });

  it.each([
    ['a spot envelope without data', { status: 200, body: '{"code":"00000","msg":"success","requestTime":1}' }, DataError, /no "data" field/],
    ['a body that is not the spot envelope', { status: 200, body: '[1,2,3]' }, DataError, /no envelope code/],
    ['a refused signature', { status: 401, body: '{"code":"40009","msg":"sign signature error","requestTime":1,"data":null}' }, AuthError, /signature check failed/],
    ['a missing permission', { status: 403, body: '{"code":40014,"msg":"no permission","requestTime":1,"data":null}' }, AuthError, /lacks permission/],
    ['a parameter error', { status: 400, body: '{"code":"40017","msg":"Parameter verification failed","requestTime":1,"data":null}' }, ExchangeError, /exchange code 40017/],
    ['an IP not whitelisted', { status: 521, body: '' }, AuthError, /not whitelisted/],
  ] as const)('stops at once on %s', async (_name, answer, errorClass, message) => {
    const exchange = await scriptedExchange([answer, OK]);
    const error = await client(exchange.url, []).call('spot.assets').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(errorClass);
    expect((error as Error).message).toMatch(message);
    expect((error as { isRetryable: boolean }).isRetryable).toBe(false);
    expect(exchange.requests()).toBe(1);
  });

  it('reads an error envelope in a futures 200 answer as an error, and a success code in one as data', async () => {
    const failing = await scriptedExchange([{ status: 200, body: '{"code":"40017","msg":"bad symbol"}' }]);
    await expect(client(failing.url, []).call('futures.fills', { symbol: 'x' })).rejects.toMatchObject({ code: '40017', isRetryable: false });
    await new Promise((resolve) => server?.close(resolve));
    const succeeding = await scriptedExchange([{ status: 200, body: '{"code":"00000","msg":"success","list":[],"nextFlag":false}' }]);
    await expect(client(succeeding.url, []).call('futures.fills', {})).resolves.toMatchObject({ list: [], nextFlag: false });
  });
});

describe('answers that never end or never stop growing (a hostile server in its own process)', () => {
  const limits = { timeoutMs: 1_000, deadlineMs: 1_500, maxResponseBytes: 1024 * 1024, retry: { retries: 1, minTimeoutMs: 10, maxTimeoutMs: 20 } };

  it('a body that trickles a byte every 200 ms (never idle for the 1 s timeout) is cut at the 1.5 s deadline, retried, then named', async () => {
    const server = await startHostileServer('trickle');
    try {
      const client = new ExchangeClient({ spotBaseUrl: server.url, contractBaseUrl: server.url, ...limits });
      const failure = await client.call('spot.currencies').then(
        () => null,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(ExchangeError);
      expect(failure).toMatchObject({ code: 'TIMEOUT', isRetryable: true, message: 'spot.currencies (GET /api/v2/public/currencies): the answer took longer than 1500 ms in all' });
      // Two attempts (one retry), each cut after about 1.5 s of trickle: 7 or 8 bytes each, not a run held forever.
      const written = await server.written();
      expect(written).toHaveLength(2);
      for (const bytes of written) expect(bytes).toBeLessThanOrEqual(9);
    } finally {
      await server.stop();
    }
  });

  it('an answer past maxResponseBytes is dropped unread: the client stops reading, memory stays bounded, the error names the limit', async () => {
    const server = await startHostileServer('huge');
    try {
      const client = new ExchangeClient({ spotBaseUrl: server.url, contractBaseUrl: server.url, ...limits });
      const failure = await client.call('spot.currencies').then(
        () => null,
        (error: unknown) => error,
      );
      expect(failure).toMatchObject({ code: 'TOO_LARGE', isRetryable: true, message: 'spot.currencies (GET /api/v2/public/currencies): the answer is larger than 1048576 bytes (maxResponseBytes); dropped unread' });
      // The server could have sent 512 MB to each attempt; the connection was closed after about
      // 1 MB (plus what the socket buffers held).
      const written = await server.written();
      expect(written).toHaveLength(2);
      for (const bytes of written) expect(bytes).toBeLessThan(16 * 1024 * 1024);
    } finally {
      await server.stop();
    }
  });
});
