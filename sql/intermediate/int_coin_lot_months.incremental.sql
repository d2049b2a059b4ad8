-- int_coin_lot_months, incremental (docs/plans/incremental-builds.md, "The books"): per pending pool
-- and coin (int_coin_lots hands on the day its match resumed from), the months from that day's on
-- are made again from their events; the months before stay (a month's row comes from its own
-- events alone). A pending row of no instant reaches every month of its pool and coin (a pool
-- here is a pool's name: '*' is pooling universal's one pool, not every account). The events are read from the earliest such month on (a constant bound DuckDB
-- skips older row groups by). The readers get (pool, coin, the first month's start).
create or replace temp table lot_months_frontier as
select
    p.account as pool,
    p.symbol as coin,
    case when bool_or(p.from_at is null) then null
        else cast(date_trunc('month', min(local_date(p.from_at, r.time_zone))) as date) end as from_month
from temp.main.model_pending as p
cross join (select any_value(time_zone) as time_zone from settings.reporting) as r
group by p.account, p.symbol;

set variable lot_months_low = (
    select case when bool_or(from_month is null) then date '-infinity' else min(from_month) end from temp.main.lot_months_frontier
);

create or replace temp table lot_months_events as
select e.*
from intermediate.int_coin_events as e
where e.event_date >= getvariable('lot_months_low')
    and exists (
        select 1 from temp.main.lot_months_frontier as f
        where (f.pool is null or f.pool = e.pool) and (f.coin is null or f.coin = e.coin)
            and (f.from_month is null or e.event_date >= f.from_month)
    );

delete from intermediate.int_coin_lot_months as m
where m.period_month >= getvariable('lot_months_low')
    and exists (
        select 1 from temp.main.lot_months_frontier as f
        where (f.pool is null or f.pool = m.pool) and (f.coin is null or f.coin = m.coin)
            and (f.from_month is null or m.period_month >= f.from_month)
    );

insert into intermediate.int_coin_lot_months by name
select * from {{ model(intermediate.int_coin_events -> temp.main.lot_months_events) }};

create or replace temp table model_pending as
select pool as account, coin as symbol, local_day_start(from_month, (select any_value(time_zone) from settings.reporting)) as from_at
from temp.main.lot_months_frontier;

drop table temp.main.lot_months_frontier;
drop table temp.main.lot_months_events;
reset variable lot_months_low;
