import { getHeapStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { collectHeapGarbage, GarbageBound } from '../src/heap-garbage.ts';

/**
 * The JS heap's garbage is collected once it has grown by the bound since the last collection
 * (issue 28, item 3: a model computed in TypeScript keeps its heap within what it holds live plus
 * the bound, whatever V8 would have let it grow to).
 */
describe('GarbageBound', () => {
  const MB = 1024 ** 2;

  /**
   * A heap that, collected, falls back to what is live; each step sets the heap used (and what is
   * live, when given), checks, and gives the collections made so far.
   */
  function collectionsAlong(steps: readonly { usedMb: number; liveMb?: number }[]): number[] {
    const state = { used: 0, live: 50 * MB, collections: 0 };
    const bound = new GarbageBound(100 * MB, () => state.used, () => {
      state.collections += 1;
      state.used = state.live;
    });
    return steps.map(({ usedMb, liveMb }) => {
      if (liveMb !== undefined) state.live = liveMb * MB;
      state.used = usedMb * MB;
      bound.check();
      expect(bound.collections).toBe(state.collections);
      return state.collections;
    });
  }

  it('collects when the heap has grown by the bound since the last collection, not before', () => {
    // From an empty heap before the first collection; then from the 50 MB it left live; then,
    // more being live (lots still open), from the 120 MB the next one left.
    const steps = [{ usedMb: 99 }, { usedMb: 100 }, { usedMb: 149 }, { usedMb: 150 }, { usedMb: 200, liveMb: 120 }, { usedMb: 219 }, { usedMb: 220 }];
    expect(collectionsAlong(steps)).toEqual([0, 1, 1, 2, 3, 3, 4]);
  });

  it("counts from V8's own collections too: a heap that fell below the floor is the new floor", () => {
    // After the first collection (50 MB left), V8 collects by itself down to 30 MB (lots were
    // sold): the next collection comes at 130 MB, not at 150.
    const steps = [{ usedMb: 100 }, { usedMb: 140 }, { usedMb: 30 }, { usedMb: 129 }, { usedMb: 130 }];
    expect(collectionsAlong(steps)).toEqual([1, 1, 1, 1, 2]);
  });

  it('collects the real heap without --expose-gc on the command line', () => {
    expect(typeof (globalThis as { gc?: unknown }).gc).toBe('undefined');
    const before = getHeapStatistics().used_heap_size;
    // 64 MB of garbage that lives past young-generation collections before it is dropped.
    let kept: number[][] | undefined = Array.from({ length: 64 }, () => Array.from({ length: 128 * 1024 }, (_, index) => index + 0.5));
    expect(kept.length).toBe(64);
    kept = undefined;
    const withGarbage = getHeapStatistics().used_heap_size;
    expect(withGarbage - before).toBeGreaterThan(48 * MB);
    collectHeapGarbage();
    expect(getHeapStatistics().used_heap_size).toBeLessThan(withGarbage - 48 * MB);
  });
});
