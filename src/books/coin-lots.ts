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
import { matchLots, shareOf, type MatchMethod, type Segment, type TradeEvent } from '../models/lot-matching.ts';
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
 * Matches one pool's events of one coin under `method`. `carriedCost(ref)` gives a carried
 * deposit's cost (undefined or null: unknown).
 */
export function matchCoin(method: CostMethod, events: readonly CoinEvent[], carriedCost: (ref: string) => bigint | null | undefined = () => undefined): CoinEventResult[] {
  const lotCost = (event: CoinEvent): bigint | null => {
    if (event.basis === 'carried') return (event.transferRef === undefined || event.transferRef === null ? null : carriedCost(event.transferRef)) ?? null;
    return event.value;
  };
  const costs = events.map((event) => (event.direction === 'in' ? lotCost(event) : null));
  const real = segmentsOf(method, events, (index) => costs[index] ?? 0n);
  const unknownCost = new Map<bigint, bigint>();
  if (method === 'hifo') {
    // Segments name their lot: the units of a lot of unknown cost.
    const indexOf = new Map(events.map((event, index) => [event.seq, index]));
    for (const [seq, segments] of real) {
      let unknown = 0n;
      for (const segment of segments) if (segment.lotSeq !== null && costs[indexOf.get(segment.lotSeq)!] === null) unknown += segment.quantity;
      unknownCost.set(seq, unknown);
    }
  } else {
    const indicator = segmentsOf(method, events, (index) => (costs[index] === null ? events[index]!.units * UNKNOWN_WEIGHT : 0n));
    for (const [seq, segments] of indicator) unknownCost.set(seq, segments.reduce((sum, segment) => sum + (segment.cost ?? 0n), 0n));
  }
  const results: CoinEventResult[] = [];
  let holding = 0n;
  let carrying = 0n;
  // Units held of unknown cost (hifo), or their indicator cost (the other methods).
  let unknownHeld = 0n;
  events.forEach((event, index) => {
    if (event.direction === 'in') {
      const cost = costs[index]!;
      holding += event.units;
      carrying += cost ?? 0n;
      if (cost === null) unknownHeld += method === 'hifo' ? event.units : event.units * UNKNOWN_WEIGHT;
      results.push({ seq: event.seq, cost, costKnown: cost !== null, unmatched: 0n, proceeds: null, gain: null, holding, carrying, carryingKnown: unknownHeld === 0n });
      return;
    }
    const segments = real.get(event.seq) ?? [];
    let cost = 0n;
    let unmatched = 0n;
    for (const segment of segments) {
      if (segment.rule === 'unmatched') unmatched += segment.quantity;
      else cost += segment.cost ?? 0n;
    }
    const unknown = unknownCost.get(event.seq) ?? 0n;
    holding -= event.units - unmatched;
    carrying -= cost;
    unknownHeld -= unknown;
    const costKnown = unmatched === 0n && unknown === 0n;
    const proceeds = event.basis === 'carrying_cost' ? cost : event.value;
    results.push({
      seq: event.seq,
      cost,
      costKnown,
      unmatched,
      proceeds,
      gain: costKnown && proceeds !== null ? proceeds - cost : null,
      holding,
      carrying,
      carryingKnown: unknownHeld === 0n,
    });
  });
  return results;
}

/**
 * The lots one disposal took under `method` (for `exledger explain`): its segments, each with the
 * lot's seq (null: the average or section 104 pool, or units beyond what was held) and whether
 * the lot's cost is known. `events` hold each lot's cost as its value (a carried lot's already
 * resolved, basis 'market').
 */
export function lotsTaken(method: CostMethod, events: readonly CoinEvent[], disposalSeq: bigint): (Segment & { costKnown: boolean })[] {
  const costs = events.map((event) => (event.direction === 'in' ? event.value : null));
  const segments = segmentsOf(method, events, (index) => costs[index] ?? 0n).get(disposalSeq) ?? [];
  const indexOf = new Map(events.map((event, index) => [event.seq, index]));
  return segments.map((segment) => ({
    ...segment,
    costKnown: segment.rule !== 'unmatched' && (segment.lotSeq === null ? true : costs[indexOf.get(segment.lotSeq)!] !== null),
  }));
}

/** The segments of each disposal (by seq) when lots cost `costOf(index)`. */
function segmentsOf(method: CostMethod, events: readonly CoinEvent[], costOf: (index: number) => bigint): Map<bigint, Segment[]> {
  const bySeq = new Map<bigint, Segment[]>();
  const push = (...found: Segment[]): number => {
    for (const segment of found) {
      const list = bySeq.get(segment.sellSeq);
      if (list === undefined) bySeq.set(segment.sellSeq, [segment]);
      else list.push(segment);
    }
    return 0;
  };
  if (method === 'average') {
    matchAverage(events, costOf, push);
    return bySeq;
  }
  const trades: TradeEvent[] = events.map((event, index) =>
    event.direction === 'in'
      ? { seq: event.seq, isOpening: false, side: 'buy', day: event.day, unitsIn: event.units, cost: costOf(index), quantityOut: 0n, proceeds: 0n }
      : { seq: event.seq, isOpening: false, side: 'sell', day: event.day, unitsIn: 0n, cost: 0n, quantityOut: event.units, proceeds: 0n },
  );
  matchLots(method as MatchMethod, trades, { push });
  return bySeq;
}

/** Moving weighted average: a disposal takes its share of the pool's cost; units beyond the pool are unmatched. */
function matchAverage(events: readonly CoinEvent[], costOf: (index: number) => bigint, push: (...segments: Segment[]) => number): void {
  let units = 0n;
  let cost = 0n;
  events.forEach((event, index) => {
    if (event.direction === 'in') {
      units += event.units;
      cost += costOf(index);
      return;
    }
    const matched = event.units < units ? event.units : units;
    if (matched > 0n) {
      const taken = shareOf(cost, matched, units);
      push({ sellSeq: event.seq, rule: 'pool', lotSeq: null, quantity: matched, cost: taken, proceeds: 0n });
      units -= matched;
      cost -= taken;
    }
    if (event.units > matched) push({ sellSeq: event.seq, rule: 'unmatched', lotSeq: null, quantity: event.units - matched, cost: null, proceeds: 0n });
  });
}

/**
 * Matches every pool of one coin, carrying withdrawals' costs to the deposits matched with them:
 * a carried deposit's cost is the cost of a withdrawal in another pool, which may itself hold a
 * carried lot, so the pools are matched again until no carried cost changes (a chain of n
 * transfers settles in n + 1 rounds). A withdrawal is known by its entryRef.
 */
export function matchCoinPools(
  method: CostMethod,
  pools: ReadonlyMap<string, readonly CoinEvent[]>,
): Map<string, CoinEventResult[]> {
  const carried = new Map<string, bigint | null>();
  const anyCarried = [...pools.values()].some((events) => events.some((event) => event.basis === 'carried'));
  for (let round = 0; ; round++) {
    const results = new Map<string, CoinEventResult[]>();
    for (const [pool, events] of pools) results.set(pool, matchCoin(method, events, (ref) => carried.get(ref)));
    if (!anyCarried) return results;
    let changed = false;
    for (const [pool, events] of pools) {
      const poolResults = results.get(pool)!;
      events.forEach((event, index) => {
        if (event.basis !== 'carrying_cost') return;
        const ref = event.entryRef;
        if (ref === undefined) return;
        const result = poolResults[index]!;
        const cost = result.costKnown ? result.cost : null;
        if (!carried.has(ref) || carried.get(ref) !== cost) {
          carried.set(ref, cost);
          changed = true;
        }
      });
    }
    if (!changed || round > pools.size + 1) return results;
  }
}
