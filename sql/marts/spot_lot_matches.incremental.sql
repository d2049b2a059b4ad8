-- Incremental step of marts.spot_lot_matches (docs/plans/incremental-builds.md, "The contract"):
-- run inside the model's transaction instead of CREATE OR REPLACE, it leaves the table equal to a
-- whole rebuild.
-- What changed: each row of temp.main.model_pending says that rows at or after from_at (NULL: from
-- the beginning), up to to_at where it is not NULL, of an account ('*': every account, as pooling
-- 'universal' hands it on) and a symbol (NULL: every symbol) may have changed. The rows are keyed
-- by sell, and a sell's matches change only where its segments did: its parents replaced the
-- segments of the sells at or after their pool's frontier, and uk's of some sells before it (its
-- 30-day look-ahead), which they hand on as bounded rows (the model declares changeRanges, as
-- int_spot_lot_segments does): those sells are redone, not every sell since the first of them.
-- How: spot_lot_matches_frontier holds per (account, symbol) the ranges of the pending rows that
-- name it, for the pairs with a sell at or after the earliest of all (a filter on the instant, no
-- sort). Their rows of sells in a range are deleted and inserted again by the model's own SQL (the
-- model template of the INSERT below) reading, instead of the whole tables, those sells, their
-- segments and the lots those segments name (the only rows read before the frontier).
-- The pending rows are passed on unchanged, ranges and all.

create or replace temp table spot_lot_matches_scope as
select
    coalesce(account, '*') as account,
    coalesce(symbol, '*') as symbol,
    coalesce(from_at, cast('-infinity' as timestamptz)) as from_at,
    to_at
from temp.main.model_pending;

-- Constant instants (DuckDB reads only the row groups between them; it does not for a comparison
-- inside an OR): from the earliest open-ended row on (low), and from the earliest bounded row to
-- the latest end of one (bounded_low, bounded_high; on the 10M benchmark minutes of a day weeks
-- before the night, which a read from the earliest of all would take 25 days of rows with). Each
-- read below is one read from low on and one of the bounded window before low.
set variable spot_lot_matches_low = (select coalesce(min(from_at), cast('infinity' as timestamptz)) from temp.main.spot_lot_matches_scope where to_at is null);
set variable spot_lot_matches_bounded_low = (select coalesce(min(from_at), cast('infinity' as timestamptz)) from temp.main.spot_lot_matches_scope where to_at is not null);
set variable spot_lot_matches_bounded_high = (select coalesce(max(to_at), cast('-infinity' as timestamptz)) from temp.main.spot_lot_matches_scope where to_at is not null);

create or replace temp table spot_lot_matches_frontier as
with pairs as (
    select distinct account, symbol
    from marts.spot_lot_matches
    where sell_at >= getvariable('spot_lot_matches_low')
    union
    select distinct account, symbol
    from marts.spot_lot_matches
    where sell_at >= getvariable('spot_lot_matches_bounded_low') and sell_at <= getvariable('spot_lot_matches_bounded_high')
    union
    select distinct account, symbol
    from intermediate.int_spot_trades
    where side = 'sell' and event_at >= getvariable('spot_lot_matches_low')
    union
    select distinct account, symbol
    from intermediate.int_spot_trades
    where side = 'sell' and event_at >= getvariable('spot_lot_matches_bounded_low') and event_at <= getvariable('spot_lot_matches_bounded_high')
)

-- (a pair's ranges: of its own rows, of every account's rows of its symbol, of every symbol's of
-- its account, of everything's)
select distinct pairs.account, pairs.symbol, scope.from_at, scope.to_at
from pairs
inner join temp.main.spot_lot_matches_scope as scope
    on (scope.account = pairs.account or scope.account = '*') and (scope.symbol = pairs.symbol or scope.symbol = '*');

delete from marts.spot_lot_matches as m
using temp.main.spot_lot_matches_frontier as f
where m.sell_at >= getvariable('spot_lot_matches_low') and m.account = f.account and m.symbol = f.symbol
    and m.sell_at >= f.from_at and (f.to_at is null or m.sell_at <= f.to_at);

delete from marts.spot_lot_matches as m
using temp.main.spot_lot_matches_frontier as f
where m.sell_at >= getvariable('spot_lot_matches_bounded_low') and m.sell_at <= getvariable('spot_lot_matches_bounded_high') and m.sell_at < getvariable('spot_lot_matches_low')
    and m.account = f.account and m.symbol = f.symbol and m.sell_at >= f.from_at and (f.to_at is null or m.sell_at <= f.to_at);

-- The sells whose rows are replaced: the columns of int_spot_trades the model reads (12 of its 24,
-- leaving out 12 of its 13 amounts), here and in spot_lot_matches_trades below.
create or replace temp table spot_lot_matches_sells as
with trades as (
    select * from intermediate.int_spot_trades
    where side = 'sell' and event_at >= getvariable('spot_lot_matches_low')
    union all
    select * from intermediate.int_spot_trades
    where side = 'sell' and event_at >= getvariable('spot_lot_matches_bounded_low') and event_at <= getvariable('spot_lot_matches_bounded_high')
        and event_at < getvariable('spot_lot_matches_low')
)

select t.pool, t.account, t.symbol, t.event_seq, t.base_coin, t.quote_coin, t.fill_id, t.side, t.event_at, t.event_date, t.lot_source, t.units_in_e18
from trades as t
semi join temp.main.spot_lot_matches_frontier as f
    on f.account = t.account and f.symbol = t.symbol and t.event_at >= f.from_at and (f.to_at is null or t.event_at <= f.to_at);

-- The rows of a segments table (by sell_at) in the two windows.
create or replace temp macro spot_lot_matches_windows(segments) as table
    select * from query_table(segments)
    where sell_at >= getvariable('spot_lot_matches_low')
    union all
    select * from query_table(segments)
    where sell_at >= getvariable('spot_lot_matches_bounded_low') and sell_at <= getvariable('spot_lot_matches_bounded_high') and sell_at < getvariable('spot_lot_matches_low');

create or replace temp table spot_lot_matches_fifo_segments as
select s.*
from spot_lot_matches_windows('intermediate.int_spot_fifo_segments') as s
semi join temp.main.spot_lot_matches_sells as sell on sell.pool = s.pool and sell.symbol = s.symbol and sell.event_seq = s.sell_seq;

create or replace temp table spot_lot_matches_lot_segments as
select s.*
from spot_lot_matches_windows('intermediate.int_spot_lot_segments') as s
semi join temp.main.spot_lot_matches_sells as sell on sell.pool = s.pool and sell.symbol = s.symbol and sell.event_seq = s.sell_seq;

-- The lots those segments name, once each: with their instant where a FIFO segment gives it.
create or replace temp table spot_lot_matches_lots as
select pool, symbol, lot_seq, max(lot_at) as lot_at
from (
    select pool, symbol, lot_seq, lot_at from temp.main.spot_lot_matches_fifo_segments where lot_seq is not null
    union all
    select pool, symbol, lot_seq, cast(null as timestamptz) from temp.main.spot_lot_matches_lot_segments where lot_seq is not null
)
group by pool, symbol, lot_seq;

-- The instants of the others (the lots of the other methods' segments), from reads of four narrow
-- columns: first the trades of the 40 days before the open-ended frontier, where a night's lots
-- nearly all are (lifo's latest, uk's of the 30 days around its sells; on the 10M benchmark's
-- night every one), and those of the 40 days before the bounded window to its end, then the
-- opening lots (no instant: only row groups holding a null are read), then, only for lots still
-- not found (hifo's dearest may be years old), every trade before those 40 days.
set variable spot_lot_matches_recent = getvariable('spot_lot_matches_low') - interval 40 day;
set variable spot_lot_matches_bounded_recent = getvariable('spot_lot_matches_bounded_low') - interval 40 day;

create or replace temp table spot_lot_matches_lot_keys as
select pool, symbol, lot_seq, lot_at from temp.main.spot_lot_matches_lots where lot_at is not null
union all
select t.pool, t.symbol, t.event_seq, t.event_at
from (
    select pool, symbol, event_seq, event_at from intermediate.int_spot_trades where event_at >= getvariable('spot_lot_matches_recent')
    union all
    select pool, symbol, event_seq, event_at from intermediate.int_spot_trades
    where event_at >= getvariable('spot_lot_matches_bounded_recent') and event_at <= getvariable('spot_lot_matches_bounded_high') and event_at < getvariable('spot_lot_matches_recent')
) as t
semi join (select * from temp.main.spot_lot_matches_lots where lot_at is null) as s
    on s.pool = t.pool and s.symbol = t.symbol and s.lot_seq = t.event_seq
union all
select t.pool, t.symbol, t.event_seq, t.event_at
from (select pool, symbol, event_seq, event_at from intermediate.int_spot_trades where event_at is null) as t
semi join (select * from temp.main.spot_lot_matches_lots where lot_at is null) as s
    on s.pool = t.pool and s.symbol = t.symbol and s.lot_seq = t.event_seq;

set variable spot_lot_matches_lots_older = (
    select count(*) > 0
    from temp.main.spot_lot_matches_lots as l
    anti join temp.main.spot_lot_matches_lot_keys as k on k.pool = l.pool and k.symbol = l.symbol and k.lot_seq = l.lot_seq
);

insert into temp.main.spot_lot_matches_lot_keys
select t.pool, t.symbol, t.event_seq, t.event_at
from (select pool, symbol, event_seq, event_at from intermediate.int_spot_trades where event_at < getvariable('spot_lot_matches_recent')) as t
semi join (
    select l.* from temp.main.spot_lot_matches_lots as l
    anti join temp.main.spot_lot_matches_lot_keys as k on k.pool = l.pool and k.symbol = l.symbol and k.lot_seq = l.lot_seq
) as s on s.pool = t.pool and s.symbol = t.symbol and s.lot_seq = t.event_seq
where getvariable('spot_lot_matches_lots_older');

-- Their whole rows, read by their instants (rows_at_instants_sql: a lifo or hifo lot may be years
-- old, a FIFO one months); the opening lots where event_at is null.
set variable spot_lot_matches_lots_query = (select rows_at_instants_sql('intermediate.int_spot_trades', 'event_at', list(lot_at)) from temp.main.spot_lot_matches_lot_keys);

-- Those sells and the lots their segments name (before the frontier too: a sell takes from old lots).
create or replace temp table spot_lot_matches_trades as
from temp.main.spot_lot_matches_sells
union all
select t.pool, t.account, t.symbol, t.event_seq, t.base_coin, t.quote_coin, t.fill_id, t.side, t.event_at, t.event_date, t.lot_source, t.units_in_e18
from query(getvariable('spot_lot_matches_lots_query')) as t
semi join temp.main.spot_lot_matches_lot_keys as k on k.pool = t.pool and k.symbol = t.symbol and k.lot_seq = t.event_seq
where t.units_in_e18 > 0;

insert into marts.spot_lot_matches by name
{{ model(intermediate.int_spot_trades -> temp.main.spot_lot_matches_trades, intermediate.int_spot_fifo_segments -> temp.main.spot_lot_matches_fifo_segments, intermediate.int_spot_lot_segments -> temp.main.spot_lot_matches_lot_segments) }};

drop table temp.main.spot_lot_matches_trades;
drop table temp.main.spot_lot_matches_lot_keys;
drop table temp.main.spot_lot_matches_lots;
drop table temp.main.spot_lot_matches_lot_segments;
drop table temp.main.spot_lot_matches_fifo_segments;
drop table temp.main.spot_lot_matches_sells;
drop table temp.main.spot_lot_matches_frontier;
drop table temp.main.spot_lot_matches_scope;
drop macro table temp.main.spot_lot_matches_windows;
reset variable spot_lot_matches_low;
reset variable spot_lot_matches_lots_query;
reset variable spot_lot_matches_recent;
reset variable spot_lot_matches_bounded_low;
reset variable spot_lot_matches_bounded_high;
reset variable spot_lot_matches_bounded_recent;
reset variable spot_lot_matches_lots_older;
