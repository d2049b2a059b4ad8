-- int_futures_position_months, incremental (docs/plans/incremental-builds.md, "The contract"): a row
-- is one position and reporting-zone month, and nothing runs across months, so for each pending
-- account and contract the months from the earliest changed fill's on are replaced whole, the
-- others kept.
-- 1. position_months_frontier: per pending (account or '*', contract or NULL: every one) the first
--    month to replace, that of local_date(from_at) (NULL from_at: every month), and its first instant.
-- 2. Those rows are deleted; the model's own SQL runs on the fills of those accounts, contracts and
--    months alone, read from a constant lower bound (the earliest replaced month's start, less a
--    day), so DuckDB skips the row groups of older fills instead of testing every fill.
-- 3. The readers get (account, contract, start of the first replaced month): whole months changed.
create or replace temp table position_months_frontier as
select
    p.account,
    p.symbol,
    case when bool_or(p.from_at is null) then null else cast(date_trunc('month', min(local_date(p.from_at, r.time_zone))) as date) end as from_month,
    local_day_start(from_month, r.time_zone) as from_start
from temp.main.model_pending as p
cross join (select any_value(time_zone) as time_zone from settings.reporting) as r
group by p.account, p.symbol, r.time_zone;

set variable position_months_low = (
    select case when bool_or(from_start is null) then '-infinity'::timestamptz else min(from_start) - interval 1 day end
    from position_months_frontier
);

create or replace temp table position_months_fills as
select s.*
from staging.futures_fills as s
cross join (select any_value(time_zone) as time_zone from settings.reporting) as r
where s.created_time_at >= getvariable('position_months_low')
    and exists (
        select 1 from position_months_frontier as f
        where (f.account = '*' or f.account = s.account)
            and (f.symbol is null or f.symbol = s.symbol)
            and (f.from_month is null or local_date(s.created_time_at, r.time_zone) >= f.from_month)
    );

delete from intermediate.int_futures_position_months as t
where exists (
    select 1 from position_months_frontier as f
    where (f.account = '*' or f.account = t.account)
        and (f.symbol is null or f.symbol = t.symbol)
        and (f.from_month is null or t.period_month >= f.from_month)
);

insert into intermediate.int_futures_position_months by name
select * from {{ model(staging.futures_fills -> temp.main.position_months_fills) }};

create or replace temp table model_pending as
select account, symbol, from_start as from_at from position_months_frontier;

drop table position_months_frontier;
drop table position_months_fills;
reset variable position_months_low;
