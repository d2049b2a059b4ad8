-- FIFO balances: per sell, matched quantity + unmatched quantity = quantity sold and matched +
-- unmatched proceeds = proceeds; per lot, units consumed <= units bought, and a lot consumed in full
-- has given exactly its cost (its shares telescope). Built only when 'fifo' is a cost method.
-- Checking what changed (docs/architecture.md "The incremental check"): a sell's trade and its
-- segments share the sell's partition and instant (event_at = sell_at), so the sells of the changed
-- partitions from the changed instant on are complete; a lot's segments come from sells of any time
-- after it, so every segment of a lot that a changed segment takes from is read ({{ changed_keys }});
-- a lot bought at or after the changed instant is taken from only by sells after it, changed too.
with fifo as (
    select list_contains(any_value(cost_methods), 'fifo') as built from settings.reporting
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
    select s.pool, s.symbol, s.lot_seq, sum(s.quantity_e18) as quantity_e18, sum(s.cost_e12) as cost_e12
    from intermediate.int_spot_fifo_segments as s
    {{ changed_keys(table: intermediate.int_spot_fifo_segments, alias: s, key: pool symbol lot_seq, account: pool, symbol: symbol, at: sell_at) }}
    where s.lot_seq is not null
        -- A lot is sold after it was bought: its segments lie at or after the earliest lot a changed
        -- segment takes from (checking everything, the earliest of all), which DuckDB's scan skips by.
        and s.sell_at >= (
            select min(c.lot_at) from intermediate.int_spot_fifo_segments as c
            where {{ changed(account: c.pool, symbol: c.symbol, at: c.sell_at) }}
        )
    group by all
)

select 'sell' as kind, t.pool, t.symbol, t.event_seq, t.quantity_out_e18 as expected_e18, s.quantity_e18 as found_e18, t.proceeds_e12 as expected_e12, s.proceeds_e12 as found_e12
from sells as t
left join by_sell as s on s.pool = t.pool and s.symbol = t.symbol and s.sell_seq = t.event_seq
where t.side = 'sell'
    and (s.quantity_e18 is distinct from t.quantity_out_e18
        or s.proceeds_e12 is distinct from t.proceeds_e12
        or coalesce(s.unmatched_e18, 0) <> t.unmatched_e18)
union all
select 'lot', t.pool, t.symbol, t.event_seq, t.units_in_e18, l.quantity_e18, t.cost_e12, l.cost_e12
from intermediate.int_spot_trades as t
inner join by_lot as l on l.pool = t.pool and l.symbol = t.symbol and l.lot_seq = t.event_seq
where (select built from fifo)
    and (l.quantity_e18 > t.units_in_e18 or (l.quantity_e18 = t.units_in_e18 and l.cost_e12 <> t.cost_e12))
