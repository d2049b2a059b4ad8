-- Funding account balance per account, coin and month (reporting zone): opening, movements, closing, and whether they agree.
-- Key: (account, coin_name, balance_month). Inputs: intermediate.int_ledger_events, marts.balance_chain_breaks.
-- Months run from the coin's first bill to the account's last bill month; a month without bills carries the balance forward.
-- opening = previous month's closing (the first month: the first bill's after - delta); computed_closing = opening + inflow - outflow;
-- closing = after_amount of the month's last bill; difference = closing - computed_closing = the chain gaps of the month.
with events as (
    select * from intermediate.int_ledger_events
),

breaks as (
    select * from marts.balance_chain_breaks
),

monthly as (
    select
        account,
        coin_name,
        c_time_month as balance_month,
        sum(inflow) as total_inflow,
        sum(outflow) as total_outflow,
        sum(fees) as fees,
        sum(delta_amount) filter (where biz_type = 'deposit') as net_deposit,
        sum(delta_amount) filter (where biz_type = 'withdraw') as net_withdraw,
        sum(delta_amount) filter (where biz_type = 'transfer_in') as net_transfer_in,
        sum(delta_amount) filter (where biz_type = 'transfer_out') as net_transfer_out,
        sum(delta_amount) filter (where biz_type = 'buy') as net_buy,
        sum(delta_amount) filter (where biz_type = 'sell') as net_sell,
        sum(delta_amount) filter (where biz_type = 'c2c_buy') as net_c2c_buy,
        sum(delta_amount) filter (where biz_type = 'c2c_sell') as net_c2c_sell,
        sum(delta_amount) filter (
            where biz_type not in ('deposit', 'withdraw', 'transfer_in', 'transfer_out', 'buy', 'sell', 'c2c_buy', 'c2c_sell')
        ) as net_other,
        count(*) as bill_count,
        arg_min(before_amount, chain_seq) as first_before_amount,
        arg_max(after_amount, chain_seq) as last_after_amount,
        arg_max(bill_id, chain_seq) as last_bill_id,
        max(c_time_at) as last_bill_at
    from events
    group by account, coin_name, c_time_month
),

monthly_breaks as (
    select account, coin_name, c_time_month as balance_month, count(*) as chain_break_count
    from breaks
    group by account, coin_name, c_time_month
),

coin_spans as (
    select
        account,
        coin_name,
        min(balance_month) as first_month,
        max(max(balance_month)) over (partition by account) as account_last_month
    from monthly
    group by account, coin_name
),

months as (
    select
        coin_spans.account,
        coin_spans.coin_name,
        cast(month_start as date) as balance_month,
        coin_spans.first_month
    from coin_spans
    cross join lateral generate_series(
        cast(coin_spans.first_month as timestamp), cast(coin_spans.account_last_month as timestamp), interval 1 month
    ) as series(month_start)
),

carried as (
    select
        months.account,
        months.coin_name,
        months.balance_month,
        monthly.* exclude (account, coin_name, balance_month),
        last_value(monthly.last_after_amount ignore nulls) over coin_months as carried_closing,
        months.balance_month = months.first_month as is_first_month
    from months
    left join monthly using (account, coin_name, balance_month)
    window coin_months as (
        partition by months.account, months.coin_name
        order by months.balance_month
        rows between unbounded preceding and current row
    )
),

balanced as (
    select
        *,
        case
            when is_first_month then first_before_amount
            else lag(carried_closing) over (partition by account, coin_name order by balance_month)
        end as opening_balance
    from carried
),

final as (
    select
        balanced.account,
        balanced.coin_name,
        balanced.balance_month,
        balanced.opening_balance,
        coalesce(balanced.total_inflow, 0) as total_inflow,
        coalesce(balanced.total_outflow, 0) as total_outflow,
        coalesce(balanced.fees, 0) as fees,
        coalesce(balanced.net_deposit, 0) as net_deposit,
        coalesce(balanced.net_withdraw, 0) as net_withdraw,
        coalesce(balanced.net_transfer_in, 0) as net_transfer_in,
        coalesce(balanced.net_transfer_out, 0) as net_transfer_out,
        coalesce(balanced.net_buy, 0) as net_buy,
        coalesce(balanced.net_sell, 0) as net_sell,
        coalesce(balanced.net_c2c_buy, 0) as net_c2c_buy,
        coalesce(balanced.net_c2c_sell, 0) as net_c2c_sell,
        coalesce(balanced.net_other, 0) as net_other,
        balanced.carried_closing as closing_balance,
        balanced.opening_balance + coalesce(balanced.total_inflow, 0) - coalesce(balanced.total_outflow, 0) as computed_closing,
        balanced.carried_closing
            - (balanced.opening_balance + coalesce(balanced.total_inflow, 0) - coalesce(balanced.total_outflow, 0)) as difference,
        coalesce(balanced.bill_count, 0) as bill_count,
        coalesce(monthly_breaks.chain_break_count, 0) as chain_break_count,
        balanced.last_bill_id,
        balanced.last_bill_at,
        'balance_reconciliation/' || concat_ws('/', ref_part(balanced.account), ref_part(balanced.coin_name), ref_part(ref_month(balanced.balance_month))) as reference
    from balanced
    left join monthly_breaks using (account, coin_name, balance_month)
)

select * from final
