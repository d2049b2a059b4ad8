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
-- cost method, and computed again by the model's own SQL (the model template below) reading,
-- instead of the whole tables, the trades of those days and their segments and average costs only
-- (spot_daily_new). Where
-- open_quantity and open_cost are running sums over the days (the model says which: the lot
-- methods, and every method under pooling universal), they then start from the last kept day's
-- values (spot_daily_carried), added exactly, so the digits are a whole build's. The rows left in
-- model_pending start at the beginning of their reporting-zone day (a day's row changes as a whole).

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

-- The trades of the days replaced (the 17 columns of int_spot_trades the model reads, of 24), and
-- their segments and average costs.
create or replace temp table spot_daily_trades as
select t.pool, t.account, t.symbol, t.base_coin, t.quote_coin, t.event_seq, t.side, t.lot_source, t.event_at, t.event_date, t.units_in_e18, t.cost_e12,
    t.quantity_out_e18, t.unmatched_e18, t.proceeds_e12, t.matched_proceeds_e12, t.inventory_e18
from intermediate.int_spot_trades as t
inner join temp.main.spot_daily_frontier as f on f.account = t.account and f.symbol = t.symbol
where t.event_date >= f.from_date and t.event_date >= (select min(from_date) from temp.main.spot_daily_frontier);

-- The sells' instant as a constant: DuckDB reads only the segments' row groups from there on.
set variable spot_daily_low = (select min(event_at) from temp.main.spot_daily_trades);

create or replace temp table spot_daily_fifo_segments as
select s.*
from intermediate.int_spot_fifo_segments as s
semi join temp.main.spot_daily_trades as t on t.pool = s.pool and t.symbol = s.symbol and t.event_seq = s.sell_seq
where s.sell_at >= getvariable('spot_daily_low');

-- The average cost's rows carry their trade's instant, null on an opening lot (whose day is its
-- symbol's first fill's): bounded by it, only the row groups of those days and of opening lots are read.
create or replace temp table spot_daily_average_cost as
select a.*
from intermediate.int_spot_average_cost as a
semi join temp.main.spot_daily_trades as t on t.pool = a.pool and t.symbol = a.symbol and t.event_seq = a.event_seq
where a.event_at >= getvariable('spot_daily_low') or a.event_at is null;

create or replace temp table spot_daily_lot_segments as
select s.*
from intermediate.int_spot_lot_segments as s
semi join temp.main.spot_daily_trades as t on t.pool = s.pool and t.symbol = s.symbol and t.event_seq = s.sell_seq
where s.sell_at >= getvariable('spot_daily_low');

-- The last kept day's open position (the days before the frontier were kept, the others deleted above).
create or replace temp table spot_daily_carried as
select
    d.account,
    d.cost_method,
    d.symbol,
    arg_max(d.open_quantity, d.trade_date) as carried_quantity,
    arg_max(d.open_cost, d.trade_date) as carried_cost
from marts.spot_realized_pnl_daily as d
inner join temp.main.spot_daily_frontier as f on f.account = d.account and f.symbol = d.symbol
where d.trade_date < f.from_date
group by d.account, d.cost_method, d.symbol;

create or replace temp table spot_daily_new as
{{ model(intermediate.int_spot_trades -> temp.main.spot_daily_trades, intermediate.int_spot_fifo_segments -> temp.main.spot_daily_fifo_segments, intermediate.int_spot_average_cost -> temp.main.spot_daily_average_cost, intermediate.int_spot_lot_segments -> temp.main.spot_daily_lot_segments) }};

-- The running sums continue from the carried values: the same cases as the model's pnl CTE (fifo
-- and average per account take the inventory after the day, average per account its cost).
insert into marts.spot_realized_pnl_daily by name
select
    n.* replace (
        case
            when n.cost_method in ('fifo', 'average') and r.pooling = 'account' then n.open_quantity
            else n.open_quantity + coalesce(c.carried_quantity, 0)
        end as open_quantity,
        case
            when n.cost_method = 'average' and r.pooling = 'account' then n.open_cost
            else n.open_cost + coalesce(c.carried_cost, 0)
        end as open_cost
    )
from temp.main.spot_daily_new as n
left join temp.main.spot_daily_carried as c on c.account = n.account and c.cost_method = n.cost_method and c.symbol = n.symbol
cross join (select any_value(pooling) as pooling from settings.reporting) as r;

-- A day's row changed as a whole: its readers get the pending rows from the start of their day.
update temp.main.model_pending
set from_at = timezone(r.time_zone, cast(local_date(model_pending.from_at, r.time_zone) as timestamp))
from (select any_value(time_zone) as time_zone from settings.reporting) as r
where model_pending.from_at is not null;

drop table temp.main.spot_daily_new;
drop table temp.main.spot_daily_carried;
drop table temp.main.spot_daily_lot_segments;
drop table temp.main.spot_daily_average_cost;
drop table temp.main.spot_daily_fifo_segments;
drop table temp.main.spot_daily_trades;
drop table temp.main.spot_daily_frontier;
drop table temp.main.spot_daily_scope;
reset variable spot_daily_low;
