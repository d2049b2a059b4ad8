-- FIFO lot matches: one row per (sell, lot) pair whose quantity intervals overlap, plus one row per
-- sell part beyond the inventory (lot_seq null). Built only when 'fifo' is a reporting cost method.
-- Key: (pool, symbol, sell_seq, lot_seq). sell_at and lot_at: the sell's and the lot's instants (null for an
-- opening lot), so that an incremental step finds the rows of recent sells and lots without reading the
-- whole table (DuckDB skips the row groups a constant bound on them excludes). Input: intermediate.int_spot_trades, settings.reporting.
-- Lot i holds the cumulative units [B(i-1), B(i)) of all buys; the matched part of sell j takes the
-- cumulative matched quantity [MS(j-1), MS(j)). Inventory never goes below zero, so MS(j) <= B at
-- the time of j, and matching unit for unit in cumulative order is FIFO. Every lot start and sell
-- start is a breakpoint: sorted together (one window), each breakpoint finds the lot and the sell it
-- falls in as the last ones started, and each segment runs to the next breakpoint. A share of a
-- lot's cost is read off its cumulative cost function K(o) = cost * o / units at both ends of a
-- segment (exact_share), so the shares of a lot consumed in full add up to its cost exactly;
-- proceeds are shared the same way along the sell. No step is quadratic.
-- Three reads of int_spot_trades, each with its filter (one shared CTE would be kept in memory whole).
with lots as (
    select pool, symbol, event_seq as lot_seq, event_at as lot_at, cum_in_e18 - units_in_e18 as lot_start_e18, units_in_e18, cost_e12
    from intermediate.int_spot_trades
    where units_in_e18 > 0
        and list_contains((select any_value(cost_methods) from settings.reporting), 'fifo')
),

sells as (
    select
        pool,
        symbol,
        event_seq as sell_seq,
        event_at as sell_at,
        cum_out_e18 - cum_unmatched_e18 - (quantity_out_e18 - unmatched_e18) as sell_start_e18,
        quantity_out_e18 - unmatched_e18 as matched_e18,
        quantity_out_e18,
        proceeds_e12,
        matched_proceeds_e12
    from intermediate.int_spot_trades
    where quantity_out_e18 - unmatched_e18 > 0
        and list_contains((select any_value(cost_methods) from settings.reporting), 'fifo')
),

unmatched_sells as (
    select pool, symbol, event_seq, event_at, unmatched_e18, proceeds_e12, matched_proceeds_e12
    from intermediate.int_spot_trades
    where unmatched_e18 > 0
        and list_contains((select any_value(cost_methods) from settings.reporting), 'fifo')
),

-- Breakpoints: kind 0 a lot start, kind 1 a sell start. The first lot and the first sell both
-- start at 0, so every breakpoint after the first has a lot and a sell before it (a symbol without
-- a matched sell has no segment).
breakpoints as (
    select
        pool,
        symbol,
        lot_start_e18 as x_e18,
        0 as kind,
        {'seq': lot_seq, 'instant': lot_at, 'start_e18': lot_start_e18, 'units_e18': units_in_e18, 'cost_e12': cost_e12} as lot,
        cast(null as struct(seq bigint, instant timestamptz, start_e18 hugeint, matched_e18 hugeint, quantity_e18 hugeint, proceeds_e12 hugeint, matched_proceeds_e12 hugeint)) as sell
    from lots
    union all
    select
        pool,
        symbol,
        sell_start_e18,
        1,
        null,
        {
            'seq': sell_seq, 'instant': sell_at, 'start_e18': sell_start_e18, 'matched_e18': matched_e18, 'quantity_e18': quantity_out_e18,
            'proceeds_e12': proceeds_e12, 'matched_proceeds_e12': matched_proceeds_e12
        }
    from sells
),

-- Where a lot and a sell start at the same point, the first of the two rows has a zero-length
-- segment and is dropped; the second sees both.
located as (
    select
        pool,
        symbol,
        x_e18,
        kind,
        last_value(lot ignore nulls) over w as lot,
        last_value(sell ignore nulls) over w as sell,
        lead(x_e18) over w as next_x_e18,
        lead(kind) over w as next_kind
    from breakpoints
    window w as (partition by pool, symbol order by x_e18, kind rows between unbounded preceding and current row)
),

-- Past the last breakpoint, and past the end of the last sell (lots bought after every matched
-- unit), the matched quantity ends: kind 2. Breakpoints from there on have no segment.
ends as (
    select
        * exclude (next_x_e18, next_kind),
        case when next_x_e18 is null or next_x_e18 > sell.start_e18 + sell.matched_e18 then sell.start_e18 + sell.matched_e18 else next_x_e18 end as next_x_e18,
        case when next_x_e18 is null or next_x_e18 > sell.start_e18 + sell.matched_e18 then 2 else next_kind end as next_kind
    from located
),

-- A segment [x, next x) of one lot and one sell. At its start, a lot start is at 0 along its lot
-- and somewhere along the sell (and a sell start the other way round); at its end, the next lot's
-- start is the end of this lot (cost in full) and somewhere along this sell, the next sell's start
-- is the end of this sell (its matched proceeds in full) and somewhere along this lot, and the end
-- of the matched quantity (kind 2) is the end of this sell and somewhere along this lot. So each
-- end needs one fraction: of the sell's quantity at a lot start, of the lot's units otherwise.
segments as (
    select
        pool,
        symbol,
        x_e18,
        kind,
        next_x_e18,
        next_kind,
        lot.seq as lot_seq,
        lot.instant as lot_at,
        lot.cost_e12 as lot_cost_e12,
        sell.seq as sell_seq,
        sell.instant as sell_at,
        sell.proceeds_e12 as sell_proceeds_e12,
        sell.matched_proceeds_e12 as sell_matched_proceeds_e12,
        -- The fractions o / units and o / quantity at both ends, in six steps of long division (a
        -- step per CTE keeps every expression on columns, see exact_fraction_start), 0 and 1 exactly at ends.
        case when kind = 0
            then exact_fraction_start(x_e18 - sell.start_e18, sell.quantity_e18)
            else exact_fraction_start(x_e18 - lot.start_e18, lot.units_e18)
        end as start_fraction,
        case when next_kind = 0
            then exact_fraction_start(next_x_e18 - sell.start_e18, sell.quantity_e18)
            else exact_fraction_start(next_x_e18 - lot.start_e18, lot.units_e18)
        end as end_fraction
    from ends
    where next_x_e18 > x_e18 and sell is not null
),

step_1 as (
    select * replace (exact_fraction_step(start_fraction) as start_fraction, exact_fraction_step(end_fraction) as end_fraction)
    from segments
),

step_2 as (
    select * replace (exact_fraction_step(start_fraction) as start_fraction, exact_fraction_step(end_fraction) as end_fraction)
    from step_1
),

step_3 as (
    select * replace (exact_fraction_step(start_fraction) as start_fraction, exact_fraction_step(end_fraction) as end_fraction)
    from step_2
),

step_4 as (
    select * replace (exact_fraction_step(start_fraction) as start_fraction, exact_fraction_step(end_fraction) as end_fraction)
    from step_3
),

step_5 as (
    select * replace (exact_fraction_step(start_fraction) as start_fraction, exact_fraction_step(end_fraction) as end_fraction)
    from step_4
),

step_6 as (
    select * replace (exact_fraction_step(start_fraction) as start_fraction, exact_fraction_step(end_fraction) as end_fraction)
    from step_5
),

fractions as (
    select
        * exclude (start_fraction, end_fraction),
        exact_fraction_end(start_fraction) as start_fraction,
        exact_fraction_end(end_fraction) as end_fraction,
        case when kind = 0 then sell_proceeds_e12 else lot_cost_e12 end as start_amount_e12,
        case when next_kind = 0 then sell_proceeds_e12 else lot_cost_e12 end as end_amount_e12
    from step_6
),

-- K or P at both ends: the share of the lot's cost or the sell's proceeds up to that point.
cumulative as (
    select
        *,
        exact_mul_fraction(start_amount_e12, start_fraction) as start_share_e12,
        exact_mul_fraction(end_amount_e12, end_fraction) as end_share_e12
    from fractions
),

matches as (
    select
        pool,
        symbol,
        sell_seq,
        lot_seq,
        sell_at,
        lot_at,
        next_x_e18 - x_e18 as quantity_e18,
        case when next_kind = 0 then lot_cost_e12 else end_share_e12 end - case when kind = 0 then 0 else start_share_e12 end as cost_e12,
        case when next_kind = 0 then end_share_e12 else sell_matched_proceeds_e12 end - case when kind = 1 then 0 else start_share_e12 end as proceeds_e12
    from cumulative
),

unmatched as (
    select
        pool,
        symbol,
        event_seq as sell_seq,
        cast(null as bigint) as lot_seq,
        event_at as sell_at,
        cast(null as timestamptz) as lot_at,
        unmatched_e18 as quantity_e18,
        cast(null as hugeint) as cost_e12,
        proceeds_e12 - matched_proceeds_e12 as proceeds_e12
    from unmatched_sells
),

final as (
    select * from matches
    union all
    select * from unmatched
)

select * from final
