-- Funding account movements per account, coin, month (reporting zone) and business type.
-- Key: (account, coin_name, balance_month, biz_type). Input: intermediate.int_ledger_events.
-- inflow = sum of positive delta_amount, outflow = sum of negative delta_amount as a positive number;
-- fees are already inside delta_amount (exchange-notes "Fee and sign conventions"): shown, not to be subtracted again.
with events as (
    select * from intermediate.int_ledger_events
),

totals as (
    select
        account,
        coin_name,
        c_time_month as balance_month,
        biz_type,
        sum(inflow) as inflow,
        sum(outflow) as outflow,
        sum(delta_amount) as net_change,
        sum(fees) as fees,
        count(*) as bill_count
    from events
    group by account, coin_name, c_time_month, biz_type
),

-- Each row's reference (sql/macros/references.sql).
final as (
    select
        *,
        'balance_movements/' || concat_ws('/', ref_part(account), ref_part(coin_name), ref_part(ref_month(balance_month)), ref_part(biz_type)) as reference
    from totals
)

select * from final
