/**
 * The sandbox exchange's in-memory state: what the generator makes and the server serves.
 *
 * Records are kept in the exchange's wire shape (the field names and JSON types of
 * ../shared/spec/exchange-api.md section 2) so the server can send them as they are, plus a
 * numeric time `t` (epoch ms) used for filtering and sorting. Every `wire` object may carry
 * extra fields the spec does not list (the real exchange adds fields without notice).
 *
 * Ordering convention: every history array is sorted ascending by `t`, ties in a fixed order
 * (the order the generator made them). The server serves newest first.
 */

/** A JSON value in wire form. 64-bit integers that must be sent as bare JSON numbers are bigint. */
export type WireValue = string | number | boolean | bigint | null | WireValue[] | { [key: string]: WireValue };
export type WireObject = { [key: string]: WireValue };

/** One timed record: its wire form plus its time for filtering. */
export interface Timed<W extends WireObject = WireObject> {
  /** Event time, epoch ms (the value of cTime / tradeTime / createdTime / dealTime). */
  t: number;
  wire: W;
}

/** A spot fill as sent by POST /api/v2/trade/fills (all strings; fillPrice and orderType may be ""). */
export interface SpotFillWire extends WireObject {
  accountId: string;
  symbol: string;
  baseCoin: string;
  quoteCoin: string;
  orderId: string;
  fillId: string;
  orderType: string;
  side: string;
  fillPrice: string;
  fillQuantity: string;
  fillTotalAmount: string;
  fees: string;
  cTime: string;
}

/** A funding bill item (coinId is a JSON integer, the rest strings). */
export interface FundingBillWire extends WireObject {
  billId: string;
  coinId: number;
  coinName: string;
  bizType: string;
  deltaAmount: string;
  afterAmount: string;
  fees: string;
  cTime: string;
}

/** A transfer record: no id; two genuine records may be identical in every field. */
export interface TransferRecordWire extends WireObject {
  coinName: string;
  status: string;
  toType: string;
  toSymbol: string;
  fromType: string;
  fromSymbol: string;
  amount: string;
  tradeTime: string;
}

/** A futures fill: tradeId and orderId are bigint (sent as bare JSON integers, often above 2^53). */
export interface FuturesFillWire extends WireObject {
  tradeId: bigint;
  orderId: bigint;
  symbol: string;
  marginMode: string;
  separatedMode: string;
  positionSide: string;
  orderSide: string;
  fillSize: string;
  fillValue: string;
  fillFee: string;
  liquidateFee: string;
  realizePnl: string;
  direction: string;
  liquidateType: string;
  legacyOrdeDirection: string;
  createdTime: number;
}

/** A futures order as listed by GET /capi/v2/order/current. */
export interface FuturesOrderWire extends WireObject {
  symbol: string;
  size: string;
  client_oid: string;
  createTime: string;
  filled_qty: string;
  fee: string;
  order_id: string;
  price: string;
  price_avg: string;
  status: string;
  type: string;
  order_type: string;
  totalProfits: string;
  contracts: number;
}

/** A spot order as listed by open-orders and orderInfo (all strings). */
export interface SpotOrderWire extends WireObject {
  accountId: string;
  symbol: string;
  orderId: string;
  clientOrderId: string;
  price: string;
  quantity: string;
  orderType: string;
  side: string;
  status: string;
  latestFillPrice: string;
  maxFillPrice: string;
  minFillPrice: string;
  fillQuantity: string;
  fillTotalAmount: string;
  cTime: string;
  uTime: string;
}

/**
 * An affiliate commission record as the real exchange sends it: the time under `dealTime` (a
 * string), no `productType` (see exchange-api.md 2.12). No id; identical twins are genuine.
 */
export interface CommissionWire extends WireObject {
  uid: string;
  dealTime: string;
  coin: string;
  fee: string;
  commission: string;
  rate: string;
  symbol: string;
  sourceType: number;
  takerAmount: string;
  makerAmount: string;
}

/** A commission record with the product type it is served under (the query's productType). */
export interface CommissionRecord extends Timed<CommissionWire> {
  productType: 'SPOT' | 'FUTURES';
}

/**
 * One invited user's activity on one moment; getChannelUserTradeAndAsset sums these per uid
 * over the requested [startTime, endTime] range. Amounts are decimal strings.
 */
export interface ReferralActivity {
  t: number;
  uid: string;
  depositAmount: string;
  withdrawalAmount: string;
  spotTradingAmount: string;
  futuresTradingAmount: string;
  commission: string;
}

/** A spot trading pair the account can trade. */
export interface SpotSymbol {
  symbol: string;
  baseCoin: string;
  quoteCoin: string;
}

/** One account (one UID, one API key) with its whole history. */
export interface SandboxAccount {
  /** The UID the exchange counts UID weight against. */
  uid: string;
  apiKey: string;
  secret: string;
  passphrase: string;
  /** Whether the key has futures read permission (4.16 answers 40014 without it). */
  canReadFutures: boolean;
  spotAccountId: string;

  /** Spot fills per symbol, each array ascending by t. */
  spotFills: Map<string, Timed<SpotFillWire>[]>;
  fundingBills: Timed<FundingBillWire>[];
  transferRecords: Timed<TransferRecordWire>[];
  futuresFills: Timed<FuturesFillWire>[];
  /** Every futures order ever placed (any status), ascending by createTime. */
  futuresOrders: Timed<FuturesOrderWire>[];
  /** Open spot orders per symbol (the open-orders snapshot). */
  spotOpenOrders: Map<string, SpotOrderWire[]>;
  /** Spot orders that are no longer open, by orderId, for orderInfo. */
  spotOrdersById: Map<string, SpotOrderWire>;
  commissions: CommissionRecord[];
  referralActivity: ReferralActivity[];

  /**
   * Snapshot payloads in wire form, as they stood at epoch ms `atMs` (the server passes its
   * visibility horizon, so snapshots agree with the history it serves).
   * assetsAt: the array of 2.4 (equity = available + frozen; equity equals the last funding
   * bill's afterAmount per coin at that time).
   * futuresAccountAt: the object of 2.11 { account, collateral, position, version }, whose
   * collateral running totals (cum_*) equal the sums of the futures fills, funding payments and
   * transfers up to atMs.
   */
  assetsAt(atMs: number): WireObject[];
  futuresAccountAt(atMs: number): WireObject;
}

/** Everything the sandbox serves. */
export interface SandboxExchange {
  /** Generation inputs, for logs and for reproducing the data. */
  seed: number;
  scale: SandboxScale;
  /** History covers [startMs, endMs). */
  startMs: number;
  endMs: number;
  /** Public data. */
  currencies: WireObject[];
  contracts: WireObject[];
  spotSymbols: SpotSymbol[];
  accounts: SandboxAccount[];
}

export type SandboxScale = 'small' | 'medium' | 'large';

/** Options of the generator. */
export interface GenerateOptions {
  /** PRNG seed; the same seed and end give the same data, byte for byte. @default 1 */
  seed?: number;
  /** Roughly how many history records per account: small ~5k, medium ~100k, large ~1M. @default 'small' */
  scale?: SandboxScale;
  /** End of the history (exclusive), epoch ms; the history covers the 365 days before it. @default start of the current UTC day */
  endMs?: number;
  /** How many accounts (UIDs). @default 1 */
  accounts?: number;
}

/** The identity and terms of a new spot order; everything about its fills starts at zero. */
export type NewSpotOrder = Pick<SpotOrderWire, 'accountId' | 'symbol' | 'orderId' | 'clientOrderId' | 'price' | 'quantity' | 'orderType' | 'side' | 'status'> & { atMs: number };

/** A spot order as it stands when placed: no fills yet, created and updated at `atMs`. */
export function newSpotOrderWire(order: NewSpotOrder): SpotOrderWire {
  const { atMs, ...terms } = order;
  return {
    ...terms,
    latestFillPrice: '0',
    maxFillPrice: '0',
    minFillPrice: '0',
    fillQuantity: '0',
    fillTotalAmount: '0',
    cTime: String(atMs),
    uTime: String(atMs),
  };
}
