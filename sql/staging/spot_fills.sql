-- Spot fills, one row per fill.
-- Key: (account, fill_id). Input: raw.spot_fills.
-- fill_price is null where the exchange sent an empty string (price = fill_total_amount / fill_quantity).
-- Amounts also come as integer units (*_e18: value * 10^18, fill_total_amount_e16: * 10^16) for
-- the exact arithmetic of the spot models (sql/macros/exact_arith.sql): DuckDB reads a DECIMAL(38,x)
-- back as an integer only through a 128-bit division of about 1 µs, and casts text to DECIMAL(38,x)
-- just as slowly, so plain decimal strings are parsed here as digits, the DECIMAL built from them.
with source as (
    select *, rowid as _row from raw.spot_fills
),

-- The bookkeeping columns alone, read apart (a second reference to source would make DuckDB keep
-- every record in memory): deduplication looks for repeated keys without sorting the records.
fetch_keys as (
    select _account, _key from raw.spot_fills
),

fetches as (
    select _account, _key, _fetched_at, _run_id, rowid as _row from raw.spot_fills
),

repeated_keys as (
    select _account, _key
    from fetch_keys
    group by _account, _key
    having count(*) > 1
),

-- Of a key fetched more than once, the first fetch stays (then the first run; then the first stored row).
superseded as (
    select fetches._row
    from fetches
    semi join repeated_keys on repeated_keys._account = fetches._account and repeated_keys._key = fetches._key
    qualify row_number() over (partition by fetches._account, fetches._key order by fetches._fetched_at, fetches._run_id, fetches._row) > 1
),

deduplicated as (
    select * from source
    anti join superseded on superseded._row = source._row
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
    -- A plain decimal with at most `scale` decimals is the integer of its digits times 10^(scale -
    -- decimals), exactly (as exact_plain_units, written out: staging views are created without the
    -- macros); anything else (an exponent, more decimals) goes through DECIMAL(38,scale), which
    -- rounds. Text to DECIMAL(38,x) directly is ~5 µs.
    select
        *,
        case
            when regexp_full_match(fill_price_text, '-?[0-9]+(\.[0-9]{0,18})?')
                then cast(replace(fill_price_text, '.', '') as hugeint) * cast(power(10, 18 - (length(fill_price_text) - coalesce(nullif(strpos(fill_price_text, '.'), 0), length(fill_price_text)))) as hugeint)
            else cast(trunc(cast(fill_price_text as decimal(38, 18))) as hugeint) * cast(1000000000000000000 as hugeint)
                + cast((cast(fill_price_text as decimal(38, 18)) - trunc(cast(fill_price_text as decimal(38, 18)))) * cast(1000000000000000000 as decimal(19, 0)) as hugeint)
        end as fill_price_e18,
        case
            when regexp_full_match(fill_quantity_text, '-?[0-9]+(\.[0-9]{0,18})?')
                then cast(replace(fill_quantity_text, '.', '') as hugeint) * cast(power(10, 18 - (length(fill_quantity_text) - coalesce(nullif(strpos(fill_quantity_text, '.'), 0), length(fill_quantity_text)))) as hugeint)
            else cast(trunc(cast(fill_quantity_text as decimal(38, 18))) as hugeint) * cast(1000000000000000000 as hugeint)
                + cast((cast(fill_quantity_text as decimal(38, 18)) - trunc(cast(fill_quantity_text as decimal(38, 18)))) * cast(1000000000000000000 as decimal(19, 0)) as hugeint)
        end as fill_quantity_e18,
        case
            when regexp_full_match(fill_total_amount_text, '-?[0-9]+(\.[0-9]{0,16})?')
                then cast(replace(fill_total_amount_text, '.', '') as hugeint) * cast(power(10, 16 - (length(fill_total_amount_text) - coalesce(nullif(strpos(fill_total_amount_text, '.'), 0), length(fill_total_amount_text)))) as hugeint)
            else cast(trunc(cast(fill_total_amount_text as decimal(38, 16))) as hugeint) * cast(10000000000000000 as hugeint)
                + cast((cast(fill_total_amount_text as decimal(38, 16)) - trunc(cast(fill_total_amount_text as decimal(38, 16)))) * cast(10000000000000000 as decimal(17, 0)) as hugeint)
        end as fill_total_amount_e16,
        case
            when regexp_full_match(fees_text, '-?[0-9]+(\.[0-9]{0,18})?')
                then cast(replace(fees_text, '.', '') as hugeint) * cast(power(10, 18 - (length(fees_text) - coalesce(nullif(strpos(fees_text, '.'), 0), length(fees_text)))) as hugeint)
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
