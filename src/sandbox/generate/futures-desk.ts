/**
 * Futures trading of one sandbox account: a position simulation per contract and side (hedge
 * mode, cross "SHARED" margin), its orders and fills, funding every 8 hours, and forced
 * liquidations when losses eat too much of the collateral.
 *
 * Amounts are exact: fillValue = price * size, fillFee = fillValue * maker/taker rate,
 * liquidateFee = fillValue * liquidation rate, all in integer units (the catalog's precisions
 * make them fit 8 decimals). Opening fills realize 0; closing fills realize exit value minus the
 * closed share of the position's cost basis (see futures-ledger.ts), so (exit - entry) * size.
 */
import type { FuturesFillWire, FuturesOrderWire, Timed } from '../model.ts';
import { CONTRACTS, FUTURES_FEE_RATES, FUTURES_LEVERAGE, type ContractSpec } from './catalog.ts';
import { FUTURES_AMOUNT_DECIMALS } from './futures-account-wire.ts';
import { formatFixed, fromUnits, mulDivFloor, parseFixed, roundTo, toApproxNumber, toUnits } from './fixed-point.ts';
import { collateralAmount, type FuturesDirection, type FuturesLedger, type PositionState } from './futures-ledger.ts';
import type { IdAllocator } from './id-allocator.ts';
import type { Market, MarketAsset } from './market.ts';
import type { Rng } from './random.ts';
import { geometric, splitUnits } from './spot-desk.ts';

const RATE_DECIMALS = 4;
const MAKER_RATE = toUnits(parseFixed(FUTURES_FEE_RATES.maker), RATE_DECIMALS);
const TAKER_RATE = toUnits(parseFixed(FUTURES_FEE_RATES.taker), RATE_DECIMALS);
const LIQUIDATION_RATE = toUnits(parseFixed(FUTURES_FEE_RATES.liquidation), RATE_DECIMALS);
/** Funding rates are in millionths. */
const FUNDING_RATE_DECIMALS = 6;
/** A position is force-liquidated once unrealized losses exceed this share of the collateral. */
const LIQUIDATION_LOSS_SHARE = 0.4;
const MAX_ORDER_SPAN_MS = 20 * 60_000;
const HOUR_MS = 3_600_000;

interface ContractBook {
  spec: ContractSpec;
  index: number;
  asset: MarketAsset;
  minUnits: number;
  /** Contracts per size unit (the order's `contracts` field is size / contract_val). */
  contractsPerUnit: bigint;
}

interface PlannedFill {
  units: number;
  ticks: number;
  t: number;
  maker: boolean;
}

interface LiveOrder {
  book: ContractBook;
  slot: number;
  direction: FuturesDirection;
  liquidation: boolean;
  orderId: bigint;
  wire: FuturesOrderWire;
  fills: PlannedFill[];
  sizeUnits: bigint;
  filledUnits: bigint;
  filledValueUnits: bigint;
  fee: bigint;
  pnl: bigint;
}

type OrderKind = 'ioc' | 'fok' | 'normal' | 'postOnly';

/** Options of {@link FuturesDesk}. */
export interface FuturesDeskOptions {
  rng: Rng;
  market: Market;
  ledger: FuturesLedger;
  /** The account's futures id space (orders, trades, positions). */
  ids: IdAllocator;
  schedule: (t: number, action: () => void) => void;
}

/** Places futures orders, books fills and funding, liquidates. */
export class FuturesDesk {
  /** Every fill, ascending by t. */
  readonly fills: Array<Timed<FuturesFillWire>> = [];
  /** Every order (any status), ascending by createTime. */
  readonly orders: Array<Timed<FuturesOrderWire>> = [];
  private readonly books: ContractBook[];
  private readonly bySymbol = new Map<string, ContractBook>();
  /** Contracts left alone by regular orders while an over-leveraged bet on them waits for its liquidation. */
  private readonly pinned = new Set<ContractBook>();

  constructor(private readonly o: FuturesDeskOptions) {
    this.books = CONTRACTS.map((spec, index) => {
      const book: ContractBook = {
        spec,
        index,
        asset: spec.base as MarketAsset,
        minUnits: Number(toUnits(parseFixed(spec.minOrderSize), spec.sizeDecimals)),
        contractsPerUnit: fromUnits(1, spec.sizeDecimals) / parseFixed(spec.contractVal),
      };
      this.bySymbol.set(spec.symbol, book);
      return book;
    });
  }

  /** Collateral not committed as margin nor lost in open positions at t (fixed point, >= 0). */
  freeCollateral(t: number): bigint {
    const { amount, margin, unrealized } = this.exposure(t);
    const free = amount - margin + Math.min(0, unrealized);
    return free <= 0 ? 0n : fromUnits(Math.floor(free * 100), 2);
  }

  /**
   * A regular order: open a position, add to it, reduce it or close it. Returns false when
   * nothing was placed (too little collateral, nothing to close).
   */
  placeOrder(t: number, symbol: string): boolean {
    const { rng } = this.o;
    const book = this.book(symbol);
    if (this.pinned.has(book)) return false;
    const long = this.position(book, 'LONG');
    const short = this.position(book, 'SHORT');
    const existing = long !== undefined && short !== undefined ? (rng.chance(0.5) ? long : short) : (long ?? short);
    if (existing === undefined || rng.chance(0.12)) {
      const side = existing?.side ?? (rng.chance(0.55) ? 'LONG' : 'SHORT');
      // A few reckless bets: the positions most likely to end in a forced liquidation.
      const leverage = rng.chance(0.04) ? rng.range(3, 5) : rng.range(0.2, 1.2);
      return this.open(t, book, side, leverage, this.pickKind(), 1 + geometric(rng, 0.5, 9));
    }
    const r = rng.float();
    if (r < 0.2) return this.open(t, book, existing.side, rng.range(0.1, 0.6), this.pickKind(), 1 + geometric(rng, 0.5, 9));
    const units = toUnits(existing.size, book.spec.sizeDecimals);
    const closeUnits = r < 0.5 ? BigInt(Math.floor(Number(units) * rng.range(0.2, 0.7))) : units;
    if (closeUnits <= 0n) return false;
    return this.close(t, book, existing.side, Number(closeUnits), this.pickKind(), 1 + geometric(rng, 0.5, 9), false);
  }

  /** One fill exactly at t (month-boundary records): a small close if a position exists, else a minimal open. */
  placeSingleFill(t: number, symbol: string): boolean {
    const book = this.book(symbol);
    const existing = this.position(book, 'LONG') ?? this.position(book, 'SHORT');
    if (existing !== undefined) return this.close(t, book, existing.side, 1, 'ioc', 1, false, true);
    return this.submit(t, book, 'OPEN_LONG', book.minUnits, 1, 'ioc', false, true);
  }

  /**
   * Three market orders in the same millisecond on one contract, 38-60 fills each (at most 80
   * per order in that ms), so more than 100 fills share one ms.
   */
  placeBurst(t: number, symbol: string): void {
    const { rng } = this.o;
    const book = this.book(symbol);
    for (const count of [rng.int(38, 61), rng.int(38, 61), rng.int(30, 61)]) {
      this.submit(t, book, 'OPEN_LONG', count * rng.int(1, 3), count, 'ioc', false, true);
    }
  }

  /**
   * A deliberately over-leveraged position that the market then runs over: opened on the side
   * the next six hours of the price path go against, at up to 50x the collateral, and
   * force-liquidated at the worst moment (unless the hourly risk check gets to it first). It
   * makes sure every account has at least one forced liquidation.
   */
  placeOverleveragedBet(t: number, symbol: string): void {
    const { rng, market } = this.o;
    const book = this.book(symbol);
    const start = market.usdPrice(book.asset, t);
    let drop = { move: 0, at: t + HOUR_MS };
    let rise = { move: 0, at: t + HOUR_MS };
    for (let minutes = 10; minutes <= 360; minutes += 10) {
      const at = t + minutes * 60_000;
      const move = market.usdPrice(book.asset, at) / start - 1;
      if (-move > drop.move) drop = { move: -move, at };
      if (move > rise.move) rise = { move, at };
    }
    const long = drop.move >= rise.move;
    const worst = long ? drop : rise;
    const amount = toApproxNumber(collateralAmount(this.o.ledger.state));
    const notional = Math.min((0.6 * amount) / Math.max(worst.move, 0.002), 50 * amount);
    const units = Math.max(book.minUnits, Math.floor((notional / start) * 10 ** book.spec.sizeDecimals));
    const slot = book.index * 2 + (long ? 0 : 1);
    this.pinned.add(book);
    this.submit(t, book, long ? 'OPEN_LONG' : 'OPEN_SHORT', units, 1 + geometric(rng, 0.5, 3), 'ioc', false, true);
    const at = worst.at + rng.int(50, 50_000);
    this.o.schedule(at, () => {
      this.pinned.delete(book);
      this.liquidate(slot, at);
    });
  }

  /** Funding settlement at t (a funding time) for every open position. */
  settleFunding(t: number): void {
    const { market, ledger } = this.o;
    for (const p of ledger.state.positions) {
      if (p === undefined) continue;
      const book = this.books[p.slot >> 1] as ContractBook;
      const rate = market.fundingRateMicros(book.spec.symbol, t);
      if (rate === 0) continue;
      const ticks = this.ticks(book, market.usdPrice(book.asset, t));
      const units = toUnits(p.size, book.spec.sizeDecimals);
      const magnitude = roundTo(fromUnits(units * BigInt(ticks) * BigInt(Math.abs(rate)), book.spec.sizeDecimals + book.spec.priceDecimals + FUNDING_RATE_DECIMALS), FUTURES_AMOUNT_DECIMALS);
      if (magnitude === 0n) continue;
      // Longs pay shorts when the rate is positive.
      const pays = (p.side === 'LONG') === rate > 0;
      ledger.record({ t, kind: 'funding', slot: p.slot, amount: pays ? magnitude : -magnitude });
    }
  }

  /**
   * Checks open losses; when they exceed the threshold share of the collateral, the worst
   * position is force-liquidated a few seconds later (the liquidation engine's own timing).
   */
  checkRisk(t: number): void {
    const { amount, unrealized } = this.exposure(t);
    if (amount <= 0 || unrealized >= -LIQUIDATION_LOSS_SHARE * amount) return;
    let worst: PositionState | undefined;
    let worstPnl = 0;
    for (const p of this.o.ledger.state.positions) {
      if (p === undefined) continue;
      const pnl = this.unrealized(p, t);
      if (pnl < worstPnl) {
        worst = p;
        worstPnl = pnl;
      }
    }
    if (worst === undefined) return;
    const slot = worst.slot;
    const at = t + this.o.rng.int(50, 50_000);
    this.o.schedule(at, () => this.liquidate(slot, at));
  }

  /** Closes every position with market orders (before a long quiet period). */
  flatten(t: number): void {
    for (const p of this.o.ledger.state.positions) {
      if (p === undefined) continue;
      const book = this.books[p.slot >> 1] as ContractBook;
      this.close(t, book, p.side, Number(toUnits(p.size, book.spec.sizeDecimals)), 'ioc', 1 + geometric(this.o.rng, 0.4, 2), false);
    }
  }

  /**
   * An order still working at the end of the history (status open, pending or untriggered),
   * priced beyond every price the market reaches before endMs, so it never fills.
   */
  placeOpenOrder(t: number, symbol: string, endMs: number): void {
    const { rng, market, ids } = this.o;
    const book = this.book(symbol);
    const range = market.usdRange(book.asset, t, endMs);
    const long = rng.chance(0.5);
    const price = long ? range.min * rng.range(0.75, 0.93) : range.max * rng.range(1.07, 1.3);
    const units = BigInt(book.minUnits * rng.int(1, 6));
    const status = rng.pick(['open', 'open', 'pending', 'untriggered'] as const);
    this.orders.push({
      t,
      wire: this.orderWire(t, ids.next(t), book, long ? 'open_long' : 'open_short', units, formatFixed(fromUnits(this.ticks(book, price), book.spec.priceDecimals), book.spec.priceDecimals), 'normal', status),
    });
  }

  private pickKind(): OrderKind {
    const r = this.o.rng.float();
    return r < 0.4 ? 'ioc' : r < 0.8 ? 'normal' : r < 0.92 ? 'postOnly' : 'fok';
  }

  private open(t: number, book: ContractBook, side: 'LONG' | 'SHORT', leverage: number, kind: OrderKind, count: number): boolean {
    const free = toApproxNumber(this.freeCollateral(t));
    if (free < 5) return false;
    const price = this.o.market.usdPrice(book.asset, t);
    const units = Math.floor(((free * leverage) / price) * 10 ** book.spec.sizeDecimals);
    if (units < book.minUnits) return false;
    return this.submit(t, book, side === 'LONG' ? 'OPEN_LONG' : 'OPEN_SHORT', units, count, kind, false, false);
  }

  private liquidate(slot: number, t: number): void {
    const p = this.o.ledger.state.positions[slot];
    if (p === undefined) return;
    const book = this.books[slot >> 1] as ContractBook;
    this.close(t, book, p.side, Number(toUnits(p.size, book.spec.sizeDecimals)), 'ioc', 1 + geometric(this.o.rng, 0.5, 3), true);
  }

  private close(t: number, book: ContractBook, side: 'LONG' | 'SHORT', units: number, kind: OrderKind, count: number, liquidation: boolean, instant = false): boolean {
    return this.submit(t, book, side === 'LONG' ? 'CLOSE_LONG' : 'CLOSE_SHORT', units, count, kind, liquidation, instant);
  }

  /** Plans an order's fills and schedules them; `instant` puts every fill at t itself. */
  private submit(t: number, book: ContractBook, direction: FuturesDirection, units: number, count: number, kind: OrderKind, liquidation: boolean, instant: boolean): boolean {
    const { rng, ids } = this.o;
    const spec = book.spec;
    const buying = direction === 'OPEN_LONG' || direction === 'CLOSE_SHORT';
    const taker = kind === 'ioc' || kind === 'fok' || liquidation;
    // Some resting orders are canceled before they fill completely, a few before they fill at all.
    const cancelAfter = !taker && !instant && rng.chance(0.1) ? rng.int(0, count) : count;
    const parts = splitUnits(rng, units, Math.min(count, units)).slice(0, cancelAfter);
    const fills: PlannedFill[] = [];
    let ticks = this.ticks(book, this.o.market.usdPrice(book.asset, t));
    let at = t;
    for (let i = 0; i < parts.length; i++) {
      if (i > 0) {
        // Buys walk up the book, sells down.
        const step = spec.priceEndStep * rng.int(0, 3);
        ticks = buying ? ticks + step : Math.max(spec.priceEndStep, ticks - step);
        if (!instant && at - t < MAX_ORDER_SPAN_MS) at += taker ? (rng.chance(0.7) ? 0 : rng.int(1, 4)) : rng.chance(0.3) ? 0 : rng.int(1, 120_000);
      } else if (!taker && !instant) {
        at += rng.int(0, 5_000);
      }
      fills.push({ units: parts[i] ?? 0, ticks, t: at, maker: !taker && (i > 0 || rng.chance(0.5)) });
    }
    const type = liquidation ? (direction === 'CLOSE_LONG' ? 'burst_liquidate_long' : 'burst_liquidate_short') : direction.toLowerCase();
    // Market (ioc) orders carry price 0 (samples/capi_v2_order_detail.DOC_EXAMPLE.json); a limit lies at or beyond the worst fill.
    const slack = spec.priceEndStep * rng.int(0, 4);
    const limitTicks = buying ? ticks + slack : Math.max(spec.priceEndStep, ticks - slack);
    const priceText = formatFixed(kind === 'ioc' ? 0n : fromUnits(limitTicks, spec.priceDecimals), spec.priceDecimals);
    const orderId = ids.next(t);
    const order: LiveOrder = {
      book,
      slot: book.index * 2 + (direction === 'OPEN_LONG' || direction === 'CLOSE_LONG' ? 0 : 1),
      direction,
      liquidation,
      orderId,
      wire: this.orderWire(t, orderId, book, type, BigInt(units), priceText, kind, fills.length === 0 ? 'canceled' : 'open'),
      fills,
      sizeUnits: BigInt(units),
      filledUnits: 0n,
      filledValueUnits: 0n,
      fee: 0n,
      pnl: 0n,
    };
    this.orders.push({ t, wire: order.wire });
    for (let i = 0; i < fills.length; i++) {
      const index = i;
      this.o.schedule((fills[i] as PlannedFill).t, () => this.fill(order, index));
    }
    return true;
  }

  /** Books one fill: the ledger event and the fill record; the last fill settles the order. */
  private fill(order: LiveOrder, index: number): void {
    const { ledger, ids } = this.o;
    const f = order.fills[index] as PlannedFill;
    const { spec } = order.book;
    const t = f.t;
    const opening = order.direction === 'OPEN_LONG' || order.direction === 'OPEN_SHORT';
    const position = ledger.state.positions[order.slot];
    let units = BigInt(f.units);
    const held = position === undefined ? 0n : toUnits(position.size, spec.sizeDecimals);
    // A close never exceeds the position (another order or a liquidation may have reduced it).
    if (!opening && units > held) units = held;
    if (units > 0n) {
      const valueUnits = units * BigInt(f.ticks);
      const valueDecimals = spec.sizeDecimals + spec.priceDecimals;
      const value = fromUnits(valueUnits, valueDecimals);
      const fee = fromUnits(valueUnits * (f.maker ? MAKER_RATE : TAKER_RATE), valueDecimals + RATE_DECIMALS);
      const liquidateFee = order.liquidation ? fromUnits(valueUnits * LIQUIDATION_RATE, valueDecimals + RATE_DECIMALS) : 0n;
      let pnl = 0n;
      let closedOpenValue = 0n;
      let closedOpenFee = 0n;
      if (!opening && position !== undefined) {
        closedOpenValue = units === held ? position.openValue : mulDivFloor(position.openValue, units, held, FUTURES_AMOUNT_DECIMALS);
        closedOpenFee = units === held ? position.openFee : mulDivFloor(position.openFee, units, held, FUTURES_AMOUNT_DECIMALS);
        pnl = order.direction === 'CLOSE_LONG' ? value - closedOpenValue : closedOpenValue - value;
      }
      const positionId = position?.id ?? ids.next(t).toString();
      const size = fromUnits(units, spec.sizeDecimals);
      ledger.record({ t, kind: 'fill', slot: order.slot, direction: order.direction, size, value, fee, liquidateFee, pnl, closedOpenValue, closedOpenFee, positionId });
      const long = order.slot % 2 === 0;
      this.fills.push({
        t,
        wire: {
          tradeId: ids.next(t),
          orderId: order.orderId,
          symbol: spec.symbol,
          marginMode: 'SHARED',
          separatedMode: 'COMBINED',
          positionSide: long ? 'LONG' : 'SHORT',
          orderSide: order.direction === 'OPEN_LONG' || order.direction === 'CLOSE_SHORT' ? 'BUY' : 'SELL',
          fillSize: formatFixed(size, spec.sizeDecimals),
          fillValue: formatFixed(value, FUTURES_AMOUNT_DECIMALS),
          fillFee: formatFixed(fee, FUTURES_AMOUNT_DECIMALS),
          liquidateFee: order.liquidation ? formatFixed(liquidateFee, FUTURES_AMOUNT_DECIMALS) : '0',
          realizePnl: opening ? '0' : formatFixed(pnl, FUTURES_AMOUNT_DECIMALS),
          direction: order.direction,
          liquidateType: order.liquidation ? 'FORCE_LIQUIDATE' : '',
          legacyOrdeDirection: order.direction,
          createdTime: t,
        },
      });
      order.filledUnits += units;
      order.filledValueUnits += valueUnits;
      order.fee += fee;
      order.pnl += pnl;
    }
    if (index === order.fills.length - 1) this.settleOrder(order);
  }

  private settleOrder(order: LiveOrder): void {
    const { spec } = order.book;
    const w = order.wire;
    w.filled_qty = formatFixed(fromUnits(order.filledUnits, spec.sizeDecimals), spec.sizeDecimals);
    w.fee = formatFixed(order.fee, FUTURES_AMOUNT_DECIMALS);
    if (order.filledUnits > 0n) {
      const avgTicks = (order.filledValueUnits * 2n + order.filledUnits) / (order.filledUnits * 2n);
      w.price_avg = formatFixed(fromUnits(avgTicks, spec.priceDecimals), spec.priceDecimals);
    }
    w.status = order.filledUnits === order.sizeUnits ? 'filled' : 'canceled';
    w.totalProfits = order.direction.startsWith('OPEN') ? '0' : formatFixed(order.pnl, FUTURES_AMOUNT_DECIMALS);
    w.filledQtyContracts = Number(order.filledUnits * order.book.contractsPerUnit);
  }

  private orderWire(t: number, orderId: bigint, book: ContractBook, type: string, units: bigint, price: string, kind: OrderKind, status: string): FuturesOrderWire {
    const { spec } = book;
    return {
      symbol: spec.symbol,
      size: formatFixed(fromUnits(units, spec.sizeDecimals), spec.sizeDecimals),
      client_oid: `${t}_${this.o.rng.int(1, 1000)}`,
      createTime: String(t),
      filled_qty: formatFixed(0n, spec.sizeDecimals),
      fee: '0',
      order_id: orderId.toString(),
      price,
      price_avg: '0',
      status,
      type,
      order_type: kind,
      totalProfits: '0',
      contracts: Number(units * book.contractsPerUnit),
      // Not in the field table, sent by the real exchange (samples/capi_v2_order_detail.DOC_EXAMPLE.json).
      filledQtyContracts: 0,
    };
  }

  /** Margin in use, unrealized PnL and collateral at t, as numbers (for decisions only). */
  private exposure(t: number): { amount: number; margin: number; unrealized: number } {
    const state = this.o.ledger.state;
    let margin = 0;
    let unrealized = 0;
    for (const p of state.positions) {
      if (p === undefined) continue;
      margin += toApproxNumber(p.openValue) / FUTURES_LEVERAGE;
      unrealized += this.unrealized(p, t);
    }
    return { amount: toApproxNumber(collateralAmount(state)), margin, unrealized };
  }

  private unrealized(p: PositionState, t: number): number {
    const book = this.books[p.slot >> 1] as ContractBook;
    const value = toApproxNumber(p.size) * this.o.market.usdPrice(book.asset, t);
    const open = toApproxNumber(p.openValue);
    return p.side === 'LONG' ? value - open : open - value;
  }

  private position(book: ContractBook, side: 'LONG' | 'SHORT'): PositionState | undefined {
    return this.o.ledger.state.positions[book.index * 2 + (side === 'LONG' ? 0 : 1)];
  }

  /** A price as an integer number of ticks, on the contract's priceEndStep grid. */
  private ticks(book: ContractBook, price: number): number {
    const step = book.spec.priceEndStep;
    return Math.max(step, Math.round((price * 10 ** book.spec.priceDecimals) / step) * step);
  }

  private book(symbol: string): ContractBook {
    const book = this.bySymbol.get(symbol);
    if (book === undefined) throw new RangeError(`unknown contract ${symbol}`);
    return book;
  }
}
