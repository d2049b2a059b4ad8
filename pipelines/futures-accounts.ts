import type { FieldSpec, SnapshotStream } from '../src/extract/stream.ts';

/**
 * The futures account (4.16): account settings, collateral with running totals, open positions.
 * Stored whole, one record per snapshot; staging splits collateral and positions out.
 */
export const futuresAccounts = {
  kind: 'snapshot',
  name: 'futures_accounts',
  description: 'Futures account, collateral and positions, one record per snapshot',
  endpoint: 'futures.accounts',
  recordsPath: '',
  singleRecord: true,
  partitions: { kind: 'none' },
  paginator: { kind: 'single' },
  fields: [
    { name: 'account', type: 'json' },
    { name: 'collateral', type: 'json', shape: { kind: 'list', fields: collateralFields() } },
    { name: 'position', type: 'json', shape: { kind: 'list', fields: positionFields() } },
    { name: 'version', type: 'text', required: false },
  ],
  knownFields: [
    // Text read as it comes by sql/staging/futures_collateral.sql and futures_positions.sql (no check needed).
    'collateral[].account_id',
    'collateral[].margin_mode',
    'collateral[].cross_contract_id',
    'collateral[].isolated_position_id',
    'position[].id',
    'position[].account_id',
    'position[].contract_id',
    'position[].side',
    'position[].margin_mode',
    'position[].separated_mode',
    // Not read: bookkeeping times and sequence numbers, and an amount kept for old clients.
    'collateral[].created_time',
    'collateral[].updated_time',
    'collateral[].legacy_amount',
    'position[].created_time',
    'position[].updated_time',
    'position[].created_match_sequence_id',
    'position[].updated_match_sequence_id',
    'position[].separated_open_order_id',
    'position[].is_auto_append_isolated_margin',
  ],
} as const satisfies SnapshotStream;

/**
 * The collateral entries' fields that staging casts (sql/staging/futures_collateral.sql), checked
 * before a snapshot is stored; all optional (a missing one is unknown, NULL). Text fields are
 * read as they come and need no check.
 */
function collateralFields(): FieldSpec[] {
  return [
    { name: 'coin_id', type: 'integer', required: false },
    { name: 'is_liquidating', type: 'boolean', required: false },
    ...optionalAmounts([
      'amount',
      'pending_deposit_amount',
      'pending_withdraw_amount',
      'pending_transfer_in_amount',
      'pending_transfer_out_amount',
      'cum_deposit_amount',
      'cum_withdraw_amount',
      'cum_transfer_in_amount',
      'cum_transfer_out_amount',
      'cum_margin_move_in_amount',
      'cum_margin_move_out_amount',
      'cum_position_open_long_amount',
      'cum_position_open_short_amount',
      'cum_position_close_long_amount',
      'cum_position_close_short_amount',
      'cum_position_fill_fee_amount',
      'cum_position_liquidate_fee_amount',
      'cum_position_funding_amount',
      'cum_order_fill_fee_income_amount',
      'cum_order_liquidate_fee_income_amount',
    ]),
  ];
}

/** The position entries' fields that staging casts (sql/staging/futures_positions.sql). */
function positionFields(): FieldSpec[] {
  return [
    { name: 'coin_id', type: 'integer', required: false },
    ...optionalAmounts([
      'leverage',
      'size',
      'open_value',
      'open_fee',
      'funding_fee',
      'isolated_margin',
      'cum_open_size',
      'cum_open_value',
      'cum_open_fee',
      'cum_close_size',
      'cum_close_value',
      'cum_close_fee',
      'cum_funding_fee',
      'cum_liquidate_fee',
    ]),
  ];
}

function optionalAmounts(names: readonly string[]): FieldSpec[] {
  return names.map((name) => ({ name, type: 'amount', required: false }));
}
