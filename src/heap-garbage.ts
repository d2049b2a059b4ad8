import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Keeps the JavaScript heap's garbage within a bound while a model computed in TypeScript streams
 * a table through it (issue 28, item 3: memory bounded by the configuration, not by the data).
 *
 * V8 collects its old generation when the heap reaches a limit it sets from what survived the
 * last collection and from the machine's (or the cgroup's) memory, not from ours: while the lot
 * matching of the 30M benchmark history ran, the heap swung between ~1.1 and ~2.2 GB, most of it
 * lots already matched (they live long enough to be promoted before they die), and DuckDB's 3 GB
 * came on top: a peak of 5.44 GiB (`/usr/bin/time`). Collecting whenever the heap has grown by `allowed` since the
 * last collection keeps it within what it holds live plus that.
 */
export class GarbageBound {
  /** The heap used after the last collection (or lower: V8's own collections may leave less). */
  private floor = 0;
  collections = 0;

  constructor(
    private readonly allowed: number,
    private readonly heapUsed: () => number,
    private readonly collect: () => void,
  ) {}

  /** Collects the garbage if the heap has grown by `allowed` or more since the last collection. */
  check(): void {
    const used = this.heapUsed();
    if (used < this.floor) this.floor = used;
    if (used - this.floor < this.allowed) return;
    this.collect();
    this.collections += 1;
    this.floor = this.heapUsed();
  }
}

/**
 * The garbage allowed above the live heap. The lot matching of the 10M benchmark history (five
 * cost methods, `build --select intermediate.int_spot_lot_segments --full-refresh`, 2026-11-29):
 * 22 collections of 0.38 s each, and the same 194 s as without them (V8 spends that time on its
 * own collections otherwise); its peak 3.65 GiB instead of 4.47 GiB.
 */
export const GARBAGE_ALLOWED = 256 * 1024 ** 2;

let collector: (() => void) | undefined;

/**
 * A full collection of V8's heap, as --expose-gc gives it to a context made after the flag is set
 * (as jest's leak detection gets it): no flag on the command line, which `npx exledger`, cron's
 * line and `npm start` would all have to carry.
 */
export function collectHeapGarbage(): void {
  if (collector === undefined) {
    setFlagsFromString('--expose-gc');
    collector = runInNewContext('gc') as () => void;
  }
  collector();
}

/** The process's bound (see GarbageBound), checked by Database.streamCommitted as its reader asks for more rows. */
export const heapGarbage = new GarbageBound(GARBAGE_ALLOWED, () => getHeapStatistics().used_heap_size, collectHeapGarbage);
