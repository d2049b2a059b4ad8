/**
 * The futures (USDT-margined, cross "SHARED" margin, hedge mode) account of one sandbox
 * account as a ledger of events: transfers in and out, fills, funding payments.
 *
 * The account payload of any moment (2.11) is a fold of the events up to it, so its running
 * totals (cum_*) are exact sums of what the fills, funding payments and transfers say. To answer
 * "the account at ms" fast, the state is checkpointed every {@link CHECKPOINT_EVERY} events and
 * replayed from the nearest checkpoint.
 *
 * Conventions:
 * - collateral amount = transfers in - transfers out + realized PnL - fill fees
 *   - liquidation fees - funding;
 * - funding amounts are positive when the account pays (a long with a positive rate);
 * - cum_position_open_long_amount etc. accumulate the fillValue (notional) of the fills of that
 *   kind; a position's open_value is the cost basis of its remaining size;
 * - closing a part s of a position of size S takes floor(openValue * s / S) (to 1e-8) off its
 *   open value, and all of it on the last close, so a round trip realizes exactly
 *   close value - open value (long) or open value - close value (short).
 */
import { lastIndexAtOrBefore } from './funding-ledger.ts';

/** The direction of a futures fill (2.10 direction and legacyOrdeDirection). */
export type FuturesDirection = 'OPEN_LONG' | 'OPEN_SHORT' | 'CLOSE_LONG' | 'CLOSE_SHORT';

/** Something that changes the futures account; amounts are fixed point (see fixed-point.ts). */
export type FuturesLedgerEvent =
  | {
      t: number;
      kind: 'transfer';
      /** Positive into the futures account, negative out of it. */
      amount: bigint;
    }
  | {
      t: number;
      kind: 'fill';
      /** Position slot: contract index * 2, + 1 for SHORT. */
      slot: number;
      direction: FuturesDirection;
      size: bigint;
      value: bigint;
      fee: bigint;
      liquidateFee: bigint;
      /** Realized PnL (0 on opening fills). */
      pnl: bigint;
      /** Cost basis and opening fees taken off the position by a closing fill. */
      closedOpenValue: bigint;
      closedOpenFee: bigint;
      /** The id of the position this fill opens or changes. */
      positionId: string;
    }
  | {
      t: number;
      kind: 'funding';
      slot: number;
      /** Positive when paid by the account. */
      amount: bigint;
    };

/** One open position (one contract, one side). */
export interface PositionState {
  id: string;
  slot: number;
  side: 'LONG' | 'SHORT';
  size: bigint;
  openValue: bigint;
  openFee: bigint;
  fundingFee: bigint;
  cumOpenSize: bigint;
  cumOpenValue: bigint;
  cumOpenFee: bigint;
  cumCloseSize: bigint;
  cumCloseValue: bigint;
  cumCloseFee: bigint;
  cumFundingFee: bigint;
  cumLiquidateFee: bigint;
  createdMs: number;
  updatedMs: number;
  createdSequence: number;
  updatedSequence: number;
}

/** The futures account after some prefix of its events. */
export interface FuturesState {
  /** Number of events applied; also the account's version and the match sequence. */
  version: number;
  updatedMs: number;
  cumTransferIn: bigint;
  cumTransferOut: bigint;
  cumOpenLong: bigint;
  cumOpenShort: bigint;
  cumCloseLong: bigint;
  cumCloseShort: bigint;
  cumFillFee: bigint;
  cumLiquidateFee: bigint;
  cumFunding: bigint;
  realizedPnl: bigint;
  /** By slot (contract index * 2 + side); undefined when flat. */
  positions: Array<PositionState | undefined>;
}

/** Events between two checkpoints. */
export const CHECKPOINT_EVERY = 128;

/** Collateral amount of a state: transfers in - out + realized PnL - fees - funding. */
export function collateralAmount(s: FuturesState): bigint {
  return s.cumTransferIn - s.cumTransferOut + s.realizedPnl - s.cumFillFee - s.cumLiquidateFee - s.cumFunding;
}

function emptyState(slots: number, createdMs: number): FuturesState {
  return {
    version: 0,
    updatedMs: createdMs,
    cumTransferIn: 0n,
    cumTransferOut: 0n,
    cumOpenLong: 0n,
    cumOpenShort: 0n,
    cumCloseLong: 0n,
    cumCloseShort: 0n,
    cumFillFee: 0n,
    cumLiquidateFee: 0n,
    cumFunding: 0n,
    realizedPnl: 0n,
    positions: new Array<PositionState | undefined>(slots).fill(undefined),
  };
}

function cloneState(s: FuturesState): FuturesState {
  return { ...s, positions: s.positions.map((p) => (p === undefined ? undefined : { ...p })) };
}

/** Applies one event to a state (the only place where the futures account changes). */
function applyEvent(s: FuturesState, e: FuturesLedgerEvent): void {
  s.version++;
  s.updatedMs = e.t;
  if (e.kind === 'transfer') {
    if (e.amount >= 0n) s.cumTransferIn += e.amount;
    else s.cumTransferOut -= e.amount;
    return;
  }
  if (e.kind === 'funding') {
    const p = s.positions[e.slot];
    if (p === undefined) throw new RangeError(`funding for a flat slot ${e.slot}`);
    s.cumFunding += e.amount;
    p.fundingFee += e.amount;
    p.cumFundingFee += e.amount;
    p.updatedMs = e.t;
    p.updatedSequence = s.version;
    return;
  }
  s.cumFillFee += e.fee;
  s.cumLiquidateFee += e.liquidateFee;
  s.realizedPnl += e.pnl;
  let p = s.positions[e.slot];
  if (e.direction === 'OPEN_LONG' || e.direction === 'OPEN_SHORT') {
    if (e.direction === 'OPEN_LONG') s.cumOpenLong += e.value;
    else s.cumOpenShort += e.value;
    if (p === undefined) {
      p = {
        id: e.positionId,
        slot: e.slot,
        side: e.direction === 'OPEN_LONG' ? 'LONG' : 'SHORT',
        size: 0n,
        openValue: 0n,
        openFee: 0n,
        fundingFee: 0n,
        cumOpenSize: 0n,
        cumOpenValue: 0n,
        cumOpenFee: 0n,
        cumCloseSize: 0n,
        cumCloseValue: 0n,
        cumCloseFee: 0n,
        cumFundingFee: 0n,
        cumLiquidateFee: 0n,
        createdMs: e.t,
        updatedMs: e.t,
        createdSequence: s.version,
        updatedSequence: s.version,
      };
      s.positions[e.slot] = p;
    }
    p.size += e.size;
    p.openValue += e.value;
    p.openFee += e.fee;
    p.cumOpenSize += e.size;
    p.cumOpenValue += e.value;
    p.cumOpenFee += e.fee;
  } else {
    if (e.direction === 'CLOSE_LONG') s.cumCloseLong += e.value;
    else s.cumCloseShort += e.value;
    if (p === undefined || e.size > p.size) throw new RangeError(`close of ${e.size} exceeds the position in slot ${e.slot}`);
    p.size -= e.size;
    p.openValue -= e.closedOpenValue;
    p.openFee -= e.closedOpenFee;
    p.cumCloseSize += e.size;
    p.cumCloseValue += e.value;
    p.cumCloseFee += e.fee;
    p.cumLiquidateFee += e.liquidateFee;
    if (p.size === 0n) {
      s.positions[e.slot] = undefined;
      return;
    }
  }
  p.updatedMs = e.t;
  p.updatedSequence = s.version;
}

/** The futures account's event log, its live state, and its state at any past ms. */
export class FuturesLedger {
  private readonly events: FuturesLedgerEvent[] = [];
  private readonly times: number[] = [];
  private readonly checkpoints: FuturesState[];
  private readonly live: FuturesState;

  /** @param slots - number of position slots (contracts * 2) */
  constructor(slots: number, createdMs: number) {
    this.live = emptyState(slots, createdMs);
    this.checkpoints = [cloneState(this.live)];
  }

  /** The current state; read only (change it through {@link record}). */
  get state(): Readonly<FuturesState> {
    return this.live;
  }

  /** Appends an event (times must not decrease) and applies it. */
  record(e: FuturesLedgerEvent): void {
    const last = this.times[this.times.length - 1];
    if (last !== undefined && e.t < last) throw new RangeError(`futures event at ${e.t} after one at ${last}`);
    applyEvent(this.live, e);
    this.events.push(e);
    this.times.push(e.t);
    if (this.events.length % CHECKPOINT_EVERY === 0) this.checkpoints.push(cloneState(this.live));
  }

  /** The state after every event at or before atMs (a fresh copy). */
  stateAt(atMs: number): FuturesState {
    const count = lastIndexAtOrBefore(this.times, atMs) + 1;
    const c = Math.floor(count / CHECKPOINT_EVERY);
    const state = cloneState(this.checkpoints[c] as FuturesState);
    for (let i = c * CHECKPOINT_EVERY; i < count; i++) applyEvent(state, this.events[i] as FuturesLedgerEvent);
    return state;
  }
}
