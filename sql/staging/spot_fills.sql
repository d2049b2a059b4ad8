-- Spot fills, one row per fill.
-- Key: (account, fill_id). Input: raw.spot_fills.
-- fill_price is null where the exchange sent an empty string (price = fill_total_amount / fill_quantity).
with source as (
    select * from raw.spot_fills
),

deduplicated as (
    select * from source
    qualify row_number() over (partition by _account, _key order by _fetched_at, _run_id) = 1
),

final as (
    select
        _account as account,
        _record->>'accountId' as account_id,
        _record->>'symbol' as symbol,
        _record->>'baseCoin' as base_coin,
        _record->>'quoteCoin' as quote_coin,
        _record->>'orderId' as order_id,
        _record->>'fillId' as fill_id,
        nullif(_record->>'orderType', '') as order_type,
        _record->>'side' as side,
        cast(nullif(_record->>'fillPrice', '') as decimal(38, 18)) as fill_price,
        cast(_record->>'fillQuantity' as decimal(38, 18)) as fill_quantity,
        cast(_record->>'fillTotalAmount' as decimal(38, 18)) as fill_total_amount,
        cast(_record->>'fees' as decimal(38, 18)) as fees,
        make_timestamptz(cast(_record->>'cTime' as bigint) * 1000) as c_time_at,
        _partition,
        _run_id,
        _fetched_at
    from deduplicated
)

select * from final
