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
        cast(p->>'leverage' as decimal(38, 18)) as leverage,
        cast(p->>'size' as decimal(38, 18)) as size,
        cast(p->>'open_value' as decimal(38, 18)) as open_value,
        cast(p->>'open_fee' as decimal(38, 18)) as open_fee,
        cast(p->>'funding_fee' as decimal(38, 18)) as funding_fee,
        cast(p->>'isolated_margin' as decimal(38, 18)) as isolated_margin,
        cast(p->>'cum_open_size' as decimal(38, 18)) as cum_open_size,
        cast(p->>'cum_open_value' as decimal(38, 18)) as cum_open_value,
        cast(p->>'cum_open_fee' as decimal(38, 18)) as cum_open_fee,
        cast(p->>'cum_close_size' as decimal(38, 18)) as cum_close_size,
        cast(p->>'cum_close_value' as decimal(38, 18)) as cum_close_value,
        cast(p->>'cum_close_fee' as decimal(38, 18)) as cum_close_fee,
        cast(p->>'cum_funding_fee' as decimal(38, 18)) as cum_funding_fee,
        cast(p->>'cum_liquidate_fee' as decimal(38, 18)) as cum_liquidate_fee,
        _run_id,
        _fetched_at
    from entries
)

select * from final
