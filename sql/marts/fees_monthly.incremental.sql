-- fees_monthly, incremental (docs/plans/incremental-builds.md, "The contract"): a row is one
-- account, product and coin in one reporting-zone month (its value the sum of its days' at each
-- day's price), and nothing runs across months. The pending rows (int_fees_periods': account, NULL,
-- start of its first changed day; int_prices': '*', NULL, start of the first day whose prices
-- changed) name no coin, so for each pending account (or every one) the months from that day's
-- on are replaced whole: deleted, and the model's own SQL run on those accounts' periods (days and
-- months) of those months (the prices are read whole: a row per coin and day).
-- The readers get (account, NULL, start of the first replaced month).
create or replace temp table fees_monthly_frontier as
select
    p.account,
    case when bool_or(p.from_at is null) then null else cast(date_trunc('month', min(local_date(p.from_at, r.time_zone))) as date) end as from_month,
    local_day_start(from_month, r.time_zone) as from_start
from temp.main.model_pending as p
cross join (select any_value(time_zone) as time_zone from settings.reporting) as r
group by p.account, r.time_zone;

create or replace temp table fees_monthly_periods as
select t.*
from intermediate.int_fees_periods as t
where exists (
    select 1 from fees_monthly_frontier as f
    where (f.account = '*' or f.account = t.account) and (f.from_month is null or t.period_start >= f.from_month)
);

delete from marts.fees_monthly as t
where exists (
    select 1 from fees_monthly_frontier as f
    where (f.account = '*' or f.account = t.account) and (f.from_month is null or t.fee_month >= f.from_month)
);

insert into marts.fees_monthly by name
select * from {{ model(intermediate.int_fees_periods -> temp.main.fees_monthly_periods) }};

create or replace temp table model_pending as
select account, cast(null as varchar) as symbol, from_start as from_at from fees_monthly_frontier;

drop table fees_monthly_frontier;
drop table fees_monthly_periods;
