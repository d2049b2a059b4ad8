-- The summaries agree with their details: each lot method per day equals the lot matches of that day's sells,
-- and each month equals the sum of its days (open figures from its last day).
-- Checking what changed (docs/architecture.md "The incremental check"): a day's row and its sells' matches
-- share the account, symbol and day, and a month's row and its days the month, so the days from the changed
-- instant's day on, and the months from its month on (cut: month), are complete on both sides. Each part
-- is selected by the changes of the tables it compares (of: …): a day's row and its matches by those of
-- the days and the matches, not by the months' (recorded from the start of their month, they would make
-- the days' part read the whole month's matches: 3.3M rows on the 10M benchmark's night).
with matches as (
    select
        account, cost_method, symbol, sell_date,
        sum(quantity) filter (where lot_source <> 'unmatched') as quantity_sold,
        sum(proceeds) filter (where lot_source <> 'unmatched') as proceeds,
        sum(cost) as cost,
        sum(quantity) filter (where lot_source = 'unmatched') as unmatched_quantity,
        sum(proceeds) filter (where lot_source = 'unmatched') as unmatched_proceeds
    from marts.spot_lot_matches
    where {{ changed(account: account, symbol: symbol, date: sell_date, of: marts.spot_lot_matches marts.spot_realized_pnl_daily) }}
    group by all
),

months as (
    select
        account, cost_method, symbol, trade_month,
        sum(realized_pnl) as realized_pnl, sum(quantity_sold) as quantity_sold, sum(unmatched_proceeds) as unmatched_proceeds,
        arg_max(open_cost, trade_date) as open_cost, arg_max(open_quantity, trade_date) as open_quantity
    from marts.spot_realized_pnl_daily
    where {{ changed(account: account, symbol: symbol, date: trade_date, cut: month, of: marts.spot_realized_pnl_daily marts.spot_realized_pnl_monthly) }}
    group by all
)

select 'day vs lot matches' as check_name, d.account, d.symbol, d.trade_date as period
from marts.spot_realized_pnl_daily as d
left join matches as m on m.account = d.account and m.cost_method = d.cost_method and m.symbol = d.symbol and m.sell_date = d.trade_date
where d.cost_method <> 'average' and {{ changed(account: d.account, symbol: d.symbol, date: d.trade_date, of: marts.spot_lot_matches marts.spot_realized_pnl_daily) }}
    and (coalesce(m.quantity_sold, 0) <> d.quantity_sold
        or coalesce(m.proceeds, 0) <> d.proceeds
        or coalesce(m.cost, 0) <> d.cost
        or coalesce(m.unmatched_quantity, 0) <> d.unmatched_quantity
        or coalesce(m.unmatched_proceeds, 0) <> d.unmatched_proceeds)
union all
select 'month vs days', m.account, m.symbol, m.trade_month
from marts.spot_realized_pnl_monthly as m
left join months as d on d.account = m.account and d.cost_method = m.cost_method and d.symbol = m.symbol and d.trade_month = m.trade_month
where {{ changed(account: m.account, symbol: m.symbol, date: m.trade_month, cut: month, of: marts.spot_realized_pnl_daily marts.spot_realized_pnl_monthly) }}
    and (d.realized_pnl is distinct from m.realized_pnl
        or d.quantity_sold is distinct from m.quantity_sold
        or d.unmatched_proceeds is distinct from m.unmatched_proceeds
        or d.open_cost is distinct from m.open_cost
        or d.open_quantity is distinct from m.open_quantity)
