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

-- The record parsed once into a struct (each `->>` would parse the JSON text again).
fields as (
    select
        *,
        json_transform(_record, '{
            "accountId": "VARCHAR", "symbol": "VARCHAR", "baseCoin": "VARCHAR", "quoteCoin": "VARCHAR",
            "orderId": "VARCHAR", "fillId": "VARCHAR", "orderType": "VARCHAR", "side": "VARCHAR",
            "fillPrice": "VARCHAR", "fillQuantity": "VARCHAR", "fillTotalAmount": "VARCHAR", "fees": "VARCHAR",
            "cTime": "VARCHAR"
        }') as r
    from deduplicated
),

amounts as (
    select
        *,
        nullif(r.fillPrice, '') as fill_price_text,
        r.fillQuantity as fill_quantity_text,
        r.fillTotalAmount as fill_total_amount_text,
        r.fees as fees_text
    from fields
),

units as (
    -- Three ways, fastest first: a short decimal through DECIMAL(18,9) (64-bit), any other plain
    -- decimal as the digits of an integer, and anything else (an exponent, more digits than the
    -- scale) through DECIMAL(38,scale), which rounds. Text to DECIMAL(38,x) directly is ~5 µs.
    select
        *,
        case
            -- up to 9 digits on each side of the point: DECIMAL(18,9), parsed and split on 64 bits
            when fill_price_text not ilike '%e%'
                and ((strpos(fill_price_text, '.') = 0 and length(fill_price_text) <= 9)
                    or (strpos(fill_price_text, '.') between 2 and 10 and length(fill_price_text) - strpos(fill_price_text, '.') <= 9))
                then (cast(trunc(cast(fill_price_text as decimal(18, 9))) as bigint) * 1000000000 + cast((cast(fill_price_text as decimal(18, 9)) - trunc(cast(fill_price_text as decimal(18, 9)))) * 1000000000 as bigint)) * cast(1000000000 as hugeint)
            when regexp_full_match(fill_price_text, '-?[0-9]+(\.[0-9]{0,18})?')
                then cast(split_part(fill_price_text, '.', 1) || rpad(split_part(fill_price_text, '.', 2), 18, '0') as hugeint)
            else cast(trunc(cast(fill_price_text as decimal(38, 18))) as hugeint) * cast(1000000000000000000 as hugeint)
                + cast((cast(fill_price_text as decimal(38, 18)) - trunc(cast(fill_price_text as decimal(38, 18)))) * cast(1000000000000000000 as decimal(19, 0)) as hugeint)
        end as fill_price_e18,
        case
            -- up to 9 digits on each side of the point: DECIMAL(18,9), parsed and split on 64 bits
            when fill_quantity_text not ilike '%e%'
                and ((strpos(fill_quantity_text, '.') = 0 and length(fill_quantity_text) <= 9)
                    or (strpos(fill_quantity_text, '.') between 2 and 10 and length(fill_quantity_text) - strpos(fill_quantity_text, '.') <= 9))
                then (cast(trunc(cast(fill_quantity_text as decimal(18, 9))) as bigint) * 1000000000 + cast((cast(fill_quantity_text as decimal(18, 9)) - trunc(cast(fill_quantity_text as decimal(18, 9)))) * 1000000000 as bigint)) * cast(1000000000 as hugeint)
            when regexp_full_match(fill_quantity_text, '-?[0-9]+(\.[0-9]{0,18})?')
                then cast(split_part(fill_quantity_text, '.', 1) || rpad(split_part(fill_quantity_text, '.', 2), 18, '0') as hugeint)
            else cast(trunc(cast(fill_quantity_text as decimal(38, 18))) as hugeint) * cast(1000000000000000000 as hugeint)
                + cast((cast(fill_quantity_text as decimal(38, 18)) - trunc(cast(fill_quantity_text as decimal(38, 18)))) * cast(1000000000000000000 as decimal(19, 0)) as hugeint)
        end as fill_quantity_e18,
        case
            -- up to 9 digits on each side of the point: DECIMAL(18,9), parsed and split on 64 bits
            when fill_total_amount_text not ilike '%e%'
                and ((strpos(fill_total_amount_text, '.') = 0 and length(fill_total_amount_text) <= 9)
                    or (strpos(fill_total_amount_text, '.') between 2 and 10 and length(fill_total_amount_text) - strpos(fill_total_amount_text, '.') <= 9))
                then (cast(trunc(cast(fill_total_amount_text as decimal(18, 9))) as bigint) * 1000000000 + cast((cast(fill_total_amount_text as decimal(18, 9)) - trunc(cast(fill_total_amount_text as decimal(18, 9)))) * 1000000000 as bigint)) * cast(10000000 as hugeint)
            when regexp_full_match(fill_total_amount_text, '-?[0-9]+(\.[0-9]{0,16})?')
                then cast(split_part(fill_total_amount_text, '.', 1) || rpad(split_part(fill_total_amount_text, '.', 2), 16, '0') as hugeint)
            else cast(trunc(cast(fill_total_amount_text as decimal(38, 16))) as hugeint) * cast(10000000000000000 as hugeint)
                + cast((cast(fill_total_amount_text as decimal(38, 16)) - trunc(cast(fill_total_amount_text as decimal(38, 16)))) * cast(10000000000000000 as decimal(17, 0)) as hugeint)
        end as fill_total_amount_e16,
        case
            -- up to 9 digits on each side of the point: DECIMAL(18,9), parsed and split on 64 bits
            when fees_text not ilike '%e%'
                and ((strpos(fees_text, '.') = 0 and length(fees_text) <= 9)
                    or (strpos(fees_text, '.') between 2 and 10 and length(fees_text) - strpos(fees_text, '.') <= 9))
                then (cast(trunc(cast(fees_text as decimal(18, 9))) as bigint) * 1000000000 + cast((cast(fees_text as decimal(18, 9)) - trunc(cast(fees_text as decimal(18, 9)))) * 1000000000 as bigint)) * cast(1000000000 as hugeint)
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
        r.accountId as account_id,
        r.symbol,
        r.baseCoin as base_coin,
        r.quoteCoin as quote_coin,
        r.orderId as order_id,
        r.fillId as fill_id,
        nullif(r.orderType, '') as order_type,
        r.side,
        cast(fill_price_e18 as decimal(38, 0)) * cast(0.000000000000000001 as decimal(19, 18)) as fill_price,
        cast(fill_quantity_e18 as decimal(38, 0)) * cast(0.000000000000000001 as decimal(19, 18)) as fill_quantity,
        cast(fill_total_amount_e16 as decimal(38, 0)) * cast(0.0000000000000001 as decimal(17, 16)) as fill_total_amount,
        cast(fees_e18 as decimal(38, 0)) * cast(0.000000000000000001 as decimal(19, 18)) as fees,
        fill_price_e18,
        fill_quantity_e18,
        fill_total_amount_e16,
        fees_e18,
        make_timestamptz(cast(r.cTime as bigint) * 1000) as c_time_at,
        _partition,
        _run_id,
        _fetched_at
    from units
)

select * from final
