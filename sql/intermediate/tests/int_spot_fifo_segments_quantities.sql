-- FIFO balances: per sell, matched quantity + unmatched quantity = quantity sold and matched +
-- unmatched proceeds = proceeds; per lot, units consumed <= units bought, and a lot consumed in full
-- has given exactly its cost (its shares telescope). Built only when 'fifo' is a cost method.
with trades as (
    select t.* from intermediate.int_spot_trades as t
    where list_contains((select any_value(cost_methods) from settings.reporting), 'fifo')
),

by_sell as (
    select pool, symbol, sell_seq, sum(quantity_e18) as quantity_e18, sum(proceeds_e12) as proceeds_e12,
        sum(quantity_e18) filter (where lot_seq is null) as unmatched_e18
    from intermediate.int_spot_fifo_segments
    group by all
),

by_lot as (
    select pool, symbol, lot_seq, sum(quantity_e18) as quantity_e18, sum(cost_e12) as cost_e12
    from intermediate.int_spot_fifo_segments
    where lot_seq is not null
    group by all
)

select 'sell' as kind, t.pool, t.symbol, t.event_seq, t.quantity_out_e18 as expected_e18, s.quantity_e18 as found_e18, t.proceeds_e12 as expected_e12, s.proceeds_e12 as found_e12
from trades as t
left join by_sell as s on s.pool = t.pool and s.symbol = t.symbol and s.sell_seq = t.event_seq
where t.side = 'sell'
    and (s.quantity_e18 is distinct from t.quantity_out_e18
        or s.proceeds_e12 is distinct from t.proceeds_e12
        or coalesce(s.unmatched_e18, 0) <> t.unmatched_e18)
union all
select 'lot', t.pool, t.symbol, t.event_seq, t.units_in_e18, l.quantity_e18, t.cost_e12, l.cost_e12
from trades as t
inner join by_lot as l on l.pool = t.pool and l.symbol = t.symbol and l.lot_seq = t.event_seq
where l.quantity_e18 > t.units_in_e18
    or (l.quantity_e18 = t.units_in_e18 and l.cost_e12 <> t.cost_e12)
