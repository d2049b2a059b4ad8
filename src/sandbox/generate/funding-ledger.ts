/**
 * The spot (funding) account of one sandbox account: balances per coin, the funding bills that
 * move them, and the asset snapshots derived from those bills.
 *
 * Accounting conventions (exchange-notes "Fee and sign conventions"):
 * - deltaAmount is the signed net change of the balance; `fees` is informational and already
 *   inside deltaAmount (a withdrawal of 100 with fee 1 has deltaAmount -101, fees 1);
 * - afterAmount is the balance after the bill, so per coin every bill's afterAmount - deltaAmount
 *   equals the previous bill's afterAmount, and the first bill starts from 0;
 * - no balance ever goes below zero, nor below what open orders hold (frozen).
 */
import type { FundingBillWire, Timed, WireObject } from '../model.ts';
import { coinByName, type CoinSpec } from './catalog.ts';
import { formatFixed, parseFixed } from './fixed-point.ts';
import type { IdAllocator } from './id-allocator.ts';

/** The bizType values of exchange-api.md 4.9. */
export type BillBizType = 'deposit' | 'withdraw' | 'transfer_in' | 'transfer_out' | 'buy' | 'sell' | 'c2c_buy' | 'c2c_sell';

interface CoinBook {
  spec: CoinSpec;
  balance: bigint;
  /** Held by orders in flight and open orders: not available for new orders or withdrawals. */
  reserved: bigint;
  zeroText: string;
  /** Bill times and afterAmount texts, for asset snapshots by binary search. */
  times: number[];
  afters: string[];
}

/** An amount frozen from `t` on by an order still open at the end of the history. */
interface Hold {
  t: number;
  coin: string;
  amount: bigint;
}

/** Balances and bills of the funding account. */
export class FundingLedger {
  /** Every bill, ascending by t (ties in posting order). */
  readonly bills: Array<Timed<FundingBillWire>> = [];
  private readonly books = new Map<string, CoinBook>();
  private readonly holds: Hold[] = [];

  /**
   * @param billIds - the id space of this account's bills
   * @param extraFieldsFromMs - bills from this ms on carry the unlisted fields fillSize/fillValue
   *   (null), as v3 bills do: the exchange started sending them on a release day
   */
  constructor(
    private readonly billIds: IdAllocator,
    private readonly extraFieldsFromMs: number,
  ) {}

  /** Current balance of a coin (0 before its first bill). */
  balance(coin: string): bigint {
    return this.books.get(coin)?.balance ?? 0n;
  }

  /** Balance not held by orders. */
  available(coin: string): bigint {
    const book = this.books.get(coin);
    return book === undefined ? 0n : book.balance - book.reserved;
  }

  /** Holds an amount for an order in flight. */
  reserve(coin: string, amount: bigint): void {
    const book = this.book(coin);
    if (amount < 0n || book.balance - book.reserved < amount) throw new RangeError(`cannot reserve ${amount} ${coin}`);
    book.reserved += amount;
  }

  /** Releases part of a reservation (the order filled or ended). */
  release(coin: string, amount: bigint): void {
    const book = this.book(coin);
    if (amount < 0n || amount > book.reserved) throw new RangeError(`cannot release ${amount} ${coin}`);
    book.reserved -= amount;
  }

  /** Freezes an amount from t to the end of the history (an order still open at the end). */
  hold(t: number, coin: string, amount: bigint): void {
    this.reserve(coin, amount);
    this.holds.push({ t, coin, amount });
  }

  /**
   * Posts one bill. `delta` is the signed net change (fee included); `fee` is informational.
   * Throws if the balance would go below what is reserved: the simulation checks availability
   * before it acts, so this only fires on a generator bug.
   */
  post(t: number, cTime: string, coin: string, bizType: BillBizType, delta: bigint, fee: bigint): void {
    const book = this.book(coin);
    const after = book.balance + delta;
    if (after < book.reserved) throw new RangeError(`${coin} balance would fall to ${after} (reserved ${book.reserved}) at ${t}`);
    book.balance = after;
    const decimals = book.spec.decimals;
    const billId = this.billIds.next(t).toString();
    const deltaAmount = formatFixed(delta, decimals);
    const afterAmount = formatFixed(after, decimals);
    const fees = fee === 0n ? book.zeroText : formatFixed(fee, decimals);
    const { coinId } = book.spec;
    // Field order as the exchange sends it (samples/v3__api_v3_account_fundingBills.ITEM_ONLY.json).
    const wire: FundingBillWire =
      t >= this.extraFieldsFromMs
        ? { billId, coinId, coinName: coin, bizType, fillSize: null, fillValue: null, deltaAmount, afterAmount, fees, cTime }
        : { billId, coinId, coinName: coin, bizType, deltaAmount, afterAmount, fees, cTime };
    this.bills.push({ t, wire });
    book.times.push(t);
    book.afters.push(afterAmount);
  }

  /**
   * The account/assets payload (2.4) as it stood at atMs: one entry per coin with a bill at or
   * before atMs, ordered by coinId. equity is the last afterAmount, frozen what orders open at
   * atMs hold, available = equity - frozen.
   */
  assetsAt(atMs: number): WireObject[] {
    const out: Array<{ coinId: number; wire: WireObject }> = [];
    for (const book of this.books.values()) {
      const i = lastIndexAtOrBefore(book.times, atMs);
      if (i < 0) continue;
      const equityText = book.afters[i] ?? book.zeroText;
      let frozen = 0n;
      for (const h of this.holds) if (h.coin === book.spec.name && h.t <= atMs) frozen += h.amount;
      const decimals = book.spec.decimals;
      out.push({
        coinId: book.spec.coinId,
        wire: {
          coinId: book.spec.coinId,
          coinName: book.spec.name,
          available: formatFixed(parseFixed(equityText) - frozen, decimals),
          frozen: frozen === 0n ? book.zeroText : formatFixed(frozen, decimals),
          equity: equityText,
        },
      });
    }
    return out.sort((a, b) => a.coinId - b.coinId).map((e) => e.wire);
  }

  private book(coin: string): CoinBook {
    let book = this.books.get(coin);
    if (book === undefined) {
      const spec = coinByName(coin);
      book = { spec, balance: 0n, reserved: 0n, zeroText: formatFixed(0n, spec.decimals), times: [], afters: [] };
      this.books.set(coin, book);
    }
    return book;
  }
}

/** Index of the last element <= x in an ascending array, or -1. */
export function lastIndexAtOrBefore(sorted: readonly number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] ?? 0) <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}
