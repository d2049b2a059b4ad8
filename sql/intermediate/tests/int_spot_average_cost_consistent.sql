-- Moving average: one row per trade when 'average' is a cost method; the inventory cost is zero
-- exactly when the inventory is empty (and no buy of zero units carried cost), never negative, and
-- rolls forward exactly: previous + cost of a buy - cost of a sell (each row is the one before it
-- and its event, int_spot_average_cost.ts). The previous row is the one of event_seq - 1 (int_spot_trades_numbered:
-- 1..n without gaps).
-- Checking what changed (docs/architecture.md "The incremental check"): the average cost's rows are
-- the trades' (same pool, symbol and event_seq, replaced from the same frontier), so the trades of the
-- changed partitions from the changed instant on, with their own rows and the one before the first of
-- each partition, are every row whose comparison can have changed. An average cost row has its
-- trade's instant (the test checks it), so those rows are at or after the earliest instant of the
-- changed trades and of the trades before them: a constant, set first, that DuckDB skips the older
-- row groups by (on the 10M benchmark's night 0.2 s, where a probe of every row's key took 2.3 s);
-- the rows of opening lots (no instant) are read besides.
set variable int_spot_average_cost_consistent_from = (
    with firsts as (
        select t.pool, t.symbol, min(t.event_seq) - 1 as before_seq, min(t.event_at) as first_at
        from intermediate.int_spot_trades as t
        where {{ changed(account: t.pool, symbol: t.symbol, at: t.event_at) }}
        group by all
    )

    select coalesce(least(min(f.first_at), min(b.event_at)), 'infinity'::timestamptz)
    from firsts as f
    left join intermediate.int_spot_trades as b on b.pool = f.pool and b.symbol = f.symbol and b.event_seq = f.before_seq
);

with trades as (
    select t.pool, t.symbol, t.event_seq, t.event_at, t.side, t.inventory_e18, t.cost_e12
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
    select a.pool, a.symbol, a.event_seq, a.event_at, a.cost_e12, a.inventory_cost_e12
    from (
        select * from intermediate.int_spot_average_cost where event_at >= getvariable('int_spot_average_cost_consistent_from')
        union all
        select * from intermediate.int_spot_average_cost where event_at is null
    ) as a
    semi join wanted as w on w.pool = a.pool and w.symbol = a.symbol and w.event_seq = a.event_seq
),

joined as (
    select
        t.pool, t.symbol, t.event_seq, t.side, t.inventory_e18, t.cost_e12 as bought_e12,
        a.cost_e12 as sold_e12, a.inventory_cost_e12,
        p.inventory_cost_e12 as previous_e12,
        a.event_seq is null as missing,
        a.event_at is distinct from t.event_at as moved
    from trades as t
    left join costs as a on a.pool = t.pool and a.symbol = t.symbol and a.event_seq = t.event_seq
    left join costs as p on p.pool = t.pool and p.symbol = t.symbol and p.event_seq = t.event_seq - 1
)

select *
from joined
where missing
    or moved
    or inventory_cost_e12 < 0
    or (inventory_e18 = 0 and inventory_cost_e12 <> 0)
    or coalesce(previous_e12, 0) + bought_e12 - coalesce(sold_e12, 0) <> inventory_cost_e12
