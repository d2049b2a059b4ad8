-- Futures fills, one row per fill.
-- Key: (account, trade_id); ids are the exact 64-bit integers as text. Input: raw.futures_fills.
-- fill_value is a notional (price up to 1e9 x size up to 1e12 = 1e21): DECIMAL(38,16), not (38,18).
with source as (
    select * from first_fetches('raw.futures_fills')
),

-- The record parsed once into text fields (each ->> would parse the JSON again: ~0.3 s per field per million).
-- from_json gives a number as its JSON text, as ->> does, so 64-bit ids sent as bare numbers stay exact.
parsed as (
    select
        _account,
        _key,
        _run_id,
        _fetched_at,
        from_json(_record, '{
            "tradeId": "VARCHAR", "orderId": "VARCHAR", "symbol": "VARCHAR", "marginMode": "VARCHAR",
            "separatedMode": "VARCHAR", "positionSide": "VARCHAR", "orderSide": "VARCHAR", "fillSize": "VARCHAR",
            "fillValue": "VARCHAR", "fillFee": "VARCHAR", "liquidateFee": "VARCHAR", "realizePnl": "VARCHAR",
            "direction": "VARCHAR", "liquidateType": "VARCHAR", "legacyOrdeDirection": "VARCHAR", "createdTime": "VARCHAR"
        }') as r
    from source
),

-- Amount texts as columns of their own, parsed below (parse_decimal_18, sql/macros/staging.sql).
texts as (
    select
        *,
        r.fillSize as fill_size_text,
        r.fillValue as fill_value_text,
        r.fillFee as fill_fee_text,
        coalesce(nullif(r.liquidateFee, ''), '0') as liquidate_fee_text,
        r.realizePnl as realize_pnl_text
    from parsed
),

final as (
    select
        _account as account,
        r.tradeId as trade_id,
        r.orderId as order_id,
        r.symbol as symbol,
        r.marginMode as margin_mode,
        r.separatedMode as separated_mode,
        r.positionSide as position_side,
        r.orderSide as order_side,
        parse_decimal_18(fill_size_text) as fill_size,
        parse_decimal_16(fill_value_text) as fill_value,
        parse_decimal_18(fill_fee_text) as fill_fee,
        parse_decimal_18(liquidate_fee_text) as liquidate_fee,
        parse_decimal_18(realize_pnl_text) as realize_pnl,
        nullif(r.direction, '') as direction,
        nullif(r.liquidateType, '') as liquidate_type,
        nullif(r.legacyOrdeDirection, '') as legacy_orde_direction,
        make_timestamptz(cast(r.createdTime as bigint) * 1000) as created_time_at,
        _key,
        _run_id,
        _fetched_at
    from texts
)

select * from final
