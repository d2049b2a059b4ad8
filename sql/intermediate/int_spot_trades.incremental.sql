-- int_spot_trades, incremental (docs/plans/incremental-builds.md, "The contract"): per pool and
-- symbol with changed fills, the rows from the earliest changed fill on are replaced; the rows
-- before it stay, and the replaced ones continue their running sums and event_seq.
-- 1. The frontier of each pool and symbol (trades_frontier): the earliest changed fill (pending rows
--    are per account; under pooling 'universal' every account's fills are pool '*'). A frontier
--    not after the partition's first fill (or a new partition) is NULL: the whole partition is
--    replaced, opening rows included (an opening lot takes its coins and day from the first fill).
--    "Not after the first fill" is found as "no fill before the frontier" (trades_last_fill).
-- 2. The last kept row of each partition (trades_kept: the last fill before the frontier) holds the
--    running sums before the frontier.
-- Every read of the 10M-row tables is bounded by a constant instant (DuckDB skips the row groups
-- before it): the earliest frontier, 35 days before it for the last kept fill (the whole table only
-- for a partition idle longer), the last kept fills' earliest instant; the rare reads (wildcard
-- pending rows, partitions replaced whole) are filtered on a boolean variable, false otherwise.
-- 3. The model's own SQL (int_spot_trades.sql) runs on the changed fills alone (and the opening
--    positions of partitions replaced whole), numbering from 1 and summing from 0; its rows are
--    moved onto the kept ones: event_seq and the units in and out are offset, and the unmatched
--    units (a running maximum of the deficit out - in, never below 0) are taken again: with D the
--    kept deficit and U the kept unmatched units, a row's unmatched units before and after it are
--    greatest(U, D + its own), the same running maximum over the whole partition.
-- 4. What the readers get: the frontier per pool and symbol (the rows replaced are those at or
--    after it).
create or replace temp table trades_pending as
select
    case when p.account = '*' or r.pooling = 'universal' then '*' else p.account end as pool,
    p.account,
    p.symbol,
    p.from_at
from temp.main.model_pending as p
cross join (select any_value(pooling) as pooling from settings.reporting) as r;

-- Whether a pending row names every account or every symbol (rare: a reset, a wildcard hand-on).
-- A filter on this constant is folded away by DuckDB: without one, the partitions below read no row.
set variable trades_wildcards = (select count(*) > 0 from trades_pending where account = '*' or symbol is null);

create or replace temp table trades_requested as
with wildcards as (
    select * from trades_pending where account = '*' or symbol is null
),

-- Every pool and symbol there is (for a pending row naming every account or every symbol).
partitions as (
    select distinct pool, symbol from intermediate.int_spot_trades where getvariable('trades_wildcards') and event_seq = 1
    union
    select distinct case when (select any_value(pooling) from settings.reporting) = 'universal' then '*' else account end, symbol
    from staging.spot_fills
    where getvariable('trades_wildcards')
),

requested as (
    select pool, symbol, from_at from trades_pending where account <> '*' and symbol is not null
    union all
    select p.pool, p.symbol, w.from_at
    from partitions as p
    inner join wildcards as w on (w.pool = '*' or w.pool = p.pool) and (w.symbol is null or w.symbol = p.symbol)
)

select pool, symbol, case when bool_or(from_at is null) then null else min(from_at) end as from_at
from requested
group by pool, symbol;

-- The earliest frontier, as a constant: DuckDB then skips the row groups of older fills and
-- trades instead of testing each row against the frontiers (a nightly's are all in its last day).
set variable trades_low = (select min(from_at) from trades_requested where from_at is not null);

-- The last fill before each frontier (its event_seq and instant): the kept rows end there (an
-- opening lot precedes every fill). A partition without one is replaced whole (a new symbol, a
-- change before its first fill). Looked for in the 35 days before the earliest frontier first (a
-- constant: only those row groups are read), then, for the partitions without a fill there, in
-- the whole table (rare: a symbol idle for 35 days; the constant skips this read otherwise).
create or replace temp table trades_last_fill as
select t.pool, t.symbol, max(t.event_seq) as event_seq, max(t.event_at) as event_at
from intermediate.int_spot_trades as t
inner join trades_requested as r on r.pool = t.pool and r.symbol = t.symbol
where t.event_at >= getvariable('trades_low') - interval 35 day
    and t.lot_source = 'fill' and t.event_at < r.from_at
group by t.pool, t.symbol;

set variable trades_idle = (
    select count(*) > 0 from trades_requested as r anti join trades_last_fill as l on l.pool = r.pool and l.symbol = r.symbol
    where r.from_at is not null
);

insert into trades_last_fill
select t.pool, t.symbol, max(t.event_seq), max(t.event_at)
from intermediate.int_spot_trades as t
inner join (
    select r.* from trades_requested as r anti join trades_last_fill as l on l.pool = r.pool and l.symbol = r.symbol
) as r on r.pool = t.pool and r.symbol = t.symbol
where getvariable('trades_idle') and t.lot_source = 'fill' and t.event_at < r.from_at
group by t.pool, t.symbol;

create or replace temp table trades_frontier as
select r.pool, r.symbol, case when l.event_seq is null then null else r.from_at end as from_at
from trades_requested as r
left join trades_last_fill as l on l.pool = r.pool and l.symbol = r.symbol;

-- The last kept row of each partition: its running sums continue in the replaced rows.
set variable trades_kept_low = (select min(event_at) from trades_last_fill);

create or replace temp table trades_kept as
select t.pool, t.symbol, t.event_seq, t.cum_in_e18, t.cum_out_e18, t.cum_unmatched_e18
from intermediate.int_spot_trades as t
inner join trades_last_fill as l on l.pool = t.pool and l.symbol = t.symbol and l.event_seq = t.event_seq
where t.event_at >= getvariable('trades_kept_low');

-- Partitions replaced whole (rare: a new symbol, a change before the first fill), then the others.
set variable trades_whole = (select count(*) > 0 from trades_frontier where from_at is null);

delete from intermediate.int_spot_trades as t
where getvariable('trades_whole')
    and exists (select 1 from trades_frontier as f where f.pool = t.pool and f.symbol = t.symbol and f.from_at is null);

delete from intermediate.int_spot_trades as t
where t.event_at >= getvariable('trades_low')
    and exists (
        select 1 from trades_frontier as f
        where f.pool = t.pool and f.symbol = t.symbol and f.from_at is not null
            and t.lot_source <> 'opening' and t.event_at >= f.from_at
    );

create or replace temp table trades_fills as
select s.*
from staging.spot_fills as s
inner join trades_frontier as f on f.symbol = s.symbol and (f.pool = '*' or f.pool = s.account)
where f.from_at is null;

insert into trades_fills
select s.*
from staging.spot_fills as s
inner join trades_frontier as f on f.symbol = s.symbol and (f.pool = '*' or f.pool = s.account)
where s.c_time_at >= getvariable('trades_low') and f.from_at is not null and s.c_time_at >= f.from_at;

create or replace temp table trades_openings as
select o.*
from settings.opening_positions as o
inner join trades_frontier as f on f.symbol = o.symbol and (f.pool = '*' or f.pool = o.account)
where f.from_at is null;

create or replace temp table trades_new as
{{ model(staging.spot_fills -> temp.main.trades_fills, settings.opening_positions -> temp.main.trades_openings) }};

insert into intermediate.int_spot_trades by name
with offsets as (
    select
        n.*,
        coalesce(k.event_seq, 0) as kept_seq,
        coalesce(k.cum_in_e18, 0) as kept_in_e18,
        coalesce(k.cum_out_e18, 0) as kept_out_e18,
        coalesce(k.cum_unmatched_e18, 0) as kept_unmatched_e18
    from trades_new as n
    left join trades_kept as k on k.pool = n.pool and k.symbol = n.symbol
),

absolute as (
    select
        *,
        kept_in_e18 + cum_in_e18 as total_in_e18,
        kept_out_e18 + cum_out_e18 as total_out_e18,
        greatest(kept_unmatched_e18, kept_out_e18 - kept_in_e18 + cum_unmatched_e18 - unmatched_e18) as total_previous_unmatched_e18,
        greatest(kept_unmatched_e18, kept_out_e18 - kept_in_e18 + cum_unmatched_e18) as total_unmatched_e18
    from offsets
)

-- As int_spot_trades.sql's final columns, on the totals.
select
    * exclude (kept_seq, kept_in_e18, kept_out_e18, kept_unmatched_e18, total_in_e18, total_out_e18, total_previous_unmatched_e18, total_unmatched_e18)
    replace (
        event_seq + kept_seq as event_seq,
        total_unmatched_e18 - total_previous_unmatched_e18 as unmatched_e18,
        case
            when total_unmatched_e18 = total_previous_unmatched_e18 then proceeds_e12
            else exact_share(proceeds_e12, quantity_out_e18 - (total_unmatched_e18 - total_previous_unmatched_e18), quantity_out_e18)
        end as matched_proceeds_e12,
        total_in_e18 as cum_in_e18,
        total_out_e18 as cum_out_e18,
        total_unmatched_e18 as cum_unmatched_e18,
        total_in_e18 - total_out_e18 + total_unmatched_e18 as inventory_e18
    )
from absolute;

create or replace temp table model_pending as
select pool as account, symbol, from_at from trades_frontier;

drop table trades_pending;
drop table trades_requested;
drop table trades_last_fill;
drop table trades_frontier;
drop table trades_kept;
drop table trades_fills;
drop table trades_openings;
drop table trades_new;
reset variable trades_low;
reset variable trades_wildcards;
reset variable trades_idle;
reset variable trades_kept_low;
reset variable trades_whole;
