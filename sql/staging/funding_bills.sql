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

final as (
    select
        _account as account,
        _record->>'billId' as bill_id,
        cast(_record->>'coinId' as bigint) as coin_id,
        _record->>'coinName' as coin_name,
        _record->>'bizType' as biz_type,
        cast(_record->>'deltaAmount' as decimal(38, 18)) as delta_amount,
        cast(_record->>'afterAmount' as decimal(38, 18)) as after_amount,
        cast(_record->>'fees' as decimal(38, 18)) as fees,
        make_timestamptz(cast(_record->>'cTime' as bigint) * 1000) as c_time_at,
        _run_id,
        _fetched_at
    from deduplicated
)

select * from final
