-- futures_pnl_monthly, incremental (docs/plans/incremental-builds.md, "The contract"): a row is the
-- sum of one account, margin coin and contract's (NULL: funding's) days of futures_pnl_daily in one
-- reporting-zone month, and nothing runs across months. For each pending (account or '*', contract)
-- the contract's months from local_date(from_at)'s on are replaced whole (a pending row with no
-- contract: every contract's and the funding rows): deleted, and the model's own SQL run on the
-- daily rows of those accounts, contracts and months.
-- The readers get (account, contract, start of the first replaced month).
create or replace temp table pnl_monthly_frontier as
select
    p.account,
    p.symbol,
    case when bool_or(p.from_at is null) then null else cast(date_trunc('month', min(local_date(p.from_at, r.time_zone))) as date) end as from_month,
    local_day_start(from_month, r.time_zone) as from_start
from temp.main.model_pending as p
cross join (select any_value(time_zone) as time_zone from settings.reporting) as r
group by p.account, p.symbol, r.time_zone;

create or replace temp table pnl_monthly_daily as
select d.*
from marts.futures_pnl_daily as d
where exists (
    select 1 from pnl_monthly_frontier as f
    where (f.account = '*' or f.account = d.account)
        and (f.symbol is null or f.symbol = d.symbol)
        and (f.from_month is null or d.pnl_date >= f.from_month)
);

delete from marts.futures_pnl_monthly as t
where exists (
    select 1 from pnl_monthly_frontier as f
    where (f.account = '*' or f.account = t.account)
        and (f.symbol is null or f.symbol = t.symbol)
        and (f.from_month is null or t.pnl_month >= f.from_month)
);

insert into marts.futures_pnl_monthly by name
select * from {{ model(marts.futures_pnl_daily -> temp.main.pnl_monthly_daily) }};

create or replace temp table model_pending as
select account, symbol, from_start as from_at from pnl_monthly_frontier;

drop table pnl_monthly_frontier;
drop table pnl_monthly_daily;
