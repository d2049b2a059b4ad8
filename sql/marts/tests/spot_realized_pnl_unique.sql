-- One row per (account, cost_method, symbol, trade_date) in marts.spot_realized_pnl_daily and per
-- (account, cost_method, symbol, trade_month) in marts.spot_realized_pnl_monthly, cost methods fifo | average.
select 'daily' as grain, account, cost_method, symbol, trade_date as period, count(*) as n
from marts.spot_realized_pnl_daily
group by all
having count(*) > 1 or trade_date is null or cost_method not in ('fifo', 'average')
union all
select 'monthly', account, cost_method, symbol, trade_month, count(*)
from marts.spot_realized_pnl_monthly
group by all
having count(*) > 1 or trade_month is null or cost_method not in ('fifo', 'average')
