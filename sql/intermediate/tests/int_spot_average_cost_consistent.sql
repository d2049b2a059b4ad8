-- Moving average: one row per trade when 'average' is a cost method; the inventory cost is zero
-- exactly when the inventory is empty (and no buy of zero units carried cost), never negative, and
-- rolls forward: previous + cost of a buy - cost of a sell, within 1e-8 (the parallel scan rounds
-- each composed map to 1e-12).
with trades as (
    select t.* from intermediate.int_spot_trades as t
    where list_contains((select any_value(cost_methods) from settings.reporting), 'average')
),

joined as (
    select
        t.pool, t.symbol, t.event_seq, t.side, t.inventory_e18, t.cost_e12 as bought_e12,
        a.cost_e12 as sold_e12, a.inventory_cost_e12,
        lag(a.inventory_cost_e12) over (partition by t.pool, t.symbol order by t.event_seq) as previous_e12,
        a.event_seq is null as missing
    from trades as t
    left join intermediate.int_spot_average_cost as a on a.pool = t.pool and a.symbol = t.symbol and a.event_seq = t.event_seq
)

select *
from joined
where missing
    or inventory_cost_e12 < 0
    or (inventory_e18 = 0 and inventory_cost_e12 <> 0)
    or abs(coalesce(previous_e12, 0) + bought_e12 - coalesce(sold_e12, 0) - inventory_cost_e12) > 10000
