import { describe, expect, it } from 'vitest';
import { EVENTS_PER_STEP, LOT_METHODS, matchLots, matchLotsSteps, matchLotsYielding, type Segment, type TradeEvent } from '../src/models/lot-matching.ts';

/**
 * The lot methods match a partition in steps, and int_spot_lot_segments lets the event loop run
 * between them: a build stopped by SIGTERM while matching millions of events acts on the signal
 * within a step (by hand, on the 1M benchmark history with lifo, hifo and uk: exit 0.4 s after
 * the signal, against 11.4 s when a partition was matched in one go). The segments are the same.
 */

const UNIT = 10n ** 18n;
const MONEY = 10n ** 12n;

/** A buy of one unit and a sell of it, repeated: `pairs` of each, 1,000 events a day. */
function buysAndSells(pairs: number): TradeEvent[] {
  const events: TradeEvent[] = [];
  for (let index = 0; index < 2 * pairs; index += 1) {
    const sell = index % 2 === 1;
    events.push({
      seq: BigInt(index + 1),
      isOpening: false,
      side: sell ? 'sell' : 'buy',
      day: 20_000 + Math.floor(index / 1_000),
      unitsIn: sell ? 0n : UNIT,
      cost: sell ? 0n : BigInt(100 + (index % 7)) * MONEY,
      quantityOut: sell ? UNIT : 0n,
      proceeds: sell ? 110n * MONEY : 0n,
    });
  }
  return events;
}

describe('lot matching in steps (src/models/lot-matching.ts)', () => {
  const events = buysAndSells(Math.ceil((3 * EVENTS_PER_STEP) / 2) + 5);

  it.each(LOT_METHODS)('%s: pauses after every EVENTS_PER_STEP events, and the event loop runs mid-match, with the same segments as one go', async (method) => {
    const whole: Segment[] = [];
    matchLots(method, events, whole);
    expect(whole.length).toBeGreaterThanOrEqual(events.length / 2);

    let steps = 0;
    const counted: Segment[] = [];
    for (const generator = matchLotsSteps(method, events, counted); generator.next().done !== true; ) steps += 1;
    expect(counted).toEqual(whole);
    // lifo and hifo pause once per EVENTS_PER_STEP events; uk once in grouping the events into days and once or more in matching them.
    if (method === 'uk') expect(steps).toBeGreaterThanOrEqual(3);
    else expect(steps).toBe(Math.floor(events.length / EVENTS_PER_STEP));

    const yielding: Segment[] = [];
    let segmentsAtFirstTurn: number | undefined;
    setImmediate(() => (segmentsAtFirstTurn = yielding.length));
    await matchLotsYielding(method, events, yielding);
    expect(yielding).toEqual(whole);
    // The callback ran while the match was under way: the loop was not held for the whole partition.
    expect(segmentsAtFirstTurn).toBeDefined();
    expect(segmentsAtFirstTurn!).toBeLessThan(whole.length);
  });
});
