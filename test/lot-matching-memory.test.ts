import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { lotMatcher, type MatchMethod, type TradeEvent } from '../src/models/lot-matching.ts';

/**
 * A matcher fed a partition's events one at a time holds what its method needs, never the events
 * it has settled (issue 28, item 3: a symbol of 30M fills must build with the memory of one of
 * 3M): lifo, hifo and fifo their open lots, uk the days whose 30 following days are not all read.
 * A million events go through each; the heap after them, garbage collected, is within a few MB of
 * the heap after the first hundred thousand (a matcher that kept its events would hold ~400 MB).
 */
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const MiB = 1024 ** 2;
const UNIT = 10n ** 18n;
const MONEY = 10n ** 12n;
const EVENTS = 1_000_000;
const PER_DAY = 1_000;

/** A buy of one unit, then a sell of it, 1,000 events a day: the open lots stay few, the days many. */
function eventAt(index: number): TradeEvent {
  const sell = index % 2 === 1;
  return {
    seq: BigInt(index + 1),
    isOpening: false,
    side: sell ? 'sell' : 'buy',
    day: 18_000 + Math.floor(index / PER_DAY),
    unitsIn: sell ? 0n : UNIT,
    cost: sell ? 0n : BigInt(100 + (index % 7)) * MONEY,
    quantityOut: sell ? UNIT : 0n,
    proceeds: sell ? 110n * MONEY : 0n,
    at: BigInt(index) * 1_000_000n,
  };
}

const heapUsed = (): number => {
  gc();
  return process.memoryUsage().heapUsed;
};

describe('lot matching memory does not grow with the events', () => {
  it.each<MatchMethod>(['fifo', 'lifo', 'hifo', 'uk'])('%s: a million events through one matcher, the heap flat after the first 100,000', (method) => {
    let segments = 0;
    let units = 0n;
    const matcher = lotMatcher(method, {
      push: (...found) => {
        segments += found.length;
        for (const segment of found) units += segment.quantity;
        return 0;
      },
    });
    let early = 0;
    for (let index = 0; index < EVENTS; index += 1) {
      if (index === 100_000) early = heapUsed();
      matcher.push(eventAt(index));
    }
    const late = heapUsed();
    matcher.end();
    // Every sell was settled in full (the matcher did its work, not only held).
    expect(units).toBe(BigInt(EVENTS / 2) * UNIT);
    expect(segments).toBeGreaterThanOrEqual(EVENTS / 2);
    expect((late - early) / MiB).toBeLessThan(16);
  }, 120_000);
});
