-- Spot fills, one row per fill.
-- Key: (account, fill_id). Input: raw.spot_fills.
-- fill_price is null where the exchange sent an empty string (price = fill_total_amount / fill_quantity).
-- Amounts also come as integer units (*_e18: value * 10^18, fill_total_amount_e16: * 10^16) for
-- the exact arithmetic of the spot models (sql/macros/exact_arith.sql): DuckDB reads a DECIMAL(38,x)
-- back as an integer only through a 128-bit division of about 1 µs, and casts text to DECIMAL(38,x)
-- just as slowly, so plain decimal strings are parsed here as digits, the DECIMAL built from them.
with source as (
    select * from raw.spot_fills
),

deduplicated as (
    select * from source
    qualify row_number() over (partition by _account, _key order by _fetched_at, _run_id) = 1
),

amounts as (
    select
        *,
        nullif(_record->>'fillPrice', '') as fill_price_text,
        _record->>'fillQuantity' as fill_quantity_text,
        _record->>'fillTotalAmount' as fill_total_amount_text,
        _record->>'fees' as fees_text
    from deduplicated
),

units as (
    -- Fast path: '-?digits(.digits)' with at most `scale` fractional digits becomes the digits
    -- of an integer. Anything else (an exponent, more digits) goes through DECIMAL, which rounds.
    select
        *,
        case
            when regexp_full_match(fill_price_text, '-?[0-9]+(\.[0-9]{0,18})?')
                then cast(split_part(fill_price_text, '.', 1) || rpad(split_part(fill_price_text, '.', 2), 18, '0') as hugeint)
            else cast(trunc(cast(fill_price_text as decimal(38, 18))) as hugeint) * cast(1000000000000000000 as hugeint)
                + cast((cast(fill_price_text as decimal(38, 18)) - trunc(cast(fill_price_text as decimal(38, 18)))) * cast(1000000000000000000 as decimal(19, 0)) as hugeint)
        end as fill_price_e18,
        case
            when regexp_full_match(fill_quantity_text, '-?[0-9]+(\.[0-9]{0,18})?')
                then cast(split_part(fill_quantity_text, '.', 1) || rpad(split_part(fill_quantity_text, '.', 2), 18, '0') as hugeint)
            else cast(trunc(cast(fill_quantity_text as decimal(38, 18))) as hugeint) * cast(1000000000000000000 as hugeint)
                + cast((cast(fill_quantity_text as decimal(38, 18)) - trunc(cast(fill_quantity_text as decimal(38, 18)))) * cast(1000000000000000000 as decimal(19, 0)) as hugeint)
        end as fill_quantity_e18,
        case
            when regexp_full_match(fill_total_amount_text, '-?[0-9]+(\.[0-9]{0,16})?')
                then cast(split_part(fill_total_amount_text, '.', 1) || rpad(split_part(fill_total_amount_text, '.', 2), 16, '0') as hugeint)
            else cast(trunc(cast(fill_total_amount_text as decimal(38, 16))) as hugeint) * cast(10000000000000000 as hugeint)
                + cast((cast(fill_total_amount_text as decimal(38, 16)) - trunc(cast(fill_total_amount_text as decimal(38, 16)))) * cast(10000000000000000 as decimal(17, 0)) as hugeint)
        end as fill_total_amount_e16,
        case
            when regexp_full_match(fees_text, '-?[0-9]+(\.[0-9]{0,18})?')
                then cast(split_part(fees_text, '.', 1) || rpad(split_part(fees_text, '.', 2), 18, '0') as hugeint)
            else cast(trunc(cast(fees_text as decimal(38, 18))) as hugeint) * cast(1000000000000000000 as hugeint)
                + cast((cast(fees_text as decimal(38, 18)) - trunc(cast(fees_text as decimal(38, 18)))) * cast(1000000000000000000 as decimal(19, 0)) as hugeint)
        end as fees_e18
    from amounts
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
        cast(fill_price_e18 as decimal(38, 0)) * cast(0.000000000000000001 as decimal(19, 18)) as fill_price,
        cast(fill_quantity_e18 as decimal(38, 0)) * cast(0.000000000000000001 as decimal(19, 18)) as fill_quantity,
        cast(fill_total_amount_e16 as decimal(38, 0)) * cast(0.0000000000000001 as decimal(17, 16)) as fill_total_amount,
        cast(fees_e18 as decimal(38, 0)) * cast(0.000000000000000001 as decimal(19, 18)) as fees,
        fill_price_e18,
        fill_quantity_e18,
        fill_total_amount_e16,
        fees_e18,
        make_timestamptz(cast(_record->>'cTime' as bigint) * 1000) as c_time_at,
        _partition,
        _run_id,
        _fetched_at
    from units
)

select * from final
