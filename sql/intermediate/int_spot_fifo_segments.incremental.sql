-- Incremental step of int_spot_fifo_segments (docs/plans/incremental-builds.md, "The contract"):
-- statements run in order inside the model's transaction, on its existing table.
-- A sell's segments depend only on the lots before it and on its own interval [MS(j-1), MS(j)),
-- and int_spot_trades keeps every row of a pending (pool, symbol) before from_at (with its
-- event_seq) and replaced the rows from from_at on. So, per pending (pool, symbol):
-- 1. fifo_frontier: first_seq, the first event at or after from_at (1 when from_at is null),
-- 2. the segments and unmatched rows of sells from first_seq on are deleted,
-- 3. they are recomputed by the model's own SQL (the model template below), reading only the trades from
--    first_seq on and the lots before it whose cumulative interval reaches the first replaced sell's
--    start, S0 (lot end cum_in_e18 > S0: the lot in which it starts, and every later lot). Every breakpoint at or after S0 is then the same as in a whole
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

-- The trades the model's own SQL needs for those sells: every row from first_seq on, and the lots
-- before it that reach S0.
create or replace temp table fifo_trades as
with replaced as (
    select t.*
    from intermediate.int_spot_trades as t
    inner join fifo_frontier as f on f.pool = t.pool and f.symbol = t.symbol
    where t.event_seq >= f.first_seq
),

-- S0: where the first replaced sell's matched quantity starts.
floors as (
    select pool, symbol, min(cum_out_e18 - cum_unmatched_e18 - (quantity_out_e18 - unmatched_e18)) as floor_e18
    from replaced
    where quantity_out_e18 - unmatched_e18 > 0
    group by pool, symbol
)

select * from replaced
union all
select t.*
from intermediate.int_spot_trades as t
inner join fifo_frontier as f on f.pool = t.pool and f.symbol = t.symbol
inner join floors as l on l.pool = t.pool and l.symbol = t.symbol
where t.event_seq < f.first_seq and t.units_in_e18 > 0 and t.cum_in_e18 > l.floor_e18;

insert into intermediate.int_spot_fifo_segments by name
select * from {{ model(intermediate.int_spot_trades -> temp.main.fifo_trades) }};

drop table fifo_trades;
drop table fifo_frontier;
