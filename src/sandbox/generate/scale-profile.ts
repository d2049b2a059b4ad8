/**
 * How much history one account gets at each scale. The targets count the history records of
 * all streams together (spot fills, funding bills, transfer records, futures fills,
 * commissions, referral activity): ~5k, ~100k, ~1M. A spot fill brings two bills and a transfer
 * one bill, so spot fills are a third of the spot share.
 */
import type { SandboxScale } from '../model.ts';

/** Per-account volumes of one scale. */
export interface ScaleProfile {
  /** Target number of history records (all streams). */
  records: number;
  spotFills: number;
  futuresFills: number;
  transfers: number;
  commissions: number;
  referralEvents: number;
  /** Hard cases: same-ms sweeps of more than 100 spot fills, and of more than 100 futures fills. */
  spotBursts: number;
  futuresBursts: number;
  /** Pairs of identical transfer records; commission records with an identical twin. */
  transferTwins: number;
  commissionTwins: number;
  deposits: number;
  withdrawals: number;
  c2cTrades: number;
  invitedUsers: readonly [number, number];
  /** Typical share of the available balance one spot order uses. */
  orderFraction: number;
}

function profile(records: number, extra: Omit<ScaleProfile, 'records' | 'spotFills' | 'futuresFills' | 'transfers' | 'commissions' | 'referralEvents'>): ScaleProfile {
  return {
    records,
    // 3 x 0.22 (fills and their two bills) + 0.19 + 2 x 0.006 + 0.08 + 0.035 = 0.977; deposits,
    // withdrawals and c2c bills fill the rest.
    spotFills: Math.round(records * 0.22),
    futuresFills: Math.round(records * 0.19),
    transfers: Math.round(records * 0.006),
    commissions: Math.round(records * 0.08),
    referralEvents: Math.round(records * 0.035),
    ...extra,
  };
}

/** The profiles by scale. */
export const SCALE_PROFILES: Readonly<Record<SandboxScale, ScaleProfile>> = {
  small: profile(5_000, {
    spotBursts: 1,
    futuresBursts: 1,
    transferTwins: 3,
    commissionTwins: 3,
    deposits: 8,
    withdrawals: 5,
    c2cTrades: 4,
    invitedUsers: [20, 40],
    orderFraction: 0.08,
  }),
  medium: profile(100_000, {
    spotBursts: 3,
    futuresBursts: 2,
    transferTwins: 8,
    commissionTwins: 25,
    deposits: 16,
    withdrawals: 10,
    c2cTrades: 6,
    invitedUsers: [60, 120],
    orderFraction: 0.02,
  }),
  large: profile(1_000_000, {
    spotBursts: 8,
    futuresBursts: 5,
    transferTwins: 25,
    commissionTwins: 200,
    deposits: 30,
    withdrawals: 20,
    c2cTrades: 10,
    invitedUsers: [150, 200],
    orderFraction: 0.004,
  }),
};
