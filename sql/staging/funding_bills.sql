-- Funding account bills, one row per bill.
-- Key: (account, bill_id). Input: raw.funding_bills.
-- delta_amount is signed (negative for outflows); after_amount is the balance after the bill.
with source as (
    select * from first_fetches('raw.funding_bills')
),

-- The record parsed once (each ->> would parse the JSON text again).
fields as (
    select
        *,
        json_transform(_record, '{
            "billId": "VARCHAR", "coinId": "VARCHAR", "coinName": "VARCHAR", "bizType": "VARCHAR",
            "deltaAmount": "VARCHAR", "afterAmount": "VARCHAR", "fees": "VARCHAR", "cTime": "VARCHAR"
        }') as r
    from source
),

-- The amounts as columns of their own: a function of a field of the record (r.fees) is computed
-- by DuckDB for every row, before the CASE inside parse_decimal_18 picks the rows that need it.
texts as (
    select *, r.deltaAmount as delta_amount_text, r.afterAmount as after_amount_text, r.fees as fees_text
    from fields
),

-- Amounts parsed by parse_decimal_18 (sql/macros/staging.sql): exact, without the slow
-- text-to-DECIMAL(38,18) cast where the text is a plain decimal.
final as (
    select
        _account as account,
        r.billId as bill_id,
        cast(r.coinId as bigint) as coin_id,
        r.coinName as coin_name,
        r.bizType as biz_type,
        parse_decimal_18(delta_amount_text) as delta_amount,
        parse_decimal_18(after_amount_text) as after_amount,
        parse_decimal_18(fees_text) as fees,
        make_timestamptz(cast(r.cTime as bigint) * 1000) as c_time_at,
        _key,
        _run_id,
        _fetched_at
    from texts
)

select * from final
