import { describe, expect, it } from 'vitest';
import { buildQueryString, signRequest } from '../src/exchange/sign.ts';

// Vectors computed independently with Python's hmac/hashlib/base64 over the pre-hash string
// timestamp + METHOD + requestPath + ("?" + query) + body (exchange-notes.md "Signing").
const SECRET = 'sandbox-secret-9f2c';

describe('signRequest', () => {
  it('signs a GET with a query string', () => {
    const signature = signRequest(SECRET, {
      timestamp: '1700000000000',
      method: 'GET',
      requestPath: '/api/v2/account/transferRecords',
      query: 'after=1699990000000&coinId=2&limit=500',
      body: '',
    });
    expect(signature).toBe('cMll+Q195VseijmijDht9NwgvmlvNc1WfMrdXOs6SfI=');
  });

  it('signs a POST with a JSON body', () => {
    const signature = signRequest(SECRET, {
      timestamp: '1700000000000',
      method: 'POST',
      requestPath: '/api/v2/trade/fills',
      query: '',
      body: '{"symbol":"BTCUSDT_SPBL","after":1699900000000,"before":1700000000000,"pageIndex":0,"pageSize":100}',
    });
    expect(signature).toBe('Q6l3vXOzKA/G2jLG0iGB9ythZa8U2hLT9MYVtSBN2aM=');
  });

  it('adds no "?" when there is no query', () => {
    const signature = signRequest(SECRET, { timestamp: '1622097118135', method: 'GET', requestPath: '/api/v2/account/assets', query: '', body: '' });
    expect(signature).toBe('t1knhtVQgMBX+8PIdVHiGFl9uUzn/GGz7QnPCMGEu/I=');
  });
});

describe('buildQueryString', () => {
  it('sorts keys, drops undefined values and keeps big integers exact', () => {
    expect(buildQueryString({ limit: 500, after: 1699990000000, coinId: 2, fromType: undefined })).toBe('after=1699990000000&coinId=2&limit=500');
    expect(buildQueryString({ orderId: 9007199254740993123n })).toBe('orderId=9007199254740993123');
  });

  it('percent-encodes values that need it, so what is signed is what is sent', () => {
    expect(buildQueryString({ symbol: 'a b&c' })).toBe('symbol=a%20b%26c');
  });
});
