/**
 * Stateful spot cost methods (LIFO, HIFO, the UK's share pooling), exact on the integer units of
 * int_spot_trades: quantities in 1e-18, money in 1e-12, BigInt throughout. Shares of an amount are
 * read off its cumulative function F(x) = round(amount * x / units) (half away from zero, F(units)
 * = amount), as exact_arith.sql's exact_share does, so the pieces of a lot or a sell consumed in full
 * add up to its amount exactly. What is read and written lives in int_spot_lot_segments.ts.
 */

/** A cost method computed here (fifo and average are set-based SQL models). */
export type LotMethod = 'lifo' | 'hifo' | 'uk';
export const LOT_METHODS: readonly LotMethod[] = ['lifo', 'hifo', 'uk'];
/**
 * A method matchLots runs: those above, and fifo, which the books' coin lots use (int_coin_lots);
 * the spot symbol models compute fifo in SQL (int_spot_fifo_segments).
 */
export type MatchMethod = LotMethod | 'fifo';

/** One event of int_spot_trades, in cost-basis order within its (pool, symbol). */
export interface TradeEvent {
  seq: bigint;
  /** An opening lot is a buy placed before every fill. */
  isOpening: boolean;
  side: 'buy' | 'sell';
  /** Reporting-zone calendar day, as days since 1970-01-01 (the UK rules count calendar days). */
  day: number;
  /** Units a buy added (quantity - fee) and their cost. */
  unitsIn: bigint;
  cost: bigint;
  /** Units a sell disposed of and its proceeds (net of its fee). */
  quantityOut: bigint;
  proceeds: bigint;
  /** When it happened, µs since the epoch (null for an opening lot); the matching does not read it. */
  at?: bigint | null;
}

/**
 * How a segment's units were identified: with one lot (lifo, hifo), with acquisitions of the same
 * day or of the 30 days after (uk), with the section 104 pool (uk), or with nothing known.
 */
export type MatchRule = 'lot' | 'same_day' | 'thirty_day' | 'pool' | 'unmatched';

/** Units of one sell identified with one lot (lotSeq null: the pool, or nothing known). */
export interface Segment {
  sellSeq: bigint;
  rule: MatchRule;
  lotSeq: bigint | null;
  quantity: bigint;
  /** null where unmatched: no cost is known, never a silent zero. */
  cost: bigint | null;
  proceeds: bigint;
}

/** round(m * n / d), halves away from zero, for d > 0. */
export function shareOf(m: bigint, n: bigint, d: bigint): bigint {
  if (n === d) return m;
  const product = m * n;
  const magnitude = product < 0n ? -product : product;
  const rounded = (2n * magnitude + d) / (2n * d);
  return product < 0n ? -rounded : rounded;
}

/**
 * An amount spread over units and taken from in order (a lot's cost, a sell's proceeds, a day's
 * acquisitions): take(t) returns F(taken + t) - F(taken). Pieces name whose units they are (the
 * buy fills of a day's acquisition), so a take can be attributed piece by piece.
 */
class Spread {
  private taken = 0n;
  private piece = 0;
  private pieceTaken = 0n;

  constructor(
    readonly units: bigint,
    readonly amount: bigint,
    readonly pieces: readonly { seq: bigint | null; units: bigint }[],
  ) {}

  get left(): bigint {
    return this.units - this.taken;
  }

  /** Units left in the current piece (pieces of no units are skipped). */
  currentPiece(): { seq: bigint | null; left: bigint } {
    while (this.piece < this.pieces.length - 1 && this.pieceTaken >= this.pieces[this.piece]!.units) {
      this.piece += 1;
      this.pieceTaken = 0n;
    }
    const piece = this.pieces[this.piece]!;
    return { seq: piece.seq, left: piece.units - this.pieceTaken };
  }

  /** Moves the start on by `units` (a day's acquisition: the 30-day rule takes after the same-day part). */
  skip(units: bigint): void {
    while (units > 0n) {
      const { left } = this.currentPiece();
      const step = left < units ? left : units;
      this.pieceTaken += step;
      this.taken += step;
      units -= step;
    }
  }

  take(units: bigint): bigint {
    const before = shareOf(this.amount, this.taken, this.units);
    this.taken += units;
    this.pieceTaken += units;
    return shareOf(this.amount, this.taken, this.units) - before;
  }
}

/** Where segments go, as they are found (an appender's row, or an array). */
export type SegmentSink = Pick<Segment[], 'push'>;

/**
 * Where a match starts and where it saves its state, so that a later build can resume it
 * (int_spot_lot_segments' incremental step). A state is saved only between two days of events,
 * before the first event of the later day (`nextSeq`): it holds what the events before it left
 * (open lots; uk's pool and the units of later days' acquisitions already taken by 30-day matches
 * of earlier disposals), as JSON with every integer as a decimal string, so it is exact.
 */
export interface MatchOptions {
  /** The state to start from (one saved by onCheckpoint); the events then start at its nextSeq. @default nothing held */
  from?: string;
  /** Whether to save the state between two consecutive days that have events (days since 1970-01-01). @default never */
  isCheckpoint?: (previousDay: number, nextDay: number) => boolean;
  /** Receives each state saved: the state before event `nextSeq`, the first of day `nextDay` (the days isCheckpoint was asked about). */
  onCheckpoint?: (nextSeq: bigint, state: string, previousDay: number, nextDay: number) => void;
}

/** A sell being disposed of: its proceeds spread over its quantity. */
interface Disposal {
  seq: bigint;
  spread: Spread;
}

/**
 * Takes `units` from `source` for the disposals in order (each its proceeds along its own
 * quantity), one segment per (disposal, source piece) pair; `units` is at most what both hold.
 */
function pair(disposals: readonly Disposal[], source: Spread, units: bigint, rule: MatchRule, out: SegmentSink): void {
  let wanted = units;
  for (const disposal of disposals) {
    while (wanted > 0n && disposal.spread.left > 0n) {
      const piece = source.currentPiece();
      let step = piece.left < disposal.spread.left ? piece.left : disposal.spread.left;
      if (wanted < step) step = wanted;
      out.push({ sellSeq: disposal.seq, rule, lotSeq: piece.seq, quantity: step, cost: source.take(step), proceeds: disposal.spread.take(step) });
      wanted -= step;
    }
    if (wanted === 0n) return;
  }
}

/** What a sell could not be matched with: its remaining units and proceeds, no cost. */
function unmatched(disposals: readonly Disposal[], out: SegmentSink): void {
  for (const disposal of disposals) {
    const left = disposal.spread.left;
    if (left > 0n) out.push({ sellSeq: disposal.seq, rule: 'unmatched', lotSeq: null, quantity: left, cost: null, proceeds: disposal.spread.take(left) });
  }
}

const disposalOf = (event: TradeEvent): Disposal => ({ seq: event.seq, spread: new Spread(event.quantityOut, event.proceeds, [{ seq: event.seq, units: event.quantityOut }]) });
const lotOf = (event: TradeEvent): Spread => new Spread(event.unitsIn, event.cost, [{ seq: event.seq, units: event.unitsIn }]);

/**
 * Puts the segments of one (pool, symbol)'s events under `method` into `out`, sells in order.
 * Resumed from a saved state (options.from) on the events after it, it puts exactly the segments
 * and saves exactly the states that a match over all the events would have put and saved there.
 */
export function matchLots(method: MatchMethod, events: readonly TradeEvent[], out: SegmentSink, options: MatchOptions = {}): void {
  const steps = matchLotsSteps(method, events, out, options);
  while (steps.next().done !== true);
}

/**
 * matchLots letting the event loop run between its steps (matchLotsSteps): a signal (SIGTERM,
 * Ctrl-C) is acted on within a step rather than at the end of a partition of millions of events.
 */
export async function matchLotsYielding(method: MatchMethod, events: readonly TradeEvent[], out: SegmentSink, options: MatchOptions = {}): Promise<void> {
  const steps = matchLotsSteps(method, events, out, options);
  while (steps.next().done !== true) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** Events (uk: events grouped into days, then days' events matched) between two steps of matchLotsSteps. */
export const EVENTS_PER_STEP = 65_536;

/**
 * matchLots one step at a time: it pauses after every EVENTS_PER_STEP events, so that a caller
 * can let the event loop run between steps (a signal is then acted on within a step, not at the
 * end of a partition of millions of events).
 */
export function* matchLotsSteps(method: MatchMethod, events: readonly TradeEvent[], out: SegmentSink, options: MatchOptions = {}): Generator<void, void, void> {
  if (method === 'uk') yield* matchUk(events, out, options);
  else yield* matchStack(method, events, out, options);
}

/** A lot's Spread as [seq, units, cost, units taken], decimal strings. */
type SavedLot = [string, string, string, string];

const saveLot = (lot: Spread): SavedLot => [String(lot.pieces[0]!.seq), String(lot.units), String(lot.amount), String(lot.units - lot.left)];

function restoreLot([seq, units, cost, taken]: SavedLot): Spread {
  const lot = new Spread(BigInt(units), BigInt(cost), [{ seq: BigInt(seq), units: BigInt(units) }]);
  lot.skip(BigInt(taken));
  return lot;
}

/**
 * LIFO takes from the latest lot still holding units; HIFO from the lot of highest unit cost
 * (cost / units), the earliest of equal ones; FIFO from the earliest. Units beyond the inventory
 * are unmatched.
 */
function* matchStack(method: 'lifo' | 'hifo' | 'fifo', events: readonly TradeEvent[], out: SegmentSink, options: MatchOptions): Generator<void, void, void> {
  const lots: LotHeap | LotQueue | Spread[] = method === 'lifo' ? [] : method === 'fifo' ? new LotQueue() : new LotHeap();
  // The open lots in the order they are held (a stack bottom up, a heap's array), so that a
  // resumed match holds them exactly as the whole one did.
  if (options.from !== undefined) for (const saved of (JSON.parse(options.from) as { lots: SavedLot[] }).lots) lots.push(restoreLot(saved));
  let previousDay: number | undefined;
  let sinceStep = 0;
  for (const event of events) {
    if (++sinceStep === EVENTS_PER_STEP) {
      sinceStep = 0;
      yield;
    }
    if (previousDay !== undefined && event.day !== previousDay && options.isCheckpoint?.(previousDay, event.day) === true) {
      options.onCheckpoint?.(event.seq, JSON.stringify({ lots: (Array.isArray(lots) ? lots : lots.held()).map(saveLot) }), previousDay, event.day);
    }
    previousDay = event.day;
    if (event.side === 'buy') {
      if (event.unitsIn > 0n) lots.push(lotOf(event));
      continue;
    }
    if (event.quantityOut <= 0n) continue;
    const disposal = disposalOf(event);
    for (;;) {
      const lot = Array.isArray(lots) ? lots.at(-1) : lots.peek();
      if (lot === undefined || disposal.spread.left === 0n) break;
      pair([disposal], lot, lot.left < disposal.spread.left ? lot.left : disposal.spread.left, 'lot', out);
      if (lot.left === 0n) lots.pop();
    }
    unmatched([disposal], out);
  }
}

/** Lots in the order they were acquired, taken from the front. */
class LotQueue {
  private readonly items: Spread[] = [];
  private head = 0;

  push(lot: Spread): void {
    this.items.push(lot);
  }

  peek(): Spread | undefined {
    return this.items[this.head];
  }

  /** The lots still held, earliest first. */
  held(): Spread[] {
    return this.items.slice(this.head);
  }

  pop(): void {
    this.head += 1;
    // Drops the consumed front now and then, so a long history does not keep every lot.
    if (this.head > 4096 && this.head * 2 > this.items.length) {
      this.items.splice(0, this.head);
      this.head = 0;
    }
  }
}

/** A max-heap of lots by unit cost (cost / units), ties to the earliest (lowest seq). */
class LotHeap {
  private readonly items: { lot: Spread; seq: bigint }[] = [];

  push(lot: Spread): void {
    const seq = lot.currentPiece().seq!;
    this.items.push({ lot, seq });
    let index = this.items.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!this.before(index, parent)) break;
      [this.items[index], this.items[parent]] = [this.items[parent]!, this.items[index]!];
      index = parent;
    }
  }

  peek(): Spread | undefined {
    return this.items[0]?.lot;
  }

  /** The lots in the heap's array order: pushed back in this order, they make the same array. */
  held(): Spread[] {
    return this.items.map((item) => item.lot);
  }

  pop(): void {
    const last = this.items.pop();
    if (last === undefined || this.items.length === 0) return;
    this.items[0] = last;
    let index = 0;
    for (;;) {
      const left = 2 * index + 1;
      const right = left + 1;
      let best = index;
      if (left < this.items.length && this.before(left, best)) best = left;
      if (right < this.items.length && this.before(right, best)) best = right;
      if (best === index) return;
      [this.items[index], this.items[best]] = [this.items[best]!, this.items[index]!];
      index = best;
    }
  }

  /** Whether item a comes out before item b: a higher unit cost, or the same and earlier. */
  private before(a: number, b: number): boolean {
    const x = this.items[a]!;
    const y = this.items[b]!;
    const difference = x.lot.amount * y.lot.units - y.lot.amount * x.lot.units;
    return difference > 0n || (difference === 0n && x.seq < y.seq);
  }
}

/** The events of one reporting-zone day: its acquisitions as one, its disposals in order. */
interface UkDay {
  day: number;
  /** Its first event. */
  firstSeq: bigint;
  acquisition: Spread;
  disposals: Disposal[];
  disposed: bigint;
  /** Units of the acquisition the same-day rule takes (the first ones). */
  sameDay: bigint;
  /** Its units after the same-day part, taken by the 30-day rule for earlier disposals (created on first use). */
  later?: Spread;
}

/**
 * HMRC share pooling (Cryptoassets Manual CRYPTO22200+, TCGA 1992 s105, s106A): per day, all
 * acquisitions are one acquisition and all disposals one disposal. A disposal is identified first
 * with the same day's acquisition, then with acquisitions of the 30 days after it (earliest day
 * first; each such day's acquisition first serves its own day's disposal), then with the section
 * 104 pool at its average cost; what the pool lacks is unmatched. An acquisition joins the pool on
 * its day with what those rules left of it; an opening position is the pool at the start.
 * Per-fill detail splits the day's single disposal in fill order (the first sells of the day take
 * the same-day match, then the 30-day matches, then the pool), so the day's totals are HMRC's.
 */
function* matchUk(events: readonly TradeEvent[], out: SegmentSink, options: MatchOptions): Generator<void, void, void> {
  const saved = options.from === undefined ? undefined : (JSON.parse(options.from) as UkState);
  const days: UkDay[] = [];
  let poolUnits = saved === undefined ? 0n : BigInt(saved.pool[0]);
  let poolCost = saved === undefined ? 0n : BigInt(saved.pool[1]);
  let stepStart = 0;
  for (let index = 0; index < events.length; ) {
    if (index - stepStart >= EVENTS_PER_STEP) {
      stepStart = index;
      yield;
    }
    const day = events[index]!.day;
    const firstSeq = events[index]!.seq;
    const buys: TradeEvent[] = [];
    const disposals: Disposal[] = [];
    let disposed = 0n;
    for (; index < events.length && events[index]!.day === day; index += 1) {
      const event = events[index]!;
      if (event.isOpening) {
        poolUnits += event.unitsIn;
        poolCost += event.cost;
      } else if (event.side === 'buy') {
        if (event.unitsIn > 0n) buys.push(event);
      } else if (event.quantityOut > 0n) {
        disposals.push(disposalOf(event));
        disposed += event.quantityOut;
      }
    }
    const units = buys.reduce((sum, buy) => sum + buy.unitsIn, 0n);
    const acquisition = new Spread(units, buys.reduce((sum, buy) => sum + buy.cost, 0n), buys.length === 0 ? [{ seq: null, units: 0n }] : buys.map((buy) => ({ seq: buy.seq, units: buy.unitsIn })));
    days.push({ day, firstSeq, acquisition, disposals, disposed, sameDay: units < disposed ? units : disposed });
  }
  // What disposals before the saved state took of these days' acquisitions by the 30-day rule.
  for (const [day, taken] of saved?.later ?? []) {
    const target = days.find((candidate) => candidate.day === day);
    if (target === undefined) throw new Error(`uk lot matching: the saved state names day ${day}, which has no events to resume on`);
    laterPart(target).skip(BigInt(taken));
  }

  let sinceStep = 0;
  for (let index = 0; index < days.length; index += 1) {
    const today = days[index]!;
    // A day's work follows its disposals (each reaches at most 31 days' acquisitions).
    sinceStep += today.disposals.length + 1;
    if (sinceStep >= EVENTS_PER_STEP) {
      sinceStep = 0;
      yield;
    }
    if (index > 0 && options.isCheckpoint?.(days[index - 1]!.day, today.day) === true) {
      const later: [number, string][] = [];
      // Disposals before today reach the acquisitions of the next 29 days at most.
      for (let ahead = index; ahead < days.length && days[ahead]!.day < today.day + 30; ahead += 1) {
        const next = days[ahead]!;
        const taken = next.later === undefined ? 0n : next.acquisition.units - next.later.left - next.sameDay;
        if (taken > 0n) later.push([next.day, String(taken)]);
      }
      options.onCheckpoint?.(today.firstSeq, JSON.stringify({ pool: [String(poolUnits), String(poolCost)], later } satisfies UkState), days[index - 1]!.day, today.day);
    }
    // What the same-day rule and earlier disposals' 30-day matches left of today's acquisition joins the pool.
    const later = laterPart(today);
    if (later.left > 0n) {
      poolUnits += later.left;
      poolCost += later.take(later.left);
    }
    if (today.disposed === 0n) continue;
    pair(today.disposals, today.acquisition, today.sameDay, 'same_day', out);
    let wanted = today.disposed - today.sameDay;
    for (let next = index + 1; wanted > 0n && next < days.length && days[next]!.day <= today.day + 30; next += 1) {
      const source = laterPart(days[next]!);
      const step = source.left < wanted ? source.left : wanted;
      if (step > 0n) pair(today.disposals, source, step, 'thirty_day', out);
      wanted -= step;
    }
    const fromPool = poolUnits < wanted ? poolUnits : wanted;
    if (fromPool > 0n) {
      const cost = shareOf(poolCost, fromPool, poolUnits);
      pair(today.disposals, new Spread(fromPool, cost, [{ seq: null, units: fromPool }]), fromPool, 'pool', out);
      poolUnits -= fromPool;
      poolCost -= cost;
    }
    unmatched(today.disposals, out);
  }
}

/**
 * uk's state before a day: the section 104 pool (units, cost) and, per later day (at most 30 days
 * on) whose acquisition earlier disposals took from by the 30-day rule, the units they took.
 */
interface UkState {
  pool: [string, string];
  later: [number, string][];
}

/** A day's acquisition after its same-day part, as the 30-day rule and the pool take it. */
function laterPart(day: UkDay): Spread {
  if (day.later === undefined) {
    // A second view of the same units and cost, starting after the same-day part (which the
    // same-day rule takes later through `acquisition`): both read one cumulative cost function.
    const view = new Spread(day.acquisition.units, day.acquisition.amount, day.acquisition.pieces);
    view.skip(day.sameDay);
    day.later = view;
  }
  return day.later;
}
