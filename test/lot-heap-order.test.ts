import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { matchLots, type Segment, type TradeEvent } from '../src/models/lot-matching.ts';

// hifo's heap compares lots by their unit costs as doubles where those are far apart, and exactly
// (in bigints) where they are not (src/models/lot-matching.ts LotHeap). Lots whose unit costs
// differ in the 17th digit and beyond, amounts far beyond 2^53, and equal unit costs written
// differently (2/4 and 3/6) must still come out in the exact order: the highest unit cost first,
// the earliest of equal ones. The reference below sorts the open lots exactly at every sell.

type Buy = { units: bigint; cost: bigint };

/** hifo by the definition: each sell takes from the open lot of highest cost / units (exactly), the earliest of equal ones. */
function referenceHifo(events: readonly TradeEvent[]): Array<[bigint, bigint | null, bigint]> {
  const open: Array<{ seq: bigint; units: bigint; cost: bigint; left: bigint }> = [];
  const out: Array<[bigint, bigint | null, bigint]> = [];
  for (const event of events) {
    if (event.side === 'buy') {
      open.push({ seq: event.seq, units: event.unitsIn, cost: event.cost, left: event.unitsIn });
      continue;
    }
    let remaining = event.quantityOut;
    while (remaining > 0n) {
      const held = open.filter((lot) => lot.left > 0n);
      if (held.length === 0) {
        out.push([event.seq, null, remaining]);
        break;
      }
      held.sort((a, b) => {
        const difference = b.cost * a.units - a.cost * b.units;
        return difference > 0n ? 1 : difference < 0n ? -1 : a.seq < b.seq ? -1 : 1;
      });
      const lot = held[0]!;
      const taken = lot.left < remaining ? lot.left : remaining;
      lot.left -= taken;
      remaining -= taken;
      out.push([event.seq, lot.seq, taken]);
    }
  }
  return out;
}

function eventsOf(steps: ReadonlyArray<{ buy: Buy } | { sell: bigint }>): TradeEvent[] {
  return steps.map((step, index) => {
    const seq = BigInt(index + 1);
    return 'buy' in step
      ? { seq, isOpening: false, side: 'buy', day: 1, unitsIn: step.buy.units, cost: step.buy.cost, quantityOut: 0n, proceeds: 0n, at: seq }
      : { seq, isOpening: false, side: 'sell', day: 1, unitsIn: 0n, cost: 0n, quantityOut: step.sell, proceeds: step.sell, at: seq };
  });
}

function hifo(events: readonly TradeEvent[]): Array<[bigint, bigint | null, bigint]> {
  const segments: Segment[] = [];
  matchLots('hifo', events, segments);
  return segments.map((segment) => [segment.sellSeq, segment.lotSeq, segment.quantity]);
}

describe('hifo: the heap order is the exact order of unit costs', () => {
  it('tells apart unit costs equal as doubles, and keeps equal ones (written differently) in the order bought', () => {
    const base = 10n ** 30n; // far beyond 2^53: Number() rounds it
    const events = eventsOf([
      { buy: { units: 10n ** 18n, cost: base } },
      { buy: { units: 10n ** 18n, cost: base + 1n } }, // dearer by 1e-30 of the cost: the same double
      { buy: { units: 2n * 10n ** 18n, cost: 2n * base } }, // the first one's unit cost, written otherwise
      { buy: { units: 10n ** 18n, cost: base - 1n } },
      { sell: 4n * 10n ** 18n },
      { sell: 10n ** 18n },
    ]);
    expect(Number(base + 1n) / 1e18).toBe(Number(base) / 1e18);
    expect(hifo(events)).toEqual([
      [5n, 2n, 10n ** 18n],
      [5n, 1n, 10n ** 18n],
      [5n, 3n, 2n * 10n ** 18n],
      [6n, 4n, 10n ** 18n],
    ]);
    expect(hifo(events)).toEqual(referenceHifo(events));
  });

  it('matches the reference on random histories of near-equal, equal and far-apart unit costs (property)', () => {
    // Unit costs around one price, apart by a few parts in 10^k for any k up to 30, amounts up to
    // 2^100: every branch of the comparison (doubles apart, doubles close, exactly equal).
    const price = 10n ** 22n;
    const buy = fc.record({
      units: fc.bigInt({ min: 1n, max: 2n ** 60n }),
      digits: fc.integer({ min: 0, max: 30 }),
      nudge: fc.bigInt({ min: -3n, max: 3n }),
    }).map(({ units, digits, nudge }) => ({ buy: { units, cost: (units * price * (10n ** BigInt(digits) + nudge)) / 10n ** BigInt(digits) } }));
    const sell = fc.bigInt({ min: 1n, max: 2n ** 61n }).map((quantity) => ({ sell: quantity }));
    fc.assert(
      fc.property(fc.array(fc.oneof({ arbitrary: buy, weight: 3 }, { arbitrary: sell, weight: 2 }), { minLength: 1, maxLength: 60 }), (steps) => {
        const events = eventsOf(steps);
        expect(hifo(events)).toEqual(referenceHifo(events));
      }),
      { numRuns: 400, seed: 28 },
    );
  });
});
