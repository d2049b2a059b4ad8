import { createHmac } from 'node:crypto';
import { request } from 'node:http';
import { parse } from 'lossless-json';
import type {
  CommissionRecord,
  FundingBillWire,
  FuturesFillWire,
  FuturesOrderWire,
  ReferralActivity,
  SandboxAccount,
  SandboxExchange,
  SpotFillWire,
  SpotOrderWire,
  Timed,
  TransferRecordWire,
  WireObject,
} from '../../src/sandbox/model.ts';

/**
 * A small hand-built exchange for the sandbox server tests (independent of the generator),
 * and a tiny signing HTTP client written from exchange-notes.md "Signing" (not the project's
 * client: the tests check the server against the notes, not against our own code).
 */

export const DAY_MS = 86_400_000;

/** Start of the current UTC day: the fixture's history ends there, like the generator's default. */
export function startOfUtcDay(ms = Date.now()): number {
  return ms - (ms % DAY_MS);
}

/** A futures id above 2^53, so a double would corrupt it. */
export const BIG_ID_BASE = 2n ** 60n;

export interface FixtureOptions {
  /** End of the history (exclusive). @default start of the current UTC day */
  endMs?: number;
}

function account(uid: string, canReadFutures: boolean): SandboxAccount {
  return {
    uid,
    apiKey: `key-${uid}`,
    secret: `secret-${uid}-do-not-leak`,
    passphrase: `pass-${uid}-hush`,
    canReadFutures,
    spotAccountId: `5901054111561811${uid.slice(-2)}`,
    spotFills: new Map(),
    fundingBills: [],
    transferRecords: [],
    futuresFills: [],
    futuresOrders: [],
    spotOpenOrders: new Map(),
    spotOrdersById: new Map(),
    commissions: [],
    referralActivity: [],
    assetsAt(atMs: number): WireObject[] {
      // A snapshot that visibly depends on the time asked about.
      const bills = this.fundingBills.filter((bill) => bill.t <= atMs).length;
      return [{ coinId: 2, coinName: 'USDT', available: `${bills}.5`, frozen: '0', equity: `${bills}.5` }];
    },
    futuresAccountAt(atMs: number): WireObject {
      return {
        account: { id: `acc-${uid}`, user_id: uid, status: 'NORMAL', create_order_rate_limit_per_minute: 0 },
        collateral: [{ coin: 'USDT', cum_position_fill_fee_amount: String(this.futuresFills.filter((fill) => fill.t <= atMs).length) }],
        position: [],
        version: String(atMs),
      };
    },
  };
}

function spotFill(acc: SandboxAccount, symbol: string, base: string, t: number, index: number): Timed<SpotFillWire> {
  return {
    t,
    wire: {
      accountId: acc.spotAccountId,
      symbol,
      baseCoin: base,
      quoteCoin: 'USDT',
      orderId: String(602929507946463000n + BigInt(Math.floor(index / 3))),
      fillId: String(602929507971629000n + BigInt(index)),
      orderType: index % 4 === 0 ? '' : 'limit',
      side: index % 2 === 0 ? 'buy' : 'sell',
      fillPrice: index % 4 === 0 ? '' : '0.01047600',
      fillQuantity: '10',
      fillTotalAmount: '0.10476',
      fees: '0.01',
      cTime: String(t),
      ...(index === 5 ? { unknownExtra: 'kept', nested: { deep: [1, 'two'] } } : {}),
    },
  };
}

/** The fixture exchange: two accounts (the second without futures permission), history of ~60 days before endMs. */
export function buildFixture(options: FixtureOptions = {}): SandboxExchange {
  const endMs = options.endMs ?? startOfUtcDay();
  const startMs = endMs - 365 * DAY_MS;
  const base = endMs - 60 * DAY_MS;
  const main = account('7001', true);
  const other = account('7002', false);

  // Spot fills: 37 on BTCUSDT_SPBL every 12 h, with fills 10..12 sharing one millisecond; 3 on ETH.
  const btc: Timed<SpotFillWire>[] = [];
  for (let index = 0; index < 37; index += 1) {
    const t = index >= 10 && index <= 12 ? base + 10 * (DAY_MS / 2) : base + index * (DAY_MS / 2);
    btc.push(spotFill(main, 'BTCUSDT_SPBL', 'BTC', t, index));
  }
  main.spotFills.set('BTCUSDT_SPBL', btc);
  main.spotFills.set('ETHUSDT_SPBL', [0, 1, 2].map((index) => spotFill(main, 'ETHUSDT_SPBL', 'ETH', base + index * DAY_MS + 7, 100 + index)));
  other.spotFills.set('BTCUSDT_SPBL', [spotFill(other, 'BTCUSDT_SPBL', 'BTC', base + 5, 200)]);

  // Funding bills: 43, one a day, two coins, five business types; bills 20 and 21 share a millisecond.
  const bizTypes = ['deposit', 'withdraw', 'buy', 'sell', 'transfer_in'];
  main.fundingBills = Array.from({ length: 43 }, (_, index): Timed<FundingBillWire> => {
    const t = base + (index === 21 ? 20 : index) * DAY_MS + 1000;
    const coinId = index % 3 === 0 ? 1 : 2;
    return {
      t,
      wire: {
        billId: String(16502414 + index),
        coinId,
        coinName: coinId === 1 ? 'BTC' : 'USDT',
        bizType: bizTypes[index % bizTypes.length] as string,
        deltaAmount: index % 2 === 0 ? '100.00000000' : '-25.50000000',
        afterAmount: String(1000 + index),
        fees: '0.00000000',
        cTime: String(t),
      },
    };
  });

  // Transfer records: 27, with identical twins (records 8 and 9 are equal in every field).
  main.transferRecords = Array.from({ length: 27 }, (_, index): Timed<TransferRecordWire> => {
    const t = base + (index === 9 ? 8 : index) * 2 * DAY_MS + 500;
    return {
      t,
      wire: {
        coinName: index % 4 === 0 ? 'BTC' : 'USDT',
        status: 'SUCCESS',
        toType: index % 2 === 0 ? 'CONTRACT' : 'USD_MIX',
        toSymbol: '',
        fromType: index % 2 === 0 ? 'USD_MIX' : 'CONTRACT',
        fromSymbol: '',
        amount: index === 9 ? '20.00000000' : `${20 + index}.00000000`,
        tradeTime: String(t),
      },
    };
  });
  (main.transferRecords[9] as Timed<TransferRecordWire>).wire = { ...(main.transferRecords[8] as Timed<TransferRecordWire>).wire, amount: (main.transferRecords[8] as Timed<TransferRecordWire>).wire.amount };

  // Futures fills: 250; 120 of them (indexes 60..179) share one millisecond, more than a page of 100.
  const crowdedMs = base + 30 * DAY_MS;
  main.futuresFills = Array.from({ length: 250 }, (_, index): Timed<FuturesFillWire> => {
    const t = index < 60 ? base + index * 3_600_000 : index < 180 ? crowdedMs : crowdedMs + (index - 179) * 3_600_000;
    return {
      t,
      wire: {
        tradeId: BIG_ID_BASE + BigInt(index) + 1n,
        orderId: BIG_ID_BASE + 1000n + BigInt(Math.floor(index / 5)),
        symbol: index % 3 === 0 ? 'cmt_ethusdt' : 'cmt_btcusdt',
        marginMode: 'SHARED',
        separatedMode: 'SEPARATED',
        positionSide: 'LONG',
        orderSide: 'BUY',
        fillSize: '0.010000',
        fillValue: '855.965',
        fillFee: '0.513579',
        liquidateFee: '0',
        realizePnl: '0',
        direction: 'OPEN_LONG',
        liquidateType: '',
        legacyOrdeDirection: 'OPEN_LONG',
        createdTime: t,
      },
    };
  });

  // Futures orders: 30, one every 2 days; some not final.
  const statuses = ['filled', 'canceled', 'open', 'filled', 'pending', 'canceled', 'untriggered', 'filled', 'canceling', 'filled'];
  main.futuresOrders = Array.from({ length: 30 }, (_, index): Timed<FuturesOrderWire> => {
    const t = base + index * 2 * DAY_MS;
    return {
      t,
      wire: {
        symbol: index % 2 === 0 ? 'cmt_btcusdt' : 'cmt_ethusdt',
        size: '0.010000',
        client_oid: `fixture-${index}`,
        createTime: String(t),
        filled_qty: '0.010000',
        fee: '0.51357900',
        order_id: String(686643264626885000n + BigInt(index)),
        price: '0.0',
        price_avg: '85596.5',
        status: statuses[index % statuses.length] as string,
        type: 'open_long',
        order_type: 'ioc',
        totalProfits: '0',
        contracts: 10000,
      },
    };
  });

  // Spot orders: three open on BTC, two closed.
  const spotOrder = (index: number, status: string): SpotOrderWire => ({
    accountId: main.spotAccountId,
    symbol: 'BTCUSDT_SPBL',
    orderId: String(602929507946464000n + BigInt(index)),
    clientOrderId: `client-${index}`,
    price: '64000',
    quantity: '0.001',
    orderType: 'limit',
    side: 'buy',
    status,
    latestFillPrice: '0',
    maxFillPrice: '0',
    minFillPrice: '0',
    fillQuantity: '0',
    fillTotalAmount: '0',
    cTime: String(base + index * DAY_MS),
    uTime: String(base + index * DAY_MS),
  });
  main.spotOpenOrders.set('BTCUSDT_SPBL', [spotOrder(1, 'open'), spotOrder(2, 'open'), spotOrder(3, 'open')]);
  main.spotOrdersById.set(spotOrder(4, 'filled').orderId, spotOrder(4, 'filled'));
  main.spotOrdersById.set(spotOrder(5, 'canceled').orderId, spotOrder(5, 'canceled'));

  // Commissions: 30 SPOT, one every 3 days back from endMs (so some fall in the default last 7 days), 10 FUTURES.
  const commissions: CommissionRecord[] = [];
  for (let index = 0; index < 40; index += 1) {
    const productType = index < 30 ? 'SPOT' : 'FUTURES';
    const t = endMs - (index < 30 ? index * 3 : (index - 30) * 5) * DAY_MS - 3_600_000;
    commissions.push({
      t,
      productType,
      wire: {
        uid: index % 2 === 0 ? '9001' : '9002',
        dealTime: String(t),
        coin: index % 5 === 0 ? 'BTC' : 'USDT',
        fee: '1.25',
        commission: '0.5',
        rate: '0.4',
        symbol: productType === 'SPOT' ? 'BTCUSDT_SPBL' : 'cmt_btcusdt',
        sourceType: 1,
        takerAmount: '100',
        makerAmount: '0',
      },
    });
  }
  main.commissions = commissions.sort((a, b) => a.t - b.t);

  // Referral activity: daily, three invited uids; amounts chosen so floats would be wrong (0.1 + 0.2).
  const uids = ['10001', '9002', '9001'];
  main.referralActivity = Array.from({ length: 21 }, (_, index): ReferralActivity => ({
    t: endMs - (21 - index) * DAY_MS,
    uid: uids[index % 3] as string,
    depositAmount: index % 2 === 0 ? '0.1' : '0.2',
    withdrawalAmount: '0',
    spotTradingAmount: '1000.000000000000000001',
    futuresTradingAmount: '0.3',
    commission: '0.05',
  }));

  return {
    seed: 42,
    scale: 'small',
    startMs,
    endMs,
    currencies: [
      { coinId: '1', coinName: 'BTC', transfer: 'true', chains: [{ chain: 'BTC', needTag: 'false', withdrawAble: 'true', rechargeAble: 'true', withdrawFee: '0.0005', depositConfirm: '1', withdrawConfirm: '1', minDepositAmount: '0.0001', minWithdrawAmount: '0.001', browserUrl: 'https://example.invalid/tx/' }] },
      { coinId: '2', coinName: 'USDT', transfer: 'true', chains: [] },
    ],
    contracts: [
      { symbol: 'cmt_btcusdt', underlying_index: 'BTC', quote_currency: 'USDT', coin: 'USDT', contract_val: '0.0001', listing: null, delivery: ['00:00:00', '08:00:00', '16:00:00'], size_increment: '4', tick_size: '1', forwardContractFlag: true, priceEndStep: 1, minLeverage: 1, maxLeverage: 100, buyLimitPriceRatio: '0.01', sellLimitPriceRatio: '0.01', makerFeeRate: '0.0002', takerFeeRate: '0.0006', minOrderSize: '0.0001', maxOrderSize: '100000', maxPositionSize: '1000000' },
      { symbol: 'cmt_ethusdt', underlying_index: 'ETH', quote_currency: 'USDT', coin: 'USDT', contract_val: '0.001', listing: null, delivery: ['00:00:00'], size_increment: '3', tick_size: '2', forwardContractFlag: true, priceEndStep: 1, minLeverage: 1, maxLeverage: 100, buyLimitPriceRatio: '0.01', sellLimitPriceRatio: '0.01', makerFeeRate: '0.0002', takerFeeRate: '0.0006', minOrderSize: '0.001', maxOrderSize: '100000', maxPositionSize: '1000000' },
    ],
    spotSymbols: [
      { symbol: 'BTCUSDT_SPBL', baseCoin: 'BTC', quoteCoin: 'USDT' },
      { symbol: 'ETHUSDT_SPBL', baseCoin: 'ETH', quoteCoin: 'USDT' },
      { symbol: 'XRPUSDT_SPBL', baseCoin: 'XRP', quoteCoin: 'USDT' },
    ],
    accounts: [main, other],
  };
}

/** Parses JSON text with ids above 2^53 as bigint and every other number as number. */
export function parseLossless(text: string): unknown {
  return parse(text, null, (digits) => (/^-?\d+$/.test(digits) && !Number.isSafeInteger(Number(digits)) ? BigInt(digits) : Number(digits)));
}

/** ACCESS-SIGN per exchange-notes.md "Signing". */
export function sign(secret: string, timestamp: string, method: string, requestPath: string, rawQuery: string, body: string): string {
  const prehash = timestamp + method + requestPath + (rawQuery === '' ? '' : `?${rawQuery}`) + body;
  return createHmac('sha256', secret).update(prehash).digest('base64');
}

/** Builds a query string with sorted keys (values need no escaping in these tests). */
export function queryString(params: Record<string, string | number | bigint | undefined>): string {
  return Object.keys(params)
    .filter((key) => params[key] !== undefined)
    .sort()
    .map((key) => `${key}=${encodeURIComponent(String(params[key]))}`)
    .join('&');
}

/** Credentials a request is signed with. */
export interface Signer {
  apiKey: string;
  secret: string;
  passphrase: string;
}

export interface CallOptions {
  /** Sign with these credentials (omit for public endpoints or to leave headers out). */
  as?: Signer;
  /** GET parameters, or an exact raw query string. */
  query?: Record<string, string | number | bigint | undefined> | string;
  /** POST body: an object (serialized with bigint support) or the exact text. */
  body?: Record<string, unknown> | string;
  /** ACCESS-TIMESTAMP to send. @default Date.now() + clockOffsetMs */
  timestamp?: string;
  clockOffsetMs?: number;
  /** Headers to add or override (undefined removes). */
  headers?: Record<string, string | undefined>;
  /** Local source address (e.g. 127.0.0.2 to appear as another IP). */
  localAddress?: string;
  /** Sign this text instead of what is sent (to test signature checks). */
  signQuery?: string;
  signBody?: string;
}

export interface CallResult {
  status: number;
  text: string;
  /** Parsed body, or undefined when it is not JSON. */
  json: unknown;
  headers: Record<string, string | string[] | undefined>;
}

/** Serializes a body that may hold bigint ids as bare integers. */
export function jsonWithBigints(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => (typeof item === 'bigint' ? `__BIG__${item.toString()}__` : item)).replace(/"__BIG__(-?\d+)__"/g, '$1');
}

/** One HTTP request on a fresh connection; rejects when the connection is reset. */
export function call(baseUrl: string, method: 'GET' | 'POST', path: string, options: CallOptions = {}): Promise<CallResult> {
  const rawQuery = typeof options.query === 'string' ? options.query : options.query === undefined ? '' : queryString(options.query);
  const body = method === 'POST' ? (typeof options.body === 'string' ? options.body : jsonWithBigints(options.body ?? {})) : '';
  const headers: Record<string, string> = { 'Content-Type': 'application/json', locale: 'en-US' };
  if (options.as !== undefined) {
    const timestamp = options.timestamp ?? String(Date.now() + (options.clockOffsetMs ?? 0));
    headers['ACCESS-KEY'] = options.as.apiKey;
    headers['ACCESS-PASSPHRASE'] = options.as.passphrase;
    headers['ACCESS-TIMESTAMP'] = timestamp;
    headers['ACCESS-SIGN'] = sign(options.as.secret, timestamp, method, path, options.signQuery ?? rawQuery, options.signBody ?? body);
  }
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (value === undefined) delete headers[name];
    else headers[name] = value;
  }
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: path + (rawQuery === '' ? '' : `?${rawQuery}`),
        headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
        agent: false,
        localAddress: options.localAddress,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = parseLossless(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, text, json, headers: res.headers });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A signer for an account of the exchange. */
export function signerOf(exchange: SandboxExchange, index = 0): Signer {
  const acc = exchange.accounts[index] as SandboxAccount;
  return { apiKey: acc.apiKey, secret: acc.secret, passphrase: acc.passphrase };
}
