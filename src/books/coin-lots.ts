/**
 * The books' lots: every coin's acquisitions and disposals (intermediate.int_coin_events), valued in
 * the reporting currency, matched by each cost method. Exact on integer units (quantities 1e-18,
 * money 1e-12), BigInt throughout; fifo, lifo, hifo and uk run the spot matcher
 * (src/models/lot-matching.ts), average is a moving weighted average here.
 *
 * Unknown is never 0. A lot whose cost is unknown (its value had no price, or it carries the cost
 * of a withdrawal that had none) is matched like any other (hifo ranks it as cost 0, last); every
 * figure it reaches is marked unknown:
 * - a disposal's `cost` is the known part of the cost of the units it took, `costKnown` false when
 *   any unit came from a lot of unknown cost or from nothing held (unmatched units);
 * - a holding's `carrying` is the known part of the lots held, `carryingKnown` false while any unit
 *   held is of unknown cost.
 * Which units are of unknown cost is found by matching a second time with indicator costs (a lot of
 * unknown cost costs its units times UNKNOWN_WEIGHT, any other 0): fifo, lifo, uk and average take
 * units in an order that does not depend on cost, so the indicator match takes the same units.
 * hifo does depend on cost: its segments name their lot, which is looked up instead.
 */
import { lotMatcher, shareOf, type LotMatcher, type MatchOptions, type Segment, type SegmentSink, type TradeEvent } from '../models/lot-matching.ts';
import type { CostMethod } from '../models/settings.ts';

/** One leg of int_coin_events, in the books' order within its pool and coin. */
export interface CoinEvent {
  seq: bigint;
  /** Reporting-zone day, days since 1970-01-01 (uk counts calendar days). */
  day: number;
  direction: 'in' | 'out';
  units: bigint;
  /**
   * in: the lot's cost; out: the proceeds. null: unknown (no price), or valued by the lots
   * (basis carrying_cost: proceeds = cost; carried: cost = the withdrawal's, given by carriedCost).
   */
  value: bigint | null;
  basis: 'market' | 'declared' | 'carrying_cost' | 'carried';
  /** A carried deposit: the withdrawal whose cost it takes (its key in carriedCost). */
  transferRef?: string | null;
  /** The event's source record (int_coin_events entry_ref): a withdrawal's is what a carried deposit names. */
  entryRef?: string;
}

/** What a cost method makes of one event. */
export interface CoinEventResult {
  seq: bigint;
  /** in: the lot's cost (null: unknown); out: the known part of the cost of the units taken. */
  cost: bigint | null;
  /** out: every unit taken came from a lot of known cost (none unmatched). in: cost is known. */
  costKnown: boolean;
  /** out: units beyond what was held (no lot, no cost). */
  unmatched: bigint;
  /** out: the proceeds (carrying_cost: the known cost; null: unknown). in: null. */
  proceeds: bigint | null;
  /** out: proceeds - cost when both are known in full; else null. */
  gain: bigint | null;
  /** Units held after the event. */
  holding: bigint;
  /** The known part of the cost of the lots held after it, and whether that is all of it. */
  carrying: bigint;
  carryingKnown: boolean;
}

/** Indicator cost per unit of a lot of unknown cost: large enough that no share of it rounds to 0. */
const UNKNOWN_WEIGHT = 10n ** 40n;

/**
 * One pool's events of one coin matched under `method` as they stream in (in event_seq order):
 * each event's result goes to `emit` once it is settled, in order. It holds the matcher's open lots
 * (and for uk the events of the days whose 30 following days have not been read), the events read
 * but not yet settled, and for hifo the units left of lots of unknown cost: never the pool's
 * history. `carriedCost(ref)` gives a carried deposit's cost (undefined or null: unknown).
 */
export class CoinPoolMatch {
  private readonly real: PoolMatcher;
  private readonly indicator: PoolMatcher | undefined;
  /** Per disposal read but not settled: the known cost and the units unmatched (real match), the unknown part (indicator or hifo). */
  private readonly taken = new Map<bigint, { cost: bigint; unmatched: bigint; unknown: bigint }>();
  /** hifo: units not yet taken of each lot of unknown cost (its segments name it). */
  private readonly unknownLots = new Map<bigint, bigint>();
  /** Events read, from `head` on not yet settled (those before are dropped now and then). */
  private queue: { event: CoinEvent; cost: bigint | null }[] = [];
  private head = 0;
  private holding = 0n;
  private carrying = 0n;
  /** Units held of unknown cost (hifo), or their indicator cost (the other methods). */
  private unknownHeld = 0n;
  /**
   * Checkpoints the matchers made, in order, not yet saved: one is complete once both matchers
   * made it and every event before it is settled (uk's matcher makes a day's once it settles the
   * day, which this settles later), and is saved then.
   */
  private readonly checkpoints: { nextSeq: bigint; previousDay: number; nextDay: number; real?: string; indicator?: string; unknownLots?: [string, string][] }[] = [];

  constructor(
    private readonly method: CostMethod,
    private readonly emit: (event: CoinEvent, result: CoinEventResult) => void,
    private readonly carriedCost: (ref: string) => bigint | null | undefined = () => undefined,
    private readonly options: CoinMatchOptions = {},
  ) {
    const saved = options.from === undefined ? undefined : (JSON.parse(options.from) as CoinPoolState);
    if (saved !== undefined) {
      this.holding = BigInt(saved.holding);
      this.carrying = BigInt(saved.carrying);
      this.unknownHeld = BigInt(saved.unknownHeld);
      for (const [seq, units] of saved.unknownLots) this.unknownLots.set(BigInt(seq), BigInt(units));
    }
    const checkpointsOf = (which: 'real' | 'indicator'): MatchOptions => ({
      ...(saved === undefined ? {} : { from: saved[which]! }),
      ...(options.isCheckpoint === undefined ? {} : { isCheckpoint: options.isCheckpoint }),
      onCheckpoint: (nextSeq, state, previousDay, nextDay) => {
        let checkpoint = this.checkpoints.find((candidate) => candidate.nextSeq === nextSeq);
        if (checkpoint === undefined) {
          checkpoint = { nextSeq, previousDay, nextDay };
          this.checkpoints.push(checkpoint);
        }
        checkpoint[which] = state;
        // hifo's lots of unknown cost as its matcher leaves them before the event (it matches the
        // event's disposal in this same push, before the event is settled).
        if (which === 'real') checkpoint.unknownLots = [...this.unknownLots].filter(([seq]) => seq < nextSeq).map(([seq, units]) => [String(seq), String(units)]);
      },
    });
    this.real = poolMatcher(
      method,
      {
        push: (segment: Segment) => {
          const taken = this.takenBy(segment.sellSeq);
          if (segment.rule === 'unmatched') taken.unmatched += segment.quantity;
          else taken.cost += segment.cost ?? 0n;
          if (method === 'hifo' && segment.lotSeq !== null) {
            const left = this.unknownLots.get(segment.lotSeq);
            if (left !== undefined) {
              taken.unknown += segment.quantity;
              if (left === segment.quantity) this.unknownLots.delete(segment.lotSeq);
              else this.unknownLots.set(segment.lotSeq, left - segment.quantity);
            }
          }
          return 0;
        },
      },
      checkpointsOf('real'),
    );
    // fifo, lifo, uk and average take units in an order that does not depend on cost: matched
    // again with indicator costs, they take the same units, and the cost found is the unknown part.
    if (method !== 'hifo') {
      this.indicator = poolMatcher(
        method,
        {
          push: (segment: Segment) => {
            this.takenBy(segment.sellSeq).unknown += segment.cost ?? 0n;
            return 0;
          },
        },
        checkpointsOf('indicator'),
      );
    }
  }

  push(event: CoinEvent): void {
    let cost: bigint | null = null;
    if (event.direction === 'in') {
      cost = event.basis === 'carried' ? ((event.transferRef === undefined || event.transferRef === null ? null : this.carriedCost(event.transferRef)) ?? null) : event.value;
      if (cost === null && this.method === 'hifo' && event.units > 0n) this.unknownLots.set(event.seq, event.units);
    }
    this.queue.push({ event, cost });
    this.real.push(tradeEventOf(event, cost ?? 0n));
    this.indicator?.push(tradeEventOf(event, cost === null ? event.units * UNKNOWN_WEIGHT : 0n));
    // uk settles a day's events once an event more than 30 days after it is read; the other
    // methods settle an event as it is read.
    this.settle(this.method === 'uk' ? event.day - UK_DAYS : Number.POSITIVE_INFINITY);
  }

  /** No more events: settles what is still held. */
  end(): void {
    this.real.end();
    this.indicator?.end();
    this.settle(Number.POSITIVE_INFINITY);
  }

  /** Saves a checkpoint both matchers made, with what is held before its event. */
  private saveCheckpoint(checkpoint: (typeof this.checkpoints)[number]): void {
    if (checkpoint.real === undefined || (this.indicator !== undefined && checkpoint.indicator === undefined)) {
      throw new Error(`coin lots (${this.method}): the matchers did not both make the checkpoint before event ${checkpoint.nextSeq}`);
    }
    const state: CoinPoolState = {
      holding: String(this.holding),
      carrying: String(this.carrying),
      unknownHeld: String(this.unknownHeld),
      unknownLots: checkpoint.unknownLots ?? [],
      real: checkpoint.real,
      ...(checkpoint.indicator === undefined ? {} : { indicator: checkpoint.indicator }),
    };
    this.options.onCheckpoint?.(checkpoint.nextSeq, JSON.stringify(state), checkpoint.previousDay, checkpoint.nextDay);
  }

  private takenBy(seq: bigint): { cost: bigint; unmatched: bigint; unknown: bigint } {
    let taken = this.taken.get(seq);
    if (taken === undefined) {
      taken = { cost: 0n, unmatched: 0n, unknown: 0n };
      this.taken.set(seq, taken);
    }
    return taken;
  }

  /**
   * Emits, in order, the events read before day `beforeDay` (uk: its matcher has settled those
   * days, and made their checkpoints; an acquisition is held back with them, so none is emitted
   * past a checkpoint not yet made).
   */
  private settle(beforeDay: number): void {
    const { queue } = this;
    while (this.head < queue.length) {
      const { event, cost } = queue[this.head]!;
      if (event.day >= beforeDay) break;
      // Every event before a checkpoint is settled: what is held now is the state before it.
      while (this.checkpoints.length > 0 && this.checkpoints[0]!.nextSeq <= event.seq) this.saveCheckpoint(this.checkpoints.shift()!);
      this.head += 1;
      this.emit(event, this.resultOf(event, cost));
    }
    if (this.head > 4096 && this.head * 2 > queue.length) {
      this.queue = queue.slice(this.head);
      this.head = 0;
    }
  }

  private resultOf(event: CoinEvent, cost: bigint | null): CoinEventResult {
    if (event.direction === 'in') {
      this.holding += event.units;
      this.carrying += cost ?? 0n;
      if (cost === null) this.unknownHeld += this.method === 'hifo' ? event.units : event.units * UNKNOWN_WEIGHT;
      return { seq: event.seq, cost, costKnown: cost !== null, unmatched: 0n, proceeds: null, gain: null, holding: this.holding, carrying: this.carrying, carryingKnown: this.unknownHeld === 0n };
    }
    const taken = this.taken.get(event.seq) ?? { cost: 0n, unmatched: 0n, unknown: 0n };
    this.taken.delete(event.seq);
    this.holding -= event.units - taken.unmatched;
    this.carrying -= taken.cost;
    this.unknownHeld -= taken.unknown;
    const costKnown = taken.unmatched === 0n && taken.unknown === 0n;
    const proceeds = event.basis === 'carrying_cost' ? taken.cost : event.value;
    return {
      seq: event.seq,
      cost: taken.cost,
      costKnown,
      unmatched: taken.unmatched,
      proceeds,
      gain: costKnown && proceeds !== null ? proceeds - taken.cost : null,
      holding: this.holding,
      carrying: this.carrying,
      carryingKnown: this.unknownHeld === 0n,
    };
  }
}

/** Days after a disposal whose acquisitions uk's 30-day rule reaches (lot-matching.ts settles a day after them). */
const UK_DAYS = 30;

/**
 * Where a pool's match under a method starts and where it saves its state, so that a later build
 * can resume it (int_coin_lots' incremental step), as MatchOptions are for the spot matcher: a
 * state is the one before the first event of a day (`nextSeq`), saved between two days that have
 * events where isCheckpoint says so. It holds both matchers' states (open lots, uk's pool and the
 * units later days gave to earlier disposals; average's units and cost), the units and carrying
 * value held, and hifo's lots of unknown cost not yet taken: JSON, integers as decimal strings.
 * Resumed from one on the events from its nextSeq on, the match emits exactly the results, and
 * saves exactly the states, that a match over all the events makes there.
 */
export interface CoinMatchOptions {
  /** A state saved by onCheckpoint; the events then start at its nextSeq. @default nothing held */
  from?: string;
  isCheckpoint?: (previousDay: number, nextDay: number) => boolean;
  onCheckpoint?: (nextSeq: bigint, state: string, previousDay: number, nextDay: number) => void;
}

/** CoinPoolMatch's saved state (CoinMatchOptions). */
interface CoinPoolState {
  holding: string;
  carrying: string;
  unknownHeld: string;
  unknownLots: [string, string][];
  real: string;
  indicator?: string;
}

/** A matcher fed one event at a time: the spot matcher (fifo, lifo, hifo, uk) or the moving average. */
type PoolMatcher = Pick<LotMatcher, 'push' | 'end'>;

function poolMatcher(method: CostMethod, out: SegmentSink, options: MatchOptions = {}): PoolMatcher {
  return method === 'average' ? new AverageMatcher(out, options) : lotMatcher(method, out, options);
}

function tradeEventOf(event: CoinEvent, cost: bigint): TradeEvent {
  return event.direction === 'in'
    ? { seq: event.seq, isOpening: false, side: 'buy', day: event.day, unitsIn: event.units, cost, quantityOut: 0n, proceeds: 0n }
    : { seq: event.seq, isOpening: false, side: 'sell', day: event.day, unitsIn: 0n, cost: 0n, quantityOut: event.units, proceeds: 0n };
}

/** Moving weighted average: a disposal takes its share of the pool's cost; units beyond the pool are unmatched. */
class AverageMatcher implements PoolMatcher {
  private units = 0n;
  private cost = 0n;
  private previousDay: number | undefined;

  constructor(
    private readonly out: SegmentSink,
    private readonly options: MatchOptions = {},
  ) {
    if (options.from !== undefined) {
      const saved = JSON.parse(options.from) as { units: string; cost: string };
      this.units = BigInt(saved.units);
      this.cost = BigInt(saved.cost);
    }
  }

  push(event: TradeEvent): void {
    const { options } = this;
    if (this.previousDay !== undefined && event.day !== this.previousDay && options.isCheckpoint?.(this.previousDay, event.day) === true) {
      options.onCheckpoint?.(event.seq, JSON.stringify({ units: String(this.units), cost: String(this.cost) }), this.previousDay, event.day);
    }
    this.previousDay = event.day;
    if (event.side === 'buy') {
      this.units += event.unitsIn;
      this.cost += event.cost;
      return;
    }
    const matched = event.quantityOut < this.units ? event.quantityOut : this.units;
    if (matched > 0n) {
      const taken = shareOf(this.cost, matched, this.units);
      this.out.push({ sellSeq: event.seq, rule: 'pool', lotSeq: null, quantity: matched, cost: taken, proceeds: 0n });
      this.units -= matched;
      this.cost -= taken;
    }
    if (event.quantityOut > matched) this.out.push({ sellSeq: event.seq, rule: 'unmatched', lotSeq: null, quantity: event.quantityOut - matched, cost: null, proceeds: 0n });
  }

  end(): void {}
}

/** One pool's event of a coin, as a stream of them gives it (in pool, then event_seq order). */
export interface PooledCoinEvent {
  pool: string;
  event: CoinEvent;
}

/** Where matchCoinStream resumes a pool's match under a method, and where it saves states. */
export interface CoinStreamOptions {
  /**
   * Where each pool's match under each method starts: its first event (those before it are not
   * matched, and their results not emitted) and the state before it (CoinMatchOptions.from).
   * undefined: the pool's first event, nothing held. @default every pool from its first event
   */
  resumeOf?: (pool: string, method: CostMethod) => { fromSeq: bigint; state?: string } | undefined;
  /** The costs of the withdrawals carried deposits name that are not matched again (before a resumed pool's first event), per method (null: unknown). */
  carriedCosts?: ReadonlyMap<CostMethod, ReadonlyMap<string, bigint | null>>;
  /** The checkpoints of each pool's match under each method, in the round that emits (CoinMatchOptions). */
  checkpointsOf?: (pool: string, method: CostMethod) => Pick<CoinMatchOptions, 'isCheckpoint' | 'onCheckpoint'>;
}

/**
 * Matches every pool of one coin under each of `methods`, reading its events from `read()` (every
 * pool's, ordered by pool then event_seq; it is read again for each round), and gives each event's
 * result to `emit`. A carried deposit's cost is the cost of a withdrawal in another pool
 * (`carriedRefs`: the withdrawals' entryRefs that carried deposits name), which may itself hold a
 * carried lot: a method whose coin has carried deposits is matched round after round without
 * emitting, each round with the withdrawals' costs of the round before, until no such cost changes
 * (a chain of n transfers settles in n + 1 rounds; at most one more round than the coin has
 * pools), and then once more, emitting. Without carried deposits a method is matched once.
 * Resumed (options.resumeOf), each pool's match starts from its saved state; the withdrawals before
 * it keep the costs options.carriedCosts gives.
 */
export async function matchCoinStream(
  methods: readonly CostMethod[],
  carriedRefs: ReadonlySet<string>,
  read: () => AsyncIterable<readonly PooledCoinEvent[]>,
  emit: (method: CostMethod, pool: string, event: CoinEvent, result: CoinEventResult) => void,
  options: CoinStreamOptions = {},
): Promise<void> {
  interface MethodRounds {
    method: CostMethod;
    round: number;
    /** The withdrawals' costs this round reads (the round before's). */
    carried: Map<string, bigint | null>;
    emitting: boolean;
  }
  let pending: MethodRounds[] = methods.map((method) => ({ method, round: 0, carried: new Map(options.carriedCosts?.get(method) ?? []), emitting: carriedRefs.size === 0 }));
  while (pending.length > 0) {
    const found = new Map<CostMethod, Map<string, bigint | null>>(pending.map(({ method }) => [method, new Map()]));
    let pools = 0;
    let pool: string | undefined;
    let matches: { rounds: MethodRounds; fromSeq: bigint; match: CoinPoolMatch }[] = [];
    const open = (name: string) => {
      pools += 1;
      pool = name;
      matches = pending.map((rounds) => {
        const resume = options.resumeOf?.(name, rounds.method);
        return {
          rounds,
          fromSeq: resume?.fromSeq ?? 1n,
          match: new CoinPoolMatch(
            rounds.method,
            (event, result) => {
              if (rounds.emitting) emit(rounds.method, name, event, result);
              else if (event.basis === 'carrying_cost' && event.entryRef !== undefined && carriedRefs.has(event.entryRef)) found.get(rounds.method)!.set(event.entryRef, result.costKnown ? result.cost : null);
            },
            (ref) => rounds.carried.get(ref),
            {
              ...(resume?.state === undefined ? {} : { from: resume.state }),
              ...(rounds.emitting ? (options.checkpointsOf?.(name, rounds.method) ?? {}) : {}),
            },
          ),
        };
      });
    };
    for await (const events of read()) {
      for (const { pool: name, event } of events) {
        if (name !== pool) {
          for (const { match } of matches) match.end();
          open(name);
        }
        for (const { fromSeq, match } of matches) if (event.seq >= fromSeq) match.push(event);
      }
    }
    for (const { match } of matches) match.end();
    const next: MethodRounds[] = [];
    for (const rounds of pending) {
      if (rounds.emitting) continue;
      const costs = found.get(rounds.method)!;
      const changed = [...costs].some(([ref, cost]) => !rounds.carried.has(ref) || rounds.carried.get(ref) !== cost);
      // Settled (or out of rounds): matched once more with the costs this round read, emitting.
      if (!changed || rounds.round > pools + 1) next.push({ ...rounds, emitting: true });
      else next.push({ method: rounds.method, round: rounds.round + 1, carried: new Map([...rounds.carried, ...costs]), emitting: false });
    }
    pending = next;
  }
}

/**
 * The segments of one disposal under `method` (for `exledger explain`), matched again from its
 * pool's events in event_seq order, each lot's value its cost (a carried lot's resolved; null:
 * unknown). Each segment names its lot's seq (null: the average or section 104 pool, or units
 * beyond what was held). The events are read up to the disposal (uk: until an event more than 30
 * days after it settles its day) and no further; what is held is the matcher's.
 */
export async function lotsTaken(method: CostMethod, events: AsyncIterable<readonly CoinEvent[]>, disposalSeq: bigint): Promise<Segment[]> {
  const found: Segment[] = [];
  const matcher = poolMatcher(method, {
    push: (segment: Segment) => (segment.sellSeq === disposalSeq ? found.push(segment) : 0),
  });
  let disposalDay: number | undefined;
  read: for await (const chunk of events) {
    for (const event of chunk) {
      if (disposalDay !== undefined && (method !== 'uk' || event.day > disposalDay + UK_DAYS)) break read;
      matcher.push(tradeEventOf(event, event.direction === 'in' ? (event.value ?? 0n) : 0n));
      if (event.seq === disposalSeq) disposalDay = event.day;
    }
  }
  // A read stopped early has settled the disposal; end() settles what a stream's end leaves.
  matcher.end();
  return found;
}
