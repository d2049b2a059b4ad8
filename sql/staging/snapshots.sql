-- Every snapshot taken, one row per (account, stream, partition, snapshot time), empty ones included.
-- Key: (account, stream, partition_key, snapshot_at). Inputs: the raw snapshot tables.
-- An empty state (no open orders left) has no rows in its stream's view: read the latest state here.
with source as (
    select 'currencies' as stream, _account, _partition, _snapshot_at, _seq from raw.currencies
    union all select 'futures_contracts', _account, _partition, _snapshot_at, _seq from raw.futures_contracts
    union all select 'spot_assets', _account, _partition, _snapshot_at, _seq from raw.spot_assets
    union all select 'futures_accounts', _account, _partition, _snapshot_at, _seq from raw.futures_accounts
    union all select 'spot_open_orders', _account, _partition, _snapshot_at, _seq from raw.spot_open_orders
    union all select 'futures_open_orders', _account, _partition, _snapshot_at, _seq from raw.futures_open_orders
),

final as (
    select
        _account as account,
        stream,
        _partition as partition_key,
        _snapshot_at as snapshot_at,
        count(*) filter (where _seq >= 0) as records,
        count(*) filter (where _seq >= 0) = 0 as is_empty
    from source
    group by all
)

select * from final
