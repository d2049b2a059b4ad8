/**
 * Spot trading of one sandbox account: orders, their fills, and the two funding bills (one per
 * coin leg) of every fill.
 *
 * Conventions (exchange-notes "Fee and sign conventions"): the fee is charged in the asset
 * received. A buy of q base for total quote posts base +(q - fee) with fees = fee and quote
 * -total; a sell posts base -q and quote +(total - fee) with fees = fee. fillTotalAmount is
 * exactly price * quantity (the pair's precisions make it fit the quote coin's decimals), so a
 * fill whose fillPrice is "" still yields its price as fillTotalAmount / fillQuantity.
 *
 * An order reserves what it can spend when it is placed; each fill releases its part. That is
 * how balances stay non-negative while fills of several orders interleave.
 */
import { newSpotOrderWire, type SpotFillWire, type SpotOrderWire, type Timed } from '../model.ts';
import { coinByName, SPOT_FEE_RATES, SPOT_SYMBOLS, type CoinSpec, type SpotSymbolSpec } from './catalog.ts';
import { formatTrimmed, fromUnits, parseFixed, roundTo, toApproxNumber, toUnits } from './fixed-point.ts';
import type { FundingLedger } from './funding-ledger.ts';
import type { IdAllocator } from './id-allocator.ts';
import type { Market, MarketAsset } from './market.ts';
import type { Rng } from './random.ts';

/** How the fills of an order are spread in time and price. */
type FillStyle = 'market' | 'limit' | 'sweep';

interface SymbolBook {
  spec: SpotSymbolSpec;
  base: CoinSpec;
  quote: CoinSpec;
  baseAsset: MarketAsset;
  quoteAsset: MarketAsset | 'USDT';
  fills: Array<Timed<SpotFillWire>>;
  openOrders: SpotOrderWire[];
}

interface PlannedFill {
  units: number;
  ticks: number;
  t: number;
  maker: boolean;
}

interface LiveOrder {
  book: SymbolBook;
  side: 'buy' | 'sell';
  orderType: string;
  /** Fills of this order are sent with fillPrice "" and orderType "" (exchange-notes "Numbers"). */
  blank: boolean;
  wire: SpotOrderWire;
  fills: PlannedFill[];
  filledUnits: bigint;
  filledTotal: bigint;
  minTicks: number;
  maxTicks: number;
}

/** Rates in units of 0.0001, so fee = amount units * rate units at 4 more decimals, exactly. */
const RATE_DECIMALS = 4;
const MAKER_RATE = toUnits(parseFixed(SPOT_FEE_RATES.maker), RATE_DECIMALS);
const TAKER_RATE = toUnits(parseFixed(SPOT_FEE_RATES.taker), RATE_DECIMALS);
/** An order's fills stop spreading in time after this long (keeps orders clear of quiet periods). */
const MAX_ORDER_SPAN_MS = 30 * 60_000;

/** Options of {@link SpotDesk}. */
export interface SpotDeskOptions {
  rng: Rng;
  market: Market;
  ledger: FundingLedger;
  /** The account's spot id space (orders and fills). */
  ids: IdAllocator;
  accountId: string;
  /** Runs an action at epoch ms t, after everything scheduled earlier for t. */
  schedule: (t: number, action: () => void) => void;
  /** Fills from this ms on carry the unlisted field fillRole (the exchange added it on a release day). */
  extraFieldsFromMs: number;
  /** Typical share of the available balance one order uses (smaller at larger scales, so fees do not eat the account). */
  orderFraction: number;
}

/** Places spot orders and books their fills. */
export class SpotDesk {
  /** Fills per listed symbol (every listed symbol has an array, maybe empty), ascending by t. */
  readonly fillsBySymbol = new Map<string, Array<Timed<SpotFillWire>>>();
  /** Orders still open at the end of the history, per listed symbol. */
  readonly openOrdersBySymbol = new Map<string, SpotOrderWire[]>();
  /** Orders that were completely filled, by orderId. */
  readonly ordersById = new Map<string, SpotOrderWire>();
  private readonly books = new Map<string, SymbolBook>();

  constructor(private readonly o: SpotDeskOptions) {
    for (const spec of SPOT_SYMBOLS) {
      const book: SymbolBook = {
        spec,
        base: coinByName(spec.baseCoin),
        quote: coinByName(spec.quoteCoin),
        baseAsset: spec.baseCoin as MarketAsset,
        quoteAsset: spec.quoteCoin as MarketAsset | 'USDT',
        fills: [],
        openOrders: [],
      };
      this.books.set(spec.symbol, book);
      this.fillsBySymbol.set(spec.symbol, book.fills);
      this.openOrdersBySymbol.set(spec.symbol, book.openOrders);
    }
  }

  /**
   * A regular order: side leaning toward rebalancing the pair, size a share of what is
   * available, 1 to 10 fills over up to half an hour. Returns false when nothing was placed.
   */
  placeOrder(t: number, symbol: string): boolean {
    const { rng } = this.o;
    const book = this.book(symbol);
    const price = this.price(book, t);
    const quoteAvailable = toApproxNumber(this.o.ledger.available(book.quote.name));
    const baseAvailable = toApproxNumber(this.o.ledger.available(book.base.name));
    const baseValue = baseAvailable * price;
    if (quoteAvailable <= 0 && baseValue <= 0) return false;
    const buyShare = Math.max(0.15, Math.min(0.85, (quoteAvailable * 0.3) / (quoteAvailable * 0.3 + baseValue)));
    const side = rng.chance(buyShare) ? 'buy' : 'sell';
    const size = this.o.orderFraction * rng.range(0.3, 1.7);
    const qtyScale = 10 ** book.spec.quantityDecimals;
    const units = Math.floor(side === 'buy' ? ((quoteAvailable * size) / price) * qtyScale : baseAvailable * size * 2 * qtyScale);
    if (units < book.spec.minQuantityUnits) return false;
    const count = Math.min(units, 1 + geometric(rng, 0.45, 9));
    const style: FillStyle = rng.chance(0.3) ? 'market' : 'limit';
    return this.submit(t, book, side, units, count, style, rng.chance(0.04));
  }

  /**
   * A sweep: two orders in the same millisecond, the first with 105-140 fills, the second with
   * 10-40 (more fills in one ms than a page of 100 holds). Returns false when the first order
   * cannot be paid for, so the caller can try another symbol.
   */
  placeBurst(t: number, symbol: string): boolean {
    const { rng } = this.o;
    const book = this.book(symbol);
    const counts = [rng.int(105, 141), rng.int(10, 41)];
    for (let i = 0; i < counts.length; i++) {
      const count = counts[i] as number;
      const side = this.affordableSide(book, t, count);
      const available = side === 'buy' ? toApproxNumber(this.o.ledger.available(book.quote.name)) / this.price(book, t) : toApproxNumber(this.o.ledger.available(book.base.name));
      const wanted = Math.floor(available * rng.range(0.005, 0.02) * 10 ** book.spec.quantityDecimals);
      const placed = side !== undefined && this.submit(t, book, side, Math.max(count, wanted), count, 'sweep', false);
      // Without the big first order there is no burst: let the caller try another symbol.
      if (i === 0 && !placed) return false;
    }
    return true;
  }

  /** One fill exactly at t (month-boundary records), of the smallest size. */
  placeSingleFill(t: number, symbol: string): boolean {
    const book = this.book(symbol);
    const side = this.affordableSide(book, t, book.spec.minQuantityUnits);
    if (side === undefined) return false;
    return this.submit(t, book, side, book.spec.minQuantityUnits, 1, 'sweep', false);
  }

  /**
   * An order that stays open to the end of the history: its limit lies beyond every price the
   * market reaches before endMs, and what it could spend is frozen from t on.
   */
  placeOpenOrder(t: number, symbol: string, endMs: number): boolean {
    const { rng, market, ledger } = this.o;
    const book = this.book(symbol);
    const base = market.usdRange(book.baseAsset, t, endMs);
    const quote = book.quoteAsset === 'USDT' ? { min: 1, max: 1 } : market.usdRange(book.quoteAsset, t, endMs);
    const priceScale = 10 ** book.spec.priceDecimals;
    const qtyScale = 10 ** book.spec.quantityDecimals;
    const quoteAvailable = toApproxNumber(ledger.available(book.quote.name));
    const side = rng.chance(0.5) && quoteAvailable > 0 ? 'buy' : 'sell';
    const limit = side === 'buy' ? (base.min / quote.max) * rng.range(0.7, 0.93) : (base.max / quote.min) * rng.range(1.07, 1.35);
    const ticks = Math.max(1, Math.round(limit * priceScale));
    const size = rng.range(0.01, 0.04);
    const units = Math.floor(side === 'buy' ? ((quoteAvailable * size) / limit) * qtyScale : toApproxNumber(ledger.available(book.base.name)) * size * qtyScale);
    if (units < book.spec.minQuantityUnits) return false;
    const held = side === 'buy' ? fromUnits(BigInt(ticks) * BigInt(units), book.spec.priceDecimals + book.spec.quantityDecimals) : fromUnits(units, book.spec.quantityDecimals);
    ledger.hold(t, side === 'buy' ? book.quote.name : book.base.name, held);
    book.openOrders.push(
      newSpotOrderWire({
        accountId: this.o.accountId,
        symbol: book.spec.symbol,
        orderId: this.o.ids.next(t).toString(),
        clientOrderId: rng.hex(32),
        price: formatTrimmed(fromUnits(ticks, book.spec.priceDecimals)),
        quantity: formatTrimmed(fromUnits(units, book.spec.quantityDecimals)),
        orderType: 'limit',
        side,
        status: 'open',
        atMs: t,
      }),
    );
    return true;
  }

  /** A side whose balance can pay for `units` at about the current price, preferring buys. */
  private affordableSide(book: SymbolBook, t: number, units: number): 'buy' | 'sell' | undefined {
    const qty = units / 10 ** book.spec.quantityDecimals;
    if (toApproxNumber(this.o.ledger.available(book.quote.name)) > qty * this.price(book, t) * 1.2 + 1e-8) return 'buy';
    if (toApproxNumber(this.o.ledger.available(book.base.name)) >= qty) return 'sell';
    return undefined;
  }

  private price(book: SymbolBook, t: number): number {
    return this.o.market.price(book.baseAsset, book.quoteAsset, t);
  }

  /** Plans the fills of an order, reserves what they spend, and schedules them. */
  private submit(t: number, book: SymbolBook, side: 'buy' | 'sell', units: number, count: number, style: FillStyle, blank: boolean): boolean {
    const { rng, ledger } = this.o;
    const spec = book.spec;
    const startTicks = Math.max(1, Math.round(this.price(book, t) * 10 ** spec.priceDecimals));
    const parts = splitUnits(rng, units, Math.min(count, units));
    const fills: PlannedFill[] = [];
    let ticks = startTicks;
    let at = t;
    let totalUnits = 0n;
    for (let i = 0; i < parts.length; i++) {
      if (i > 0) {
        // Buys walk up the book, sells down; a sweep takes the next level every fill.
        const step = style === 'sweep' ? 1 : rng.int(0, 3);
        ticks = side === 'buy' ? ticks + step : Math.max(1, ticks - step);
        at += fillDelay(rng, style, at - t);
      } else if (style === 'limit') {
        at += rng.int(0, 800);
      }
      const partUnits = parts[i] ?? 0;
      fills.push({ units: partUnits, ticks, t: at, maker: style === 'limit' && (i > 0 || rng.chance(0.4)) });
      totalUnits += BigInt(ticks) * BigInt(partUnits);
    }
    const spendCoin = side === 'buy' ? book.quote.name : book.base.name;
    const spend = side === 'buy' ? fromUnits(totalUnits, spec.priceDecimals + spec.quantityDecimals) : fromUnits(units, spec.quantityDecimals);
    if (ledger.available(spendCoin) < spend) return false;
    ledger.reserve(spendCoin, spend);

    const orderType = style === 'limit' ? 'limit' : 'market';
    // The limit lies at or beyond the last (worst) fill price.
    const limitTicks = side === 'buy' ? ticks + rng.int(0, 6) : Math.max(1, ticks - rng.int(0, 6));
    const order: LiveOrder = {
      book,
      side,
      orderType,
      blank,
      fills,
      filledUnits: 0n,
      filledTotal: 0n,
      minTicks: Number.POSITIVE_INFINITY,
      maxTicks: 0,
      wire: newSpotOrderWire({
        accountId: this.o.accountId,
        symbol: spec.symbol,
        orderId: this.o.ids.next(t).toString(),
        clientOrderId: rng.hex(32),
        price: orderType === 'market' ? '0' : formatTrimmed(fromUnits(limitTicks, spec.priceDecimals)),
        quantity: formatTrimmed(fromUnits(units, spec.quantityDecimals)),
        orderType,
        side,
        status: 'filled',
        atMs: t,
      }),
    };
    for (let i = 0; i < fills.length; i++) {
      const index = i;
      this.o.schedule((fills[i] as PlannedFill).t, () => this.fill(order, index));
    }
    return true;
  }

  /** Books one fill: the fill record and its two bills. */
  private fill(order: LiveOrder, index: number): void {
    const { ledger } = this.o;
    const f = order.fills[index] as PlannedFill;
    const { spec, base, quote } = order.book;
    const t = f.t;
    const cTime = String(t);
    const units = BigInt(f.units);
    const totalUnits = BigInt(f.ticks) * units;
    const qty = fromUnits(units, spec.quantityDecimals);
    const total = fromUnits(totalUnits, spec.priceDecimals + spec.quantityDecimals);
    const rate = f.maker ? MAKER_RATE : TAKER_RATE;
    let fee: bigint;
    if (order.side === 'buy') {
      fee = roundTo(fromUnits(units * rate, spec.quantityDecimals + RATE_DECIMALS), base.decimals);
      ledger.release(quote.name, total);
      ledger.post(t, cTime, base.name, 'buy', qty - fee, fee);
      ledger.post(t, cTime, quote.name, 'buy', -total, 0n);
    } else {
      fee = roundTo(fromUnits(totalUnits * rate, spec.priceDecimals + spec.quantityDecimals + RATE_DECIMALS), quote.decimals);
      ledger.release(base.name, qty);
      ledger.post(t, cTime, base.name, 'sell', -qty, 0n);
      ledger.post(t, cTime, quote.name, 'sell', total - fee, fee);
    }
    const priceText = formatTrimmed(fromUnits(f.ticks, spec.priceDecimals));
    const wire: SpotFillWire = {
      accountId: this.o.accountId,
      symbol: spec.symbol,
      baseCoin: spec.baseCoin,
      quoteCoin: spec.quoteCoin,
      orderId: order.wire.orderId,
      fillId: this.o.ids.next(t).toString(),
      orderType: order.blank ? '' : order.orderType,
      side: order.side,
      fillPrice: order.blank ? '' : priceText,
      fillQuantity: formatTrimmed(qty),
      fillTotalAmount: formatTrimmed(total),
      fees: formatTrimmed(fee),
      cTime,
    };
    if (t >= this.o.extraFieldsFromMs) wire.fillRole = f.maker ? 'maker' : 'taker';
    order.book.fills.push({ t, wire });

    order.filledUnits += units;
    order.filledTotal += total;
    if (f.ticks < order.minTicks) order.minTicks = f.ticks;
    if (f.ticks > order.maxTicks) order.maxTicks = f.ticks;
    if (index === order.fills.length - 1) {
      const w = order.wire;
      w.latestFillPrice = priceText;
      w.maxFillPrice = formatTrimmed(fromUnits(order.maxTicks, spec.priceDecimals));
      w.minFillPrice = formatTrimmed(fromUnits(order.minTicks, spec.priceDecimals));
      w.fillQuantity = formatTrimmed(fromUnits(order.filledUnits, spec.quantityDecimals));
      w.fillTotalAmount = formatTrimmed(order.filledTotal);
      w.uTime = cTime;
      this.ordersById.set(w.orderId, w);
    }
  }

  private book(symbol: string): SymbolBook {
    const book = this.books.get(symbol);
    if (book === undefined) throw new RangeError(`unknown spot symbol ${symbol}`);
    return book;
  }
}

/** 0..max, each further step with probability p (a short-tailed count). */
export function geometric(rng: Rng, p: number, max: number): number {
  let n = 0;
  while (n < max && rng.chance(p)) n++;
  return n;
}

/** Splits `units` into `parts` positive integers of random sizes. */
export function splitUnits(rng: Rng, units: number, parts: number): number[] {
  if (parts <= 1) return [units];
  const cuts: number[] = [];
  for (let i = 0; i < parts - 1; i++) cuts.push(1 + Math.floor(rng.float() * (units - 1)));
  cuts.sort((a, b) => a - b);
  // Make the cuts strictly increasing and leave at least one unit to every later part.
  for (let i = 0; i < cuts.length; i++) {
    const lowest = i === 0 ? 1 : (cuts[i - 1] as number) + 1;
    const highest = units - (cuts.length - i);
    cuts[i] = Math.min(Math.max(cuts[i] as number, lowest), highest);
  }
  const out: number[] = [];
  let previous = 0;
  for (const c of cuts) {
    out.push(c - previous);
    previous = c;
  }
  out.push(units - previous);
  return out;
}

/** Milliseconds between consecutive fills of one order. */
function fillDelay(rng: Rng, style: FillStyle, elapsed: number): number {
  if (style === 'sweep' || elapsed >= MAX_ORDER_SPAN_MS) return 0;
  const r = rng.float();
  if (style === 'market') return r < 0.7 ? 0 : rng.int(1, 6);
  if (r < 0.35) return 0;
  if (r < 0.9) return rng.int(1, 2000);
  return rng.int(2000, 600_000);
}
