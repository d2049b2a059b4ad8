-- Listed currencies, one row per currency per snapshot (chains kept as JSON).
-- Key: (account, snapshot_at, coin_id). Input: raw.currencies.
with source as (
    select * from raw.currencies where _seq >= 0
),

final as (
    select
        _account as account,
        _snapshot_at as snapshot_at,
        cast(_record->>'coinId' as bigint) as coin_id,
        _record->>'coinName' as coin_name,
        lower(_record->>'transfer') = 'true' as is_transferable,
        _record->'chains' as chains,
        _run_id,
        _fetched_at
    from source
)

select * from final
