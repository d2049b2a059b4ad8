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
        parse_decimal_18(nullif(_record->>'price', '')) as price,
        parse_decimal_18(_record->>'quantity') as quantity,
        _record->>'orderType' as order_type,
        _record->>'side' as side,
        _record->>'status' as status,
        parse_decimal_18(nullif(_record->>'fillQuantity', '')) as fill_quantity,
        parse_decimal_18(nullif(_record->>'fillTotalAmount', '')) as fill_total_amount,
        make_timestamptz(cast(_record->>'cTime' as bigint) * 1000) as c_time_at,
        _run_id,
        _fetched_at
    from source
)

select * from final
