-- Incremental step of int_spot_average_cost (docs/plans/incremental-builds.md, "The contract"):
-- statements run in order inside the model's transaction, on its existing table.
-- The whole build's scan (int_spot_average_cost.sql) gives group g the C got by applying, root to
-- leaf, the maps of the left siblings on g's binary path: level L node (g >> L) - 1 where bit L of
-- g is set, the map of the complete aligned block of groups [((g >> L) - 1) * 2^L, (g >> L) * 2^L),
-- composed in a fixed tree shape. Every such block lies before g, so each row depends only on the
-- events before it, and a whole build's rows before from_at are kept. Per pending (pool, symbol):
-- 1. avg_frontier: first_seq, the first event at or after from_at (1 when from_at is null), and
--    g0, the group of the last kept event, from the last _group_scan mark before first_seq
--    (group_seq, its first event). Group starts (a sell after a buy) are fixed by the events
--    before them, so that mark is final.
-- 2. avg_siblings: the left siblings on g0's path, read from the marks where they are kept (the
--    block at level L ending at group (g0 >> L) << L is on that group's first event, position L + 1).
-- 3. Rows from first_seq on are deleted, and recomputed by the model's own SQL (its CTEs frontier and
--    stored_siblings read from the two tables above) over the events from group_seq on (group g0,
--    whose rows before first_seq come out the same and are not written again): the group maps of
--    groups >= g0, an up-sweep over them where each stored sibling joins at its level (it waits,
--    unchanged, until the sweep reaches its level), so every node of a block containing a group >= g0
--    is the same as a whole build's, then the same down-sweep from the root over those nodes. Nodes
--    and steps: a few per new group, plus log2(groups).
-- The pending rows are passed on unchanged: rows before first_seq are untouched.
set variable avg_wildcards = (select count(*) > 0 from temp.main.model_pending where account is null or account = '*' or symbol is null);
set variable avg_low = (select min(from_at) from temp.main.model_pending);
set variable avg_whole = (select count(*) > 0 from temp.main.model_pending where from_at is null);

create or replace temp table avg_frontier as
with pending as (
    select account, symbol, from_at from temp.main.model_pending
),

-- Every (pool, symbol) a pending row names (account '*' or null: every pool, any account: pool '*' of
-- pooling universal too, should an account be named where its pool is meant, symbol null: every symbol),
-- the earliest from_at (null wins) where several name it. Only a wildcard (rare) reads the
-- partitions there are: a filter on a constant false is folded away by DuckDB.
named_exactly as (
    select case when r.pooling = 'universal' then '*' else p.account end as pool, p.symbol, p.from_at
    from pending as p
    cross join (select any_value(pooling) as pooling from settings.reporting) as r
    where p.account is not null and p.account <> '*' and p.symbol is not null
),

partitions as (
    select distinct pool, symbol from intermediate.int_spot_trades where getvariable('avg_wildcards') and event_seq = 1
),

named_by_wildcard as (
    select s.pool, s.symbol, p.from_at
    from partitions as s
    inner join pending as p
        on (p.account is null or p.account = '*' or p.account = s.pool or s.pool = '*') and (p.symbol is null or p.symbol = s.symbol)
    where p.account is null or p.account = '*' or p.symbol is null
),

named as (
    select pool, symbol, case when bool_or(from_at is null) then null else min(from_at) end as from_at
    from (select * from named_exactly union all select * from named_by_wildcard)
    group by pool, symbol
),

-- The first replaced event (the rows at or after from_at follow every kept row in event_seq): 1
-- where from_at is null; otherwise read from the earliest from_at on (a constant: DuckDB skips the
-- row groups before it).
replaced as (
    select n.pool, n.symbol, min(t.event_seq) as first_seq
    from named as n
    inner join intermediate.int_spot_trades as t on t.pool = n.pool and t.symbol = n.symbol
    where getvariable('avg_whole') and n.from_at is null
    group by n.pool, n.symbol
    union all
    select n.pool, n.symbol, min(t.event_seq) as first_seq
    from named as n
    inner join intermediate.int_spot_trades as t on t.pool = n.pool and t.symbol = n.symbol
    where t.event_at >= getvariable('avg_low') and t.event_at >= n.from_at
    group by n.pool, n.symbol
)

select
    r.pool,
    r.symbol,
    r.first_seq,
    coalesce(max(a.event_seq), 1) as group_seq,
    coalesce(arg_max(a._group_scan.group_idx, a.event_seq), 0) as group_idx
from replaced as r
left join intermediate.int_spot_average_cost as a
    on a.pool = r.pool and a.symbol = r.symbol and a.event_seq < r.first_seq and a._group_scan is not null
group by r.pool, r.symbol, r.first_seq;

create or replace temp table avg_siblings as
with levels as (
    select f.pool, f.symbol, f.first_seq, l.level, (f.group_idx >> l.level) << l.level as block_end
    from avg_frontier as f
    cross join range(0, 63) as l(level)
    where (f.group_idx >> l.level) & 1 = 1
)

select l.pool, l.symbol, l.level, (l.block_end >> l.level) - 1 as idx, a._group_scan.blocks[l.level + 1] as node
from levels as l
inner join intermediate.int_spot_average_cost as a
    on a.pool = l.pool and a.symbol = l.symbol and a._group_scan.group_idx = l.block_end and a.event_seq < l.first_seq;

delete from intermediate.int_spot_average_cost as a
using avg_frontier as f
where a.pool = f.pool and a.symbol = f.symbol and a.event_seq >= f.first_seq;

-- The model's own SQL, from the frontier's group on, with the stored siblings: the rows from first_seq on.
insert into intermediate.int_spot_average_cost by name
select * from {{ model(cte frontier -> temp.main.avg_frontier, cte stored_siblings -> temp.main.avg_siblings) }};

drop table avg_siblings;

drop table avg_frontier;
reset variable avg_wildcards;
reset variable avg_low;
reset variable avg_whole;
