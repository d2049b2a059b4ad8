-- Futures fills, one row per fill.
-- Key: (account, trade_id); ids are the exact 64-bit integers as text. Input: raw.futures_fills.
-- fill_value is a notional (price up to 1e9 x size up to 1e12 = 1e21): DECIMAL(38,16), not (38,18).
with source as (
    select * from raw.futures_fills
),

deduplicated as (
    select * from source
    qualify row_number() over (partition by _account, _key order by _fetched_at, _run_id) = 1
),

final as (
    select
        _account as account,
        _record->>'tradeId' as trade_id,
        _record->>'orderId' as order_id,
        _record->>'symbol' as symbol,
        _record->>'marginMode' as margin_mode,
        _record->>'separatedMode' as separated_mode,
        _record->>'positionSide' as position_side,
        _record->>'orderSide' as order_side,
        cast(_record->>'fillSize' as decimal(38, 18)) as fill_size,
        cast(_record->>'fillValue' as decimal(38, 16)) as fill_value,
        cast(_record->>'fillFee' as decimal(38, 18)) as fill_fee,
        cast(coalesce(nullif(_record->>'liquidateFee', ''), '0') as decimal(38, 18)) as liquidate_fee,
        cast(_record->>'realizePnl' as decimal(38, 18)) as realize_pnl,
        nullif(_record->>'direction', '') as direction,
        nullif(_record->>'liquidateType', '') as liquidate_type,
        nullif(_record->>'legacyOrdeDirection', '') as legacy_orde_direction,
        make_timestamptz(cast(_record->>'createdTime' as bigint) * 1000) as created_time_at,
        _run_id,
        _fetched_at
    from deduplicated
)

select * from final
