-- Funding account bills in chain order, one row per bill, each beside the bill before it in its coin.
-- Key: (account, bill_id). Inputs: staging.funding_bills, settings.reporting (months in the reporting zone).
-- Chain order per (account, coin_name): c_time_at, then bill_id as a number (bills of one millisecond
-- are numbered in posting order). before_amount = after_amount - delta_amount (exchange-notes "Fee and sign conventions").
with bills as (
    select * from staging.funding_bills
),

reporting as (
    select time_zone from settings.reporting
),

ordered as (
    select
        bills.account,
        bills.coin_name,
        bills.coin_id,
        bills.bill_id,
        bills.biz_type,
        bills.c_time_at,
        local_date(bills.c_time_at, reporting.time_zone) as c_time_date,
        bills.delta_amount,
        bills.after_amount,
        bills.fees,
        row_number() over chain as chain_seq
    from bills
    cross join reporting
    window chain as (
        partition by bills.account, bills.coin_name
        order by bills.c_time_at, try_cast(bills.bill_id as hugeint) nulls last, bills.bill_id
    )
),

final as (
    select
        account,
        coin_name,
        coin_id,
        bill_id,
        chain_seq,
        biz_type,
        c_time_at,
        c_time_date,
        cast(date_trunc('month', c_time_date) as date) as c_time_month,
        delta_amount,
        -- The fee is already inside delta_amount (a withdrawal of 100 with fee 1 has delta -101):
        -- inflow and outflow split delta_amount by sign; fees are shown beside them, never subtracted again.
        greatest(delta_amount, 0) as inflow,
        greatest(-delta_amount, 0) as outflow,
        fees,
        after_amount - delta_amount as before_amount,
        after_amount,
        lag(bill_id) over chain as previous_bill_id,
        lag(c_time_at) over chain as previous_c_time_at,
        lag(after_amount) over chain as previous_after_amount
    from ordered
    window chain as (partition by account, coin_name order by chain_seq)
)

select * from final
