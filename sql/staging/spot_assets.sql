-- Spot balances, one row per coin per snapshot.
-- Key: (account, snapshot_at, coin_name). Input: raw.spot_assets (marker rows of empty snapshots left out).
with source as (
    select * from raw.spot_assets where _seq >= 0
),

final as (
    select
        _account as account,
        _snapshot_at as snapshot_at,
        cast(_record->>'coinId' as bigint) as coin_id,
        _record->>'coinName' as coin_name,
        parse_decimal_18(_record->>'available') as available,
        parse_decimal_18(_record->>'frozen') as frozen,
        parse_decimal_18(_record->>'equity') as equity,
        _run_id,
        _fetched_at
    from source
)

select * from final
