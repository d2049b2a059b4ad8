/**
 * Money moving in and out of one sandbox account: deposits, withdrawals and c2c trades on the
 * funding account, and transfers between the spot (funding) and futures accounts.
 *
 * A transfer is booked three times, consistently: a transfer record (SPOT -> CONTRACT or back),
 * a funding bill at the same ms (transfer_out with a negative delta when money leaves spot,
 * transfer_in with a positive one when it comes back), and a futures ledger event that moves
 * the collateral's cum_transfer_in/out_amount.
 */
import type { Timed, TransferRecordWire } from '../model.ts';
import { coinByName, CONTRACTS } from './catalog.ts';
import { floorTo, formatFixed, fromUnits, parseFixed, toApproxNumber } from './fixed-point.ts';
import type { FundingLedger } from './funding-ledger.ts';
import type { FuturesDesk } from './futures-desk.ts';
import { collateralAmount, type FuturesLedger } from './futures-ledger.ts';
import type { Rng } from './random.ts';

/** Transfer records and bills are in USDT with 8 decimals ("20.00000000", samples/v3__...transferRecords.json). */
const TRANSFER_COIN = 'USDT';
const USDT_DECIMALS = 8;

/** Options of {@link Treasury}. */
export interface TreasuryOptions {
  rng: Rng;
  ledger: FundingLedger;
  futuresLedger: FuturesLedger;
  futures: FuturesDesk;
}

/** Deposits, withdrawals, c2c trades and spot/futures transfers. */
export class Treasury {
  /** Every transfer record, ascending by t. */
  readonly transferRecords: Array<Timed<TransferRecordWire>> = [];

  constructor(private readonly o: TreasuryOptions) {}

  /** The opening deposits: USDT, BTC and ETH (the latter with all 18 decimals used). */
  openAccount(t: number): void {
    const { rng } = this.o;
    this.deposit(t, 'USDT', fromUnits(rng.int(1_500_000, 4_500_000), 2));
    this.deposit(t, 'BTC', fromUnits(rng.int(10_000_000, 60_000_000), 8));
    this.deposit(t, 'ETH', weiAmount(rng, 2, 8));
  }

  /** A deposit of a coin the account trades, of a plausible size. */
  depositSomething(t: number): void {
    const { rng } = this.o;
    const r = rng.float();
    if (r < 0.6) this.deposit(t, 'USDT', fromUnits(rng.int(1_000, 12_000), 0));
    else if (r < 0.75) this.deposit(t, 'BTC', fromUnits(rng.int(2_000_000, 30_000_000), 8));
    else if (r < 0.9) this.deposit(t, 'ETH', weiAmount(rng, 0, 4));
    else this.deposit(t, 'SOL', fromUnits(rng.int(500_000_000, 6_000_000_000), 8));
  }

  /** An airdrop of a coin the account never trades (it shows up in bills and assets only). */
  depositUntraded(t: number): void {
    this.deposit(t, 'DOGE', fromUnits(this.o.rng.int(10_000_000_000, 500_000_000_000), 8));
  }

  /** A withdrawal of part of some balance; the chain's fee is inside deltaAmount. */
  withdrawSomething(t: number): void {
    const { rng, ledger } = this.o;
    const coinName = rng.pick(['USDT', 'USDT', 'BTC', 'ETH', 'SOL']);
    const coin = coinByName(coinName);
    const chain = rng.pick(coin.chains.filter((c) => c.withdrawAble));
    const fee = parseFixed(chain.withdrawFee);
    const available = ledger.available(coinName);
    // ETH withdrawals keep 6 decimals and leave wei dust behind, as wallets do.
    const amount = floorTo((available * BigInt(rng.int(5, 26))) / 100n, coinName === 'ETH' ? 6 : 4);
    if (amount < parseFixed(chain.minWithdrawAmount) || amount + fee > available) return;
    ledger.post(t, String(t), coinName, 'withdraw', -(amount + fee), fee);
  }

  /** A c2c (fiat) purchase or sale of USDT. */
  c2c(t: number): void {
    const { rng, ledger } = this.o;
    if (rng.chance(0.6)) {
      ledger.post(t, String(t), 'USDT', 'c2c_buy', fromUnits(rng.int(300, 5_000), 0), 0n);
      return;
    }
    const amount = fromUnits(Math.min(rng.int(200, 2_000), Math.floor(toApproxNumber(ledger.available('USDT')) * 0.2)), 0);
    if (amount > 0n) ledger.post(t, String(t), 'USDT', 'c2c_sell', -amount, 0n);
  }

  /** Moves a share of the spot USDT to futures (the opening funding of the futures account). */
  fundFutures(t: number, share: number): void {
    const amount = fromUnits(Math.floor(toApproxNumber(this.o.ledger.available(TRANSFER_COIN)) * share), 0);
    if (amount > 0n) this.transfer(t, 'toFutures', amount, '');
  }

  /**
   * A regular transfer: keeps the futures collateral near 30% of the USDT the account holds,
   * with small transfers either way in between.
   */
  rebalance(t: number): void {
    const { rng } = this.o;
    const spot = toApproxNumber(this.o.ledger.available(TRANSFER_COIN));
    const futures = toApproxNumber(collateralAmount(this.o.futuresLedger.state));
    const free = toApproxNumber(this.o.futures.freeCollateral(t));
    const target = 0.3 * (spot + futures);
    let direction: 'toFutures' | 'toSpot';
    let amount: number;
    if (futures < 0.6 * target) {
      direction = 'toFutures';
      amount = Math.min(spot * 0.5, target - futures);
    } else if (futures > 1.6 * target) {
      direction = 'toSpot';
      amount = Math.min(free, futures - target);
    } else if (rng.chance(0.5)) {
      direction = 'toFutures';
      amount = Math.min(spot * 0.5, rng.range(20, 400));
    } else {
      direction = 'toSpot';
      amount = Math.min(free * 0.5, rng.range(20, 400));
    }
    // People type round amounts most of the time.
    const units = rng.chance(0.7) ? Math.floor(amount) * 100 : Math.floor(amount * 100);
    if (units >= 100) this.transfer(t, direction, fromUnits(units, 2), this.symbolTag());
  }

  /** Two genuine transfers identical in every field (same ms, amount, accounts, symbols). */
  transferTwins(t: number): void {
    const amount = this.o.rng.pick([20, 50, 100, 200, 500]);
    const direction = this.pickDirection(t, 2 * amount);
    if (direction === undefined) return;
    const symbol = this.symbolTag();
    this.transfer(t, direction, fromUnits(amount, 0), symbol);
    this.transfer(t, direction, fromUnits(amount, 0), symbol);
  }

  /** A small transfer exactly at t (month-boundary records). */
  transferSmall(t: number): void {
    const amount = this.o.rng.int(10, 101);
    const direction = this.pickDirection(t, amount);
    if (direction !== undefined) this.transfer(t, direction, fromUnits(amount, 0), '');
  }

  /** Tops the futures collateral up so that at least `needed` USDT are free. */
  ensureFreeCollateral(t: number, needed: number): void {
    const missing = Math.ceil(needed - toApproxNumber(this.o.futures.freeCollateral(t)));
    if (missing <= 0) return;
    const amount = Math.min(missing, Math.floor(toApproxNumber(this.o.ledger.available(TRANSFER_COIN))));
    if (amount > 0) this.transfer(t, 'toFutures', fromUnits(amount, 0), '');
  }

  private pickDirection(t: number, amount: number): 'toFutures' | 'toSpot' | undefined {
    const spot = toApproxNumber(this.o.ledger.available(TRANSFER_COIN));
    const free = toApproxNumber(this.o.futures.freeCollateral(t));
    if (spot >= amount && (free < amount || this.o.rng.chance(0.6))) return 'toFutures';
    if (free >= amount) return 'toSpot';
    return undefined;
  }

  /** Most transfers name no symbol; some name the contract they are meant for. */
  private symbolTag(): string {
    const { rng } = this.o;
    return rng.chance(0.2) ? rng.pick(CONTRACTS.slice(0, 3)).symbol : '';
  }

  private deposit(t: number, coin: string, amount: bigint): void {
    this.o.ledger.post(t, String(t), coin, 'deposit', amount, 0n);
  }

  private transfer(t: number, direction: 'toFutures' | 'toSpot', amount: bigint, symbol: string): void {
    const tradeTime = String(t);
    const toFutures = direction === 'toFutures';
    this.o.ledger.post(t, tradeTime, TRANSFER_COIN, toFutures ? 'transfer_out' : 'transfer_in', toFutures ? -amount : amount, 0n);
    this.o.futuresLedger.record({ t, kind: 'transfer', amount: toFutures ? amount : -amount });
    this.transferRecords.push({
      t,
      wire: {
        coinName: TRANSFER_COIN,
        status: 'SUCCESS',
        toType: toFutures ? 'CONTRACT' : 'SPOT',
        toSymbol: toFutures ? symbol : '',
        fromType: toFutures ? 'SPOT' : 'CONTRACT',
        fromSymbol: toFutures ? '' : symbol,
        amount: formatFixed(amount, USDT_DECIMALS),
        tradeTime,
      },
    });
  }
}

/** An ETH amount in [min, max) with all 18 decimals significant (wei precision). */
function weiAmount(rng: Rng, min: number, max: number): bigint {
  return fromUnits(rng.int(min, max), 0) + BigInt(rng.digits(18));
}
