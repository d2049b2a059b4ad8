/**
 * A min-heap of timed events for the account simulation. Events pop in time order; events at
 * the same millisecond pop in the order they were pushed, which is what makes the generated
 * history deterministic and "ascending by t, ties in generation order" (model.ts).
 */

interface Entry<E> {
  t: number;
  seq: number;
  event: E;
}

/** Timed events, earliest first, ties first-in first-out. */
export class EventQueue<E> {
  private readonly heap: Array<Entry<E>> = [];
  private seq = 0;

  /** Number of events waiting. */
  get size(): number {
    return this.heap.length;
  }

  /** Time of the earliest event, or +Infinity when empty. */
  peekTime(): number {
    return this.heap[0]?.t ?? Number.POSITIVE_INFINITY;
  }

  /** Adds an event at epoch ms t. */
  push(t: number, event: E): void {
    const heap = this.heap;
    const entry: Entry<E> = { t, seq: this.seq++, event };
    let i = heap.length;
    heap.push(entry);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = heap[parent] as Entry<E>;
      if (!before(entry, p)) break;
      heap[i] = p;
      i = parent;
    }
    heap[i] = entry;
  }

  /** Removes and returns the earliest event (its time was {@link peekTime}); throws when empty. */
  pop(): E {
    const heap = this.heap;
    const top = heap[0];
    if (top === undefined) throw new RangeError('pop from an empty event queue');
    const last = heap.pop() as Entry<E>;
    if (heap.length > 0) {
      let i = 0;
      const n = heap.length;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= n) break;
        const right = left + 1;
        let child = left;
        if (right < n && before(heap[right] as Entry<E>, heap[left] as Entry<E>)) child = right;
        const c = heap[child] as Entry<E>;
        if (!before(c, last)) break;
        heap[i] = c;
        i = child;
      }
      heap[i] = last;
    }
    return top.event;
  }
}

function before<E>(a: Entry<E>, b: Entry<E>): boolean {
  return a.t < b.t || (a.t === b.t && a.seq < b.seq);
}
