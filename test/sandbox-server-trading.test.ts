import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../src/sandbox/server.ts';
import { buildFixture, call, signerOf } from './support/sandbox-fixture.ts';

// Trading endpoints against the in-memory state: placed orders appear, canceled ones leave.

const exchange = buildFixture();
const main = signerOf(exchange, 0);
let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ exchange });
});
afterAll(async () => {
  await sandbox.close();
});

const post = (path: string, body: Record<string, unknown> | string) => call(sandbox.url, 'POST', path, { as: main, body });
const dataOf = <T>(json: unknown): T => (json as { data: T }).data;

describe('spot trading', () => {
  it('a placed order is open, found by orderId and clientOrderId, and canceled by the batch cancel', async () => {
    const placed = await post('/api/v2/trade/orders', { symbol: 'ETHUSDT_SPBL', side: 'buy', orderType: 'limit', force: 'normal', price: '2500.5', quantity: '0.2', clientOrderId: 'mine-1' });
    expect(placed.status).toBe(200);
    const { orderId, clientOrderId } = dataOf<{ orderId: bigint; clientOrderId: string }>(placed.json);
    expect(clientOrderId).toBe('mine-1');
    // orderId is a Long: a bare JSON integer on the wire.
    expect(typeof orderId).toBe('bigint');
    expect(placed.text).toContain(`"orderId":${orderId.toString()}`);

    const open = dataOf<{ orderInfoResultList: { orderId: string; status: string; price: string }[] }>((await post('/api/v2/trade/open-orders', { symbol: 'ETHUSDT_SPBL' })).json);
    expect(open.orderInfoResultList).toEqual([expect.objectContaining({ orderId: orderId.toString(), status: 'open', price: '2500.5', clientOrderId: 'mine-1' })]);

    const byId = dataOf<unknown[]>((await post('/api/v2/trade/orderInfo', `{"orderId":${orderId.toString()}}`)).json);
    expect(byId).toEqual([expect.objectContaining({ orderId: orderId.toString() })]);
    const byClient = dataOf<unknown[]>((await post('/api/v2/trade/orderInfo', { clientOrderId: 'mine-1' })).json);
    expect(byClient).toEqual(byId);

    const canceled = await post('/api/v2/trade/cancel-batch-orders', { symbol: 'ETHUSDT_SPBL', orderIds: [orderId.toString(), '123'] });
    expect(dataOf<unknown>(canceled.json)).toEqual({
      successList: [orderId.toString()],
      failureList: [{ orderId: '123', clientOid: null, errMsg: 'FAILED_ORDER_NOT_FOUND' }],
    });
    const after = dataOf<{ orderInfoResultList: unknown[] }>((await post('/api/v2/trade/open-orders', { symbol: 'ETHUSDT_SPBL' })).json);
    expect(after.orderInfoResultList).toEqual([]);
    const closed = dataOf<{ status: string }[]>((await post('/api/v2/trade/orderInfo', { clientOrderId: 'mine-1' })).json);
    expect(closed).toEqual([expect.objectContaining({ status: 'canceled' })]);
  });

  it('finds closed orders of the history', async () => {
    const closedId = [...exchange.accounts[0]!.spotOrdersById.keys()][0]!;
    const found = dataOf<{ orderId: string }[]>((await post('/api/v2/trade/orderInfo', { orderId: closedId })).json);
    expect(found.map((order) => order.orderId)).toEqual([closedId]);
    expect(dataOf<unknown[]>((await post('/api/v2/trade/orderInfo', { orderId: '1' })).json)).toEqual([]);
  });

  it('batch orders: all or nothing on validation; clientOids cancel', async () => {
    const bad = await post('/api/v2/trade/batch-orders', {
      symbol: 'XRPUSDT_SPBL',
      orderList: [
        { side: 'sell', orderType: 'limit', force: 'normal', price: '0.5', quantity: '10', clientOrderId: 'b-1' },
        { side: 'sell', orderType: 'limit', force: 'normal', quantity: '10', clientOrderId: 'b-2' },
      ],
    });
    expect(bad.status).toBe(400);
    expect((bad.json as { msg: string }).msg).toContain('orderList[1].price');
    const none = dataOf<{ orderInfoResultList: unknown[] }>((await post('/api/v2/trade/open-orders', { symbol: 'XRPUSDT_SPBL' })).json);
    expect(none.orderInfoResultList).toEqual([]);

    const good = await post('/api/v2/trade/batch-orders', {
      symbol: 'XRPUSDT_SPBL',
      orderList: [
        { side: 'sell', orderType: 'limit', force: 'normal', price: '0.5', quantity: '10', clientOrderId: 'b-1' },
        { side: 'buy', orderType: 'market', force: 'ioc', quantity: '5', clientOrderId: 'b-2' },
      ],
    });
    const results = dataOf<{ resultList: { orderId: bigint; clientOrderId: string }[] }>(good.json).resultList;
    expect(results.map((result) => result.clientOrderId)).toEqual(['b-1', 'b-2']);
    const open = dataOf<{ orderInfoResultList: { clientOrderId: string }[] }>((await post('/api/v2/trade/open-orders', { symbol: 'XRPUSDT_SPBL' })).json);
    expect(open.orderInfoResultList.map((order) => order.clientOrderId).sort()).toEqual(['b-1', 'b-2']);
    const canceled = dataOf<{ successList: string[] }>((await post('/api/v2/trade/cancel-batch-orders', { symbol: 'XRPUSDT_SPBL', clientOids: ['b-2', 'b-1'] })).json);
    expect(canceled.successList).toEqual([results[1]!.orderId.toString(), results[0]!.orderId.toString()]);
  });

  it('validates orders', async () => {
    const base = { symbol: 'ETHUSDT_SPBL', side: 'buy', orderType: 'limit', force: 'normal', price: '1', quantity: '1', clientOrderId: 'v' };
    for (const change of [{ side: 'long' }, { price: '-1' }, { quantity: '0' }, { force: 'gtc' }, { clientOrderId: undefined }, { price: 1 }]) {
      const result = await post('/api/v2/trade/orders', { ...base, ...change });
      expect(result.status, JSON.stringify(change)).toBe(400);
      expect(result.json).toMatchObject({ code: '40017' });
    }
    expect((await post('/api/v2/trade/orders', { ...base, symbol: 'NOPE_SPBL' })).json).toMatchObject({ code: '40102' });
    expect((await post('/api/v2/trade/cancel-batch-orders', { symbol: 'ETHUSDT_SPBL' })).json).toMatchObject({ code: '40017' });
  });
});

describe('futures trading', () => {
  const current = (query: Record<string, string | number | undefined> = {}) =>
    call(sandbox.url, 'GET', '/capi/v2/order/current', { as: main, query }).then((result) => result.json as { order_id: string; status: string; client_oid: string }[]);

  it('a placed order is current until canceled', async () => {
    const before = await current();
    const placed = await post('/capi/v2/order/placeOrder', { symbol: 'cmt_btcusdt', client_oid: 'f-1', size: '0.01', type: '1', order_type: '0', match_price: '0', price: '65000' });
    expect(placed.status).toBe(200);
    const { order_id: orderId, client_oid: clientOid } = placed.json as { order_id: string; client_oid: string };
    expect(clientOid).toBe('f-1');
    const listed = await current();
    expect(listed).toHaveLength(before.length + 1);
    expect(listed[0]).toMatchObject({ order_id: orderId, status: 'open', type: 'open_long', order_type: 'normal', size: '0.01', contracts: 100 });

    const canceled = await post('/capi/v2/order/cancel_batch_orders', { symbol: 'cmt_btcusdt', ids: [orderId, '42'] });
    expect(canceled.json).toEqual({
      result: false,
      symbol: 'cmt_btcusdt',
      orderIds: [orderId, '42'],
      clientOids: [],
      cancelOrderResultList: [
        { err_code: '', err_msg: '', order_id: orderId, client_oid: 'f-1', result: true },
        { err_code: 'FAILED_ORDER_NOT_FOUND', err_msg: expect.any(String), order_id: '42', client_oid: '', result: false },
      ],
      failInfos: [{ err_code: 'FAILED_ORDER_NOT_FOUND', err_msg: expect.any(String), order_id: '42', client_oid: '', result: false }],
    });
    expect(await current()).toEqual(before);
    expect(await current({ orderId })).toEqual([expect.objectContaining({ order_id: orderId, status: 'canceled' })]);
  });

  it('cancels working history orders by client id; final ones fail', async () => {
    const working = exchange.accounts[0]!.futuresOrders.find((order) => order.wire.status === 'untriggered')!;
    const filled = exchange.accounts[0]!.futuresOrders.find((order) => order.wire.status === 'filled' && order.wire.symbol === working.wire.symbol)!;
    const result = await post('/capi/v2/order/cancel_batch_orders', { symbol: working.wire.symbol, cids: [working.wire.client_oid, filled.wire.client_oid] });
    const body = result.json as { cancelOrderResultList: { result: boolean }[]; failInfos: unknown[] };
    expect(body.cancelOrderResultList.map((item) => item.result)).toEqual([true, false]);
    expect(body.failInfos).toHaveLength(1);
    expect((await current()).some((order) => order.order_id === working.wire.order_id)).toBe(false);
  });

  it('validates orders', async () => {
    const base = { symbol: 'cmt_btcusdt', client_oid: 'v', size: '1', type: '1', order_type: '0', match_price: '0', price: '1' };
    for (const change of [{ size: '0' }, { type: '5' }, { order_type: 4 }, { match_price: '0', price: undefined }, { client_oid: 'x'.repeat(41) }, { presetStopLossPrice: 'abc' }]) {
      const result = await post('/capi/v2/order/placeOrder', { ...base, ...change });
      expect(result.status, JSON.stringify(change)).toBe(400);
      expect(result.json).toMatchObject({ code: '40017', data: null });
    }
    const market = await post('/capi/v2/order/placeOrder', { ...base, match_price: '1', price: undefined, presetTakeProfitPrice: 70000.5 });
    expect(market.status).toBe(200);
    expect((await post('/capi/v2/order/cancel_batch_orders', { symbol: 'cmt_btcusdt' })).json).toMatchObject({ code: '40017' });
  });
});
