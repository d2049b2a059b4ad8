-- Incremental step of marts.spot_realized_pnl_daily (docs/plans/incremental-builds.md, "The
-- contract"): run inside the model's transaction instead of CREATE OR REPLACE, it leaves the table
-- equal to a whole rebuild.
-- What changed: each row of temp.main.model_pending says that rows at or after from_at (NULL: from
-- the beginning) of an account ('*': every account, as pooling 'universal' and int_prices hand it
-- on) and a symbol (NULL: every symbol) may have changed, in the spot intermediate models or in
-- intermediate.int_prices (a price changes the values of its day).
-- How: spot_daily_frontier holds per (account, symbol) the reporting-zone day of the earliest
-- from_at of the pending rows that name it, for the pairs with a row or a trade on or after the
-- earliest of all (a filter on the day, no sort). Their days from there on are deleted, for every
-- cost method, and inserted again by the model's own CTEs from lot_sells to final (a test keeps
-- them the same text as in spot_realized_pnl_daily.sql) over the trades of those days and their
-- segments and average costs only. open_quantity and open_cost, where they are running sums over
-- the days, continue from the last kept day's row (`carried`, read back as exact units), so the
-- digits are a whole build's. The rows left in model_pending start at the beginning of their
-- reporting-zone day (a day's row changes as a whole).

create or replace temp table spot_daily_scope as
with pending as (
    select
        coalesce(account, '*') as account,
        coalesce(symbol, '*') as symbol,
        min(coalesce(from_at, cast('-infinity' as timestamptz))) as from_at
    from temp.main.model_pending
    group by all
)

select
    p.account,
    p.symbol,
    case when isinf(p.from_at) then cast('-infinity' as date) else local_date(p.from_at, r.time_zone) end as from_date
from pending as p
cross join (select any_value(time_zone) as time_zone from settings.reporting) as r;

create or replace temp table spot_daily_frontier as
with pairs as (
    select distinct account, symbol
    from marts.spot_realized_pnl_daily
    where trade_date >= (select min(from_date) from temp.main.spot_daily_scope)
    union
    select distinct account, symbol
    from intermediate.int_spot_trades
    where event_date >= (select min(from_date) from temp.main.spot_daily_scope)
)

select pairs.account, pairs.symbol, least(exact_pair.from_date, every_account.from_date, every_symbol.from_date, everything.from_date) as from_date
from pairs
left join temp.main.spot_daily_scope as exact_pair on exact_pair.account = pairs.account and exact_pair.symbol = pairs.symbol
left join temp.main.spot_daily_scope as every_account on every_account.account = '*' and every_account.symbol = pairs.symbol
left join temp.main.spot_daily_scope as every_symbol on every_symbol.account = pairs.account and every_symbol.symbol = '*'
left join temp.main.spot_daily_scope as everything on everything.account = '*' and everything.symbol = '*'
where least(exact_pair.from_date, every_account.from_date, every_symbol.from_date, everything.from_date) is not null;

delete from marts.spot_realized_pnl_daily as d
using temp.main.spot_daily_frontier as f
where d.account = f.account and d.symbol = f.symbol and d.trade_date >= f.from_date;

insert into marts.spot_realized_pnl_daily by name
with frontier as (
    select * from temp.main.spot_daily_frontier
),

-- The trades of the days replaced (every column, as the model's CTEs read them).
scope_trades as (
    select t.*
    from intermediate.int_spot_trades as t
    inner join frontier as f on f.account = t.account and f.symbol = t.symbol
    where t.event_date >= f.from_date and t.event_date >= (select min(from_date) from frontier)
),

fifo_trades as (
    select * from scope_trades
    where list_contains((select any_value(cost_methods) from settings.reporting), 'fifo')
),

average_trades as (
    select * from scope_trades
),

fifo_segments as (
    select s.*
    from intermediate.int_spot_fifo_segments as s
    semi join scope_trades as t on t.pool = s.pool and t.symbol = s.symbol and t.event_seq = s.sell_seq
),

average_cost as (
    select a.*
    from intermediate.int_spot_average_cost as a
    semi join scope_trades as t on t.pool = a.pool and t.symbol = a.symbol and t.event_seq = a.event_seq
),

lot_methods as (
    select unnest(list_filter(any_value(cost_methods), m -> m in ('lifo', 'hifo', 'uk'))) as cost_method
    from settings.reporting
),

lot_trades as (
    select * from scope_trades
    where exists (select 1 from lot_methods)
),

lot_segments as (
    select s.*
    from intermediate.int_spot_lot_segments as s
    semi join scope_trades as t on t.pool = s.pool and t.symbol = s.symbol and t.event_seq = s.sell_seq
),

-- The last kept day's open position (the days before the frontier were kept, the others deleted above).
carried as (
    select
        d.account,
        d.cost_method,
        d.symbol,
        exact_qty_units(arg_max(d.open_quantity, d.trade_date)) as carried_quantity_e18,
        exact_money_units(arg_max(d.open_cost, d.trade_date)) as carried_cost_e12
    from marts.spot_realized_pnl_daily as d
    inner join frontier as f on f.account = d.account and f.symbol = d.symbol
    where d.trade_date < f.from_date
    group by d.account, d.cost_method, d.symbol
),

lot_sells as (
    select
        pool,
        symbol,
        cost_method,
        sell_seq,
        coalesce(sum(proceeds_e12) filter (where match_rule <> 'unmatched'), 0) as matched_proceeds_e12,
        coalesce(sum(cost_e12), 0) as cost_e12,
        coalesce(sum(quantity_e18) filter (where match_rule = 'unmatched'), 0) as unmatched_e18
    from lot_segments
    group by pool, symbol, cost_method, sell_seq
),

fifo_sell_costs as (
    select pool, symbol, sell_seq, sum(cost_e12) as cost_e12
    from fifo_segments
    where lot_seq is not null
    group by pool, symbol, sell_seq
),

-- Each trade once per cost method, with the cost its sell disposed of. FIFO's inventory cost is
-- the running sum of costs in less costs out (per day, below), the average method's is its own.
costed as (
    select t.*, 'fifo' as cost_method, coalesce(f.cost_e12, 0) as disposed_cost_e12, cast(null as hugeint) as inventory_cost_e12
    from fifo_trades as t
    left join fifo_sell_costs as f on f.pool = t.pool and f.symbol = t.symbol and f.sell_seq = t.event_seq
    union all
    select t.*, 'average' as cost_method, coalesce(a.cost_e12, 0) as disposed_cost_e12, a.inventory_cost_e12
    from average_trades as t
    inner join average_cost as a on a.pool = t.pool and a.symbol = t.symbol and a.event_seq = t.event_seq
    union all
    select
        t.* replace (coalesce(l.unmatched_e18, 0) as unmatched_e18, coalesce(l.matched_proceeds_e12, 0) as matched_proceeds_e12),
        m.cost_method,
        coalesce(l.cost_e12, 0) as disposed_cost_e12,
        cast(null as hugeint) as inventory_cost_e12
    from lot_trades as t
    cross join lot_methods as m
    left join lot_sells as l on l.pool = t.pool and l.symbol = t.symbol and l.cost_method = m.cost_method and l.sell_seq = t.event_seq
),

days as (
    select
        account,
        cost_method,
        symbol,
        event_date as trade_date,
        any_value(base_coin) as base_coin,
        any_value(quote_coin) as quote_coin,
        sum(case when lot_source = 'opening' then units_in_e18 else 0 end) as opening_quantity_e18,
        sum(case when lot_source = 'opening' then cost_e12 else 0 end) as opening_cost_e12,
        sum(case when lot_source = 'fill' then units_in_e18 else 0 end) as quantity_bought_e18,
        sum(case when lot_source = 'fill' then cost_e12 else 0 end) as cost_bought_e12,
        sum(quantity_out_e18 - unmatched_e18) as quantity_sold_e18,
        sum(matched_proceeds_e12) as proceeds_e12,
        sum(disposed_cost_e12) as cost_e12,
        sum(unmatched_e18) as unmatched_quantity_e18,
        sum(proceeds_e12 - matched_proceeds_e12) as unmatched_proceeds_e12,
        arg_max(inventory_e18, event_seq) as open_quantity_e18,
        arg_max(inventory_cost_e12, event_seq) as average_open_cost_e12
    from costed
    group by account, cost_method, symbol, event_date
),

pnl as (
    select
        account,
        cost_method,
        symbol,
        trade_date,
        cast(date_trunc('month', trade_date) as date) as trade_month,
        base_coin,
        quote_coin,
        exact_decimal_18(opening_quantity_e18) as opening_quantity,
        exact_decimal_12(opening_cost_e12) as opening_cost,
        exact_decimal_18(quantity_bought_e18) as quantity_bought,
        exact_decimal_12(cost_bought_e12) as cost_bought,
        exact_decimal_18(quantity_sold_e18) as quantity_sold,
        exact_decimal_12(proceeds_e12) as proceeds,
        exact_decimal_12(cost_e12) as cost,
        exact_decimal_12(proceeds_e12 - cost_e12) as realized_pnl,
        exact_decimal_18(unmatched_quantity_e18) as unmatched_quantity,
        exact_decimal_12(unmatched_proceeds_e12) as unmatched_proceeds,
        -- FIFO and average per account: the inventory after the day's last event. The lot methods
        -- roll their own (uk's can be below zero between a sell and the later buys its 30-day rule
        -- matched), as does every method under pooling universal (the account's contribution).
        exact_decimal_18(
            case
                when cost_method in ('fifo', 'average') and pooling = 'account' then open_quantity_e18
                else coalesce(carried.carried_quantity_e18, 0) + sum(opening_quantity_e18 + quantity_bought_e18 - quantity_sold_e18) over (
                    partition by account, cost_method, symbol order by trade_date rows unbounded preceding
                )
            end
        ) as open_quantity,
        exact_decimal_12(
            case
                when cost_method = 'average' and pooling = 'account' then average_open_cost_e12
                else coalesce(carried.carried_cost_e12, 0) + sum(opening_cost_e12 + cost_bought_e12 - cost_e12) over (
                    partition by account, cost_method, symbol order by trade_date rows unbounded preceding
                )
            end
        ) as open_cost
    from days
    left join carried using (account, cost_method, symbol)
    cross join (select any_value(pooling) as pooling from settings.reporting)
),

reporting as (
    select reporting_currency from settings.reporting
),

prices as (
    select * from intermediate.int_prices
),

priced as (
    select
        pnl.*,
        reporting.reporting_currency,
        valued_price(pnl.quote_coin, reporting.reporting_currency, prices.price) as price,
        valued_source(pnl.quote_coin, reporting.reporting_currency, prices.price_source) as price_source
    from pnl
    cross join reporting
    left join prices on prices.coin = pnl.quote_coin and prices.price_date = pnl.trade_date
),

final as (
    select
        * exclude (price, price_source),
        price,
        case when price is not null then trade_date end as price_date,
        price_source,
        valued_amount(realized_pnl, price, reporting_currency) as realized_pnl_rc
    from priced
)

select * from final;

-- A day's row changed as a whole: its readers get the pending rows from the start of their day.
update temp.main.model_pending
set from_at = timezone(r.time_zone, cast(local_date(model_pending.from_at, r.time_zone) as timestamp))
from (select any_value(time_zone) as time_zone from settings.reporting) as r
where model_pending.from_at is not null;

drop table temp.main.spot_daily_frontier;
drop table temp.main.spot_daily_scope;
