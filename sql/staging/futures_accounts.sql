-- The futures account, one row per snapshot (collateral and positions: futures_collateral, futures_positions).
-- Key: (account, snapshot_at). Input: raw.futures_accounts.
with source as (
    select * from raw.futures_accounts where _seq >= 0
),

final as (
    select
        _account as account,
        _snapshot_at as snapshot_at,
        _record->'account'->>'id' as account_id,
        _record->'account'->>'user_id' as user_id,
        _record->'account'->>'status' as status,
        _record->>'version' as version,
        _record->'account' as account_settings,
        _run_id,
        _fetched_at
    from source
)

select * from final
