-- fees_daily, incremental (docs/plans/incremental-builds.md, "The contract"): a row is one account,
-- product and coin on one reporting-zone day, valued at that day's price, and nothing runs across
-- days. The pending rows (int_fees_periods': account, NULL, start of its first changed day;
-- int_prices': '*', NULL, start of the first day whose prices changed) name no coin, so for each
-- pending account (or every one) the days from local_date(from_at) on are replaced whole:
-- deleted, and the model's own SQL run on those accounts' periods of those days (the prices are
-- read whole: a row per coin and day). The readers get (account, NULL, start of the first replaced day).
create or replace temp table fees_daily_frontier as
select
    p.account,
    case when bool_or(p.from_at is null) then null else min(local_date(p.from_at, r.time_zone)) end as from_date,
    local_day_start(from_date, r.time_zone) as from_start
from temp.main.model_pending as p
cross join (select any_value(time_zone) as time_zone from settings.reporting) as r
group by p.account, r.time_zone;

create or replace temp table fees_daily_periods as
select t.*
from intermediate.int_fees_periods as t
where t.period = 'day'
    and exists (
        select 1 from fees_daily_frontier as f
        where (f.account = '*' or f.account = t.account) and (f.from_date is null or t.period_start >= f.from_date)
    );

delete from marts.fees_daily as t
where exists (
    select 1 from fees_daily_frontier as f
    where (f.account = '*' or f.account = t.account) and (f.from_date is null or t.fee_date >= f.from_date)
);

insert into marts.fees_daily by name
select * from {{ model(intermediate.int_fees_periods -> temp.main.fees_daily_periods) }};

create or replace temp table model_pending as
select account, cast(null as varchar) as symbol, from_start as from_at from fees_daily_frontier;

drop table fees_daily_frontier;
drop table fees_daily_periods;
