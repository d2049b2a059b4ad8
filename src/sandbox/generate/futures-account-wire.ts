/**
 * The account/accounts payload (exchange-api.md 2.11) of a futures state, in its JSON types:
 * ids and amounts as strings, coin_id and contract ids as integers, flags as booleans.
 */
import type { WireObject } from '../model.ts';
import { FUTURES_FEE_RATES, FUTURES_LEVERAGE, type ContractSpec } from './catalog.ts';
import { formatFixed } from './fixed-point.ts';
import { collateralAmount, type FuturesState, type PositionState } from './futures-ledger.ts';

/** USDT-margined: collateral and fees are in USDT. */
const COLLATERAL_COIN_ID = 2;
/** Futures amounts are written with 8 decimals (USDT). */
export const FUTURES_AMOUNT_DECIMALS = 8;

/** The static identity of one futures account. */
export interface FuturesAccountIdentity {
  accountId: string;
  userId: string;
  createdMs: number;
  contracts: readonly ContractSpec[];
}

function feeSetting(): { [key: string]: boolean | string } {
  return {
    is_set_fee_rate: false,
    taker_fee_rate: FUTURES_FEE_RATES.taker,
    maker_fee_rate: FUTURES_FEE_RATES.maker,
    is_set_fee_discount: false,
    fee_discount: '1',
    is_set_taker_maker_fee_discount: false,
    taker_fee_discount: '1',
    maker_fee_discount: '1',
  };
}

function money(v: bigint): string {
  return formatFixed(v, FUTURES_AMOUNT_DECIMALS);
}

/** Builds { account, collateral, position, version } for a state. */
export function buildFuturesAccountWire(id: FuturesAccountIdentity, s: FuturesState): WireObject {
  const feeMap: WireObject = {};
  const modeMap: WireObject = {};
  const leverageMap: WireObject = {};
  for (const c of id.contracts) {
    const key = String(c.contractId);
    feeMap[key] = { contract_id: key, ...feeSetting() };
    modeMap[key] = { contract_id: key, margin_mode: 'SHARED', separated_mode: 'COMBINED', position_mode: 'HEDGE' };
    const lev = String(FUTURES_LEVERAGE);
    leverageMap[key] = { contract_id: key, isolated_long_leverage: lev, isolated_short_leverage: lev, cross_leverage: lev, shared_leverage: lev };
  }
  const created = String(id.createdMs);
  const updated = String(s.updatedMs);
  const zero = money(0n);
  return {
    account: {
      id: id.accountId,
      user_id: id.userId,
      client_account_id: '0',
      is_system_account: false,
      default_fee_setting: feeSetting(),
      contract_id_to_fee_setting: feeMap,
      contract_id_to_mode_setting: modeMap,
      contract_id_to_leverage_setting: leverageMap,
      create_order_rate_limit_per_minute: 0,
      create_order_delay_milliseconds: 0,
      extra_type: '',
      extra_data_json: '',
      status: 'NORMAL',
      created_time: created,
      updated_time: updated,
    },
    collateral: [
      {
        account_id: id.accountId,
        coin_id: COLLATERAL_COIN_ID,
        margin_mode: 'SHARED',
        cross_contract_id: 0,
        isolated_position_id: '0',
        amount: money(collateralAmount(s)),
        pending_deposit_amount: zero,
        pending_withdraw_amount: zero,
        pending_transfer_in_amount: zero,
        pending_transfer_out_amount: zero,
        is_liquidating: false,
        legacy_amount: zero,
        cum_deposit_amount: zero,
        cum_withdraw_amount: zero,
        cum_transfer_in_amount: money(s.cumTransferIn),
        cum_transfer_out_amount: money(s.cumTransferOut),
        cum_margin_move_in_amount: zero,
        cum_margin_move_out_amount: zero,
        cum_position_open_long_amount: money(s.cumOpenLong),
        cum_position_open_short_amount: money(s.cumOpenShort),
        cum_position_close_long_amount: money(s.cumCloseLong),
        cum_position_close_short_amount: money(s.cumCloseShort),
        cum_position_fill_fee_amount: money(s.cumFillFee),
        cum_position_liquidate_fee_amount: money(s.cumLiquidateFee),
        cum_position_funding_amount: money(s.cumFunding),
        cum_order_fill_fee_income_amount: zero,
        cum_order_liquidate_fee_income_amount: zero,
        created_time: created,
        updated_time: updated,
      },
    ],
    position: s.positions.filter((p): p is PositionState => p !== undefined).map((p) => positionWire(id, p)),
    version: String(s.version),
  };
}

function positionWire(id: FuturesAccountIdentity, p: PositionState): WireObject {
  const contract = id.contracts[p.slot >> 1];
  if (contract === undefined) throw new RangeError(`no contract for slot ${p.slot}`);
  return {
    id: p.id,
    account_id: id.accountId,
    coin_id: COLLATERAL_COIN_ID,
    contract_id: contract.contractId,
    side: p.side,
    margin_mode: 'SHARED',
    separated_mode: 'COMBINED',
    separated_open_order_id: '0',
    leverage: String(FUTURES_LEVERAGE),
    size: formatFixed(p.size, contract.sizeDecimals),
    open_value: money(p.openValue),
    open_fee: money(p.openFee),
    funding_fee: money(p.fundingFee),
    isolated_margin: money(0n),
    is_auto_append_isolated_margin: false,
    cum_open_size: formatFixed(p.cumOpenSize, contract.sizeDecimals),
    cum_open_value: money(p.cumOpenValue),
    cum_open_fee: money(p.cumOpenFee),
    cum_close_size: formatFixed(p.cumCloseSize, contract.sizeDecimals),
    cum_close_value: money(p.cumCloseValue),
    cum_close_fee: money(p.cumCloseFee),
    cum_funding_fee: money(p.cumFundingFee),
    cum_liquidate_fee: money(p.cumLiquidateFee),
    created_match_sequence_id: String(p.createdSequence),
    updated_match_sequence_id: String(p.updatedSequence),
    created_time: String(p.createdMs),
    updated_time: String(p.updatedMs),
  };
}
