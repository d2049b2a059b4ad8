import { AsyncLocalStorage } from 'node:async_hooks';
import Bottleneck from 'bottleneck';
import { ENDPOINTS, type BaseKind, type EndpointId } from './endpoints.ts';

/**
 * The one rate layer: request weight budgets, spent through bottleneck.
 *
 * The exchange counts weight per endpoint, per IP and separately per UID, over a sliding window
 * (exchange-notes.md "Rate limits": 500 per 10 s for /api/v2, 1000 per 10 s for /capi/v2).
 * Each (scope, endpoint) gets a token bucket: a bottleneck reservoir that starts at `capacity`
 * and is refilled at `rate` by elapsed wall time. A bucket never lets more than
 * capacity + rate * window through in any window, so choosing
 *   capacity + rate * windowMs = utilization * quota
 * keeps every sliding window under the quota with a margin of (1 - utilization) for network
 * jitter, while the long-run rate stays close to the quota. A 429 (the notes found bursts may be
 * limited tighter than documented) holds that bucket for a whole window and slows it to what
 * the exchange let through; after six quiet windows each further one gives back a twentieth.
 * What was learned can be taken out (learnedRates) and given to the next process's budget
 * (adoptLearnedRates), which then starts at it. Requests waiting for the same bucket go in rank
 * order (ranked): the sync ranks the window whose turn it is to commit first.
 */

/** The budget of one endpoint group. */
export interface BudgetGroup {
  /** Weight per window, per endpoint, per IP and per UID. */
  quota: number;
  /** Length of the exchange's sliding window, ms. */
  windowMs: number;
}

/** Options of a rate budget. */
export interface RateBudgetOptions {
  /** /api/v2 endpoints (spot, account, public, rebate). @default { quota: 500, windowMs: 10000 } */
  spot: BudgetGroup;
  /** /capi/v2 endpoints (futures). @default { quota: 1000, windowMs: 10000 } */
  contract: BudgetGroup;
  /** Share of the quota the client may have in any window; the rest absorbs jitter. @default 0.97 */
  utilization: number;
  /** Bucket capacity (the burst allowed after a pause), as a share of the quota; at least the endpoint's weight. @default 0.03 */
  burst: number;
}

/** Defaults from exchange-notes.md "Rate limits". */
export const DEFAULT_RATE_BUDGET: RateBudgetOptions = Object.freeze({
  spot: Object.freeze({ quota: 500, windowMs: 10_000 }),
  contract: Object.freeze({ quota: 1000, windowMs: 10_000 }),
  utilization: 0.97,
  burst: 0.03,
});

/** Weight spent and pressure seen by one bucket. */
export interface BucketStats {
  scope: string;
  endpoint: EndpointId;
  requests: number;
  weight: number;
  rateLimited: number;
  /** Current share of the nominal rate (1 unless 429s were seen). */
  factor: number;
}

/**
 * What a budget learned from 429s about the exchange's real rate for one endpoint and scope, to
 * be remembered by the next process (which would otherwise trip the limit again to relearn it).
 */
export interface LearnedRate {
  /** 'ip' (shared by every key leaving from this address) or 'uid:<API key>', as in BucketStats. */
  scope: string;
  endpoint: EndpointId;
  /**
   * Weight per second the budget may spend: 90% of what the exchange let through before it said
   * 429 (the bucket's capacity plus its refill over one window, per second). null: the budget is
   * back at its configured rate, nothing to remember.
   */
  weightPerSecond: number | null;
}

const TICK_MS = 20;

/** Counts requests waiting for weight in every bucket of one budget. */
interface WaitCounter {
  add(delta: number): void;
}
const MIN_FACTOR = 0.05;
/** Quiet windows after a 429 before the rate starts to rise again. */
const PROBE_AFTER_WINDOWS = 6;
/** bottleneck's priorities: 0 is released first, 9 last. */
const LOWEST_RANK = 9;

class WeightBucket {
  readonly limiter: Bottleneck;
  readonly capacity: number;
  /** Nominal refill rate, weight per ms. */
  readonly rate: number;
  factor = 1;
  requests = 0;
  weight = 0;
  rateLimited = 0;
  private lastRefill = Date.now();
  private holdUntil = 0;
  private lastPenalty = 0;
  /** The rate does not probe up before this (it stands for a while after it was learned). */
  private steadyUntil = 0;
  private lastRecovery = Date.now();
  private readonly createdAt = Date.now();
  /** Whether the rate was learned (a 429, or adopted from an earlier process): then it is worth remembering. */
  private learned = false;
  private refilling = false;
  private tokens: number;
  /** (time, weight) of each request released in the last window, from index sentStart on; a refusal (429) adds its weight negated. */
  private readonly sent: [number, number][] = [];
  private sentStart = 0;

  constructor(
    readonly scope: string,
    readonly endpoint: EndpointId,
    private readonly group: BudgetGroup,
    options: RateBudgetOptions,
    /** The endpoint's weight in this scope. */
    private readonly requestWeight: number,
    private readonly waiting: WaitCounter,
    private readonly onLearned: () => void,
    /** Why the budget was closed (see RateBudget.close), once it is. */
    private readonly closedBy: () => unknown,
  ) {
    const budget = group.quota * options.utilization;
    // At least one and a half requests: a request waiting for tokens is released on a refill
    // tick before the bucket overflows, so no tokens are thrown away between ticks.
    this.capacity = Math.min(budget, Math.max(1.5 * requestWeight, group.quota * options.burst));
    this.rate = (budget - this.capacity) / group.windowMs;
    this.tokens = this.capacity;
    this.limiter = new Bottleneck({ reservoir: this.capacity, maxConcurrent: null });
  }

  schedule<T>(weight: number, rank: number, task: () => Promise<T>): Promise<T> {
    // Counted from here until the bucket releases it: while a request waits for weight, only
    // the refill ticker can release it, so the ticker must keep the process alive meanwhile.
    this.waiting.add(1);
    let released = false;
    const release = () => {
      if (!released) this.waiting.add(-1);
      released = true;
    };
    // A request waiting for weight lets those of a lower rank number pass (bottleneck releases
    // the head of the best non-empty priority queue first).
    const scheduled = this.limiter.schedule({ weight, priority: rank }, () => {
      release();
      this.requests += 1;
      this.weight += weight;
      this.tokens -= weight;
      const now = Date.now();
      this.sent.push([now, weight]);
      this.forgetBefore(now - this.group.windowMs);
      return task();
    });
    // A job dropped by close() never runs: it no longer waits either, and fails with the reason
    // the budget was closed for (an InterruptedError when a signal stopped the work), not with
    // bottleneck's own "This limiter has been stopped".
    return scheduled.catch((error: unknown) => {
      release();
      throw error instanceof Bottleneck.BottleneckError ? (this.closedBy() ?? error) : error;
    });
  }

  /** Weight released in the last window less what the exchange refused (what it counted when it said 429). */
  private sentInWindow(now: number): number {
    this.forgetBefore(now - this.group.windowMs);
    let sum = 0;
    for (let index = this.sentStart; index < this.sent.length; index += 1) sum += this.sent[index]![1];
    return Math.max(0, sum);
  }

  /** Drops releases older than `since`; the log never holds more than one window. */
  private forgetBefore(since: number): void {
    while (this.sentStart < this.sent.length && this.sent[this.sentStart]![0] <= since) this.sentStart += 1;
    if (this.sentStart > 1024 && this.sentStart * 2 > this.sent.length) {
      this.sent.splice(0, this.sentStart);
      this.sentStart = 0;
    }
  }

  /** Adds the tokens earned since the last refill, capped at capacity. */
  async refill(now: number): Promise<void> {
    if (this.refilling) return;
    const elapsed = now - this.lastRefill;
    this.lastRefill = now;
    if (now < this.holdUntil) return;
    if (now - this.lastRecovery >= this.group.windowMs) {
      this.lastRecovery = now;
      // The learned limit stands for a while before the rate creeps back up to probe for more.
      if (this.factor < 1 && now >= this.steadyUntil) {
        this.factor = Math.min(1, this.factor + 0.05);
        this.onLearned();
      }
    }
    // `tokens` mirrors the reservoir (bottleneck's own count is only readable asynchronously),
    // so an idle, full bucket costs nothing per tick.
    const add = Math.min(this.capacity - this.tokens, this.rate * this.factor * elapsed);
    if (add <= 1e-9) return;
    this.refilling = true;
    try {
      this.tokens += add;
      await this.limiter.incrementReservoir(add);
    } finally {
      this.refilling = false;
    }
  }

  /**
   * A 429: empty the bucket, hold it for one window, and slow down (once per window) to 90% of
   * the weight the exchange let through in the window before it refused: that is its real quota
   * for us (a shared key, a tighter burst limit), learned in one step instead of by halving.
   * A bucket younger than a window may have been refused for requests of an earlier process that
   * the exchange still counts (a killed sync restarted at once): it slows at most by half, so one
   * such 429 cannot drop it to the floor (and the floor be remembered by the next run).
   */
  async penalize(now: number): Promise<void> {
    this.rateLimited += 1;
    // The refused request was not let through: a rate learned with it counted would be too high
    // by the requests in flight when the limit was reached.
    this.sent.push([now, -this.requestWeight]);
    this.holdUntil = now + this.group.windowMs;
    this.lastRecovery = this.holdUntil;
    if (now - this.lastPenalty >= this.group.windowMs) {
      const measured = (0.9 * this.sentInWindow(now) - this.capacity) / (this.rate * this.group.windowMs);
      const young = now - this.createdAt < this.group.windowMs;
      const learned = young ? Math.max(measured, this.factor * 0.5) : measured;
      this.factor = Math.max(MIN_FACTOR, Math.min(learned, this.factor * 0.9));
      this.lastPenalty = now;
      this.steadyUntil = now + PROBE_AFTER_WINDOWS * this.group.windowMs;
      this.learned = true;
      this.onLearned();
    }
    this.tokens = 0;
    await this.limiter.updateSettings({ reservoir: 0 });
  }

  /** The learned rate, weight per second (null when back at the configured rate); undefined if nothing was learned. */
  learnedRate(): number | null | undefined {
    if (!this.learned) return undefined;
    if (this.factor >= 1) return null;
    return ((this.capacity + this.rate * this.factor * this.group.windowMs) / this.group.windowMs) * 1000;
  }

  /**
   * Starts from a rate learned earlier (weightPerSecond as learnedRate gives it), unless this
   * bucket already learned a slower one; the rate then stands and probes up as after a 429.
   */
  adopt(weightPerSecond: number, now: number): void {
    const perWindow = (weightPerSecond * this.group.windowMs) / 1000;
    const factor = Math.max(MIN_FACTOR, Math.min(1, (perWindow - this.capacity) / (this.rate * this.group.windowMs)));
    if (factor < this.factor) this.factor = factor;
    this.learned = true;
    // Probing up waits as after a 429; a 429 may still lower the rate at once.
    this.steadyUntil = now + PROBE_AFTER_WINDOWS * this.group.windowMs;
    this.lastRecovery = now;
  }

  stats(): BucketStats {
    return { scope: this.scope, endpoint: this.endpoint, requests: this.requests, weight: this.weight, rateLimited: this.rateLimited, factor: this.factor };
  }
}

/**
 * The request-weight budget of one process. Create one and hand it to every ExchangeClient: the
 * per-IP buckets are shared by all of them (every account of a run leaves from the same IP),
 * the per-UID buckets belong to the API key named by each request.
 */
export class RateBudget {
  readonly options: RateBudgetOptions;
  private readonly buckets = new Map<string, WeightBucket>();
  private readonly ranks = new AsyncLocalStorage<() => number>();
  /** Rates learned by earlier processes, for buckets not created yet. */
  private readonly adopted = new Map<string, number>();
  private readonly learnListeners = new Set<() => void>();
  private readonly notifyLearned = () => {
    for (const listener of this.learnListeners) listener();
  };
  private ticker: NodeJS.Timeout | undefined;
  private closed = false;
  /** The reason given to close(), what requests refused from then on fail with. */
  private closeReason: unknown;
  /** Requests scheduled and not yet released by their bucket. */
  private waiting = 0;
  private readonly counter: WaitCounter = {
    add: (delta) => {
      this.waiting += delta;
      // The ticker keeps Node alive exactly while a request waits for weight: then it is the
      // only thing that can release it (no socket or timer may be pending, e.g. every request
      // of a run waiting at once). When nothing waits, an idle budget never holds a finished
      // process open.
      if (this.waiting > 0) this.ticker?.ref();
      else this.ticker?.unref();
    },
  };

  constructor(options: Partial<RateBudgetOptions> = {}) {
    this.options = Object.freeze({ ...DEFAULT_RATE_BUDGET, ...options });
  }

  /**
   * Runs `task` once the endpoint's IP budget and the key's UID budget both allow it; among
   * requests waiting for the same budget, those of a lower rank (see `ranked`) go first. Refused once closed.
   */
  run<T>(endpoint: EndpointId, uidScope: string, task: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(this.closeReason ?? new Error(`${endpoint}: not sent, the rate budget is closed (the work was stopped)`));
    const spec = ENDPOINTS[endpoint];
    // Read here, in the caller's async context (inside bottleneck's callbacks it is lost).
    const rank = this.currentRank();
    const ip = this.bucket('ip', endpoint, spec.base, spec.ipWeight);
    const { uidWeight } = spec;
    if (uidWeight === null) return ip.schedule(spec.ipWeight, rank, task);
    const uid = this.bucket(`uid:${uidScope}`, endpoint, spec.base, uidWeight);
    return uid.schedule(uidWeight, rank, () => ip.schedule(spec.ipWeight, rank, task));
  }

  /**
   * Runs `work` with every request it makes ranked `rank()` (0 first, up to 9; asked again for
   * each request, so work can move up while it runs). Unranked requests rank 0.
   *
   * The rank travels with the async context (AsyncLocalStorage) rather than as an argument: it
   * belongs to a piece of work, such as the read of one sync window, and every request that work
   * makes must carry it (each page, pages read four at a time, a crowded millisecond narrowed
   * through another endpoint, the 40704 horizon search, retries, a clock resync). Set in one
   * place and read in one place, no call site in between can forget it, and the exchange layer
   * needs no notion of windows.
   */
  ranked<T>(rank: () => number, work: () => Promise<T>): Promise<T> {
    return this.ranks.run(rank, work);
  }

  /** Tells the budget the exchange answered 429 for this endpoint and key. */
  async rateLimited(endpoint: EndpointId, uidScope: string): Promise<void> {
    const now = Date.now();
    await Promise.all(
      [this.buckets.get(key('ip', endpoint)), this.buckets.get(key(`uid:${uidScope}`, endpoint))]
        .filter((bucket) => bucket !== undefined)
        .map((bucket) => bucket.penalize(now)),
    );
  }

  /** The rates this budget learned from 429s (or adopted), per scope and endpoint, to remember them. */
  learnedRates(): LearnedRate[] {
    const rates: LearnedRate[] = [];
    for (const bucket of this.buckets.values()) {
      const weightPerSecond = bucket.learnedRate();
      if (weightPerSecond !== undefined) rates.push({ scope: bucket.scope, endpoint: bucket.endpoint, weightPerSecond });
    }
    return rates;
  }

  /**
   * Starts these budgets at rates an earlier process learned (learnedRates), so this one does
   * not trip the exchange's limit again to relearn them; from there they probe up as after a 429.
   */
  adoptLearnedRates(rates: readonly LearnedRate[]): void {
    const now = Date.now();
    for (const rate of rates) {
      if (rate.weightPerSecond === null || !(rate.weightPerSecond > 0) || ENDPOINTS[rate.endpoint] === undefined) continue;
      const id = key(rate.scope, rate.endpoint);
      this.adopted.set(id, rate.weightPerSecond);
      this.buckets.get(id)?.adopt(rate.weightPerSecond, now);
    }
  }

  /** Calls `listener` whenever a learned rate changes (a 429 slowed a budget, or it probed up); returns the unsubscribe. */
  onLearned(listener: () => void): () => void {
    this.learnListeners.add(listener);
    return () => this.learnListeners.delete(listener);
  }

  /** The group budget (quota and window) an endpoint is counted against. */
  group(base: BaseKind): BudgetGroup {
    return base === 'spot' ? this.options.spot : this.options.contract;
  }

  stats(): BucketStats[] {
    return [...this.buckets.values()].map((bucket) => bucket.stats());
  }

  /**
   * Stops the refill timer and the limiters; pending requests are dropped. Calling it again is
   * harmless. Requests dropped or refused from then on fail with `reason` when one is given (the
   * abort signal's InterruptedError), so the stop is told as a stop, not as a library's error.
   */
  async close(reason?: unknown): Promise<void> {
    this.closeReason ??= reason;
    this.closed = true;
    if (this.ticker !== undefined) clearInterval(this.ticker);
    this.ticker = undefined;
    const buckets = [...this.buckets.values()];
    this.buckets.clear();
    await Promise.all(buckets.map((bucket) => bucket.limiter.stop({ dropWaitingJobs: true })));
  }

  private currentRank(): number {
    const rank = this.ranks.getStore()?.() ?? 0;
    return Number.isFinite(rank) ? Math.min(LOWEST_RANK, Math.max(0, Math.round(rank))) : LOWEST_RANK;
  }

  private bucket(scope: string, endpoint: EndpointId, base: BaseKind, weight: number): WeightBucket {
    const id = key(scope, endpoint);
    let bucket = this.buckets.get(id);
    if (bucket === undefined) {
      bucket = new WeightBucket(scope, endpoint, this.group(base), this.options, weight, this.counter, this.notifyLearned, () => this.closeReason);
      const adopted = this.adopted.get(id);
      if (adopted !== undefined) bucket.adopt(adopted, Date.now());
      this.buckets.set(id, bucket);
      this.startTicker();
    }
    return bucket;
  }

  private startTicker(): void {
    if (this.ticker !== undefined) return;
    this.ticker = setInterval(() => {
      const now = Date.now();
      for (const bucket of this.buckets.values()) void bucket.refill(now);
    }, TICK_MS);
    if (this.waiting === 0) this.ticker.unref();
  }
}

function key(scope: string, endpoint: EndpointId): string {
  return `${scope}|${endpoint}`;
}
