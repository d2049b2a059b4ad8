-- Moving weighted-average cost: one row per spot trade event with the cost its sell disposed of
-- and the inventory's cost after it. Built only when 'average' is a reporting cost method.
-- Key: (pool, symbol, event_seq). Inputs: intermediate.int_spot_trades, settings.reporting.
-- The inventory cost C evolves by affine maps: a buy adds its cost (C -> C + c), a sell keeps the
-- average (C -> C * Q_after / Q_before, 0 when emptied). Consecutive sells telescope into one
-- fraction, so each group (a run of sells, then a run of buys) is one map C -> rho * C + c. The maps
-- compose associatively, so C before every group comes from a work-efficient parallel scan
-- (Blelloch): an up-sweep pairs neighbouring groups level by level (up), a down-sweep hands each
-- block the C before it (down). About 3 exact multiplications per group and 2 * log2(groups)
-- recursion steps, never a step per row. Inside a group a sell's cost is read off
-- C(q) = C_start * q / Q_start at the inventory before and after it, so costs telescope to C_start - C.
-- Level L node i of the up-sweep is the map of the aligned block of groups [i * 2^L, (i + 1) * 2^L),
-- and a group's C comes from the maps of the blocks before it on its path: so C, and every row, is
-- determined by the events before it. _group_scan keeps, on each group's first event, the maps of
-- the complete blocks that end just before the group: from them the incremental step
-- (int_spot_average_cost.incremental.sql) redoes the scan from one group on, digit for digit.
with recursive
-- Where the scan starts, per (pool, symbol): a whole build at the first event, in group 0. The
-- incremental step (int_spot_average_cost.incremental.sql) runs this SQL with its own frontier
-- (the first replaced event, the group it falls in and that group's first event) ...
frontier as (
    select pool, symbol, cast(1 as bigint) as first_seq, cast(1 as bigint) as group_seq, cast(0 as bigint) as group_idx
    from intermediate.int_spot_trades
    where event_seq = 1
),

-- ... and with the up-sweep's nodes it keeps from the build before (level, idx and the map of the
-- complete block of groups before its first group): none in a whole build.
stored_siblings as (
    select cast(null as varchar) as pool, cast(null as varchar) as symbol, 0 as level, cast(0 as bigint) as idx, cast(null as struct(a hugeint, b hugeint)) as node
    where false
),

trades as (
    select t.*, f.first_seq, f.group_seq, f.group_idx as first_group_idx
    from intermediate.int_spot_trades as t
    inner join frontier as f on f.pool = t.pool and f.symbol = t.symbol
    where t.event_seq >= f.group_seq
        and list_contains((select any_value(cost_methods) from settings.reporting), 'average')
),

-- A new group starts at a sell that follows a buy (an opening lot counts as a buy); numbered on
-- from the frontier's group (the event at group_seq starts it).
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

-- Level L + 1 node i composes level L nodes 2i (first) and 2i + 1: (a, b) = (a1 * a2, b1 * a2 + b2).
-- A stored sibling (level L) enters at level 0 with joins_at = L and passes through unchanged until
-- the sweep reaches level L: a node takes part (is paired by idx // 2, counts for the last idx) once
-- joins_at <= level. So every node of a block holding a group the sweep covers is a whole build's.
sweep(pool, symbol, level, idx, a, b, joins_at) as (
    select pool, symbol, 0, group_idx, rho, cost_e12, 0 from group_maps
    union all
    select pool, symbol, 0, idx, node.a, node.b, level from stored_siblings
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

-- C before node i of level L: a left child inherits its parent's, a right child applies its left
-- sibling's map to it.
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
    -- Every child gets the node before it (an equi-join): only a right child uses it.
    left join up as sibling
        on sibling.pool = child.pool and sibling.symbol = child.symbol
        and sibling.level = child.level and sibling.idx = child.idx - 1
    where parent.level > 0
),

-- The complete blocks ending just before group g ([g - 2^L, g) at level L, for L = 0, 1, ... while
-- g is a multiple of 2^L), their maps listed by level (position L + 1). A block that is not
-- complete ends at or after the last group, so it ends before no group.
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

-- Inside a group C = C_start * n / start: after a sell n is the inventory after it, at a buy the
-- inventory after the group's sells, and a buy adds the costs of the group's buys so far. The
-- fraction n / start runs in six long-division steps, one per CTE (see exact_fraction_start).
events as (
    select
        t.pool,
        t.symbol,
        t.event_seq,
        t.side,
        t.group_idx,
        s.c_start_e12,
        case when t.side = 'buy' then sum(t.cost_e12) over (partition by t.pool, t.symbol, t.group_idx order by t.event_seq rows unbounded preceding) else 0 end as added_e12,
        exact_fraction_start(
            case when s.start_e18 = 0 then 1 when t.side = 'sell' then t.inventory_e18 else s.after_sells_e18 end,
            case when s.start_e18 = 0 then 1 else s.start_e18 end
        ) as kept
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

sold as (
    select
        pool,
        symbol,
        event_seq,
        case
            when side = 'sell' then
                coalesce(lag(inventory_cost_e12) over (partition by pool, symbol, group_idx order by event_seq), c_start_e12) - inventory_cost_e12
        end as cost_e12,
        inventory_cost_e12
    from costed
),

-- The marks join last: carried through the steps and the window above, they made the build twice as slow.
-- Rows before the frontier's first replaced event (its group's first rows, recomputed for the lag) are kept as they were.
final as (
    select o.*, s.group_scan as _group_scan
    from sold as o
    inner join frontier as f on f.pool = o.pool and f.symbol = o.symbol
    left join group_starts as s on s.pool = o.pool and s.symbol = o.symbol and s.first_seq = o.event_seq
    where o.event_seq >= f.first_seq
)

select * from final
