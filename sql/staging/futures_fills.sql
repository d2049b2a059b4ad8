-- Futures fills, one row per fill.
-- Key: (account, trade_id); ids are the exact 64-bit integers as text. Input: raw.futures_fills.
-- fill_value is a notional (price up to 1e9 x size up to 1e12 = 1e21): DECIMAL(38,16), not (38,18).
with source as (
    select *, rowid as _row from raw.futures_fills
),

-- The bookkeeping columns alone, read apart (a second reference to source would make DuckDB keep
-- every record in memory): deduplication looks for repeated keys without sorting the records.
fetch_keys as (
    select _account, _key from raw.futures_fills
),

fetches as (
    select _account, _key, _fetched_at, _run_id, rowid as _row from raw.futures_fills
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

-- The record parsed once into text fields (each ->> would parse the JSON again: ~0.3 s per field per million).
-- from_json gives a number as its JSON text, as ->> does, so 64-bit ids sent as bare numbers stay exact.
parsed as (
    select
        _account,
        _run_id,
        _fetched_at,
        from_json(_record, '{
            "tradeId": "VARCHAR", "orderId": "VARCHAR", "symbol": "VARCHAR", "marginMode": "VARCHAR",
            "separatedMode": "VARCHAR", "positionSide": "VARCHAR", "orderSide": "VARCHAR", "fillSize": "VARCHAR",
            "fillValue": "VARCHAR", "fillFee": "VARCHAR", "liquidateFee": "VARCHAR", "realizePnl": "VARCHAR",
            "direction": "VARCHAR", "liquidateType": "VARCHAR", "legacyOrdeDirection": "VARCHAR", "createdTime": "VARCHAR"
        }') as r
    from deduplicated
),

-- Amount texts, cast below. Casting text to DECIMAL(38,s) costs about 3.5 s per million values in DuckDB 1.5
-- (a 128-bit parse) against 0.1 s for DECIMAL(18,9): a text with at most 9 digits on each side of the point
-- (and no exponent) goes through DECIMAL(18,9) first, exactly; any other takes the wide cast.
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
        case
            when strpos(fill_size_text, 'e') + strpos(fill_size_text, 'E') = 0
                and ((strpos(fill_size_text, '.') = 0 and length(fill_size_text) <= 9)
                    or (strpos(fill_size_text, '.') between 2 and 10 and length(fill_size_text) - strpos(fill_size_text, '.') <= 9))
            then cast(cast(fill_size_text as decimal(18, 9)) as decimal(38, 18))
            else cast(fill_size_text as decimal(38, 18))
        end as fill_size,
        case
            when strpos(fill_value_text, 'e') + strpos(fill_value_text, 'E') = 0
                and ((strpos(fill_value_text, '.') = 0 and length(fill_value_text) <= 9)
                    or (strpos(fill_value_text, '.') between 2 and 10 and length(fill_value_text) - strpos(fill_value_text, '.') <= 9))
            then cast(cast(fill_value_text as decimal(18, 9)) as decimal(38, 16))
            else cast(fill_value_text as decimal(38, 16))
        end as fill_value,
        case
            when strpos(fill_fee_text, 'e') + strpos(fill_fee_text, 'E') = 0
                and ((strpos(fill_fee_text, '.') = 0 and length(fill_fee_text) <= 9)
                    or (strpos(fill_fee_text, '.') between 2 and 10 and length(fill_fee_text) - strpos(fill_fee_text, '.') <= 9))
            then cast(cast(fill_fee_text as decimal(18, 9)) as decimal(38, 18))
            else cast(fill_fee_text as decimal(38, 18))
        end as fill_fee,
        case
            when strpos(liquidate_fee_text, 'e') + strpos(liquidate_fee_text, 'E') = 0
                and ((strpos(liquidate_fee_text, '.') = 0 and length(liquidate_fee_text) <= 9)
                    or (strpos(liquidate_fee_text, '.') between 2 and 10 and length(liquidate_fee_text) - strpos(liquidate_fee_text, '.') <= 9))
            then cast(cast(liquidate_fee_text as decimal(18, 9)) as decimal(38, 18))
            else cast(liquidate_fee_text as decimal(38, 18))
        end as liquidate_fee,
        case
            when strpos(realize_pnl_text, 'e') + strpos(realize_pnl_text, 'E') = 0
                and ((strpos(realize_pnl_text, '.') = 0 and length(realize_pnl_text) <= 9)
                    or (strpos(realize_pnl_text, '.') between 2 and 10 and length(realize_pnl_text) - strpos(realize_pnl_text, '.') <= 9))
            then cast(cast(realize_pnl_text as decimal(18, 9)) as decimal(38, 18))
            else cast(realize_pnl_text as decimal(38, 18))
        end as realize_pnl,
        nullif(r.direction, '') as direction,
        nullif(r.liquidateType, '') as liquidate_type,
        nullif(r.legacyOrdeDirection, '') as legacy_orde_direction,
        make_timestamptz(cast(r.createdTime as bigint) * 1000) as created_time_at,
        _run_id,
        _fetched_at
    from texts
)

select * from final
