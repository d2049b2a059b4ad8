-- Incremental step of int_spot_fifo_segments (docs/plans/incremental-builds.md, "The contract"):
-- statements run in order inside the model's transaction, on its existing table.
-- A sell's segments depend only on the lots before it and on its own interval [MS(j-1), MS(j)),
-- and int_spot_trades keeps every row of a pending (pool, symbol) before from_at (with its
-- event_seq) and replaced the rows from from_at on. So, per pending (pool, symbol):
-- 1. fifo_frontier: first_seq, the first event at or after from_at (1 when from_at is null),
-- 2. the segments and unmatched rows of sells from first_seq on are deleted,
-- 3. they are recomputed by the full model's breakpoint method (the CTEs from `breakpoints` on are
--    the full SQL's, unchanged: keep them in step), reading only those sells and the lots whose
--    cumulative interval reaches the first of them, S0 (lot end cum_in_e18 > S0: the lot in which
--    it starts, and every later lot). Every breakpoint at or after S0 is then the same as in a whole
--    build, with the same last lot and last sell before it, the one before S0 (the start of the lot
--    containing S0) has no sell yet and gives no segment. So the rows equal a whole build's.
-- The pending rows are passed on unchanged: rows of sells before first_seq are untouched.
create or replace temp table fifo_frontier as
with pending as (
    select account, symbol, from_at from temp.main.model_pending
),

-- Every (pool, symbol) a pending row names (account '*' or null: every pool, any account: pool '*' of
-- pooling universal too, should an account be named where its pool is meant, symbol null: every symbol),
-- the earliest from_at (null wins) where several name it.
partitions as (
    select distinct pool, symbol from intermediate.int_spot_trades
),

named as (
    select s.pool, s.symbol, case when bool_or(p.from_at is null) then null else min(p.from_at) end as from_at
    from partitions as s
    inner join pending as p
        on (p.account is null or p.account = '*' or p.account = s.pool or s.pool = '*') and (p.symbol is null or p.symbol = s.symbol)
    group by s.pool, s.symbol
)

-- The first replaced event (the rows at or after from_at follow every kept row in event_seq).
select n.pool, n.symbol, min(t.event_seq) as first_seq
from named as n
inner join intermediate.int_spot_trades as t on t.pool = n.pool and t.symbol = n.symbol
where n.from_at is null or t.event_at >= n.from_at
group by n.pool, n.symbol;

delete from intermediate.int_spot_fifo_segments as s
using fifo_frontier as f
where s.pool = f.pool and s.symbol = f.symbol and s.sell_seq >= f.first_seq;

insert into intermediate.int_spot_fifo_segments
with fifo as (
    select list_contains((select any_value(cost_methods) from settings.reporting), 'fifo') as is_built
),

sells as (
    select
        t.pool,
        t.symbol,
        t.event_seq as sell_seq,
        t.cum_out_e18 - t.cum_unmatched_e18 - (t.quantity_out_e18 - t.unmatched_e18) as sell_start_e18,
        t.quantity_out_e18 - t.unmatched_e18 as matched_e18,
        t.quantity_out_e18,
        t.proceeds_e12,
        t.matched_proceeds_e12
    from intermediate.int_spot_trades as t
    inner join fifo_frontier as f on f.pool = t.pool and f.symbol = t.symbol
    where t.event_seq >= f.first_seq and t.quantity_out_e18 - t.unmatched_e18 > 0
        and (select is_built from fifo)
),

-- S0: where the first replaced sell's matched quantity starts.
sell_floors as (
    select pool, symbol, min(sell_start_e18) as floor_e18
    from sells
    group by pool, symbol
),

lots as (
    select t.pool, t.symbol, t.event_seq as lot_seq, t.cum_in_e18 - t.units_in_e18 as lot_start_e18, t.units_in_e18, t.cost_e12
    from intermediate.int_spot_trades as t
    inner join sell_floors as f on f.pool = t.pool and f.symbol = t.symbol
    where t.units_in_e18 > 0 and t.cum_in_e18 > f.floor_e18
),

unmatched_sells as (
    select t.pool, t.symbol, t.event_seq, t.unmatched_e18, t.proceeds_e12, t.matched_proceeds_e12
    from intermediate.int_spot_trades as t
    inner join fifo_frontier as f on f.pool = t.pool and f.symbol = t.symbol
    where t.event_seq >= f.first_seq and t.unmatched_e18 > 0
        and (select is_built from fifo)
),

-- Breakpoints: kind 0 a lot start, kind 1 a sell start. The first lot and the first sell both
-- start at 0, so every breakpoint after the first has a lot and a sell before it (a symbol without
-- a matched sell has no segment).
breakpoints as (
    select
        pool,
        symbol,
        lot_start_e18 as x_e18,
        0 as kind,
        {'seq': lot_seq, 'start_e18': lot_start_e18, 'units_e18': units_in_e18, 'cost_e12': cost_e12} as lot,
        cast(null as struct(seq bigint, start_e18 hugeint, matched_e18 hugeint, quantity_e18 hugeint, proceeds_e12 hugeint, matched_proceeds_e12 hugeint)) as sell
    from lots
    union all
    select
        pool,
        symbol,
        sell_start_e18,
        1,
        null,
        {
            'seq': sell_seq, 'start_e18': sell_start_e18, 'matched_e18': matched_e18, 'quantity_e18': quantity_out_e18,
            'proceeds_e12': proceeds_e12, 'matched_proceeds_e12': matched_proceeds_e12
        }
    from sells
),

-- Where a lot and a sell start at the same point, the first of the two rows has a zero-length
-- segment and is dropped, the second sees both.
located as (
    select
        pool,
        symbol,
        x_e18,
        kind,
        last_value(lot ignore nulls) over w as lot,
        last_value(sell ignore nulls) over w as sell,
        lead(x_e18) over w as next_x_e18,
        lead(kind) over w as next_kind
    from breakpoints
    window w as (partition by pool, symbol order by x_e18, kind rows between unbounded preceding and current row)
),

-- Past the last breakpoint, and past the end of the last sell (lots bought after every matched
-- unit), the matched quantity ends: kind 2. Breakpoints from there on have no segment.
ends as (
    select
        * exclude (next_x_e18, next_kind),
        case when next_x_e18 is null or next_x_e18 > sell.start_e18 + sell.matched_e18 then sell.start_e18 + sell.matched_e18 else next_x_e18 end as next_x_e18,
        case when next_x_e18 is null or next_x_e18 > sell.start_e18 + sell.matched_e18 then 2 else next_kind end as next_kind
    from located
),

-- A segment [x, next x) of one lot and one sell. At its start, a lot start is at 0 along its lot
-- and somewhere along the sell (and a sell start the other way round), at its end, the next lot's
-- start is the end of this lot (cost in full) and somewhere along this sell, the next sell's start
-- is the end of this sell (its matched proceeds in full) and somewhere along this lot, and the end
-- of the matched quantity (kind 2) is the end of this sell and somewhere along this lot. So each
-- end needs one fraction: of the sell's quantity at a lot start, of the lot's units otherwise.
segments as (
    select
        pool,
        symbol,
        x_e18,
        kind,
        next_x_e18,
        next_kind,
        lot.seq as lot_seq,
        lot.cost_e12 as lot_cost_e12,
        sell.seq as sell_seq,
        sell.proceeds_e12 as sell_proceeds_e12,
        sell.matched_proceeds_e12 as sell_matched_proceeds_e12,
        -- The fractions o / units and o / quantity at both ends, in six steps of long division (a
        -- step per CTE keeps every expression on columns, see exact_fraction_start), 0 and 1 exactly at ends.
        case when kind = 0
            then exact_fraction_start(x_e18 - sell.start_e18, sell.quantity_e18)
            else exact_fraction_start(x_e18 - lot.start_e18, lot.units_e18)
        end as start_fraction,
        case when next_kind = 0
            then exact_fraction_start(next_x_e18 - sell.start_e18, sell.quantity_e18)
            else exact_fraction_start(next_x_e18 - lot.start_e18, lot.units_e18)
        end as end_fraction
    from ends
    where next_x_e18 > x_e18 and sell is not null
),

step_1 as (
    select * replace (exact_fraction_step(start_fraction) as start_fraction, exact_fraction_step(end_fraction) as end_fraction)
    from segments
),

step_2 as (
    select * replace (exact_fraction_step(start_fraction) as start_fraction, exact_fraction_step(end_fraction) as end_fraction)
    from step_1
),

step_3 as (
    select * replace (exact_fraction_step(start_fraction) as start_fraction, exact_fraction_step(end_fraction) as end_fraction)
    from step_2
),

step_4 as (
    select * replace (exact_fraction_step(start_fraction) as start_fraction, exact_fraction_step(end_fraction) as end_fraction)
    from step_3
),

step_5 as (
    select * replace (exact_fraction_step(start_fraction) as start_fraction, exact_fraction_step(end_fraction) as end_fraction)
    from step_4
),

step_6 as (
    select * replace (exact_fraction_step(start_fraction) as start_fraction, exact_fraction_step(end_fraction) as end_fraction)
    from step_5
),

fractions as (
    select
        * exclude (start_fraction, end_fraction),
        exact_fraction_end(start_fraction) as start_fraction,
        exact_fraction_end(end_fraction) as end_fraction,
        case when kind = 0 then sell_proceeds_e12 else lot_cost_e12 end as start_amount_e12,
        case when next_kind = 0 then sell_proceeds_e12 else lot_cost_e12 end as end_amount_e12
    from step_6
),

-- K or P at both ends: the share of the lot's cost or the sell's proceeds up to that point.
cumulative as (
    select
        *,
        exact_mul_fraction(start_amount_e12, start_fraction) as start_share_e12,
        exact_mul_fraction(end_amount_e12, end_fraction) as end_share_e12
    from fractions
),

matches as (
    select
        pool,
        symbol,
        sell_seq,
        lot_seq,
        next_x_e18 - x_e18 as quantity_e18,
        case when next_kind = 0 then lot_cost_e12 else end_share_e12 end - case when kind = 0 then 0 else start_share_e12 end as cost_e12,
        case when next_kind = 0 then end_share_e12 else sell_matched_proceeds_e12 end - case when kind = 1 then 0 else start_share_e12 end as proceeds_e12
    from cumulative
),

unmatched as (
    select
        pool,
        symbol,
        event_seq as sell_seq,
        cast(null as bigint) as lot_seq,
        unmatched_e18 as quantity_e18,
        cast(null as hugeint) as cost_e12,
        proceeds_e12 - matched_proceeds_e12 as proceeds_e12
    from unmatched_sells
),

final as (
    select * from matches
    union all
    select * from unmatched
)

select * from final;

drop table fifo_frontier;
