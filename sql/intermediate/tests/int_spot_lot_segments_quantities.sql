-- Lot-method balances (lifo, hifo, uk), per cost method: per sell, its parts add up to its quantity
-- and its proceeds exactly, and cost is known exactly where matched; per lot, units taken <= units
-- bought, and for lifo and hifo a lot consumed in full has given exactly its cost (uk costs a day's
-- buys as one acquisition, so a buy's parts carry the day's average cost).
-- Checking what changed (docs/architecture.md "The incremental check"): a sell's trade and its
-- segments share the sell's partition and instant (event_at = sell_at), so the sells of the changed
-- partitions from the changed instant on are complete; a lot's segments come from sells of any time
-- since it was bought, so every segment of a lot that a changed segment takes from is read
-- ({{ changed_keys }}). A lot bought at or after the changed instant is taken from by sells after it
-- (lifo, hifo: changed too) or by uk's sells of the 30 days before it, whose segments uk replays and
-- records where they came out different; one whose units changed while no segment taking from it
-- did is left to the full check. A lot whose segments were only removed gave less: it cannot fail.
-- A lot's segments are of sells after it (lifo, hifo) or at most 30 days before it (uk: a disposal
-- takes from the acquisitions of the 30 days after it; 32 days, for any time zone's days), which
-- the test checks too (kind 'sold_before_lot': a lot taken from by a sell more than 32 days before
-- it). The lots the changed segments take from are read in two ways, each by constants set first
-- that DuckDB skips row groups by (a subquery in the filter is not): those bought in the 40 days
-- before the earliest changed sell, with their segments from the earliest of their instants less 32
-- days (the night's lots, mostly); the older ones (an illiquid coin's lot of months ago sold
-- tonight; an opening lot, of no instant), few, by their keys, in every row group, which DuckDB
-- skips by the keys' range (the history is stored by partition). One bound for all of them, the
-- oldest lot's, read half of the 30M benchmark history's segments for one hifo lot of WXTUSDT
-- (13.9 s read cold, 1.0 s warm). A lot's instant is its trade's; which lots are older is told by
-- their numbers (event_seq follows the instant: a lot numbered below its partition's first trade
-- at or after the cut was bought before it). Checking everything, the earliest changed sell is the
-- first of all, and the older lots the opening ones and those bought 40 days before it: every
-- segment is read once.
set variable int_spot_lot_segments_quantities_cut = (
    select coalesce(min(s.sell_at), 'infinity'::timestamptz) - interval 40 day
    from intermediate.int_spot_lot_segments as s
    where s.lot_seq is not null and {{ changed(account: s.pool, symbol: s.symbol, at: s.sell_at) }}
);

-- Per partition, the number of its first trade at or after the cut.
set variable int_spot_lot_segments_quantities_cuts = (
    select coalesce(list({'pool': pool, 'symbol': symbol, 'seq': seq}), [])
    from (
        select pool, symbol, min(event_seq) as seq
        from intermediate.int_spot_trades
        where event_at >= getvariable('int_spot_lot_segments_quantities_cut')
        group by all
    )
);

set variable int_spot_lot_segments_quantities_old = (
    select coalesce(list(distinct {'pool': s.pool, 'symbol': s.symbol, 'cost_method': s.cost_method, 'lot_seq': s.lot_seq}), [])
    from intermediate.int_spot_lot_segments as s
    left join (select unnest(getvariable('int_spot_lot_segments_quantities_cuts'), recursive := true)) as c on c.pool = s.pool and c.symbol = s.symbol
    where s.lot_seq is not null and {{ changed(account: s.pool, symbol: s.symbol, at: s.sell_at) }}
        and (c.seq is null or s.lot_seq < c.seq)
);

-- The earliest instant of the other lots (a partition's lowest lot among them, found by its trade):
-- their trades are at or after it, their segments at or after it less 32 days.
set variable int_spot_lot_segments_quantities_from = (
    select coalesce(min(t.event_at), 'infinity'::timestamptz)
    from (
        select s.pool, s.symbol, min(s.lot_seq) as lot_seq
        from intermediate.int_spot_lot_segments as s
        inner join (select unnest(getvariable('int_spot_lot_segments_quantities_cuts'), recursive := true)) as c on c.pool = s.pool and c.symbol = s.symbol
        where s.lot_seq is not null and {{ changed(account: s.pool, symbol: s.symbol, at: s.sell_at) }}
            and s.lot_seq >= c.seq
        group by all
    ) as first_lot
    inner join intermediate.int_spot_trades as t on t.pool = first_lot.pool and t.symbol = first_lot.symbol and t.event_seq = first_lot.lot_seq
    where t.event_at >= getvariable('int_spot_lot_segments_quantities_cut')
);

with methods as (
    select unnest(list_filter(any_value(cost_methods), m -> m in ('lifo', 'hifo', 'uk'))) as cost_method
    from settings.reporting
),

old_lots as (
    select unnest(getvariable('int_spot_lot_segments_quantities_old'), recursive := true)
),

sells as (
    select t.*
    from intermediate.int_spot_trades as t
    where {{ changed(account: t.pool, symbol: t.symbol, at: t.event_at) }}
),

by_sell as (
    select pool, symbol, cost_method, sell_seq, sum(quantity_e18) as quantity_e18, sum(proceeds_e12) as proceeds_e12,
        count(*) filter (where (match_rule = 'unmatched') <> (cost_e12 is null) or quantity_e18 <= 0) as bad_rows
    from intermediate.int_spot_lot_segments as s
    where {{ changed(account: s.pool, symbol: s.symbol, at: s.sell_at) }}
    group by all
),

by_lot as (
    select s.pool, s.symbol, s.cost_method, s.lot_seq, sum(s.quantity_e18) as quantity_e18, sum(s.cost_e12) as cost_e12, min(s.sell_at) as first_sell_at
    from intermediate.int_spot_lot_segments as s
    {{ changed_keys(table: intermediate.int_spot_lot_segments, alias: s, key: pool symbol cost_method lot_seq, account: pool, symbol: symbol, at: sell_at) }}
    anti join old_lots as o on o.pool = s.pool and o.symbol = s.symbol and o.cost_method = s.cost_method and o.lot_seq = s.lot_seq
    where s.lot_seq is not null and s.sell_at >= getvariable('int_spot_lot_segments_quantities_from') - interval 32 day
    group by all
    union all
    select s.pool, s.symbol, s.cost_method, s.lot_seq, sum(s.quantity_e18), sum(s.cost_e12), min(s.sell_at)
    from intermediate.int_spot_lot_segments as s
    semi join old_lots as o on o.pool = s.pool and o.symbol = s.symbol and o.cost_method = s.cost_method and o.lot_seq = s.lot_seq
    group by all
),

-- The lots' trades: since the other lots' earliest instant (theirs, and more), and the older lots' by their keys.
lot_trades as (
    select * from intermediate.int_spot_trades where event_at >= getvariable('int_spot_lot_segments_quantities_from')
    union all
    select t.* from intermediate.int_spot_trades as t
    semi join (select distinct pool, symbol, lot_seq from old_lots) as o on o.pool = t.pool and o.symbol = t.symbol and o.lot_seq = t.event_seq
    where t.event_at < getvariable('int_spot_lot_segments_quantities_from') or t.event_at is null
)

select 'sell' as kind, t.pool, t.symbol, m.cost_method, t.event_seq, t.quantity_out_e18 as expected_e18, s.quantity_e18 as found_e18, t.proceeds_e12 as expected_e12, s.proceeds_e12 as found_e12
from sells as t
cross join methods as m
left join by_sell as s on s.pool = t.pool and s.symbol = t.symbol and s.cost_method = m.cost_method and s.sell_seq = t.event_seq
where t.side = 'sell' and t.quantity_out_e18 > 0
    and (s.quantity_e18 is distinct from t.quantity_out_e18 or s.proceeds_e12 is distinct from t.proceeds_e12 or s.bad_rows > 0)
union all
select case when l.first_sell_at < t.event_at - interval 32 day then 'sold_before_lot' else 'lot' end, t.pool, t.symbol, l.cost_method, t.event_seq, t.units_in_e18, l.quantity_e18, t.cost_e12, l.cost_e12
from lot_trades as t
inner join by_lot as l on l.pool = t.pool and l.symbol = t.symbol and l.lot_seq = t.event_seq
where l.quantity_e18 > t.units_in_e18
    or (l.cost_method <> 'uk' and l.quantity_e18 = t.units_in_e18 and l.cost_e12 <> t.cost_e12)
    or l.first_sell_at < t.event_at - interval 32 day
