/**
 * Counts and exact sums of a generated sandbox, per account: what a complete sync must end up
 * with. Sums are decimal strings without trailing zeros, computed from the wire strings with
 * exact fixed-point arithmetic.
 */
import type { SandboxAccount, SandboxExchange } from '../model.ts';
import { formatTrimmed, parseFixed } from './fixed-point.ts';

/** Record counts of one account's streams. */
export interface StreamCounts {
  spotFills: number;
  fundingBills: number;
  transferRecords: number;
  futuresFills: number;
  commissions: number;
  referralActivity: number;
  /** All of the above: the history records the scale targets. */
  history: number;
  futuresOrders: number;
  spotOrders: number;
  spotOpenOrders: number;
}

/** Per-coin totals of the funding bills. */
export interface CoinTotals {
  bills: number;
  /** Sum of deltaAmount; equals the balance, since the chain starts from 0. */
  deltaSum: string;
  /** Last afterAmount. */
  balance: string;
  feeSum: string;
}

/** The facts a completeness test checks for one account. */
export interface AccountSummary {
  uid: string;
  counts: StreamCounts;
  spotFillsBySymbol: Record<string, number>;
  /** By coin name. */
  coins: Record<string, CoinTotals>;
  futures: { fillValue: string; fillFee: string; liquidateFee: string; realizePnl: string; liquidations: number };
  /** Transfer amounts by direction. */
  transfers: { toFutures: string; toSpot: string };
  /** Commission records by productType and coin. */
  commissions: Record<string, { records: number; fee: string; commission: string }>;
}

/** Summarizes every account of a sandbox. */
export function summarizeExchange(exchange: SandboxExchange): AccountSummary[] {
  return exchange.accounts.map(summarizeAccount);
}

function summarizeAccount(a: SandboxAccount): AccountSummary {
  const spotFillsBySymbol: Record<string, number> = {};
  let spotFills = 0;
  for (const [symbol, fills] of a.spotFills) {
    spotFillsBySymbol[symbol] = fills.length;
    spotFills += fills.length;
  }

  const coinSums = new Map<string, { bills: number; delta: bigint; fee: bigint; balance: string }>();
  for (const { wire } of a.fundingBills) {
    let c = coinSums.get(wire.coinName);
    if (c === undefined) coinSums.set(wire.coinName, (c = { bills: 0, delta: 0n, fee: 0n, balance: '0' }));
    c.bills++;
    c.delta += parseFixed(wire.deltaAmount);
    c.fee += parseFixed(wire.fees);
    c.balance = wire.afterAmount;
  }
  const coins: Record<string, CoinTotals> = {};
  for (const [name, c] of coinSums) coins[name] = { bills: c.bills, deltaSum: formatTrimmed(c.delta), balance: c.balance, feeSum: formatTrimmed(c.fee) };

  let fillValue = 0n;
  let fillFee = 0n;
  let liquidateFee = 0n;
  let realizePnl = 0n;
  let liquidations = 0;
  for (const { wire } of a.futuresFills) {
    fillValue += parseFixed(wire.fillValue);
    fillFee += parseFixed(wire.fillFee);
    liquidateFee += parseFixed(wire.liquidateFee);
    realizePnl += parseFixed(wire.realizePnl);
    if (wire.liquidateType === 'FORCE_LIQUIDATE') liquidations++;
  }

  let toFutures = 0n;
  let toSpot = 0n;
  for (const { wire } of a.transferRecords) {
    if (wire.toType === 'CONTRACT') toFutures += parseFixed(wire.amount);
    else toSpot += parseFixed(wire.amount);
  }

  const commissionSums = new Map<string, { records: number; fee: bigint; commission: bigint }>();
  for (const r of a.commissions) {
    const key = `${r.productType}:${r.wire.coin}`;
    let c = commissionSums.get(key);
    if (c === undefined) commissionSums.set(key, (c = { records: 0, fee: 0n, commission: 0n }));
    c.records++;
    c.fee += parseFixed(r.wire.fee);
    c.commission += parseFixed(r.wire.commission);
  }
  const commissions: AccountSummary['commissions'] = {};
  for (const [key, c] of commissionSums) commissions[key] = { records: c.records, fee: formatTrimmed(c.fee), commission: formatTrimmed(c.commission) };

  let spotOpenOrders = 0;
  for (const orders of a.spotOpenOrders.values()) spotOpenOrders += orders.length;
  const counts: StreamCounts = {
    spotFills,
    fundingBills: a.fundingBills.length,
    transferRecords: a.transferRecords.length,
    futuresFills: a.futuresFills.length,
    commissions: a.commissions.length,
    referralActivity: a.referralActivity.length,
    history: spotFills + a.fundingBills.length + a.transferRecords.length + a.futuresFills.length + a.commissions.length + a.referralActivity.length,
    futuresOrders: a.futuresOrders.length,
    spotOrders: a.spotOrdersById.size,
    spotOpenOrders,
  };
  return {
    uid: a.uid,
    counts,
    spotFillsBySymbol,
    coins,
    futures: { fillValue: formatTrimmed(fillValue), fillFee: formatTrimmed(fillFee), liquidateFee: formatTrimmed(liquidateFee), realizePnl: formatTrimmed(realizePnl), liquidations },
    transfers: { toFutures: formatTrimmed(toFutures), toSpot: formatTrimmed(toSpot) },
    commissions,
  };
}
