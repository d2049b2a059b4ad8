/**
 * Exact sliding-window weight counting: every charge is kept with its time, and a budget
 * holds what was charged in the last `windowMs`. exchange-notes.md "Rate limits": each
 * endpoint has its own budget per IP and, separately, per UID over a 10 s window; the
 * details (fixed or sliding, burst limits) are unknown, so the sandbox takes the strict
 * reading: a request fits only if the whole window's weight plus its own stays within quota.
 */

interface WindowLog {
  times: number[];
  weights: number[];
  /** Index of the oldest charge still in the window. */
  head: number;
  sum: number;
}

/** Weight charged per key over a sliding window. */
export class SlidingWindows {
  private readonly windowMs: number;
  private readonly logs = new Map<string, WindowLog>();

  constructor(windowMs: number) {
    this.windowMs = windowMs;
  }

  /** Weight charged to `key` in the window ending at `now` (charges older than now - windowMs have expired). */
  used(key: string, now: number): number {
    const log = this.logs.get(key);
    if (log === undefined) return 0;
    this.expire(log, now);
    return log.sum;
  }

  /** Whether charging `weight` to `key` now would stay within `quota`. */
  fits(key: string, weight: number, quota: number, now: number): boolean {
    return this.used(key, now) + weight <= quota;
  }

  /** Charges `weight` to `key` at `now`. */
  charge(key: string, weight: number, now: number): void {
    if (weight <= 0) return;
    let log = this.logs.get(key);
    if (log === undefined) {
      log = { times: [], weights: [], head: 0, sum: 0 };
      this.logs.set(key, log);
    }
    this.expire(log, now);
    log.times.push(now);
    log.weights.push(weight);
    log.sum += weight;
  }

  private expire(log: WindowLog, now: number): void {
    const cutoff = now - this.windowMs;
    while (log.head < log.times.length && (log.times[log.head] as number) <= cutoff) {
      log.sum -= log.weights[log.head] as number;
      log.head += 1;
    }
    // Compact once the expired prefix dominates, so memory stays proportional to the window.
    if (log.head > 1024 && log.head * 2 > log.times.length) {
      log.times = log.times.slice(log.head);
      log.weights = log.weights.slice(log.head);
      log.head = 0;
    }
  }
}
