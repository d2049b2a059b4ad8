-- FIFO balances: per sell, matched quantity + unmatched quantity = quantity sold and matched +
-- unmatched proceeds = proceeds; per lot, units consumed <= units bought, and a lot consumed in full
-- has given exactly its cost (its shares telescope). Built only when 'fifo' is a cost method.
-- Checking what changed (docs/architecture.md "The incremental check"): a sell's trade and its
-- segments share the sell's partition and instant (event_at = sell_at), so the sells of the changed
-- partitions from the changed instant on are complete; a lot's segments come from sells of any time
-- after it, so every segment of a lot that a changed segment takes from is read ({{ changed_keys }});
-- a lot bought at or after the changed instant is taken from only by sells after it, changed too.
-- A lot is sold after it was bought (the test checks it: kind 'sold_before_lot'), so a lot's
-- segments lie at or after its instant (lot_at). The lots the changed segments take from are read in
-- two ways, each by constants set first that DuckDB skips row groups by (a subquery in the filter is
-- not): those bought in the 40 days before the earliest changed sell, by the earliest of their
-- instants (the night's lots, mostly); the older ones (an illiquid coin's lot of months ago sold
-- tonight; an opening lot, of no instant; every lot a night sells from once the FIFO inventory is
-- older than 40 days) by their instants, a constant list DuckDB checks each row group's range of
-- lot_at (and of the trades' event_at) against, the history being stored by partition in sell
-- order, then by their keys. One bound for all of them, the oldest lot's, read half of the 30M
-- benchmark history's segments for one old lot of WXTUSDT (2.9 s read cold; 0.26 s warm); their keys
-- alone, over the whole table, took 1.6 s cold for the 26k lots, bought seven weeks before, that the
-- three-year history's night sells from. The test fails a segment whose lot_at is not its lot's
-- instant (kind 'lot_at'): a lot's segments are grouped by their lot_at too, so a wrong one is a
-- group of its own that its trade's instant does not match, or, for a lot read by that instant,
-- whose trade is not found there (an inner join dropped it: the check of what changed passed a
-- wrong lot_at of an older lot until 2026-11-30). (As two more aggregates, the earliest
-- and latest lot_at, the whole check of the 30M benchmark history ran out of memory: the
-- aggregate's state for its 14.3M lots did not fit in the 4GB limit.) Checking everything, the
-- earliest changed sell is the first of all, and the older lots the opening ones and those bought
-- 40 days before it: every segment is read once.
set variable int_spot_fifo_segments_quantities_cut = (
    select coalesce(min(c.sell_at), 'infinity'::timestamptz) - interval 40 day
    from intermediate.int_spot_fifo_segments as c
    where c.lot_seq is not null and {{ changed(account: c.pool, symbol: c.symbol, at: c.sell_at) }}
);

set variable int_spot_fifo_segments_quantities_old = (
    select coalesce(list(distinct {'pool': c.pool, 'symbol': c.symbol, 'lot_seq': c.lot_seq, 'lot_at': c.lot_at}), [])
    from intermediate.int_spot_fifo_segments as c
    where c.lot_seq is not null and {{ changed(account: c.pool, symbol: c.symbol, at: c.sell_at) }}
        and (c.lot_at is null or c.lot_at < getvariable('int_spot_fifo_segments_quantities_cut'))
);

-- The older lots' segments and trades, by their instants (queries for query(): constants).
set variable int_spot_fifo_segments_quantities_old_at = list_transform(getvariable('int_spot_fifo_segments_quantities_old'), l -> l.lot_at);

set variable int_spot_fifo_segments_quantities_old_segments = rows_at_instants_sql(
    'intermediate.int_spot_fifo_segments', 'lot_at', getvariable('int_spot_fifo_segments_quantities_old_at')
);

set variable int_spot_fifo_segments_quantities_old_trades = rows_at_instants_sql(
    'intermediate.int_spot_trades', 'event_at', getvariable('int_spot_fifo_segments_quantities_old_at')
);

-- The earliest of the other lots: their segments and trades are at or after it.
set variable int_spot_fifo_segments_quantities_from = (
    select coalesce(min(c.lot_at), 'infinity'::timestamptz)
    from intermediate.int_spot_fifo_segments as c
    where c.lot_seq is not null and {{ changed(account: c.pool, symbol: c.symbol, at: c.sell_at) }}
        and c.lot_at >= getvariable('int_spot_fifo_segments_quantities_cut')
);

with fifo as (
    select list_contains(any_value(cost_methods), 'fifo') as built from settings.reporting
),

old_lots as (
    select unnest(getvariable('int_spot_fifo_segments_quantities_old'), recursive := true)
),

sells as (
    select t.* from intermediate.int_spot_trades as t
    where (select built from fifo) and {{ changed(account: t.pool, symbol: t.symbol, at: t.event_at) }}
),

by_sell as (
    select pool, symbol, sell_seq, sum(quantity_e18) as quantity_e18, sum(proceeds_e12) as proceeds_e12,
        sum(quantity_e18) filter (where lot_seq is null) as unmatched_e18
    from intermediate.int_spot_fifo_segments as s
    where {{ changed(account: s.pool, symbol: s.symbol, at: s.sell_at) }}
    group by all
),

by_lot as (
    select s.pool, s.symbol, s.lot_seq, s.lot_at, sum(s.quantity_e18) as quantity_e18, sum(s.cost_e12) as cost_e12, min(s.sell_at) as first_sell_at
    from intermediate.int_spot_fifo_segments as s
    {{ changed_keys(table: intermediate.int_spot_fifo_segments, alias: s, key: pool symbol lot_seq, account: pool, symbol: symbol, at: sell_at) }}
    anti join old_lots as o on o.pool = s.pool and o.symbol = s.symbol and o.lot_seq = s.lot_seq
    where s.lot_seq is not null and s.sell_at >= getvariable('int_spot_fifo_segments_quantities_from')
    group by all
    union all
    select s.pool, s.symbol, s.lot_seq, s.lot_at, sum(s.quantity_e18), sum(s.cost_e12), min(s.sell_at)
    from query(getvariable('int_spot_fifo_segments_quantities_old_segments')) as s
    semi join old_lots as o on o.pool = s.pool and o.symbol = s.symbol and o.lot_seq = s.lot_seq
    group by all
),

-- The lots' trades: since the bound (the recent lots', and more), and the older lots' by their keys.
lot_trades as (
    select * from intermediate.int_spot_trades where event_at >= getvariable('int_spot_fifo_segments_quantities_from')
    union all
    select t.* from query(getvariable('int_spot_fifo_segments_quantities_old_trades')) as t
    semi join old_lots as o on o.pool = t.pool and o.symbol = t.symbol and o.lot_seq = t.event_seq
    where t.event_at < getvariable('int_spot_fifo_segments_quantities_from') or t.event_at is null
)

select 'sell' as kind, t.pool, t.symbol, t.event_seq, t.quantity_out_e18 as expected_e18, s.quantity_e18 as found_e18, t.proceeds_e12 as expected_e12, s.proceeds_e12 as found_e12
from sells as t
left join by_sell as s on s.pool = t.pool and s.symbol = t.symbol and s.sell_seq = t.event_seq
where t.side = 'sell'
    and (s.quantity_e18 is distinct from t.quantity_out_e18
        or s.proceeds_e12 is distinct from t.proceeds_e12
        or coalesce(s.unmatched_e18, 0) <> t.unmatched_e18)
union all
select
    case
        when t.event_seq is null or l.lot_at is distinct from t.event_at then 'lot_at'
        when l.first_sell_at < t.event_at then 'sold_before_lot'
        else 'lot'
    end,
    l.pool, l.symbol, l.lot_seq, t.units_in_e18, l.quantity_e18, t.cost_e12, l.cost_e12
from by_lot as l
-- (a lot whose trade is not read is not at its lot_at: the trades are read by the lots' instants)
left join lot_trades as t on t.pool = l.pool and t.symbol = l.symbol and t.event_seq = l.lot_seq
where (select built from fifo)
    and (t.event_seq is null or l.lot_at is distinct from t.event_at
        or l.quantity_e18 > t.units_in_e18 or (l.quantity_e18 = t.units_in_e18 and l.cost_e12 <> t.cost_e12) or l.first_sell_at < t.event_at)
