-- Incremental step of int_spot_fifo_segments (docs/plans/incremental-builds.md, "The contract"):
-- statements run in order inside the model's transaction, on its existing table.
-- A sell's segments depend only on the lots before it and on its own interval [MS(j-1), MS(j)),
-- and int_spot_trades keeps every row of a pending (pool, symbol) before from_at (with its
-- event_seq) and replaced the rows from from_at on (the whole partition where from_at is null). So,
-- per pending (pool, symbol):
-- 1. fifo_named: its from_at (the earliest of the pending rows naming it);
-- 2. the segments and unmatched rows of sells at or after from_at are deleted;
-- 3. they are recomputed by the model's own SQL (the model template below), reading only the trades from
--    from_at on and the lots before it whose cumulative interval reaches the first replaced sell's
--    start, S0 (lot end cum_in_e18 > S0: the lot in which it starts, and every later lot up to the
--    end of the last sell's matched quantity, S1). Every
--    breakpoint at or after S0 is then the same as in a whole build, with the same last lot and last
--    sell before it, the one before S0 (the start of the lot containing S0) has no sell yet and gives
--    no segment. So the rows equal a whole build's.
-- Every read is bounded by a constant instant where it can be (DuckDB then skips the row groups
-- before it instead of reading the whole history): the trades and segments from the earliest
-- from_at on, the lots from the instant of the lot that the last kept segment takes from (the lot
-- containing S0: every lot reaching S0 is at or after it; four narrow columns of them, the whole
-- rows then by their instants), found among the sells of the 35 days
-- before the earliest from_at, or, for a partition idle that long, in the whole table (a read that a
-- constant false skips otherwise).
-- The pending rows are passed on unchanged: rows of sells before from_at are untouched.
set variable fifo_wildcards = (select count(*) > 0 from temp.main.model_pending where account is null or account = '*' or symbol is null);

create or replace temp table fifo_named as
with pending as (
    select account, symbol, from_at from temp.main.model_pending
),

-- A pending row names an account (its pool: '*' under pooling 'universal') and a symbol; account
-- '*' or null names every pool, symbol null every symbol: those (rare) read the partitions there are.
named as (
    select case when r.pooling = 'universal' then '*' else p.account end as pool, p.symbol, p.from_at
    from pending as p
    cross join (select any_value(pooling) as pooling from settings.reporting) as r
    where p.account is not null and p.account <> '*' and p.symbol is not null
),

partitions as (
    select distinct pool, symbol from intermediate.int_spot_trades where getvariable('fifo_wildcards') and event_seq = 1
    union
    select distinct pool, symbol from intermediate.int_spot_fifo_segments where getvariable('fifo_wildcards')
),

wildcards as (
    select s.pool, s.symbol, p.from_at
    from partitions as s
    inner join pending as p
        on (p.account is null or p.account = '*' or p.account = s.pool or s.pool = '*') and (p.symbol is null or p.symbol = s.symbol)
    where p.account is null or p.account = '*' or p.symbol is null
),

requested as (
    select * from named
    union all
    select * from wildcards
)

select pool, symbol, case when bool_or(from_at is null) then null else min(from_at) end as from_at
from requested
group by pool, symbol;

set variable fifo_whole = (select count(*) > 0 from fifo_named where from_at is null);
set variable fifo_low = (select min(from_at) from fifo_named);

delete from intermediate.int_spot_fifo_segments as s
using fifo_named as f
where getvariable('fifo_whole') and s.pool = f.pool and s.symbol = f.symbol and f.from_at is null;

delete from intermediate.int_spot_fifo_segments as s
using fifo_named as f
where s.sell_at >= getvariable('fifo_low') and s.pool = f.pool and s.symbol = f.symbol and s.sell_at >= f.from_at;

-- The last kept sell with a matched part, per partition with a from_at: in the 35 days before the
-- earliest from_at, then (idle partitions) anywhere before it.
create or replace temp table fifo_last_sell as
select s.pool, s.symbol, max(s.sell_seq) as sell_seq, max(s.sell_at) as sell_at
from intermediate.int_spot_fifo_segments as s
inner join fifo_named as f on f.pool = s.pool and f.symbol = s.symbol
where s.sell_at >= getvariable('fifo_low') - interval 35 day and s.sell_at < f.from_at and s.lot_seq is not null
group by s.pool, s.symbol;

set variable fifo_idle = (
    select count(*) > 0 from fifo_named as f anti join fifo_last_sell as l on l.pool = f.pool and l.symbol = f.symbol
    where f.from_at is not null
);

insert into fifo_last_sell
select s.pool, s.symbol, max(s.sell_seq), max(s.sell_at)
from intermediate.int_spot_fifo_segments as s
inner join (
    select f.* from fifo_named as f anti join fifo_last_sell as l on l.pool = f.pool and l.symbol = f.symbol
) as f on f.pool = s.pool and f.symbol = s.symbol
where getvariable('fifo_idle') and s.sell_at < f.from_at and s.lot_seq is not null
group by s.pool, s.symbol;

-- The lot that sell took from last (the lot containing S0), and its instant (null: an opening lot).
set variable fifo_last_sell_low = (select min(sell_at) from fifo_last_sell);

create or replace temp table fifo_lot_from as
select s.pool, s.symbol, max(s.lot_seq) as lot_seq, arg_max(s.lot_at, s.lot_seq) as lot_at
from intermediate.int_spot_fifo_segments as s
inner join fifo_last_sell as l on l.pool = s.pool and l.symbol = s.symbol and l.sell_seq = s.sell_seq
where s.sell_at >= getvariable('fifo_last_sell_low') and s.lot_seq is not null
group by s.pool, s.symbol;

-- Partitions whose lots are read from their beginning: the lot containing S0 is an opening lot, or
-- no sell before from_at took from a lot.
set variable fifo_lots_all = (
    select count(*) > 0 from fifo_named as f left join fifo_lot_from as b on b.pool = f.pool and b.symbol = f.symbol
    where f.from_at is not null and b.lot_at is null
);
set variable fifo_lots_low = (select min(lot_at) from fifo_lot_from);

-- The trades the model's own SQL needs for those sells (the 13 columns of int_spot_trades it reads,
-- of 24): every row from from_at on, and the lots before it that reach S0.
create or replace temp table fifo_replaced as
select t.pool, t.symbol, t.event_seq, t.event_at, t.units_in_e18, t.cost_e12, t.cum_in_e18, t.quantity_out_e18, t.unmatched_e18, t.cum_out_e18, t.cum_unmatched_e18, t.proceeds_e12, t.matched_proceeds_e12
from intermediate.int_spot_trades as t
inner join fifo_named as f on f.pool = t.pool and f.symbol = t.symbol
where getvariable('fifo_whole') and f.from_at is null
union all
select t.pool, t.symbol, t.event_seq, t.event_at, t.units_in_e18, t.cost_e12, t.cum_in_e18, t.quantity_out_e18, t.unmatched_e18, t.cum_out_e18, t.cum_unmatched_e18, t.proceeds_e12, t.matched_proceeds_e12
from intermediate.int_spot_trades as t
inner join fifo_named as f on f.pool = t.pool and f.symbol = t.symbol
where t.event_at >= getvariable('fifo_low') and t.event_at >= f.from_at;

-- S0 (floor_e18): where the first replaced sell's matched quantity starts; S1 (ceiling_e18): where
-- the last one's ends. A lot starting after S1 gives no segment (past the end of the matched
-- quantity, the breakpoint before it ends at S1 either way), so only the lots reaching into
-- [S0, S1] are read.
create or replace temp table fifo_floors as
select
    r.pool,
    r.symbol,
    f.from_at,
    min(r.cum_out_e18 - r.cum_unmatched_e18 - (r.quantity_out_e18 - r.unmatched_e18)) as floor_e18,
    max(r.cum_out_e18 - r.cum_unmatched_e18) as ceiling_e18
from fifo_replaced as r
inner join fifo_named as f on f.pool = r.pool and f.symbol = r.symbol
where r.quantity_out_e18 - r.unmatched_e18 > 0 and f.from_at is not null
group by r.pool, r.symbol, f.from_at;

-- Those lots are found by their key first, reading only the few columns that select them: the
-- range from the earliest partition's lot on (months, where one partition's FIFO frontier is old)
-- would otherwise decode every column of every row in it (8 of the 30M history's 11 s night step).
-- Their whole rows are then read by their instants (rows_at_instants_sql; an opening lot has none)
-- and kept where pool, symbol and event_seq match a key.
create or replace temp table fifo_lot_keys as
select t.pool, t.symbol, t.event_seq, t.event_at
from intermediate.int_spot_trades as t
inner join fifo_floors as l on l.pool = t.pool and l.symbol = t.symbol
inner join fifo_lot_from as b on b.pool = t.pool and b.symbol = t.symbol
where t.event_at >= getvariable('fifo_lots_low') and b.lot_at is not null
    and t.event_at < l.from_at and t.units_in_e18 > 0 and t.cum_in_e18 > l.floor_e18
    and t.cum_in_e18 - t.units_in_e18 <= l.ceiling_e18
union all
select t.pool, t.symbol, t.event_seq, t.event_at
from intermediate.int_spot_trades as t
inner join fifo_floors as l on l.pool = t.pool and l.symbol = t.symbol
anti join (select * from fifo_lot_from where lot_at is not null) as b on b.pool = t.pool and b.symbol = t.symbol
where getvariable('fifo_lots_all')
    and (t.lot_source = 'opening' or t.event_at < l.from_at) and t.units_in_e18 > 0 and t.cum_in_e18 > l.floor_e18
    and t.cum_in_e18 - t.units_in_e18 <= l.ceiling_e18;

set variable fifo_lots_query = (select rows_at_instants_sql('intermediate.int_spot_trades', 'event_at', list(event_at)) from fifo_lot_keys);

create or replace temp table fifo_trades as
select * from fifo_replaced
union all
select t.pool, t.symbol, t.event_seq, t.event_at, t.units_in_e18, t.cost_e12, t.cum_in_e18, t.quantity_out_e18, t.unmatched_e18, t.cum_out_e18, t.cum_unmatched_e18, t.proceeds_e12, t.matched_proceeds_e12
from query(getvariable('fifo_lots_query')) as t
semi join fifo_lot_keys as k on k.pool = t.pool and k.symbol = t.symbol and k.event_seq = t.event_seq;

insert into intermediate.int_spot_fifo_segments by name
select * from {{ model(intermediate.int_spot_trades -> temp.main.fifo_trades) }};

drop table fifo_trades;
drop table fifo_lot_keys;
drop table fifo_floors;
drop table fifo_replaced;
drop table fifo_lot_from;
drop table fifo_last_sell;
drop table fifo_named;
reset variable fifo_wildcards;
reset variable fifo_whole;
reset variable fifo_low;
reset variable fifo_idle;
reset variable fifo_last_sell_low;
reset variable fifo_lots_all;
reset variable fifo_lots_low;
reset variable fifo_lots_query;
