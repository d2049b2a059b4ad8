-- int_fees_legs, incremental (docs/plans/incremental-builds.md, "The contract"): a row is one account,
-- source and coin on one reporting-zone day, and nothing runs across days, so the days from each
-- pending row's day on are replaced whole. The pending rows come from three inputs and do not say
-- which: int_spot_trades' (pool, spot symbol, from; pool '*' under pooling universal: every
-- account), int_futures_fill_days' (account, contract, day start) and staging.funding_bills'
-- (account, NULL, from). So each one is taken for every product, which may recompute more than
-- changed but never less:
-- - spot rows of its account(s) and symbol (source 'symbol side'; NULL symbol: every symbol),
-- - futures rows of its account(s) and contract (source = contract),
-- - funding rows of its account(s), whatever its symbol (bills have none),
-- each from local_date(from_at) on (NULL: every day).
-- 1. legs_frontier: the first day to replace per pending (account, symbol).
-- 2. The rows those select are deleted, and the model's own SQL runs on the spot trades, futures
--    days and bills the same rows select (whole days of them, so each group is complete). Spot
--    trades and bills are read from a constant lower bound (the earliest day, less one), so DuckDB
--    skips the row groups of the older history instead of testing every row.
-- 3. The readers (int_fees_periods, keyed by account and coin) get (account, NULL, start of the
--    account's first replaced day).
create or replace temp table legs_frontier as
select
    p.account,
    p.symbol,
    case when bool_or(p.from_at is null) then null else min(local_date(p.from_at, r.time_zone)) end as from_date,
    local_day_start(from_date, r.time_zone) as from_start
from temp.main.model_pending as p
cross join (select any_value(time_zone) as time_zone from settings.reporting) as r
group by p.account, p.symbol, r.time_zone;

set variable legs_low_date = (
    select case when bool_or(from_date is null) then '-infinity'::date else min(from_date) - 1 end
    from legs_frontier
);

set variable legs_low_at = (
    select case when bool_or(from_start is null) then '-infinity'::timestamptz else min(from_start) - interval 1 day end
    from legs_frontier
);

create or replace temp table legs_spot as
select t.*
from intermediate.int_spot_trades as t
where t.event_date >= getvariable('legs_low_date')
    and exists (
        select 1 from legs_frontier as f
        where (f.account = '*' or f.account = t.account)
            and (f.symbol is null or f.symbol = t.symbol)
            and (f.from_date is null or t.event_date >= f.from_date)
    );

create or replace temp table legs_futures as
select d.*
from intermediate.int_futures_fill_days as d
where exists (
    select 1 from legs_frontier as f
    where (f.account = '*' or f.account = d.account)
        and (f.symbol is null or f.symbol = d.symbol)
        and (f.from_date is null or d.fill_date >= f.from_date)
);

create or replace temp table legs_bills as
select b.*
from staging.funding_bills as b
cross join (select any_value(time_zone) as time_zone from settings.reporting) as r
where b.c_time_at >= getvariable('legs_low_at')
    and exists (
        select 1 from legs_frontier as f
        where (f.account = '*' or f.account = b.account)
            and (f.from_date is null or local_date(b.c_time_at, r.time_zone) >= f.from_date)
    );

-- The same selection, on the model's rows (a spot source is the symbol, a space and the side).
delete from intermediate.int_fees_legs as t
where exists (
    select 1 from legs_frontier as f
    where (f.account = '*' or f.account = t.account)
        and (f.from_date is null or t.event_date >= f.from_date)
        and (
            f.symbol is null
            or t.product = 'funding'
            or (t.product = 'futures' and t.source = f.symbol)
            or (t.product = 'spot' and starts_with(t.source, f.symbol || ' '))
        )
);

insert into intermediate.int_fees_legs by name
select * from {{ model(intermediate.int_spot_trades -> temp.main.legs_spot, intermediate.int_futures_fill_days -> temp.main.legs_futures, staging.funding_bills -> temp.main.legs_bills) }};

create or replace temp table model_pending as
select
    account,
    cast(null as varchar) as symbol,
    case when bool_or(from_start is null) then null else min(from_start) end as from_at
from legs_frontier
group by account;

drop table legs_frontier;
drop table legs_spot;
drop table legs_futures;
drop table legs_bills;
reset variable legs_low_date;
reset variable legs_low_at;
