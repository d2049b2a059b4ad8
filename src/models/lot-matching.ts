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
  /** The sell's instant, as its event gave it (TradeEvent.at; undefined where the event had none). */
  sellAt?: bigint | null;
}

/** round(m * n / d), halves away from zero, for d > 0. */
export function shareOf(m: bigint, n: bigint, d: bigint): bigint {
  // (The two ends, without a bigint made: a lot's first take starts from none of it, a last one
  // ends at all of it.)
  if (n === d) return m;
  if (n === 0n) return 0n;
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

/**
 * One buy's lot (fifo, lifo, hifo): a Spread of one piece, in one object of three BigInts and the
 * units taken, not four objects: a long history holds every open lot of lifo and hifo (hundreds of
 * thousands per method on the benchmark's longer histories); 146 bytes a lot, 258 to 298 as a
 * Spread (a million open lots through one matcher, heap used after a full GC).
 */
class Lot {
  /** lifo and hifo: the units taken when the base state was made (CheckpointLots; undefined: acquired since). */
  baseTaken: bigint | undefined = undefined;
  private taken = 0n;

  constructor(
    readonly seq: bigint,
    readonly units: bigint,
    readonly amount: bigint,
  ) {}

  get left(): bigint {
    return this.units - this.taken;
  }

  currentPiece(): { seq: bigint; left: bigint } {
    return { seq: this.seq, left: this.units - this.taken };
  }

  skip(units: bigint): void {
    this.taken += units;
  }

  take(units: bigint): bigint {
    const before = shareOf(this.amount, this.taken, this.units);
    this.taken += units;
    return shareOf(this.amount, this.taken, this.units) - before;
  }
}

/** What pair() takes units from: a Spread, or a Lot. */
type Source = Pick<Spread, 'currentPiece' | 'take'>;

/** Where segments go, as they are found (an appender's row, or an array). */
export type SegmentSink = Pick<Segment[], 'push'>;

/**
 * Where a match starts and where it saves its state, so that a later build can resume it
 * (int_spot_lot_segments' incremental step). A state is saved only between two days of events,
 * before the first event of the later day (`nextSeq`), and after the last event (onEnd, where the
 * next night's events are matched from): it holds what the events before it left
 * (open lots; uk's pool and the units of later days' acquisitions already taken by 30-day matches
 * of earlier disposals), as JSON with every integer as a decimal string, so it is exact.
 */
export interface MatchOptions {
  /** The state to start from (one saved by onCheckpoint); the events then start at its nextSeq. @default nothing held */
  from?: string;
  /**
   * lifo and hifo: the open lots to start from (in any order), instead of `from`; those with a
   * baseTaken, and `removed` (the base's lots no longer held), say what the base state was.
   */
  fromLots?: { held: readonly HeldLot[]; removed: readonly bigint[] };
  /** Whether to save the state between two consecutive days that have events (days since 1970-01-01). @default never */
  isCheckpoint?: (previousDay: number, nextDay: number) => boolean;
  /** Receives each state saved: the state before event `nextSeq`, the first of day `nextDay` (the days isCheckpoint was asked about). */
  onCheckpoint?: (nextSeq: bigint, state: string, previousDay: number, nextDay: number) => void;
  /**
   * lifo and hifo: receives each state saved as what changed in its open lots since an earlier
   * state (the base) instead of onCheckpoint's JSON of every open lot, so that a caller stores the
   * changes only.
   */
  onCheckpointLots?: (nextSeq: bigint, lots: CheckpointLots, previousDay: number, nextDay: number) => void;
  /**
   * Receives the state after the last event, at end() (lifo, hifo and uk; none when no event was
   * read): the state before event `nextSeq` (the last one's seq + 1), `lastDay` the last event's
   * day. uk's is its pool once every day read is settled, with nothing taken from later days: the
   * state before the next day's first event wherever no disposal of the 30 days before that day
   * took from the pool or found nothing (its caller resumes from it only there).
   */
  onEnd?: (nextSeq: bigint, state: string, lastDay: number) => void;
  /** lifo and hifo: onEnd as onCheckpointLots gives a state (what changed since the last checkpoint or the base). */
  onEndLots?: (nextSeq: bigint, lots: CheckpointLots, lastDay: number) => void;
  /**
   * Resuming from a state saved by onEnd or onEndLots: the day of the last event before it, so
   * that a checkpoint falls before the first event read where a match over all the events puts
   * one (a state saved between two days is resumed from without it: none falls there again).
   */
  previousDay?: number;
}

/** An open lot of a state: its buy's event_seq, its units and cost, and the units already taken from it. */
export interface HeldLot {
  seq: bigint;
  units: bigint;
  cost: bigint;
  taken: bigint;
  /** The units taken from it when the base state was made (undefined: acquired since the base). */
  baseTaken?: bigint;
}

/** What changed since the base state: its lots no longer held, its lots taken from since, and the lots acquired since, each by seq. */
export interface LotChanges {
  removed: bigint[];
  taken: HeldLot[];
  added: HeldLot[];
}

/** A lifo or hifo state at a checkpoint. */
export interface CheckpointLots {
  /** What changed since the base: the lots held at the start (fromLots' base) or at the last rebase(). */
  changes(): LotChanges;
  /** Makes the lots held now the base. */
  rebase(): void;
}

/**
 * A match fed one event at a time (in event_seq order), so that a partition of any size is matched
 * without holding its events: it holds only what the method needs (the open lots; uk also the
 * events of the days whose 30 following days have not all been seen).
 */
export interface LotMatcher {
  /** Matches the next event; the segments it settles go to the sink. */
  push(event: TradeEvent): void;
  /** No more events: settles what is still held (uk's last 30 days). */
  end(): void;
}

/** A matcher of `method` putting segments into `out` (see LotMatcher). */
export function lotMatcher(method: MatchMethod, out: SegmentSink, options: MatchOptions = {}): LotMatcher {
  return method === 'uk' ? new UkMatcher(out, options) : new StackMatcher(method, out, options);
}

/** A sell being disposed of: its proceeds spread over its quantity. */
interface Disposal {
  seq: bigint;
  /** The sell's instant (TradeEvent.at), carried to its segments as sellAt. */
  at: bigint | null | undefined;
  spread: Spread;
}

/**
 * Takes `units` from `source` for the disposals in order (each its proceeds along its own
 * quantity), one segment per (disposal, source piece) pair; `units` is at most what both hold.
 */
function pair(disposals: readonly Disposal[], source: Source, units: bigint, rule: MatchRule, out: SegmentSink): void {
  let wanted = units;
  for (const disposal of disposals) {
    while (wanted > 0n && disposal.spread.left > 0n) {
      const piece = source.currentPiece();
      let step = piece.left < disposal.spread.left ? piece.left : disposal.spread.left;
      if (wanted < step) step = wanted;
      out.push({ sellSeq: disposal.seq, rule, lotSeq: piece.seq, quantity: step, cost: source.take(step), proceeds: disposal.spread.take(step), sellAt: disposal.at });
      wanted -= step;
    }
    if (wanted === 0n) return;
  }
}

/** What a sell could not be matched with: its remaining units and proceeds, no cost. */
function unmatched(disposals: readonly Disposal[], out: SegmentSink): void {
  for (const disposal of disposals) {
    const left = disposal.spread.left;
    if (left > 0n) out.push({ sellSeq: disposal.seq, rule: 'unmatched', lotSeq: null, quantity: left, cost: null, proceeds: disposal.spread.take(left), sellAt: disposal.at });
  }
}

const disposalOf = (event: TradeEvent): Disposal => ({ seq: event.seq, at: event.at, spread: new Spread(event.quantityOut, event.proceeds, [{ seq: event.seq, units: event.quantityOut }]) });
const lotOf = (event: TradeEvent): Lot => new Lot(event.seq, event.unitsIn, event.cost);

/**
 * Puts the segments of one (pool, symbol)'s events under `method` into `out`, sells in order.
 * Resumed from a saved state (options.from) on the events after it, it puts exactly the segments
 * and saves exactly the states that a match over all the events would have put and saved there.
 */
export function matchLots(method: MatchMethod, events: readonly TradeEvent[], out: SegmentSink, options: MatchOptions = {}): void {
  const matcher = lotMatcher(method, out, options);
  for (const event of events) matcher.push(event);
  matcher.end();
}

/** A lot's Spread as [seq, units, cost, units taken], decimal strings. */
type SavedLot = [string, string, string, string];

const saveLot = (lot: Lot): SavedLot => [String(lot.seq), String(lot.units), String(lot.amount), String(lot.units - lot.left)];

const restoreLot = ([seq, units, cost, taken]: SavedLot): Lot => lotFrom({ seq: BigInt(seq), units: BigInt(units), cost: BigInt(cost), taken: BigInt(taken) });

/** Orders seqs ascending (Array.prototype.sort's comparator). */
export const compareSeq = (a: bigint, b: bigint): number => (a < b ? -1 : a > b ? 1 : 0);

const heldLotOf = (lot: Lot): HeldLot => ({ seq: lot.seq, units: lot.units, cost: lot.amount, taken: lot.units - lot.left, baseTaken: lot.baseTaken });

function lotFrom(held: HeldLot): Lot {
  const lot = new Lot(held.seq, held.units, held.cost);
  lot.skip(held.taken);
  lot.baseTaken = held.baseTaken;
  return lot;
}

const lotsBySeq = (a: HeldLot, b: HeldLot) => compareSeq(a.seq, b.seq);

/**
 * LIFO takes from the latest lot still holding units; HIFO from the lot of highest unit cost
 * (cost / units), the earliest of equal ones; FIFO from the earliest. Units beyond the inventory
 * are unmatched. It holds the open lots only: a sell is settled as it comes.
 */
class StackMatcher implements LotMatcher {
  private readonly lots: LotHeap | LotQueue | Lot[];
  private previousDay: number | undefined;
  /** The last event's seq (undefined: none read yet). */
  private lastSeq: bigint | undefined;
  /** The base's lots taken in full since (see CheckpointLots). */
  private removed: bigint[] = [];

  constructor(
    method: 'lifo' | 'hifo' | 'fifo',
    private readonly out: SegmentSink,
    private readonly options: MatchOptions,
  ) {
    this.lots = method === 'lifo' ? [] : method === 'fifo' ? new LotQueue() : new LotHeap();
    this.previousDay = options.previousDay;
    // The open lots in the order they are held (a stack bottom up, a heap's array), so that a
    // resumed match holds them exactly as the whole one did.
    if (options.from !== undefined) for (const saved of (JSON.parse(options.from) as { lots: SavedLot[] }).lots) this.lots.push(restoreLot(saved));
    if (options.fromLots !== undefined) {
      if (method === 'fifo') throw new Error('fifo lot matching: fromLots is for lifo and hifo');
      const held = options.fromLots.held.map(lotFrom);
      this.removed = [...options.fromLots.removed];
      // A stack bottom up is its lots by seq (pushed in event order, popped from the top). A heap
      // takes them in any order: which lot it gives next is the strict order of unit cost, then
      // seq, whatever its array looks like.
      if (Array.isArray(this.lots)) for (const lot of held.sort((a, b) => compareSeq(a.seq, b.seq))) this.lots.push(lot);
      else (this.lots as LotHeap).fill(held);
    }
  }

  push(event: TradeEvent): void {
    const { lots, options } = this;
    if (this.previousDay !== undefined && event.day !== this.previousDay && options.isCheckpoint?.(this.previousDay, event.day) === true) {
      if (options.onCheckpointLots !== undefined) options.onCheckpointLots(event.seq, this.checkpointLots(this.held()), this.previousDay, event.day);
      else options.onCheckpoint?.(event.seq, JSON.stringify({ lots: this.held().map(saveLot) }), this.previousDay, event.day);
    }
    this.previousDay = event.day;
    this.lastSeq = event.seq;
    if (event.side === 'buy') {
      if (event.unitsIn > 0n) lots.push(lotOf(event));
      return;
    }
    if (event.quantityOut <= 0n) return;
    const disposal = disposalOf(event);
    for (;;) {
      const lot = Array.isArray(lots) ? lots.at(-1) : lots.peek();
      if (lot === undefined || disposal.spread.left === 0n) break;
      pair([disposal], lot, lot.left < disposal.spread.left ? lot.left : disposal.spread.left, 'lot', this.out);
      if (lot.left === 0n) {
        lots.pop();
        if (lot.baseTaken !== undefined) this.removed.push(lot.seq);
      }
    }
    unmatched([disposal], this.out);
  }

  private checkpointLots(held: readonly Lot[]): CheckpointLots {
    return {
      changes: () => {
        const taken: HeldLot[] = [];
        const added: HeldLot[] = [];
        for (const lot of held) {
          if (lot.baseTaken === undefined) added.push(heldLotOf(lot));
          else if (lot.units - lot.left !== lot.baseTaken) taken.push(heldLotOf(lot));
        }
        return { removed: [...this.removed].sort(compareSeq), taken: taken.sort(lotsBySeq), added: added.sort(lotsBySeq) };
      },
      rebase: () => {
        for (const lot of held) lot.baseTaken = lot.units - lot.left;
        this.removed = [];
      },
    };
  }

  end(): void {
    const { options, lastSeq, previousDay } = this;
    if (lastSeq === undefined || previousDay === undefined) return;
    if (options.onEndLots !== undefined) options.onEndLots(lastSeq + 1n, this.checkpointLots(this.held()), previousDay);
    else options.onEnd?.(lastSeq + 1n, JSON.stringify({ lots: this.held().map(saveLot) }), previousDay);
  }

  /** The open lots in the order they are held. */
  private held(): readonly Lot[] {
    return Array.isArray(this.lots) ? this.lots : this.lots.held();
  }
}

/** Lots in the order they were acquired, taken from the front. */
class LotQueue {
  private readonly items: Lot[] = [];
  private head = 0;

  push(lot: Lot): void {
    this.items.push(lot);
  }

  peek(): Lot | undefined {
    return this.items[this.head];
  }

  /** The lots still held, earliest first. */
  held(): Lot[] {
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

/**
 * A max-heap of lots by unit cost (cost / units), ties to the earliest (lowest seq).
 *
 * Each lot's unit cost is also kept as a double, beside the heap's array, in the same order: two
 * lots are compared by their doubles where those differ by more than a millionth of a millionth,
 * and exactly (cost times units, crosswise, in bigints) only where they do not. A double of a
 * bigint and their quotient are each within 2^-53 of the exact value, so two doubles further
 * apart than 1e-12 of the larger are in the order of the exact unit costs: the heap's order is
 * the exact one. (The exact comparison made three bigints each time: hifo's sift through a
 * history's ~440k open lots spent ~20 s of the 10M benchmark's full build in it.)
 */
class LotHeap {
  private readonly items: Lot[] = [];
  private prices = new Float64Array(1024);

  push(lot: Lot): void {
    this.items.push(lot);
    let index = this.items.length - 1;
    this.setPrice(index, lot);
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!this.before(index, parent)) break;
      this.swap(index, parent);
      index = parent;
    }
  }

  peek(): Lot | undefined {
    return this.items[0];
  }

  /** The lots in the heap's array order (pushed back in this order, they make the same array): the heap's own array, to read, not a copy. */
  held(): readonly Lot[] {
    return this.items;
  }

  /** Fills an empty heap with `lots` at once (Floyd's: each parent sifted down, from the last). */
  fill(lots: readonly Lot[]): void {
    if (this.items.length > 0) throw new Error('LotHeap.fill: the heap is not empty');
    for (const lot of lots) {
      this.items.push(lot);
      this.setPrice(this.items.length - 1, lot);
    }
    for (let index = (this.items.length >> 1) - 1; index >= 0; index -= 1) this.siftDown(index);
  }

  pop(): void {
    const last = this.items.pop();
    if (last === undefined || this.items.length === 0) return;
    this.items[0] = last;
    this.prices[0] = this.prices[this.items.length]!;
    this.siftDown(0);
  }

  private siftDown(start: number): void {
    let index = start;
    for (;;) {
      const left = 2 * index + 1;
      const right = left + 1;
      let best = index;
      if (left < this.items.length && this.before(left, best)) best = left;
      if (right < this.items.length && this.before(right, best)) best = right;
      if (best === index) return;
      this.swap(index, best);
      index = best;
    }
  }

  private setPrice(index: number, lot: Lot): void {
    if (index >= this.prices.length) {
      const grown = new Float64Array(this.prices.length * 2);
      grown.set(this.prices);
      this.prices = grown;
    }
    this.prices[index] = Number(lot.amount) / Number(lot.units);
  }

  private swap(a: number, b: number): void {
    const lot = this.items[a]!;
    this.items[a] = this.items[b]!;
    this.items[b] = lot;
    const price = this.prices[a]!;
    this.prices[a] = this.prices[b]!;
    this.prices[b] = price;
  }

  /** Whether item a comes out before item b: a higher unit cost, or the same and earlier. */
  private before(a: number, b: number): boolean {
    const x = this.prices[a]!;
    const y = this.prices[b]!;
    // (NaN, a lot of no units: neither test holds, and the exact comparison decides.)
    const apart = 1e-12 * Math.max(Math.abs(x), Math.abs(y));
    if (x - y > apart) return true;
    if (y - x > apart) return false;
    return exactlyBefore(this.items[a]!, this.items[b]!);
  }
}

/** Whether lot x comes out of the heap before lot y: a higher unit cost, or the same and earlier. */
function exactlyBefore(x: Lot, y: Lot): boolean {
  const difference = x.amount * y.units - y.amount * x.units;
  return difference > 0n || (difference === 0n && x.seq < y.seq);
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

/** A day being read: its buys (as the acquisition's pieces) and its disposals so far. */
interface UkDayBuilder {
  day: number;
  firstSeq: bigint;
  pieces: { seq: bigint; units: bigint }[];
  units: bigint;
  cost: bigint;
  disposals: Disposal[];
  disposed: bigint;
}

/** Days after a disposal's whose acquisitions the 30-day rule reaches. */
const THIRTY_DAYS = 30;
/** Settled days are dropped from UkMatcher's list this many at a time. */
const SETTLED_DAYS_DROPPED = 32;

/**
 * HMRC share pooling (Cryptoassets Manual CRYPTO22200+, TCGA 1992 s105, s106A): per day, all
 * acquisitions are one acquisition and all disposals one disposal. A disposal is identified first
 * with the same day's acquisition, then with acquisitions of the 30 days after it (earliest day
 * first; each such day's acquisition first serves its own day's disposal), then with the section
 * 104 pool at its average cost; what the pool lacks is unmatched. An acquisition joins the pool on
 * its day with what those rules left of it; an opening position is the pool at the start.
 * Per-fill detail splits the day's single disposal in fill order (the first sells of the day take
 * the same-day match, then the 30-day matches, then the pool), so the day's totals are HMRC's.
 *
 * Fed a stream, it holds the days not yet settled: a day is settled once an event more than 30
 * days after it has been read (every acquisition its disposal can reach is then known), so it
 * holds about 31 days' events whatever the history's length.
 */
class UkMatcher implements LotMatcher {
  private poolUnits: bigint;
  private poolCost: bigint;
  /** Read days not settled yet, from `head` on (those before it are settled and dropped now and then). */
  private days: UkDay[] = [];
  private head = 0;
  private building: UkDayBuilder | undefined;
  /** The last settled day (a checkpoint falls between it and the next). */
  private previousDay: number | undefined;
  /** What disposals before the saved state took by the 30-day rule, per later day, applied when that day is read. */
  private readonly laterTaken = new Map<number, bigint>();
  /** The last event read's seq (undefined: none yet; its day is the day being read's). */
  private lastSeq: bigint | undefined;

  constructor(
    private readonly out: SegmentSink,
    private readonly options: MatchOptions,
  ) {
    const saved = options.from === undefined ? undefined : (JSON.parse(options.from) as UkState);
    this.poolUnits = saved === undefined ? 0n : BigInt(saved.pool[0]);
    this.poolCost = saved === undefined ? 0n : BigInt(saved.pool[1]);
    for (const [day, taken] of saved?.later ?? []) this.laterTaken.set(day, BigInt(taken));
    this.previousDay = options.previousDay;
  }

  push(event: TradeEvent): void {
    if (this.building !== undefined && this.building.day !== event.day) {
      this.closeDay();
      this.settleBefore(event.day - THIRTY_DAYS);
    }
    const day = (this.building ??= { day: event.day, firstSeq: event.seq, pieces: [], units: 0n, cost: 0n, disposals: [], disposed: 0n });
    this.lastSeq = event.seq;
    if (event.isOpening) {
      this.poolUnits += event.unitsIn;
      this.poolCost += event.cost;
    } else if (event.side === 'buy') {
      if (event.unitsIn > 0n) {
        day.pieces.push({ seq: event.seq, units: event.unitsIn });
        day.units += event.unitsIn;
        day.cost += event.cost;
      }
    } else if (event.quantityOut > 0n) {
      day.disposals.push(disposalOf(event));
      day.disposed += event.quantityOut;
    }
  }

  end(): void {
    const lastDay = this.building?.day;
    this.closeDay();
    this.settleBefore(Number.POSITIVE_INFINITY);
    const [day] = this.laterTaken.keys();
    if (day !== undefined) throw new Error(`uk lot matching: the saved state names day ${day}, which has no events to resume on`);
    if (this.lastSeq !== undefined && lastDay !== undefined) this.options.onEnd?.(this.lastSeq + 1n, this.savedState([]), lastDay);
  }

  /** The state as saved: the pool now, and what earlier disposals took of the later days' acquisitions. */
  private savedState(later: [number, string][]): string {
    return JSON.stringify({ pool: [String(this.poolUnits), String(this.poolCost)], later } satisfies UkState);
  }

  /** The day being read is complete: it joins the days to settle. */
  private closeDay(): void {
    const built = this.building;
    if (built === undefined) return;
    this.building = undefined;
    const acquisition = new Spread(built.units, built.cost, built.pieces.length === 0 ? [{ seq: null, units: 0n }] : built.pieces);
    const day: UkDay = { day: built.day, firstSeq: built.firstSeq, acquisition, disposals: built.disposals, disposed: built.disposed, sameDay: built.units < built.disposed ? built.units : built.disposed };
    const taken = this.laterTaken.get(day.day);
    if (taken !== undefined) {
      laterPart(day).skip(taken);
      this.laterTaken.delete(day.day);
    }
    this.days.push(day);
  }

  /** Settles the read days before `day` (days + 30 < the day being read: all they can reach is read). */
  private settleBefore(day: number): void {
    while (this.head < this.days.length && this.days[this.head]!.day < day) {
      this.settle(this.head);
      this.head += 1;
    }
    // Settled days are dropped (their events with them): what is held is the days not yet settled,
    // about 31, never the partition's history.
    if (this.head >= SETTLED_DAYS_DROPPED) {
      this.days = this.days.slice(this.head);
      this.head = 0;
    }
  }

  private settle(index: number): void {
    const { days, out, options } = this;
    const today = days[index]!;
    if (this.previousDay !== undefined && options.isCheckpoint?.(this.previousDay, today.day) === true) {
      const later: [number, string][] = [];
      // Disposals before today reach the acquisitions of the next 29 days at most.
      for (let ahead = index; ahead < days.length && days[ahead]!.day < today.day + THIRTY_DAYS; ahead += 1) {
        const next = days[ahead]!;
        const taken = next.later === undefined ? 0n : next.acquisition.units - next.later.left - next.sameDay;
        if (taken > 0n) later.push([next.day, String(taken)]);
      }
      options.onCheckpoint?.(today.firstSeq, this.savedState(later), this.previousDay, today.day);
    }
    this.previousDay = today.day;
    // What the same-day rule and earlier disposals' 30-day matches left of today's acquisition joins the pool.
    const rest = laterPart(today);
    if (rest.left > 0n) {
      this.poolUnits += rest.left;
      this.poolCost += rest.take(rest.left);
    }
    if (today.disposed === 0n) return;
    pair(today.disposals, today.acquisition, today.sameDay, 'same_day', out);
    let wanted = today.disposed - today.sameDay;
    for (let next = index + 1; wanted > 0n && next < days.length && days[next]!.day <= today.day + THIRTY_DAYS; next += 1) {
      const source = laterPart(days[next]!);
      const step = source.left < wanted ? source.left : wanted;
      if (step > 0n) pair(today.disposals, source, step, 'thirty_day', out);
      wanted -= step;
    }
    const fromPool = this.poolUnits < wanted ? this.poolUnits : wanted;
    if (fromPool > 0n) {
      const cost = shareOf(this.poolCost, fromPool, this.poolUnits);
      pair(today.disposals, new Spread(fromPool, cost, [{ seq: null, units: fromPool }]), fromPool, 'pool', out);
      this.poolUnits -= fromPool;
      this.poolCost -= cost;
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
