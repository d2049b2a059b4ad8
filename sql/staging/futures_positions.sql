-- Open futures positions, one row per position per snapshot.
-- Key: (account, snapshot_at, position_id). Input: raw.futures_accounts (the position array).
with source as (
    select * from raw.futures_accounts where _seq >= 0
),

entries as (
    select _account, _snapshot_at, _run_id, _fetched_at, unnest(from_json(_record->'position', '["JSON"]')) as p
    from source
),

final as (
    select
        _account as account,
        _snapshot_at as snapshot_at,
        p->>'id' as position_id,
        p->>'account_id' as account_id,
        cast(p->>'coin_id' as bigint) as coin_id,
        p->>'contract_id' as contract_id,
        p->>'side' as side,
        p->>'margin_mode' as margin_mode,
        p->>'separated_mode' as separated_mode,
        parse_decimal_18(p->>'leverage') as leverage,
        parse_decimal_18(p->>'size') as size,
        parse_decimal_18(p->>'open_value') as open_value,
        parse_decimal_18(p->>'open_fee') as open_fee,
        parse_decimal_18(p->>'funding_fee') as funding_fee,
        parse_decimal_18(p->>'isolated_margin') as isolated_margin,
        parse_decimal_18(p->>'cum_open_size') as cum_open_size,
        parse_decimal_18(p->>'cum_open_value') as cum_open_value,
        parse_decimal_18(p->>'cum_open_fee') as cum_open_fee,
        parse_decimal_18(p->>'cum_close_size') as cum_close_size,
        parse_decimal_18(p->>'cum_close_value') as cum_close_value,
        parse_decimal_18(p->>'cum_close_fee') as cum_close_fee,
        parse_decimal_18(p->>'cum_funding_fee') as cum_funding_fee,
        parse_decimal_18(p->>'cum_liquidate_fee') as cum_liquidate_fee,
        _run_id,
        _fetched_at
    from entries
)

select * from final
