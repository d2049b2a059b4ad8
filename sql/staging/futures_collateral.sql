-- Futures collateral, one row per collateral entry per snapshot, with its running totals.
-- Key: (account, snapshot_at, coin_id, margin_mode, cross_contract_id, isolated_position_id).
-- Input: raw.futures_accounts (the collateral array).
with source as (
    select * from raw.futures_accounts where _seq >= 0
),

entries as (
    select _account, _snapshot_at, _run_id, _fetched_at, unnest(from_json(_record->'collateral', '["JSON"]')) as c
    from source
),

final as (
    select
        _account as account,
        _snapshot_at as snapshot_at,
        c->>'account_id' as account_id,
        cast(c->>'coin_id' as bigint) as coin_id,
        c->>'margin_mode' as margin_mode,
        c->>'cross_contract_id' as cross_contract_id,
        c->>'isolated_position_id' as isolated_position_id,
        parse_decimal_18(c->>'amount') as amount,
        parse_decimal_18(c->>'pending_deposit_amount') as pending_deposit_amount,
        parse_decimal_18(c->>'pending_withdraw_amount') as pending_withdraw_amount,
        parse_decimal_18(c->>'pending_transfer_in_amount') as pending_transfer_in_amount,
        parse_decimal_18(c->>'pending_transfer_out_amount') as pending_transfer_out_amount,
        cast(c->>'is_liquidating' as boolean) as is_liquidating,
        parse_decimal_18(c->>'cum_deposit_amount') as cum_deposit_amount,
        parse_decimal_18(c->>'cum_withdraw_amount') as cum_withdraw_amount,
        parse_decimal_18(c->>'cum_transfer_in_amount') as cum_transfer_in_amount,
        parse_decimal_18(c->>'cum_transfer_out_amount') as cum_transfer_out_amount,
        parse_decimal_18(c->>'cum_margin_move_in_amount') as cum_margin_move_in_amount,
        parse_decimal_18(c->>'cum_margin_move_out_amount') as cum_margin_move_out_amount,
        parse_decimal_18(c->>'cum_position_open_long_amount') as cum_position_open_long_amount,
        parse_decimal_18(c->>'cum_position_open_short_amount') as cum_position_open_short_amount,
        parse_decimal_18(c->>'cum_position_close_long_amount') as cum_position_close_long_amount,
        parse_decimal_18(c->>'cum_position_close_short_amount') as cum_position_close_short_amount,
        parse_decimal_18(c->>'cum_position_fill_fee_amount') as cum_position_fill_fee_amount,
        parse_decimal_18(c->>'cum_position_liquidate_fee_amount') as cum_position_liquidate_fee_amount,
        parse_decimal_18(c->>'cum_position_funding_amount') as cum_position_funding_amount,
        parse_decimal_18(c->>'cum_order_fill_fee_income_amount') as cum_order_fill_fee_income_amount,
        parse_decimal_18(c->>'cum_order_liquidate_fee_income_amount') as cum_order_liquidate_fee_income_amount,
        _run_id,
        _fetched_at
    from entries
)

select * from final
