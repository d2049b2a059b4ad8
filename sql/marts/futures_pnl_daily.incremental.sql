-- futures_pnl_daily, incremental (docs/plans/incremental-builds.md, "The contract"): a row is one
-- account, margin coin and contract (NULL: the coin's funding) on one reporting-zone day, valued at
-- that day's price, and nothing runs across days. For each pending (account or '*', contract) the
-- contract's days from local_date(from_at) on are replaced whole; a pending row with no contract
-- (int_prices': '*', NULL, start of the first day whose prices changed; or a funding change) replaces
-- every contract's and the funding rows of those days.
-- 1. pnl_daily_frontier: the first day to replace per pending (account, contract).
-- 2. Those rows are deleted, and the model's own SQL runs on the fill days and funding changes
--    the same rows select (the prices are read whole: a row per coin and day).
-- 3. The readers get (account, contract, start of the first replaced day).
create or replace temp table pnl_daily_frontier as
select
    p.account,
    p.symbol,
    case when bool_or(p.from_at is null) then null else min(local_date(p.from_at, r.time_zone)) end as from_date,
    local_day_start(from_date, r.time_zone) as from_start
from temp.main.model_pending as p
cross join (select any_value(time_zone) as time_zone from settings.reporting) as r
group by p.account, p.symbol, r.time_zone;

create or replace temp table pnl_daily_fill_days as
select d.*
from intermediate.int_futures_fill_days as d
where exists (
    select 1 from pnl_daily_frontier as f
    where (f.account = '*' or f.account = d.account)
        and (f.symbol is null or f.symbol = d.symbol)
        and (f.from_date is null or d.fill_date >= f.from_date)
);

create or replace temp table pnl_daily_funding as
select c.*
from intermediate.int_futures_funding_changes as c
where exists (
    select 1 from pnl_daily_frontier as f
    where (f.account = '*' or f.account = c.account)
        and f.symbol is null
        and (f.from_date is null or c.snapshot_date >= f.from_date)
);

delete from marts.futures_pnl_daily as t
where exists (
    select 1 from pnl_daily_frontier as f
    where (f.account = '*' or f.account = t.account)
        and (f.symbol is null or f.symbol = t.symbol)
        and (f.from_date is null or t.pnl_date >= f.from_date)
);

insert into marts.futures_pnl_daily by name
select * from {{ model(intermediate.int_futures_fill_days -> temp.main.pnl_daily_fill_days, intermediate.int_futures_funding_changes -> temp.main.pnl_daily_funding) }};

create or replace temp table model_pending as
select account, symbol, from_start as from_at from pnl_daily_frontier;

drop table pnl_daily_frontier;
drop table pnl_daily_fill_days;
drop table pnl_daily_funding;
