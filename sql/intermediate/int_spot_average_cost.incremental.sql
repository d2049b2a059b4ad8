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
-- 3. Rows from first_seq on are deleted, and recomputed by the whole build's method over the
--    events from group_seq on (group g0, whose rows before first_seq come out the same and are
--    not written again): the group maps of groups >= g0, an up-sweep over them where each stored
--    sibling joins at its level (it waits, unchanged, until the sweep reaches its level), so every
--    node of a block containing a group >= g0 is the same as a whole build's, then the same
--    down-sweep from the root over those nodes. Nodes and steps: a few per new group, plus log2(groups).
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

insert into intermediate.int_spot_average_cost
with recursive trades as (
    select t.*, f.first_seq, f.group_seq, f.group_idx as first_group_idx
    from intermediate.int_spot_trades as t
    inner join avg_frontier as f on f.pool = t.pool and f.symbol = t.symbol
    where t.event_seq >= f.group_seq
        and list_contains((select any_value(cost_methods) from settings.reporting), 'average')
),

-- Groups numbered on from g0 (the event at group_seq starts it).
grouped as (
    select
        *,
        first_group_idx + sum(case when event_seq > group_seq and side = 'sell' and previous_side = 'buy' then 1 else 0 end)
            over (partition by pool, symbol order by event_seq rows between unbounded preceding and current row) as group_idx
    from (
        select *, lag(side) over (partition by pool, symbol order by event_seq) as previous_side
        from trades
    )
),

-- From here to `final`, as in int_spot_average_cost.sql, but for the up-sweep's stored siblings.
groups as (
    select
        pool,
        symbol,
        group_idx,
        -- Inventory before the group, and after its sells.
        arg_min(inventory_e18 - units_in_e18 + quantity_out_e18 - unmatched_e18, event_seq) as start_e18,
        coalesce(arg_max(inventory_e18, event_seq) filter (where side = 'sell'), arg_min(inventory_e18 - units_in_e18 + quantity_out_e18 - unmatched_e18, event_seq)) as after_sells_e18,
        coalesce(sum(cost_e12) filter (where side = 'buy'), 0) as cost_e12,
        min(event_seq) as first_seq
    from grouped
    group by pool, symbol, group_idx
),

group_maps as (
    select
        pool,
        symbol,
        group_idx,
        start_e18,
        case
            when start_e18 = 0 then cast(1 as hugeint) << 120
            else exact_fraction(after_sells_e18, start_e18)
        end as rho,
        cost_e12
    from groups
),

-- The whole build's up-sweep, over nodes idx >= g0 >> level. A stored sibling (level L) enters at
-- level 0 with joins_at = L and passes through unchanged until the sweep reaches level L: a node
-- takes part (is paired by idx // 2, counts for the last idx) once joins_at <= level.
sweep(pool, symbol, level, idx, a, b, joins_at) as (
    select pool, symbol, 0, group_idx, rho, cost_e12, 0 from group_maps
    union all
    select pool, symbol, 0, idx, node.a, node.b, level from avg_siblings
    union all
    select
        pool,
        symbol,
        level + 1,
        case when joins_at <= level then idx // 2 else idx end,
        case when count(*) = 1 then any_value(a) else exact_mul_fraction(arg_min(a, idx), arg_max(a, idx)) end,
        case when count(*) = 1 then any_value(b) else exact_mul_fraction(arg_min(b, idx), arg_max(a, idx)) + arg_max(b, idx) end,
        case when joins_at <= level then 0 else joins_at end
    from (select *, max(case when joins_at <= level then idx end) over (partition by pool, symbol) as last_idx from sweep)
    where last_idx > 0
    group by pool, symbol, level, case when joins_at <= level then idx // 2 else idx end, case when joins_at <= level then 0 else joins_at end
),

-- The nodes as the whole build's up has them (from here the CTEs are the whole build's).
up as (
    select pool, symbol, level, idx, a, b
    from sweep
    where joins_at <= level
),

tops as (
    select pool, symbol, max(level) as level
    from up
    group by pool, symbol
),

down(pool, symbol, level, idx, c_before) as (
    select pool, symbol, level, 0, cast(0 as hugeint) from tops
    union all
    select
        child.pool,
        child.symbol,
        child.level,
        child.idx,
        case
            when child.idx % 2 = 0 then parent.c_before
            else exact_mul_fraction(parent.c_before, sibling.a) + sibling.b
        end
    from down as parent
    inner join up as child
        on child.pool = parent.pool and child.symbol = parent.symbol
        and child.level = parent.level - 1 and child.idx // 2 = parent.idx
    left join up as sibling
        on sibling.pool = child.pool and sibling.symbol = child.symbol
        and sibling.level = child.level and sibling.idx = child.idx - 1
    where parent.level > 0
),

block_ends as (
    select pool, symbol, (idx + 1) << level as group_idx, list({'a': a, 'b': b} order by level) as blocks
    from up
    group by pool, symbol, (idx + 1) << level
),

group_starts as (
    select
        g.pool,
        g.symbol,
        g.group_idx,
        g.start_e18,
        g.after_sells_e18,
        d.c_before as c_start_e12,
        g.first_seq,
        {'group_idx': cast(g.group_idx as bigint), 'blocks': coalesce(e.blocks, cast([] as struct(a hugeint, b hugeint)[]))} as group_scan
    from groups as g
    inner join down as d on d.pool = g.pool and d.symbol = g.symbol and d.level = 0 and d.idx = g.group_idx
    left join block_ends as e on e.pool = g.pool and e.symbol = g.symbol and e.group_idx = g.group_idx
),

events as (
    select
        t.pool,
        t.symbol,
        t.event_seq,
        t.first_seq as replaced_seq,
        t.side,
        t.group_idx,
        s.c_start_e12,
        case when t.side = 'buy' then sum(t.cost_e12) over (partition by t.pool, t.symbol, t.group_idx order by t.event_seq rows unbounded preceding) else 0 end as added_e12,
        exact_fraction_start(
            case when s.start_e18 = 0 then 1 when t.side = 'sell' then t.inventory_e18 else s.after_sells_e18 end,
            case when s.start_e18 = 0 then 1 else s.start_e18 end
        ) as kept,
        case when t.event_seq = s.first_seq then s.group_scan end as _group_scan
    from grouped as t
    inner join group_starts as s on s.pool = t.pool and s.symbol = t.symbol and s.group_idx = t.group_idx
),

step_1 as (select * replace (exact_fraction_step(kept) as kept) from events),
step_2 as (select * replace (exact_fraction_step(kept) as kept) from step_1),
step_3 as (select * replace (exact_fraction_step(kept) as kept) from step_2),
step_4 as (select * replace (exact_fraction_step(kept) as kept) from step_3),
step_5 as (select * replace (exact_fraction_step(kept) as kept) from step_4),
step_6 as (select * replace (exact_fraction_step(kept) as kept) from step_5),

fractions as (
    select * exclude (kept), exact_fraction_end(kept) as kept_fraction
    from step_6
),

costed as (
    select *, exact_mul_fraction(c_start_e12, kept_fraction) + added_e12 as inventory_cost_e12
    from fractions
),

final as (
    select
        pool,
        symbol,
        event_seq,
        case
            when side = 'sell' then
                coalesce(lag(inventory_cost_e12) over (partition by pool, symbol, group_idx order by event_seq), c_start_e12) - inventory_cost_e12
        end as cost_e12,
        inventory_cost_e12,
        _group_scan,
        replaced_seq
    from costed
)

-- Group g0's rows before first_seq are recomputed (for the lag) but kept as they are.
select * exclude (replaced_seq)
from final
where event_seq >= replaced_seq;

drop table avg_siblings;

drop table avg_frontier;
reset variable avg_wildcards;
reset variable avg_low;
reset variable avg_whole;
