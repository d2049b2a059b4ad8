-- Futures orders not yet final, one row per order per snapshot.
-- Key: (account, snapshot_at, order_id). Input: raw.futures_open_orders.
with source as (
    select * from raw.futures_open_orders where _seq >= 0
),

final as (
    select
        _account as account,
        _snapshot_at as snapshot_at,
        _record->>'order_id' as order_id,
        _record->>'symbol' as symbol,
        _record->>'client_oid' as client_oid,
        parse_decimal_18(_record->>'size') as size,
        parse_decimal_18(nullif(_record->>'filled_qty', '')) as filled_qty,
        parse_decimal_18(nullif(_record->>'fee', '')) as fee,
        parse_decimal_18(nullif(_record->>'price', '')) as price,
        parse_decimal_18(nullif(_record->>'price_avg', '')) as price_avg,
        _record->>'status' as status,
        _record->>'type' as type,
        _record->>'order_type' as order_type,
        make_timestamptz(cast(_record->>'createTime' as bigint) * 1000) as create_time_at,
        _run_id,
        _fetched_at
    from source
)

select * from final
