/**
 * Simulates one sandbox account over its year, in one pass in time order: every action and
 * every fill is an event on one queue, so the balances a decision sees, the bill chains and the
 * futures ledger all advance together and every history array comes out ascending by t.
 *
 * Regular activity (spot orders, futures orders, transfers) is spread over the calendar's
 * sessions in proportion to their weight; the hard cases (see generate.ts) are fixed events.
 */
import type { SandboxAccount, SandboxScale } from '../model.ts';
import { dayIndexOf, DAY_MS, isInQuietPeriod, isTradedOn, planActivityCalendar, type ActivityCalendar, type Session } from './activity-calendar.ts';
import { generateAffiliate } from './affiliate.ts';
import { CONTRACTS, SPOT_SYMBOLS } from './catalog.ts';
import type { AccountCredentials } from './credentials.ts';
import { EventQueue } from './event-queue.ts';
import { FundingLedger } from './funding-ledger.ts';
import { buildFuturesAccountWire } from './futures-account-wire.ts';
import { FuturesDesk } from './futures-desk.ts';
import { FuturesLedger } from './futures-ledger.ts';
import { IdAllocator } from './id-allocator.ts';
import type { Market } from './market.ts';
import { createRng, type Rng } from './random.ts';
import { SCALE_PROFILES, type ScaleProfile } from './scale-profile.ts';
import { SpotDesk } from './spot-desk.ts';
import { Treasury } from './treasury.ts';

/** Id bases: 18-digit spot order/fill ids (~6.0e17), futures ids (~6.9e17), 19-digit bill ids. */
const SPOT_ID_BASE = 600_000_000_000_000_000n;
const FUTURES_ID_BASE = 690_000_000_000_000_000n;
const BILL_ID_BASE = 1_100_000_000_000_000_000n;

/**
 * Average spot fills per regular order event, and futures fills per futures order event
 * (skipped and canceled orders included); measured, used to turn fill targets into event rates.
 */
const SPOT_FILLS_PER_ORDER_EVENT = 1.82;
const FUTURES_FILLS_PER_ORDER_EVENT = 1.88;

const HOUR_MS = 3_600_000;
const BOUNDARY_SPOT_SYMBOL = 'BTCUSDT_SPBL';
const BOUNDARY_CONTRACT = 'cmt_btcusdt';
const BURST_CONTRACT = 'cmt_ethusdt';
const BET_CONTRACT = 'cmt_ethusdt';

/** Inputs of {@link simulateAccount}. */
export interface AccountSimulationInput {
  seed: number;
  /** The account's index (0-based); also its id partition. */
  index: number;
  scale: SandboxScale;
  credentials: AccountCredentials;
  /** First ms of the history (a UTC midnight). */
  startMs: number;
  days: number;
  market: Market;
}

type Action = () => void;

/** Builds one account with its whole history. */
export function simulateAccount(input: AccountSimulationInput): SandboxAccount {
  const { seed, index, startMs, days, market, credentials } = input;
  const profile = SCALE_PROFILES[input.scale];
  const rng = (concern: string): Rng => createRng(seed, 'account', index, concern);
  const planRng = rng('plan');
  const calendar = planActivityCalendar(planRng, startMs, days, [...SPOT_SYMBOLS, ...CONTRACTS]);
  const endMs = calendar.endMs;
  const extraFieldsFromMs = startMs + planRng.int(170, 260) * DAY_MS;
  const futuresCreatedMs = startMs - planRng.int(30, 400) * DAY_MS - planRng.int(0, DAY_MS);

  const queue = new EventQueue<Action>();
  const schedule = (t: number, action: Action): void => queue.push(t, action);
  const ledger = new FundingLedger(new IdAllocator(BILL_ID_BASE, startMs, index), extraFieldsFromMs);
  const futuresLedger = new FuturesLedger(CONTRACTS.length * 2, futuresCreatedMs);
  const spot = new SpotDesk({
    rng: rng('spot'),
    market,
    ledger,
    ids: new IdAllocator(SPOT_ID_BASE, startMs, index),
    accountId: credentials.spotAccountId,
    schedule,
    extraFieldsFromMs,
    orderFraction: profile.orderFraction,
  });
  const futures = new FuturesDesk({ rng: rng('futures'), market, ledger: futuresLedger, ids: new IdAllocator(FUTURES_ID_BASE, startMs, index), schedule });
  const treasury = new Treasury({ rng: rng('treasury'), ledger, futuresLedger, futures });

  const fixed = planFixedEvents(planRng, calendar, profile, { spot, futures, treasury });

  const sessions = calendar.sessionsByDay.flat();
  const totalWeight = sessions.reduce((sum, s) => sum + s.weight, 0);
  const hardSpotFills = profile.spotBursts * 150 + calendar.monthBoundaries.length * 2;
  const hardFuturesFills = profile.futuresBursts * 150 + calendar.monthBoundaries.length * 2;
  const spotRate = Math.max(0, profile.spotFills - hardSpotFills) / SPOT_FILLS_PER_ORDER_EVENT / totalWeight;
  const futuresRate = Math.max(0, profile.futuresFills - hardFuturesFills) / FUTURES_FILLS_PER_ORDER_EVENT / totalWeight;
  const transferRate = Math.max(0, profile.transfers - 2 * profile.transferTwins - 2 * calendar.monthBoundaries.length) / totalWeight;

  for (let day = 0; day < days; day++) {
    const dayStart = startMs + day * DAY_MS;
    for (const [t, action] of fixed.get(day) ?? []) queue.push(t, action);
    for (let h = 0; h < 24; h++) {
      const t = dayStart + h * HOUR_MS;
      if (isInQuietPeriod(calendar, t)) continue;
      // Funding settles at 00:00, 08:00 and 16:00 UTC; open losses are checked every hour.
      if (h % 8 === 0) queue.push(t, () => futures.settleFunding(t));
      queue.push(t + 30 * 60_000, () => futures.checkRisk(t + 30 * 60_000));
    }
    const spotSymbols = SPOT_SYMBOLS.filter((s) => isTradedOn(calendar, s.symbol, day));
    const contracts = CONTRACTS.filter((c) => isTradedOn(calendar, c.symbol, day));
    for (const session of calendar.sessionsByDay[day] ?? []) {
      const planned: Array<[number, Action]> = [];
      if (spotSymbols.length > 0) {
        const weights = spotSymbols.map((s) => s.weight);
        for (let n = planRng.roundStochastic(spotRate * session.weight); n > 0; n--) {
          const symbol = (spotSymbols[planRng.weightedIndex(weights)] as (typeof spotSymbols)[number]).symbol;
          const t = timeIn(planRng, session);
          planned.push([t, () => spot.placeOrder(t, symbol)]);
        }
      }
      if (contracts.length > 0) {
        const weights = contracts.map((c) => c.weight);
        for (let n = planRng.roundStochastic(futuresRate * session.weight); n > 0; n--) {
          const symbol = (contracts[planRng.weightedIndex(weights)] as (typeof contracts)[number]).symbol;
          const t = timeIn(planRng, session);
          planned.push([t, () => futures.placeOrder(t, symbol)]);
        }
      }
      for (let n = planRng.roundStochastic(transferRate * session.weight); n > 0; n--) {
        const t = timeIn(planRng, session);
        planned.push([t, () => treasury.rebalance(t)]);
      }
      for (const [t, action] of planned) queue.push(t, action);
    }
    const dayEnd = dayStart + DAY_MS;
    while (queue.peekTime() < dayEnd) queue.pop()();
  }
  if (queue.size > 0) throw new RangeError(`event at ${queue.peekTime()} is past the end of the history ${endMs}`);

  const { commissions, referralActivity } = generateAffiliate({
    rng: rng('affiliate'),
    market,
    calendar,
    invitedUsers: profile.invitedUsers,
    commissions: profile.commissions,
    referralEvents: profile.referralEvents,
    twins: profile.commissionTwins,
  });

  const futuresIdentity = { accountId: credentials.futuresAccountId, userId: credentials.uid, createdMs: futuresCreatedMs, contracts: CONTRACTS };
  return {
    uid: credentials.uid,
    apiKey: credentials.apiKey,
    secret: credentials.secret,
    passphrase: credentials.passphrase,
    canReadFutures: true,
    spotAccountId: credentials.spotAccountId,
    spotFills: spot.fillsBySymbol,
    fundingBills: ledger.bills,
    transferRecords: treasury.transferRecords,
    futuresFills: futures.fills,
    futuresOrders: futures.orders,
    spotOpenOrders: spot.openOrdersBySymbol,
    spotOrdersById: spot.ordersById,
    commissions,
    referralActivity,
    assetsAt: (atMs) => ledger.assetsAt(atMs),
    futuresAccountAt: (atMs) => buildFuturesAccountWire(futuresIdentity, futuresLedger.stateAt(atMs)),
  };
}

/** A uniformly random ms inside a session. */
function timeIn(rng: Rng, session: Session): number {
  return session.startMs + rng.int(0, session.endMs - session.startMs);
}

interface Desks {
  spot: SpotDesk;
  futures: FuturesDesk;
  treasury: Treasury;
}

/**
 * The events that do not follow the session rates: the opening deposits, wallet operations,
 * the hard cases, the flattening before the quiet period and the orders left open at the end.
 * Returned by day index, each in push order.
 */
function planFixedEvents(rng: Rng, calendar: ActivityCalendar, profile: ScaleProfile, desks: Desks): Map<number, Array<[number, Action]>> {
  const { spot, futures, treasury } = desks;
  const byDay = new Map<number, Array<[number, Action]>>();
  const add = (t: number, action: Action): void => {
    const day = dayIndexOf(calendar, t);
    let list = byDay.get(day);
    if (list === undefined) byDay.set(day, (list = []));
    list.push([t, action]);
  };
  const sessions = calendar.sessionsByDay.flat();
  const laterSessions = sessions.filter((s) => s.startMs >= calendar.startMs + DAY_MS);
  const randomTime = (): number => timeIn(rng, rng.pick(laterSessions));

  // Opening: deposits half an hour before the first session, futures funded ten minutes later.
  const first = sessions[0] as Session;
  const opening = Math.max(calendar.startMs + 60_000, first.startMs - 30 * 60_000);
  add(opening, () => treasury.openAccount(opening));
  add(opening + 10 * 60_000, () => treasury.fundFutures(opening + 10 * 60_000, 0.3));

  for (let i = 0; i < profile.deposits; i++) {
    const t = randomTime();
    add(t, () => treasury.depositSomething(t));
  }
  for (let i = 0; i < profile.withdrawals; i++) {
    const t = randomTime();
    add(t, () => treasury.withdrawSomething(t));
  }
  for (let i = 0; i < profile.c2cTrades; i++) {
    const t = randomTime();
    add(t, () => treasury.c2c(t));
  }
  const airdrop = randomTime();
  add(airdrop, () => treasury.depositUntraded(airdrop));

  // Hard case: more than 100 spot fills of one symbol in one ms (tries symbols until one is affordable).
  for (let i = 0; i < profile.spotBursts; i++) {
    const t = randomTime();
    const candidates = SPOT_SYMBOLS.filter((s) => isTradedOn(calendar, s.symbol, dayIndexOf(calendar, t)));
    const startAt = rng.int(0, candidates.length);
    add(t, () => {
      for (let k = 0; k < candidates.length; k++) {
        if (spot.placeBurst(t, (candidates[(startAt + k) % candidates.length] as (typeof candidates)[number]).symbol)) return;
      }
    });
  }
  // Hard case: more than 100 futures fills of one contract in one ms, over three orders.
  for (let i = 0; i < profile.futuresBursts; i++) {
    const t = randomTime();
    add(t, () => {
      treasury.ensureFreeCollateral(t, 1_500);
      futures.placeBurst(t, BURST_CONTRACT);
    });
  }
  // An over-leveraged bet that ends in a forced liquidation, well before the quiet period (whose
  // flattening would close it normally).
  const betSessions = laterSessions.filter((s) => s.endMs < calendar.quietStartMs - 2 * DAY_MS && s.startMs > calendar.startMs + 7 * DAY_MS);
  const betAt = timeIn(rng, rng.pick(betSessions));
  add(betAt, () => {
    treasury.ensureFreeCollateral(betAt, 1_000);
    futures.placeOverleveragedBet(betAt, BET_CONTRACT);
  });
  // Hard case: identical twins in the transfer records.
  for (let i = 0; i < profile.transferTwins; i++) {
    const t = randomTime();
    add(t, () => treasury.transferTwins(t));
  }
  // Hard case: records on the first ms of a month and on the last ms of the month before.
  for (const boundary of calendar.monthBoundaries) {
    for (const t of [boundary - 1, boundary]) {
      add(t, () => {
        spot.placeSingleFill(t, BOUNDARY_SPOT_SYMBOL);
        treasury.transferSmall(t);
        futures.placeSingleFill(t, BOUNDARY_CONTRACT);
      });
    }
  }
  // Hard case: a long quiet period: every position is closed before it starts.
  const flattenAt = calendar.quietStartMs - 3 * HOUR_MS;
  add(flattenAt, () => futures.flatten(flattenAt));

  // Orders still open at the end: placed in the last three weeks, never filled.
  const lastDay = calendar.days - 1;
  const openFrom = calendar.endMs - 20 * DAY_MS;
  const openTo = calendar.endMs - 3 * HOUR_MS;
  for (const s of SPOT_SYMBOLS) {
    if (!isTradedOn(calendar, s.symbol, lastDay)) continue;
    for (let n = rng.int(1, 4); n > 0; n--) {
      const t = openFrom + rng.int(0, openTo - openFrom);
      if (!isInQuietPeriod(calendar, t)) add(t, () => spot.placeOpenOrder(t, s.symbol, calendar.endMs));
    }
  }
  const openContracts = CONTRACTS.filter((c) => isTradedOn(calendar, c.symbol, lastDay));
  for (let n = rng.int(2, 5); n > 0 && openContracts.length > 0; n--) {
    const t = openFrom + rng.int(0, openTo - openFrom);
    const symbol = rng.pick(openContracts).symbol;
    if (!isInQuietPeriod(calendar, t)) add(t, () => futures.placeOpenOrder(t, symbol, calendar.endMs));
  }
  for (const list of byDay.values()) list.sort((a, b) => a[0] - b[0]);
  return byDay;
}
