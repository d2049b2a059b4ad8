-- Moving average: one row per trade when 'average' is a cost method; the inventory cost is zero
-- exactly when the inventory is empty (and no buy of zero units carried cost), never negative, and
-- rolls forward exactly: previous + cost of a buy - cost of a sell (each row is the one before it
-- and its event, int_spot_average_cost.ts). The previous row is the one of event_seq - 1 (int_spot_trades_numbered:
-- 1..n without gaps).
-- Checking what changed (docs/architecture.md "The incremental check"): the average cost's rows are
-- the trades' (same pool, symbol and event_seq, replaced from the same frontier), so the trades of the
-- changed partitions from the changed instant on, with their own rows and the one before the first of
-- each partition, are every row whose comparison can have changed. Those rows are read in one pass
-- over the average cost (its rows are in no order a filter could skip by).
with trades as (
    select t.pool, t.symbol, t.event_seq, t.side, t.inventory_e18, t.cost_e12
    from intermediate.int_spot_trades as t
    where list_contains((select any_value(cost_methods) from settings.reporting), 'average')
        and {{ changed(account: t.pool, symbol: t.symbol, at: t.event_at) }}
),

-- The trades' own rows, and the row before each partition's first trade.
wanted as (
    select pool, symbol, event_seq from trades
    union all
    select pool, symbol, min(event_seq) - 1 from trades group by pool, symbol
),

costs as (
    select a.pool, a.symbol, a.event_seq, a.cost_e12, a.inventory_cost_e12
    from intermediate.int_spot_average_cost as a
    semi join wanted as w on w.pool = a.pool and w.symbol = a.symbol and w.event_seq = a.event_seq
),

joined as (
    select
        t.pool, t.symbol, t.event_seq, t.side, t.inventory_e18, t.cost_e12 as bought_e12,
        a.cost_e12 as sold_e12, a.inventory_cost_e12,
        p.inventory_cost_e12 as previous_e12,
        a.event_seq is null as missing
    from trades as t
    left join costs as a on a.pool = t.pool and a.symbol = t.symbol and a.event_seq = t.event_seq
    left join costs as p on p.pool = t.pool and p.symbol = t.symbol and p.event_seq = t.event_seq - 1
)

select *
from joined
where missing
    or inventory_cost_e12 < 0
    or (inventory_e18 = 0 and inventory_cost_e12 <> 0)
    or coalesce(previous_e12, 0) + bought_e12 - coalesce(sold_e12, 0) <> inventory_cost_e12
