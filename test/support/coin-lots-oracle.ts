/**
 * The books' lot matching as it was before it streamed (issue 28): every event of a pool in an
 * array, each method matched over the whole array, then the carried costs' rounds over whole
 * pools. Kept here as the reference the streaming match (src/books/coin-lots.ts,
 * matchCoinStream) is compared with, result for result (test/coin-lots-stream.test.ts).
 */
import type { CoinEvent, CoinEventResult } from '../../src/books/coin-lots.ts';
import { matchLots, shareOf, type MatchMethod, type Segment, type TradeEvent } from '../../src/models/lot-matching.ts';
import type { CostMethod } from '../../src/models/settings.ts';

/** Indicator cost per unit of a lot of unknown cost (as src/books/coin-lots.ts). */
const UNKNOWN_WEIGHT = 10n ** 40n;

/**
 * Matches one pool's events of one coin under `method`. `carriedCost(ref)` gives a carried
 * deposit's cost (undefined or null: unknown).
 */
function matchCoin(method: CostMethod, events: readonly CoinEvent[], carriedCost: (ref: string) => bigint | null | undefined = () => undefined): CoinEventResult[] {
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

/** The segments of each disposal (by seq) when lots cost `costOf(index)`. */
export function segmentsOf(method: CostMethod, events: readonly CoinEvent[], costOf: (index: number) => bigint): Map<bigint, Segment[]> {
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
