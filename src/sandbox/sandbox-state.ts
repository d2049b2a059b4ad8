import { AccountIndex } from './history-index.ts';
import type { SandboxAccount, SandboxExchange, SpotFillWire, Timed } from './model.ts';
import type { BoundsMode } from './paging.ts';

/** How the server behaves where the spec is silent (the parts of SandboxOptions the routes read). */
export interface SandboxBehaviour {
  bounds: BoundsMode;
  transferCursor: 'documented' | 'reversed';
  historyHorizonDays: number | null;
  clockSkewMs: number;
  /** Late spot fills are published this many ms after their time (SandboxOptions.lateSpotFillsMs); 0: none. */
  lateSpotFillsMs: number;
}

/**
 * Whether a spot fill is one of the late ones (SandboxOptions.lateSpotFillsMs): one in ten, by a
 * hash of its id (FNV-1a), so the same fills are late on every run of the same history.
 */
export function isLateSpotFill(fillId: string): boolean {
  let hash = 0x81_1c_9d_c5;
  for (let index = 0; index < fillId.length; index += 1) hash = Math.imul(hash ^ fillId.charCodeAt(index), 0x01_00_01_93) >>> 0;
  return hash % 10 === 0;
}

/**
 * The server's mutable state: the exchange data, its indexes, the visibility horizon, the
 * server clock and the id generator for orders placed through the API.
 */
export class SandboxState {
  readonly exchange: SandboxExchange;
  readonly behaviour: SandboxBehaviour;
  /** Records with t > visibleUntil are not served (tests move it to play "a new day arrived"). */
  visibleUntil = Number.POSITIVE_INFINITY;
  private readonly byKey = new Map<string, SandboxAccount>();
  private readonly indexes = new Map<SandboxAccount, AccountIndex>();
  readonly spotSymbols: ReadonlyMap<string, SandboxExchange['spotSymbols'][number]>;
  readonly futuresSymbols: ReadonlySet<string>;
  /** Currency name by coinId (text), for the transfer-record coinId filter (records carry only coinName). */
  readonly coinNameById: ReadonlyMap<string, string>;
  private orderSequence = 0n;
  /** The published part of a spot fill series, for the visibility horizon it was filtered at. */
  private readonly publishedFills = new WeakMap<readonly Timed<SpotFillWire>[], { visibleUntil: number; fills: readonly Timed<SpotFillWire>[] }>();

  constructor(exchange: SandboxExchange, behaviour: SandboxBehaviour) {
    this.exchange = exchange;
    this.behaviour = behaviour;
    for (const account of exchange.accounts) this.byKey.set(account.apiKey, account);
    this.spotSymbols = new Map(exchange.spotSymbols.map((symbol) => [symbol.symbol, symbol]));
    this.futuresSymbols = new Set(exchange.contracts.map((contract) => String(contract.symbol)));
    this.coinNameById = new Map(
      exchange.currencies
        .filter((currency) => currency.coinId !== undefined && currency.coinId !== null)
        .map((currency) => [String(currency.coinId), String(currency.coinName)]),
    );
  }

  /**
   * The fills of a spot series that are published by the visibility horizon: all of them, less
   * the late ones (isLateSpotFill) whose time plus lateSpotFillsMs is after it. Still ascending,
   * so the routes page it as they page the series; cached until the horizon moves.
   */
  publishedSpotFills(series: readonly Timed<SpotFillWire>[]): readonly Timed<SpotFillWire>[] {
    const delay = this.behaviour.lateSpotFillsMs;
    if (delay === 0 || this.visibleUntil === Number.POSITIVE_INFINITY) return series;
    const cached = this.publishedFills.get(series);
    if (cached !== undefined && cached.visibleUntil === this.visibleUntil) return cached.fills;
    const fills = series.filter((fill) => fill.t + delay <= this.visibleUntil || !isLateSpotFill(fill.wire.fillId));
    this.publishedFills.set(series, { visibleUntil: this.visibleUntil, fills });
    return fills;
  }

  /** The server's clock: this machine's plus the configured skew. */
  now(): number {
    return Date.now() + this.behaviour.clockSkewMs;
  }

  /** The account of an API key. */
  accountByKey(apiKey: string): SandboxAccount | undefined {
    return this.byKey.get(apiKey);
  }

  /** The lazily built indexes of an account. */
  index(account: SandboxAccount): AccountIndex {
    let index = this.indexes.get(account);
    if (index === undefined) {
      index = new AccountIndex(account);
      this.indexes.set(account, index);
    }
    return index;
  }

  /**
   * The moment snapshots (assets, futures account) are taken at: the visibility horizon,
   * clamped to the last millisecond of the history so the generator is never asked about a
   * time it did not generate.
   */
  snapshotMs(): number {
    return Math.min(this.visibleUntil, this.exchange.endMs - 1);
  }

  /** The oldest time history endpoints serve, or undefined without a history horizon. */
  historyNotBefore(): number | undefined {
    const days = this.behaviour.historyHorizonDays;
    return days === null ? undefined : this.now() - days * 86_400_000;
  }

  /**
   * A new order id: 19 digits (above 2^53, as real ids are), time-based like a snowflake,
   * never equal to an existing one.
   */
  nextOrderId(isTaken: (id: string) => boolean): string {
    for (;;) {
      this.orderSequence += 1n;
      const id = (BigInt(this.now()) * 1_000_000n + (this.orderSequence % 1_000_000n)).toString();
      if (!isTaken(id)) return id;
    }
  }
}
