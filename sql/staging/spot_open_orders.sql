-- Open spot orders, one row per order per snapshot.
-- Key: (account, snapshot_at, order_id). Input: raw.spot_open_orders.
with source as (
    select * from raw.spot_open_orders where _seq >= 0
),

final as (
    select
        _account as account,
        _snapshot_at as snapshot_at,
        _record->>'orderId' as order_id,
        _record->>'symbol' as symbol,
        _record->>'clientOrderId' as client_order_id,
        cast(nullif(_record->>'price', '') as decimal(38, 18)) as price,
        cast(_record->>'quantity' as decimal(38, 18)) as quantity,
        _record->>'orderType' as order_type,
        _record->>'side' as side,
        _record->>'status' as status,
        cast(nullif(_record->>'fillQuantity', '') as decimal(38, 18)) as fill_quantity,
        cast(nullif(_record->>'fillTotalAmount', '') as decimal(38, 18)) as fill_total_amount,
        make_timestamptz(cast(_record->>'cTime' as bigint) * 1000) as c_time_at,
        _run_id,
        _fetched_at
    from source
)

select * from final
