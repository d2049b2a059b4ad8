-- int_fees_periods, incremental (docs/plans/incremental-builds.md, "The contract"): rows are per
-- account, product and coin for a reporting-zone day or month, nothing runs across months, and the
-- pending rows (int_fees_legs': account, start of its first replaced day) name no coin. So for each
-- pending account the rows from the first changed day's month on, days and months, are replaced.
-- 1. periods_frontier: per pending account (or '*'), the first changed day and its month.
-- 2. Those rows are deleted, and the model's own SQL runs on that account's legs from that month on
--    (whole months, so each month's and day's group is complete).
-- 3. The readers get (account, NULL, start of the first changed day): the days before it, in its
--    month too, came out as they were.
create or replace temp table periods_frontier as
select
    p.account,
    case when bool_or(p.from_at is null) then null else min(local_date(p.from_at, r.time_zone)) end as from_date,
    cast(date_trunc('month', from_date) as date) as from_month,
    local_day_start(from_date, r.time_zone) as from_start
from temp.main.model_pending as p
cross join (select any_value(time_zone) as time_zone from settings.reporting) as r
group by p.account, r.time_zone;

create or replace temp table periods_legs as
select l.*
from intermediate.int_fees_legs as l
where exists (
    select 1 from periods_frontier as f
    where (f.account = '*' or f.account = l.account) and (f.from_month is null or l.event_date >= f.from_month)
);

delete from intermediate.int_fees_periods as t
where exists (
    select 1 from periods_frontier as f
    where (f.account = '*' or f.account = t.account) and (f.from_month is null or t.period_start >= f.from_month)
);

insert into intermediate.int_fees_periods by name
select * from {{ model(intermediate.int_fees_legs -> temp.main.periods_legs) }};

create or replace temp table model_pending as
select account, cast(null as varchar) as symbol, from_start as from_at from periods_frontier;

drop table periods_frontier;
drop table periods_legs;
