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

  /** A heap that grows by what is allocated and, collected, falls back to what is live. */
  function heap(live: number) {
    const state = { used: live, live, collections: 0 };
    const bound = new GarbageBound(100 * MB, () => state.used, () => {
      state.collections += 1;
      state.used = state.live;
    });
    return { state, bound };
  }

  it('collects when the heap has grown by the bound since the last collection, not before', () => {
    const { state, bound } = heap(50 * MB);
    // (before any collection, from an empty heap)
    state.used = 99 * MB;
    bound.check();
    expect(state.collections).toBe(0);
    state.used = 100 * MB;
    bound.check();
    expect(state.collections).toBe(1);
    expect(state.used).toBe(50 * MB);
    state.used = 149 * MB;
    bound.check();
    expect(state.collections).toBe(1);
    state.used = 150 * MB;
    bound.check();
    expect(state.collections).toBe(2);
    // From the heap left live, not from the first floor: the live heap grew (lots still open).
    state.live = 120 * MB;
    state.used = 200 * MB;
    bound.check();
    expect(state.collections).toBe(3);
    state.used = 219 * MB;
    bound.check();
    expect(state.collections).toBe(3);
    state.used = 220 * MB;
    bound.check();
    expect(state.collections).toBe(4);
    expect(bound.collections).toBe(4);
  });

  it("counts from V8's own collections too: a heap that fell below the floor is the new floor", () => {
    const { state, bound } = heap(50 * MB);
    state.used = 100 * MB;
    bound.check();
    expect(state.collections).toBe(1);
    state.used = 140 * MB;
    bound.check();
    // V8 collected by itself, and less is live than after the last collection (lots were sold).
    state.used = 30 * MB;
    bound.check();
    state.used = 129 * MB;
    bound.check();
    expect(state.collections).toBe(1);
    state.used = 130 * MB;
    bound.check();
    expect(state.collections).toBe(2);
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
