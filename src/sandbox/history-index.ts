import type { FuturesOrderWire, SandboxAccount, SpotFillWire, SpotOrderWire, Timed } from './model.ts';
import { upperBound, type HasTime } from './paging.ts';

/**
 * Lazily built indexes over one account's history, so a request binary-searches a small
 * sorted array instead of scanning ~1M records (the large scale). Each index is built by one
 * pass on first use and kept; the only history that changes at run time is futuresOrders
 * (placeOrder, cancel_batch_orders), whose indexes are updated in place.
 */

/** Inserts into an ascending-by-t array after every item with the same t (the newest position). */
export function insertSorted<T extends HasTime>(items: T[], item: T): void {
  items.splice(upperBound(items, item.t), 0, item);
}

/** The items of an ascending array split by a key, each group still ascending. */
export class GroupIndex<T extends HasTime> {
  private groups: Map<string, T[]> | undefined;
  private readonly source: () => readonly T[];
  private readonly keyOf: (item: T) => string;

  constructor(source: () => readonly T[], keyOf: (item: T) => string) {
    this.source = source;
    this.keyOf = keyOf;
  }

  /** The group of `key` (empty when none). */
  get(key: string): readonly T[] {
    return this.build().get(key) ?? [];
  }

  /** Adds an item that was inserted into the source (no-op if the index is not built yet). */
  insert(item: T): void {
    if (this.groups === undefined) return;
    const key = this.keyOf(item);
    let group = this.groups.get(key);
    if (group === undefined) {
      group = [];
      this.groups.set(key, group);
    }
    insertSorted(group, item);
  }

  private build(): Map<string, T[]> {
    if (this.groups === undefined) {
      const groups = new Map<string, T[]>();
      for (const item of this.source()) {
        const key = this.keyOf(item);
        const group = groups.get(key);
        if (group === undefined) groups.set(key, [item]);
        else group.push(item);
      }
      this.groups = groups;
    }
    return this.groups;
  }
}

/** Filtered copies of an ascending array, one per distinct filter, cached by a key that names the filter unambiguously. */
export class SubsetCache<T extends HasTime> {
  private readonly cache = new Map<string, T[]>();
  private readonly source: () => readonly T[];

  constructor(source: () => readonly T[]) {
    this.source = source;
  }

  /** The source itself when `key` is null (no filter), else the cached subset. */
  get(key: string | null, predicate: (item: T) => boolean): readonly T[] {
    if (key === null) return this.source();
    let subset = this.cache.get(key);
    if (subset === undefined) {
      subset = this.source().filter(predicate);
      this.cache.set(key, subset);
    }
    return subset;
  }
}

/** Futures order states that are not final (exchange-api.md section 3). */
export const NON_FINAL_FUTURES_STATUSES: ReadonlySet<string> = new Set(['pending', 'open', 'canceling', 'untriggered']);

/** Every index of one account. */
export class AccountIndex {
  readonly account: SandboxAccount;
  private readonly spotFillsByOrderPerSymbol = new Map<string, GroupIndex<Timed<SpotFillWire>>>();
  readonly fundingBills: SubsetCache<SandboxAccount['fundingBills'][number]>;
  readonly transferRecords: SubsetCache<SandboxAccount['transferRecords'][number]>;
  readonly futuresFillsBySymbol: GroupIndex<SandboxAccount['futuresFills'][number]>;
  readonly futuresFillsByOrder: GroupIndex<SandboxAccount['futuresFills'][number]>;
  readonly futuresOrdersBySymbol: GroupIndex<Timed<FuturesOrderWire>>;
  readonly futuresOrdersById: GroupIndex<Timed<FuturesOrderWire>>;
  readonly commissions: SubsetCache<SandboxAccount['commissions'][number]>;
  readonly referralsByUid: GroupIndex<SandboxAccount['referralActivity'][number]>;
  private nonFinalOrders: Timed<FuturesOrderWire>[] | undefined;
  private spotOrdersByClientId: Map<string, SpotOrderWire[]> | undefined;

  constructor(account: SandboxAccount) {
    this.account = account;
    this.fundingBills = new SubsetCache(() => account.fundingBills);
    this.transferRecords = new SubsetCache(() => account.transferRecords);
    this.futuresFillsBySymbol = new GroupIndex(() => account.futuresFills, (fill) => fill.wire.symbol);
    this.futuresFillsByOrder = new GroupIndex(() => account.futuresFills, (fill) => fill.wire.orderId.toString());
    this.futuresOrdersBySymbol = new GroupIndex(() => account.futuresOrders, (order) => order.wire.symbol);
    this.futuresOrdersById = new GroupIndex(() => account.futuresOrders, (order) => order.wire.order_id);
    this.commissions = new SubsetCache(() => account.commissions);
    this.referralsByUid = new GroupIndex(() => account.referralActivity, (activity) => activity.uid);
  }

  /** The fills of one spot symbol that belong to one order. */
  spotFillsOfOrder(symbol: string, orderId: string): readonly Timed<SpotFillWire>[] {
    let index = this.spotFillsByOrderPerSymbol.get(symbol);
    if (index === undefined) {
      index = new GroupIndex(() => this.account.spotFills.get(symbol) ?? [], (fill) => fill.wire.orderId);
      this.spotFillsByOrderPerSymbol.set(symbol, index);
    }
    return index.get(orderId);
  }

  /** Futures orders that are not final, ascending by t (few: scanned once, then kept up to date). */
  nonFinalFuturesOrders(): readonly Timed<FuturesOrderWire>[] {
    if (this.nonFinalOrders === undefined) {
      this.nonFinalOrders = this.account.futuresOrders.filter((order) => NON_FINAL_FUTURES_STATUSES.has(order.wire.status));
    }
    return this.nonFinalOrders;
  }

  /** Records a futures order placed through the API in the history and every index. */
  addFuturesOrder(order: Timed<FuturesOrderWire>): void {
    insertSorted(this.account.futuresOrders, order);
    this.futuresOrdersBySymbol.insert(order);
    this.futuresOrdersById.insert(order);
    if (this.nonFinalOrders !== undefined && NON_FINAL_FUTURES_STATUSES.has(order.wire.status)) insertSorted(this.nonFinalOrders, order);
  }

  /** Replaces an order's wire form (e.g. on cancel); the Timed object stays, so indexes stay valid. */
  updateFuturesOrder(order: Timed<FuturesOrderWire>, wire: FuturesOrderWire): void {
    order.wire = wire;
    if (this.nonFinalOrders !== undefined && !NON_FINAL_FUTURES_STATUSES.has(wire.status)) {
      const position = this.nonFinalOrders.indexOf(order);
      if (position >= 0) this.nonFinalOrders.splice(position, 1);
    }
  }

  /** Closed spot orders (spotOrdersById) with a client order id. */
  closedSpotOrdersByClientId(clientOrderId: string): readonly SpotOrderWire[] {
    if (this.spotOrdersByClientId === undefined) {
      const map = new Map<string, SpotOrderWire[]>();
      for (const order of this.account.spotOrdersById.values()) addToListMap(map, order.clientOrderId, order);
      this.spotOrdersByClientId = map;
    }
    return this.spotOrdersByClientId.get(clientOrderId) ?? [];
  }

  /** Moves a spot order to the closed orders (on cancel). */
  closeSpotOrder(order: SpotOrderWire): void {
    this.account.spotOrdersById.set(order.orderId, order);
    if (this.spotOrdersByClientId !== undefined) addToListMap(this.spotOrdersByClientId, order.clientOrderId, order);
  }
}

function addToListMap<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}
