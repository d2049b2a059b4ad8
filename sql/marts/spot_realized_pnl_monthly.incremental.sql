-- Incremental step of marts.spot_realized_pnl_monthly (docs/plans/incremental-builds.md, "The
-- contract"): run inside the model's transaction instead of CREATE OR REPLACE, it leaves the table
-- equal to a whole rebuild.
-- What changed: temp.main.model_pending as spot_realized_pnl_daily's step left it (rows at or after
-- from_at, NULL: from the beginning, of an account, '*': every account, and a symbol, NULL: every
-- symbol, may have changed, from the start of a reporting-zone day).
-- How: spot_monthly_frontier holds per (account, symbol) the month of the earliest from_at of the
-- pending rows that name it, for the pairs with a row on or after the earliest of all. Their months
-- from there on are deleted, for every cost method, and computed again by the model's own SQL
-- (the model template of the INSERT below) over the daily rows of those months only. The rows
-- left in model_pending start at the beginning of their month.

create or replace temp table spot_monthly_scope as
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
    case when isinf(p.from_at) then cast('-infinity' as date) else cast(date_trunc('month', local_date(p.from_at, r.time_zone)) as date) end as from_month
from pending as p
cross join (select any_value(time_zone) as time_zone from settings.reporting) as r;

create or replace temp table spot_monthly_frontier as
with pairs as (
    select distinct account, symbol
    from marts.spot_realized_pnl_monthly
    where trade_month >= (select min(from_month) from temp.main.spot_monthly_scope)
    union
    select distinct account, symbol
    from marts.spot_realized_pnl_daily
    where trade_month >= (select min(from_month) from temp.main.spot_monthly_scope)
)

select pairs.account, pairs.symbol, least(exact_pair.from_month, every_account.from_month, every_symbol.from_month, everything.from_month) as from_month
from pairs
left join temp.main.spot_monthly_scope as exact_pair on exact_pair.account = pairs.account and exact_pair.symbol = pairs.symbol
left join temp.main.spot_monthly_scope as every_account on every_account.account = '*' and every_account.symbol = pairs.symbol
left join temp.main.spot_monthly_scope as every_symbol on every_symbol.account = pairs.account and every_symbol.symbol = '*'
left join temp.main.spot_monthly_scope as everything on everything.account = '*' and everything.symbol = '*'
where least(exact_pair.from_month, every_account.from_month, every_symbol.from_month, everything.from_month) is not null;

delete from marts.spot_realized_pnl_monthly as m
using temp.main.spot_monthly_frontier as f
where m.account = f.account and m.symbol = f.symbol and m.trade_month >= f.from_month;

create or replace temp table spot_monthly_daily as
select d.*
from marts.spot_realized_pnl_daily as d
inner join temp.main.spot_monthly_frontier as f on f.account = d.account and f.symbol = d.symbol
where d.trade_month >= f.from_month and d.trade_month >= (select min(from_month) from temp.main.spot_monthly_frontier);

insert into marts.spot_realized_pnl_monthly by name
{{ model(marts.spot_realized_pnl_daily -> temp.main.spot_monthly_daily) }};

-- A month's row changed as a whole: its readers get the pending rows from the start of their month.
update temp.main.model_pending
set from_at = timezone(r.time_zone, cast(date_trunc('month', local_date(model_pending.from_at, r.time_zone)) as timestamp))
from (select any_value(time_zone) as time_zone from settings.reporting) as r
where model_pending.from_at is not null;

drop table temp.main.spot_monthly_daily;
drop table temp.main.spot_monthly_frontier;
drop table temp.main.spot_monthly_scope;
