-- Spot fills, one row per fill.
-- Key: (account, fill_id). Input: raw.spot_fills.
-- fill_price is null where the exchange sent an empty string (price = fill_total_amount / fill_quantity).
-- Amounts also come as integer units (*_e18: value * 10^18, fill_total_amount_e16: * 10^16) for
-- the exact arithmetic of the spot models (sql/macros/exact_arith.sql): DuckDB reads a DECIMAL(38,x)
-- back as an integer only through a 128-bit division of about 1 µs, so the strings are parsed to
-- units (parse_decimal_units, sql/macros/staging.sql) and the DECIMALs made from them.
with source as (
    select * from first_fetches('raw.spot_fills')
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
    from source
),

-- The amount texts as columns of their own: a function of a field of the record (r.fees) is computed
-- by DuckDB for every row, before the CASE inside the macro picks the rows that need it.
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
    select
        *,
        parse_decimal_units(fill_price_text, 18) as fill_price_e18,
        parse_decimal_units(fill_quantity_text, 18) as fill_quantity_e18,
        parse_decimal_units(fill_total_amount_text, 16) as fill_total_amount_e16,
        parse_decimal_units(fees_text, 18) as fees_e18
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
        exact_decimal_18(fill_price_e18) as fill_price,
        exact_decimal_18(fill_quantity_e18) as fill_quantity,
        exact_decimal_16(fill_total_amount_e16) as fill_total_amount,
        exact_decimal_18(fees_e18) as fees,
        fill_price_e18,
        fill_quantity_e18,
        fill_total_amount_e16,
        fees_e18,
        make_timestamptz(cast(r.cTime as bigint) * 1000) as c_time_at,
        _partition,
        _key,
        _run_id,
        _fetched_at
    from units
)

select * from final
