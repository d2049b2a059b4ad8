-- Spot realized PnL per account, cost method, symbol and reporting-zone month, in the quote coin,
-- with the open inventory and its cost at the end of the month's last trading day.
-- Key: (account, cost_method, symbol, trade_month). Input: marts.spot_realized_pnl_daily.
-- Columns as in spot_realized_pnl_daily (sums over the month's days; open_* from its last day).
-- realized_pnl_rc is the sum of the days' (each at its day's price), NULL when any day lacks a
-- price (unpriced_days counts them: they are in marts.needs_price).
with daily as (
    select * from marts.spot_realized_pnl_daily
),

totals as (
    select
        account,
        cost_method,
        symbol,
        trade_month,
        any_value(base_coin) as base_coin,
        any_value(quote_coin) as quote_coin,
        sum(opening_quantity) as opening_quantity,
        sum(opening_cost) as opening_cost,
        sum(quantity_bought) as quantity_bought,
        sum(cost_bought) as cost_bought,
        sum(quantity_sold) as quantity_sold,
        sum(proceeds) as proceeds,
        sum(cost) as cost,
        sum(realized_pnl) as realized_pnl,
        sum(unmatched_quantity) as unmatched_quantity,
        sum(unmatched_proceeds) as unmatched_proceeds,
        arg_max(open_quantity, trade_date) as open_quantity,
        arg_max(open_cost, trade_date) as open_cost,
        any_value(reporting_currency) as reporting_currency,
        case when count(*) filter (where realized_pnl_rc is null) = 0 then sum(realized_pnl_rc) end as realized_pnl_rc,
        count(*) filter (where realized_pnl_rc is null and reporting_currency is not null) as unpriced_days
    from daily
    group by account, cost_method, symbol, trade_month
),

-- Each row's reference (sql/macros/references.sql).
final as (
    select
        *,
        'spot_realized_pnl_monthly/' || concat_ws('/', ref_part(account), ref_part(cost_method), ref_part(symbol), ref_part(ref_month(trade_month))) as reference
    from totals
)

select * from final
