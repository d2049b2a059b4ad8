/**
 * The affiliate side of one sandbox account: the users it invited, the commission records
 * their trading earns it (getAffiliateCommission), and their per-day activity that
 * getChannelUserTradeAndAsset sums over a range.
 *
 * Amounts are exact: volumes have 4 decimals (USDT) or 6 (BTC), fee = taker volume * taker rate
 * + maker volume * maker rate rounded to 7 decimals, commission = fee * rate exactly (rates have
 * one decimal), all written with 8 decimals. Commission records have no id: identical twins
 * (two genuine records equal in every field) are generated on purpose (exchange-notes
 * "Paging and ordering").
 */
import type { CommissionRecord, ReferralActivity } from '../model.ts';
import { DAY_MS, isInQuietPeriod, QUIET_MARGIN_MS, type ActivityCalendar } from './activity-calendar.ts';
import { FUTURES_FEE_RATES, SPOT_FEE_RATES } from './catalog.ts';
import { formatFixed, fromUnits, mulRound, parseFixed, roundTo } from './fixed-point.ts';
import type { Market } from './market.ts';
import type { Rng } from './random.ts';
import { geometric } from './spot-desk.ts';

/** Options of {@link generateAffiliate}. */
export interface AffiliateOptions {
  rng: Rng;
  market: Market;
  calendar: ActivityCalendar;
  /** How many invited users: [min, max]. */
  invitedUsers: readonly [number, number];
  /** Target number of commission records (twins and month-boundary records included). */
  commissions: number;
  /** Target number of referral activity records. */
  referralEvents: number;
  /** Number of commission records that get an identical twin. */
  twins: number;
}

interface InvitedUser {
  uid: string;
  joinDay: number;
  /** When the user signed up and made a first deposit (never inside the quiet period). */
  joinMs: number;
  level: number;
  sourceType: number;
  rate: bigint;
  rateText: string;
  spotShare: number;
}

const SPOT_PAIRS = ['BTCUSDT_SPBL', 'ETHUSDT_SPBL', 'SOLUSDT_SPBL', 'XRPUSDT_SPBL', 'DOGEUSDT_SPBL', 'WXTUSDT_SPBL', 'SHIBUSDT_SPBL', 'ETHBTC_SPBL'] as const;
const SPOT_PAIR_WEIGHTS = [30, 20, 12, 10, 10, 4, 6, 8];
const CONTRACT_SYMBOLS = ['cmt_btcusdt', 'cmt_ethusdt', 'cmt_solusdt', 'cmt_xrpusdt', 'cmt_dogeusdt'] as const;
const CONTRACT_WEIGHTS = [45, 25, 15, 8, 7];
const AMOUNT_DECIMALS = 8;
const FEE_DECIMALS = 7;

/** Rates at 4 decimals as fixed point. */
const RATES = {
  SPOT: { taker: parseFixed(SPOT_FEE_RATES.taker), maker: parseFixed(SPOT_FEE_RATES.maker) },
  FUTURES: { taker: parseFixed(FUTURES_FEE_RATES.taker), maker: parseFixed(FUTURES_FEE_RATES.maker) },
};

interface DayTotals {
  t: number;
  spot: bigint;
  futures: bigint;
  commission: bigint;
}

/** Generates the commission records and referral activity of one account, each ascending by t. */
export function generateAffiliate(o: AffiliateOptions): { commissions: CommissionRecord[]; referralActivity: ReferralActivity[] } {
  const { rng, calendar } = o;
  const users = inviteUsers(rng, o.invitedUsers, calendar);
  // Days that touch the quiet period (with its margin) get no record at all.
  const blockedDay = (day: number): boolean => {
    const start = calendar.startMs + day * DAY_MS;
    return start < calendar.quietEndMs && start + DAY_MS > calendar.quietStartMs - QUIET_MARGIN_MS;
  };
  const eligibleDays = users.map((u) => {
    let n = 0;
    for (let d = u.joinDay; d < calendar.days; d++) if (!blockedDay(d)) n++;
    return n;
  });
  // Active (user, day) pairs each yield one referral record (the day's totals). Find the
  // activity scale that gives the target number of pairs, given that no user is active more
  // than 95% of days; commissions per pair and extra deposit/withdrawal records make up the rest.
  const pairTarget = Math.max(1, o.referralEvents - users.length) * 0.85;
  const activeShare = (u: InvitedUser, scale: number): number => Math.min(0.95, scale * u.level);
  const expectedPairs = (scale: number): number => users.reduce((sum, u, i) => sum + activeShare(u, scale) * (eligibleDays[i] ?? 0), 0);
  let low = 0;
  let high = 1000;
  for (let i = 0; i < 50; i++) {
    const mid = (low + high) / 2;
    if (expectedPairs(mid) < pairTarget) low = mid;
    else high = mid;
  }
  const activityScale = high;
  const pairs = Math.max(1, expectedPairs(activityScale));
  const perPair = Math.max(1, (o.commissions - o.twins - 4 * calendar.monthBoundaries.length) / pairs);
  // 1 + geometric(p) has mean 1/(1-p).
  const continueP = Math.min(0.97, 1 - 1 / perPair);
  const walletEventsPerPair = Math.max(0, o.referralEvents - users.length - pairs) / pairs;

  const commissions: CommissionRecord[] = [];
  const referralActivity: ReferralActivity[] = [];
  for (const u of users) {
    const activeP = activeShare(u, activityScale);
    referralActivity.push(referral(u.joinMs, u.uid, fromUnits(rng.int(100, 20_000) * Math.ceil(u.level * 10), 1), 0n, 0n, 0n, 0n));
    for (let day = u.joinDay; day < calendar.days; day++) {
      if (blockedDay(day) || !rng.chance(activeP)) continue;
      const dayStart = calendar.startMs + day * DAY_MS;
      const totals: DayTotals = { t: Number.POSITIVE_INFINITY, spot: 0n, futures: 0n, commission: 0n };
      const count = 1 + geometric(rng, continueP, 60);
      for (let i = 0; i < count; i++) {
        const t = dayStart + rng.int(0, DAY_MS);
        const { record, volume, commission } = commissionRecord(o, u, t, rng.chance(u.spotShare) ? 'SPOT' : 'FUTURES');
        commissions.push(record);
        if (t < totals.t) totals.t = t;
        // The day's totals are in USDT; BTC-settled records (ETHBTC_SPBL) stay out of them.
        if (record.wire.coin === 'USDT') {
          if (record.productType === 'SPOT') totals.spot += volume;
          else totals.futures += volume;
          totals.commission += commission;
        }
      }
      referralActivity.push(referral(totals.t, u.uid, 0n, 0n, totals.spot, totals.futures, totals.commission));
      for (let n = rng.roundStochastic(walletEventsPerPair); n > 0; n--) {
        const t = dayStart + rng.int(0, DAY_MS);
        const withdrawal = rng.chance(0.35);
        const amount = fromUnits(rng.int(50, 5_000) * Math.ceil(u.level * 10), 1);
        referralActivity.push(referral(t, u.uid, withdrawal ? 0n : amount, withdrawal ? amount : 0n, 0n, 0n, 0n));
      }
    }
  }

  // Records on the first ms of a month and on the last ms of the month before, for both products.
  for (const boundary of calendar.monthBoundaries) {
    const joined = users.filter((u) => u.joinMs < boundary - 1);
    if (joined.length === 0) continue;
    for (const t of [boundary - 1, boundary]) {
      for (const product of ['SPOT', 'FUTURES'] as const) commissions.push(commissionRecord(o, rng.pick(joined), t, product).record);
    }
  }

  const originals = commissions.length;
  for (let i = 0; i < o.twins && originals > 0; i++) {
    const source = commissions[rng.int(0, originals)] as CommissionRecord;
    commissions.push({ t: source.t, productType: source.productType, wire: { ...source.wire } });
  }

  // Stable sorts: records of one ms stay in generation order.
  commissions.sort((a, b) => a.t - b.t);
  referralActivity.sort((a, b) => a.t - b.t);
  return { commissions, referralActivity };
}

function inviteUsers(rng: Rng, [min, max]: readonly [number, number], calendar: ActivityCalendar): InvitedUser[] {
  const count = rng.int(min, max + 1);
  const seen = new Set<string>();
  const users: InvitedUser[] = [];
  while (users.length < count) {
    const uid = `7${rng.digits(9)}`;
    if (seen.has(uid)) continue;
    seen.add(uid);
    const sourceType = rng.chance(0.8) ? 1 : 2;
    const rateText = sourceType === 1 ? rng.pick(['0.3', '0.4', '0.5']) : rng.pick(['0.1', '0.2']);
    // A wave of sign-ups at the start, then a trickle.
    const joinDay = rng.chance(0.4) ? rng.int(0, 30) : rng.int(0, calendar.days - 7);
    let joinMs = calendar.startMs + joinDay * DAY_MS + rng.int(0, DAY_MS);
    if (isInQuietPeriod(calendar, joinMs)) joinMs = calendar.quietEndMs + rng.int(0, DAY_MS);
    const r = rng.float();
    users.push({
      uid,
      joinDay,
      joinMs,
      // Heavy-tailed: a few users bring most of the volume.
      level: 0.05 + r * r * r * 5,
      sourceType,
      rate: parseFixed(rateText),
      rateText,
      spotShare: rng.range(0.1, 0.9),
    });
  }
  return users;
}

/** One commission record, with its traded volume (taker + maker) and commission as fixed point. */
function commissionRecord(o: AffiliateOptions, u: InvitedUser, t: number, productType: 'SPOT' | 'FUTURES'): { record: CommissionRecord; volume: bigint; commission: bigint } {
  const { rng } = o;
  const symbol = productType === 'SPOT' ? (SPOT_PAIRS[rng.weightedIndex(SPOT_PAIR_WEIGHTS)] as string) : (CONTRACT_SYMBOLS[rng.weightedIndex(CONTRACT_WEIGHTS)] as string);
  const btcQuoted = symbol === 'ETHBTC_SPBL';
  const usdVolume = rng.range(20, 8_000) * u.level;
  // Volumes in the commission coin: 4 decimals of USDT, or 6 of BTC.
  const volumeDecimals = btcQuoted ? 6 : 4;
  const toCoin = btcQuoted ? 1 / o.market.usdPrice('BTC', t) : 1;
  const taker = fromUnits(Math.floor(usdVolume * rng.float() * toCoin * 10 ** volumeDecimals), volumeDecimals);
  const maker = fromUnits(Math.floor(usdVolume * rng.float() * toCoin * 10 ** volumeDecimals), volumeDecimals);
  const rates = RATES[productType];
  // Volumes have at most 6 decimals and rates 4: the products are exact at 18.
  const fee = roundTo(mulRound(taker, rates.taker, 18) + mulRound(maker, rates.maker, 18), FEE_DECIMALS);
  const commission = mulRound(fee, u.rate, AMOUNT_DECIMALS);
  const record: CommissionRecord = {
    t,
    productType,
    wire: {
      uid: u.uid,
      dealTime: String(t),
      coin: btcQuoted ? 'BTC' : 'USDT',
      fee: formatFixed(fee, AMOUNT_DECIMALS),
      commission: formatFixed(commission, AMOUNT_DECIMALS),
      rate: u.rateText,
      symbol,
      sourceType: u.sourceType,
      takerAmount: formatFixed(taker, AMOUNT_DECIMALS),
      makerAmount: formatFixed(maker, AMOUNT_DECIMALS),
    },
  };
  return { record, volume: taker + maker, commission };
}

function referral(t: number, uid: string, deposit: bigint, withdrawal: bigint, spot: bigint, futures: bigint, commission: bigint): ReferralActivity {
  return {
    t,
    uid,
    depositAmount: formatFixed(deposit, AMOUNT_DECIMALS),
    withdrawalAmount: formatFixed(withdrawal, AMOUNT_DECIMALS),
    spotTradingAmount: formatFixed(spot, AMOUNT_DECIMALS),
    futuresTradingAmount: formatFixed(futures, AMOUNT_DECIMALS),
    commission: formatFixed(commission, AMOUNT_DECIMALS),
  };
}
