import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Timed, WireObject } from '../src/sandbox/model.ts';
import { isLateSpotFill } from '../src/sandbox/sandbox-state.ts';
import { startSandbox, type RunningSandbox } from '../src/sandbox/server.ts';
import { BIG_ID_BASE, buildFixture, call, DAY_MS, signerOf } from './support/sandbox-fixture.ts';

// Paging and filters of every paged endpoint (exchange-api.md 4, exchange-notes.md "Paging and
// ordering"): newest first, ties in reverse array order, every record exactly once.

const exchange = buildFixture();
const main = signerOf(exchange, 0);
const account = exchange.accounts[0]!;
let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ exchange });
});
afterAll(async () => {
  await sandbox.close();
});

/** The expected newest-first order of a history array: descending t, ties in reverse array order. */
function newestFirst<T extends Timed<WireObject>>(items: readonly T[], keep: (item: T) => boolean = () => true): T['wire'][] {
  return items.filter(keep).reverse().map((item) => item.wire);
}

/** Parses data of a spot envelope. */
function dataOf<T>(json: unknown): T {
  return (json as { data: T }).data;
}

describe('spot fills (pageIndex from 0, nextPage boolean, totals 0)', () => {
  const fills = account.spotFills.get('BTCUSDT_SPBL')!;
  const request = (body: Record<string, unknown>, url = sandbox.url) =>
    call(url, 'POST', '/api/v2/trade/fills', { as: main, body: { symbol: 'BTCUSDT_SPBL', ...body } });

  it('pages through every fill exactly once, newest first, extra fields kept', async () => {
    const seen: unknown[] = [];
    for (let pageIndex = 0; ; pageIndex += 1) {
      const data = dataOf<{ fillsOrderResultList: unknown[]; nextPage: boolean; totals: number }>((await request({ pageIndex, pageSize: 7 })).json);
      expect(data.totals).toBe(0);
      seen.push(...data.fillsOrderResultList);
      if (!data.nextPage) break;
      expect(data.fillsOrderResultList).toHaveLength(7);
    }
    expect(seen).toEqual(newestFirst(fills));
    expect(seen.find((fill) => (fill as { unknownExtra?: string }).unknownExtra === 'kept')).toMatchObject({ nested: { deep: [1, 'two'] } });
  });

  it('defaults to 10 per page; an exact last page says nextPage false', async () => {
    const first = dataOf<{ fillsOrderResultList: unknown[]; nextPage: boolean }>((await request({})).json);
    expect(first.fillsOrderResultList).toHaveLength(10);
    expect(first.nextPage).toBe(true);
    const exact = dataOf<{ fillsOrderResultList: unknown[]; nextPage: boolean }>((await request({ pageSize: 37 })).json);
    expect(exact.fillsOrderResultList).toHaveLength(37);
    expect(exact.nextPage).toBe(false);
  });

  it('filters by orderId, sent as a bare integer or a string', async () => {
    const orderId = fills[4]!.wire.orderId;
    const expected = newestFirst(fills, (fill) => fill.wire.orderId === orderId);
    expect(expected).toHaveLength(3);
    const bare = await call(sandbox.url, 'POST', '/api/v2/trade/fills', { as: main, body: `{"symbol":"BTCUSDT_SPBL","orderId":${orderId}}` });
    expect(dataOf<{ fillsOrderResultList: unknown[] }>(bare.json).fillsOrderResultList).toEqual(expected);
    const text = await request({ orderId });
    expect(dataOf<{ fillsOrderResultList: unknown[] }>(text.json).fillsOrderResultList).toEqual(expected);
  });

  it('treats after/before per the bounds option', async () => {
    // Fills 10, 11 and 12 share one millisecond: bound on it and on fill 20's time.
    const start = fills[10]!.t;
    const end = fills[20]!.t;
    const expectations = {
      inclusive: newestFirst(fills, (fill) => fill.t >= start && fill.t <= end),
      exclusive: newestFirst(fills, (fill) => fill.t > start && fill.t < end),
      'half-open': newestFirst(fills, (fill) => fill.t >= start && fill.t < end),
    } as const;
    expect(expectations.inclusive).toHaveLength(11);
    expect(expectations.exclusive).toHaveLength(7);
    expect(expectations['half-open']).toHaveLength(10);
    for (const bounds of ['inclusive', 'exclusive', 'half-open'] as const) {
      const server = bounds === 'inclusive' ? sandbox : await startSandbox({ exchange: buildFixture(), bounds });
      try {
        const data = dataOf<{ fillsOrderResultList: unknown[] }>((await request({ after: start, before: end, pageSize: 100 }, server.url)).json);
        expect(data.fillsOrderResultList, bounds).toEqual(expectations[bounds]);
      } finally {
        if (server !== sandbox) await server.close();
      }
    }
  });
});

describe('funding bills (pageIndex from 1, total, hasNextPage)', () => {
  const request = (body: Record<string, unknown>) => call(sandbox.url, 'POST', '/api/v2/account/fundingBills', { as: main, body });
  type BillsPage = { total: number; page: number; pageSize: number; hasNextPage: boolean; items: unknown[] };

  it('pages through every bill exactly once', async () => {
    const seen: unknown[] = [];
    for (let pageIndex = 1; ; pageIndex += 1) {
      const data = dataOf<BillsPage>((await request({ pageIndex, pageSize: 10 })).json);
      expect(data).toMatchObject({ total: 43, page: pageIndex, pageSize: 10 });
      seen.push(...data.items);
      if (!data.hasNextPage) break;
    }
    expect(seen).toEqual(newestFirst(account.fundingBills));
  });

  it('defaults to page 1 of 10 and filters by coinId, bizType and time', async () => {
    const first = dataOf<BillsPage>((await request({})).json);
    expect(first).toMatchObject({ total: 43, page: 1, pageSize: 10, hasNextPage: true });
    const from = account.fundingBills[10]!.t;
    const to = account.fundingBills[30]!.t;
    const keep = (bill: (typeof account.fundingBills)[number]) => bill.wire.coinId === 2 && bill.wire.bizType === 'withdraw' && bill.t >= from && bill.t <= to;
    const filtered = dataOf<BillsPage>((await request({ coinId: 2, bizType: 'withdraw', startTime: from, endTime: to, pageSize: 100 })).json);
    expect(filtered.items).toEqual(newestFirst(account.fundingBills, keep));
    expect(filtered.total).toBe(filtered.items.length);
    expect(filtered.hasNextPage).toBe(false);
  });
});

describe('transfer records (cursors, limit, no paging flag)', () => {
  const records = account.transferRecords;
  type Wire = (typeof records)[number]['wire'];
  const get = (query: Record<string, string | number | undefined>, url = sandbox.url) =>
    call(url, 'GET', '/api/v2/account/transferRecords', { as: main, query }).then((result) => {
      expect(result.status).toBe(200);
      return dataOf<Wire[]>(result.json);
    });

  it('documented: after = strictly older (newest limit), before = strictly newer (nearest limit), both = between', async () => {
    const x = records[20]!.t;
    const y = records[5]!.t;
    expect(await get({ after: x, limit: 4 })).toEqual(newestFirst(records, (record) => record.t < x).slice(0, 4));
    const newer = newestFirst(records, (record) => record.t > y);
    expect(await get({ before: y, limit: 4 })).toEqual(newer.slice(newer.length - 4));
    expect(await get({ after: x, before: y, limit: 100 })).toEqual(newestFirst(records, (record) => record.t > y && record.t < x));
    expect(await get({})).toEqual(newestFirst(records));
    expect(await get({ limit: 3 })).toEqual(newestFirst(records).slice(0, 3));
  });

  it("reversed: the two cursors swap meaning", async () => {
    const reversed = await startSandbox({ exchange: buildFixture(), transferCursor: 'reversed' });
    try {
      const x = records[20]!.t;
      const y = records[5]!.t;
      expect(await get({ before: x, limit: 4 }, reversed.url)).toEqual(newestFirst(records, (record) => record.t < x).slice(0, 4));
      const newer = newestFirst(records, (record) => record.t > y);
      expect(await get({ after: y, limit: 4 }, reversed.url)).toEqual(newer.slice(newer.length - 4));
    } finally {
      await reversed.close();
    }
  });

  it('a walk back in time with an overlapping cursor gets every record exactly once, identical twins included', async () => {
    // Cursor = oldest time + 1 re-reads the oldest millisecond; keep only what is newer than it
    // unless the page was short (the end).
    const seen: Wire[] = [];
    let cursor: number | undefined;
    for (;;) {
      const page = await get({ after: cursor, limit: 4 });
      const oldest = Math.min(...page.map((record) => Number(record.tradeTime)));
      if (page.length < 4) {
        seen.push(...page);
        break;
      }
      seen.push(...page.filter((record) => Number(record.tradeTime) > oldest));
      cursor = oldest + 1;
    }
    expect(seen).toEqual(newestFirst(records));
    expect(seen.filter((record) => JSON.stringify(record) === JSON.stringify(records[8]!.wire))).toHaveLength(2);
  });

  it('filters by coinId (through the currency list) and fromType', async () => {
    // An unknown coin first: its empty answer must not be remembered for the fromType filter alone.
    expect(await get({ coinId: 999, fromType: 'CONTRACT' })).toEqual([]);
    expect(await get({ coinId: 1 })).toEqual(newestFirst(records, (record) => record.wire.coinName === 'BTC'));
    expect(await get({ fromType: 'CONTRACT' })).toEqual(newestFirst(records, (record) => record.wire.fromType === 'CONTRACT'));
    expect(await get({ coinId: 999 })).toEqual([]);
  });
});

describe('futures fills (limit, no page, nextFlag, bigint ids)', () => {
  const fills = account.futuresFills;
  type List = { list: { tradeId: bigint; orderId: bigint; createdTime: number }[]; nextFlag: boolean; totals: number };
  const get = (query: Record<string, string | number | bigint | undefined>) =>
    call(sandbox.url, 'GET', '/capi/v2/order/fills', { as: main, query }).then((result) => {
      expect(result.status).toBe(200);
      return { data: result.json as List, text: result.text };
    });

  it('writes tradeId/orderId as bare JSON integers above 2^53', async () => {
    const { data, text } = await get({ limit: 1 });
    const newest = fills[fills.length - 1]!.wire;
    expect(text).toContain(`"tradeId":${newest.tradeId.toString()}`);
    expect(text).toContain(`"orderId":${newest.orderId.toString()}`);
    expect(newest.tradeId > BIG_ID_BASE && BIG_ID_BASE > BigInt(Number.MAX_SAFE_INTEGER)).toBe(true);
    expect(data.list[0]!.tradeId).toBe(newest.tradeId);
    expect(data).toMatchObject({ nextFlag: true, totals: 0 });
  });

  it('the newest `limit` matches, nextFlag when more match; default limit 100', async () => {
    const { data } = await get({});
    expect(data.list).toEqual(newestFirst(fills).slice(0, 100));
    expect(data.nextFlag).toBe(true);
    const all = await get({ startTime: fills[200]!.t });
    expect(all.data.list).toEqual(newestFirst(fills, (fill) => fill.t >= fills[200]!.t));
    expect(all.data.nextFlag).toBe(false);
  });

  it('a millisecond holding more fills than a page is reached through symbol and orderId filters', async () => {
    const crowded = fills[100]!.t;
    const inMs = newestFirst(fills, (fill) => fill.t === crowded);
    expect(inMs).toHaveLength(120);
    const { data } = await get({ startTime: crowded, endTime: crowded });
    expect(data.list).toEqual(inMs.slice(0, 100));
    expect(data.nextFlag).toBe(true);
    const union: unknown[] = [];
    for (const symbol of ['cmt_btcusdt', 'cmt_ethusdt']) {
      const part = await get({ symbol, startTime: crowded, endTime: crowded });
      expect(part.data.nextFlag).toBe(false);
      union.push(...part.data.list);
    }
    expect(union).toHaveLength(120);
    expect(new Set(union.map((fill) => (fill as { tradeId: bigint }).tradeId)).size).toBe(120);
    const orderId = fills[100]!.wire.orderId;
    const ofOrder = await get({ orderId, startTime: crowded, endTime: crowded });
    expect(ofOrder.data.list).toEqual(newestFirst(fills, (fill) => fill.t === crowded && fill.wire.orderId === orderId));
  });
});

describe('futures current orders (page from 0; non-final only without orderId or range)', () => {
  const orders = account.futuresOrders;
  const nonFinal = new Set(['pending', 'open', 'canceling', 'untriggered']);
  const get = (query: Record<string, string | number | undefined>) =>
    call(sandbox.url, 'GET', '/capi/v2/order/current', { as: main, query }).then((result) => {
      expect(result.status).toBe(200);
      return result.json as { order_id: string; status: string }[];
    });

  it('lists only working orders by default, newest first', async () => {
    const list = await get({});
    expect(list).toEqual(newestFirst(orders, (order) => nonFinal.has(order.wire.status)));
    expect(list.length).toBeGreaterThan(0);
    expect(await get({ symbol: 'cmt_ethusdt' })).toEqual(newestFirst(orders, (order) => nonFinal.has(order.wire.status) && order.wire.symbol === 'cmt_ethusdt'));
  });

  it('with a time range: orders of any status, paged from 0', async () => {
    const seen: unknown[] = [];
    for (let page = 0; ; page += 1) {
      const list = await get({ startTime: orders[0]!.t, limit: 7, page });
      seen.push(...list);
      if (list.length < 7) break;
    }
    expect(seen).toEqual(newestFirst(orders));
  });

  it('by orderId: that order whatever its status', async () => {
    const filled = orders.find((order) => order.wire.status === 'filled')!;
    expect(await get({ orderId: filled.wire.order_id })).toEqual([filled.wire]);
  });
});

describe('spot open orders (pageNo from 0; nextPage number or null; totals null)', () => {
  it('pages newest first', async () => {
    const book = account.spotOpenOrders.get('BTCUSDT_SPBL')!;
    const expected = [...book].reverse();
    const request = (pageNo: number) => call(sandbox.url, 'POST', '/api/v2/trade/open-orders', { as: main, body: { symbol: 'BTCUSDT_SPBL', limit: 2, pageNo } });
    const first = dataOf<{ orderInfoResultList: unknown[]; nextPage: number | null; totals: null }>((await request(0)).json);
    expect(first).toEqual({ orderInfoResultList: expected.slice(0, 2), nextPage: 1, totals: null });
    const second = dataOf<{ orderInfoResultList: unknown[]; nextPage: number | null }>((await request(1)).json);
    expect(second).toMatchObject({ orderInfoResultList: expected.slice(2), nextPage: null });
  });
});

describe('affiliate commission (page from 1, productType, 3-month cap)', () => {
  const records = account.commissions;
  type Page = { pages: number; pageSize: number; total: number; channelCommissionInfoItems: unknown[] };
  const get = (query: Record<string, string | number | undefined>) =>
    call(sandbox.url, 'GET', '/api/v2/rebate/affiliate/getAffiliateCommission', { as: main, query });

  it('defaults to SPOT over the last 7 days', async () => {
    const now = Date.now();
    const data = dataOf<Page>((await get({})).json);
    const expected = newestFirst(records, (record) => record.productType === 'SPOT' && record.t >= now - 7 * DAY_MS - 5000 && record.t <= now);
    expect(data.channelCommissionInfoItems).toEqual(expected);
    expect(expected.length).toBeGreaterThan(0);
    expect(data).toMatchObject({ pageSize: 100, total: expected.length, pages: 1 });
  });

  it('pages through a range, FUTURES asked for separately', async () => {
    const startTime = exchange.endMs - 80 * DAY_MS;
    const endTime = exchange.endMs;
    const seen: unknown[] = [];
    for (let page = 1; ; page += 1) {
      const data = dataOf<Page>((await get({ startTime, endTime, page, pageSize: 4 })).json);
      seen.push(...data.channelCommissionInfoItems);
      if (page >= data.pages) break;
    }
    expect(seen).toEqual(newestFirst(records, (record) => record.productType === 'SPOT' && record.t >= startTime));
    const futures = dataOf<Page>((await get({ startTime, endTime, productType: 'FUTURES', uid: 9001 })).json);
    expect(futures.channelCommissionInfoItems).toEqual(newestFirst(records, (record) => record.productType === 'FUTURES' && record.wire.uid === '9001' && record.t >= startTime));
  });

  it('refuses a range longer than 3 calendar months with 40017 naming the range', async () => {
    const startTime = Date.UTC(2025, 0, 31, 12);
    const ok = await get({ startTime, endTime: Date.UTC(2025, 3, 30, 12) });
    expect(ok.status).toBe(200);
    const tooLong = await get({ startTime, endTime: Date.UTC(2025, 3, 30, 12) + 1 });
    expect(tooLong.status).toBe(400);
    expect(tooLong.json).toMatchObject({ code: '40017' });
    expect((tooLong.json as { msg: string }).msg).toContain('2025-01-31T12:00:00.000Z');
    expect((tooLong.json as { msg: string }).msg).toContain('3 months');
  });
});

describe('affiliate referral data (per-uid sums over the range, sorted by uid)', () => {
  type Page = { pages: number; pageSize: number; total: number; records: Record<string, string>[] };
  const get = (query: Record<string, string | number | undefined>) =>
    call(sandbox.url, 'GET', '/api/v2/rebate/affiliate/getChannelUserTradeAndAsset', { as: main, query }).then((result) => dataOf<Page>(result.json));

  it('sums exactly, as decimals', async () => {
    const startTime = exchange.endMs - 30 * DAY_MS;
    const data = await get({ startTime, endTime: exchange.endMs });
    expect(data).toMatchObject({ total: 3, pages: 1, pageSize: 100 });
    expect(data.records.map((record) => record.uid)).toEqual(['9001', '9002', '10001']);
    // uid 10001 has activities 0, 3, 6, 9, 12, 15, 18: deposits 0.1 (even) and 0.2 (odd): 4 * 0.1 + 3 * 0.2 = 1.0;
    // spot 7 * 1000.000000000000000001 = 7000.000000000000000007; futures 7 * 0.3 = 2.1; commission 7 * 0.05 = 0.35.
    expect(data.records[2]).toEqual({
      uid: '10001',
      depositAmount: '1.0',
      withdrawalAmount: '0',
      spotTradingAmount: '7000.000000000000000007',
      futuresTradingAmount: '2.1',
      commission: '0.35',
    });
  });

  it('filters by uid and pages from 1', async () => {
    const startTime = exchange.endMs - 30 * DAY_MS;
    const only = await get({ startTime, endTime: exchange.endMs, uid: 9002 });
    expect(only.records.map((record) => record.uid)).toEqual(['9002']);
    const second = await get({ startTime, endTime: exchange.endMs, page: 2, pageSize: 2 });
    expect(second).toMatchObject({ pages: 2, total: 3 });
    expect(second.records.map((record) => record.uid)).toEqual(['10001']);
  });
});

describe('visibility', () => {
  it('hides records after visibleUntil; snapshots follow it; the admin endpoint moves it', async () => {
    const server = await startSandbox({ exchange: buildFixture() });
    try {
      const cut = account.fundingBills[29]!.t;
      server.setVisibleUntil(cut);
      const bills = await call(server.url, 'POST', '/api/v2/account/fundingBills', { as: main, body: { pageSize: 100 } });
      expect(dataOf<{ total: number }>(bills.json).total).toBe(30);
      const assets = await call(server.url, 'GET', '/api/v2/account/assets', { as: main });
      expect(dataOf<{ available: string }[]>(assets.json)[0]!.available).toBe('30.5');
      const fills = await call(server.url, 'GET', '/capi/v2/order/fills', { as: main, query: { startTime: 0 } });
      expect((fills.json as { list: { createdTime: number }[] }).list.every((fill) => fill.createdTime <= cut)).toBe(true);

      const moved = await fetch(`${server.url}/__sandbox/visible-until`, { method: 'POST', body: JSON.stringify({ ms: null }) });
      expect(await moved.json()).toEqual({ visibleUntil: null });
      const after = await call(server.url, 'POST', '/api/v2/account/fundingBills', { as: main, body: { pageSize: 100 } });
      expect(dataOf<{ total: number }>(after.json).total).toBe(43);
    } finally {
      await server.close();
    }
  });

  it('late spot fills: one in ten is hidden until the horizon reaches its time plus the delay, then served in its place', async () => {
    const fills = account.spotFills.get('BTCUSDT_SPBL')!;
    const late = fills.filter((fill) => isLateSpotFill(fill.wire.fillId));
    const cut = fills.at(-1)!.t;
    // Late enough that, with the horizon at the last fill, the first late fill is published and the others are not.
    const delay = cut - late[1]!.t + 1;
    const server = await startSandbox({ exchange: buildFixture(), lateSpotFillsMs: delay });
    const served = async () => {
      const ids: string[] = [];
      for (let pageIndex = 0; ; pageIndex += 1) {
        const data = dataOf<{ fillsOrderResultList: { fillId: string }[]; nextPage: boolean }>(
          (await call(server.url, 'POST', '/api/v2/trade/fills', { as: main, body: { symbol: 'BTCUSDT_SPBL', pageIndex, pageSize: 10 } })).json,
        );
        ids.push(...data.fillsOrderResultList.map((fill) => fill.fillId));
        if (!data.nextPage) return ids;
      }
    };
    try {
      // Everything visible (no horizon): every fill, late or not.
      expect(await served()).toEqual(newestFirst(fills).map((fill) => fill.fillId));
      server.setVisibleUntil(cut);
      const hidden = late.filter((fill) => fill.t + delay > cut);
      expect(hidden.length).toBeGreaterThan(0);
      expect(late.length).toBeGreaterThan(hidden.length);
      expect(await served()).toEqual(newestFirst(fills, (fill) => !hidden.includes(fill)).map((fill) => fill.fillId));
      // The horizon passes their publication: served again, each in its own time's place.
      server.setVisibleUntil(cut + delay);
      expect(await served()).toEqual(newestFirst(fills).map((fill) => fill.fillId));
    } finally {
      await server.close();
    }
  });
});
