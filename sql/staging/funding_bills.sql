-- Funding account bills, one row per bill.
-- Key: (account, bill_id). Input: raw.funding_bills.
-- delta_amount is signed (negative for outflows); after_amount is the balance after the bill.
with source as (
    select * from raw.funding_bills
),

deduplicated as (
    select * from source
    qualify row_number() over (partition by _account, _key order by _fetched_at, _run_id) = 1
),

-- The record parsed once (each ->> would parse the JSON text again).
fields as (
    select
        *,
        json_transform(_record, '{
            "billId": "VARCHAR", "coinId": "VARCHAR", "coinName": "VARCHAR", "bizType": "VARCHAR",
            "deltaAmount": "VARCHAR", "afterAmount": "VARCHAR", "fees": "VARCHAR", "cTime": "VARCHAR"
        }') as r
    from deduplicated
),

-- The amounts as columns of their own: a cast written on a field of the record (r.fees) is computed
-- by DuckDB for every row, before the CASE below picks the rows that need it.
texts as (
    select *, r.deltaAmount as delta_amount_text, r.afterAmount as after_amount_text, r.fees as fees_text
    from fields
),

-- Amounts: a plain decimal with at most 18 decimals is the integer of its digits times 10^(18 -
-- decimals), exactly (as exact_plain_units; staging views are created without the macros), made a
-- DECIMAL(38,18) by a multiplication that only sets the scale; anything else is cast from the text
-- (which rounds). Text to DECIMAL(38,18) directly is ~5 µs a value.
final as (
    select
        _account as account,
        r.billId as bill_id,
        cast(r.coinId as bigint) as coin_id,
        r.coinName as coin_name,
        r.bizType as biz_type,
        case
            when regexp_full_match(delta_amount_text, '-?[0-9]+(\.[0-9]{0,18})?')
                then cast(cast(replace(delta_amount_text, '.', '') as hugeint) * cast(power(10, 18 - (length(delta_amount_text) - coalesce(nullif(strpos(delta_amount_text, '.'), 0), length(delta_amount_text)))) as hugeint) as decimal(38, 0))
                    * cast(0.000000000000000001 as decimal(19, 18))
            else cast(delta_amount_text as decimal(38, 18))
        end as delta_amount,
        case
            when regexp_full_match(after_amount_text, '-?[0-9]+(\.[0-9]{0,18})?')
                then cast(cast(replace(after_amount_text, '.', '') as hugeint) * cast(power(10, 18 - (length(after_amount_text) - coalesce(nullif(strpos(after_amount_text, '.'), 0), length(after_amount_text)))) as hugeint) as decimal(38, 0))
                    * cast(0.000000000000000001 as decimal(19, 18))
            else cast(after_amount_text as decimal(38, 18))
        end as after_amount,
        case
            when regexp_full_match(fees_text, '-?[0-9]+(\.[0-9]{0,18})?')
                then cast(cast(replace(fees_text, '.', '') as hugeint) * cast(power(10, 18 - (length(fees_text) - coalesce(nullif(strpos(fees_text, '.'), 0), length(fees_text)))) as hugeint) as decimal(38, 0))
                    * cast(0.000000000000000001 as decimal(19, 18))
            else cast(fees_text as decimal(38, 18))
        end as fees,
        make_timestamptz(cast(r.cTime as bigint) * 1000) as c_time_at,
        _run_id,
        _fetched_at
    from texts
)

select * from final
