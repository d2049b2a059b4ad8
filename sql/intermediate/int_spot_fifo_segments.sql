-- FIFO lot matches: one row per (sell, lot) pair whose quantity intervals overlap, plus one row per
-- sell part beyond the inventory (lot_seq null). Built only when 'fifo' is a reporting cost method.
-- Key: (account, symbol, sell_seq, lot_seq). Input: intermediate.int_spot_trades, settings.reporting.
-- Lot i holds the cumulative units [B(i-1), B(i)) of all buys; the matched part of sell j takes the
-- cumulative matched quantity [MS(j-1), MS(j)). Inventory never goes below zero, so MS(j) <= B at
-- the time of j, and matching unit for unit in cumulative order is FIFO. Every lot start and sell
-- start is a breakpoint; between two breakpoints exactly one lot and one sell are found by ASOF
-- joins. A share of a lot's cost is read off its cumulative cost function K(o) = cost * o / units
-- at both ends (exact_share), so the shares of a lot consumed in full add up to its cost exactly;
-- proceeds are shared the same way along the sell. No step is quadratic.
with trades as (
    select t.*
    from intermediate.int_spot_trades as t
    where list_contains((select any_value(cost_methods) from settings.reporting), 'fifo')
),

lots as (
    select account, symbol, event_seq as lot_seq, cum_in_e18 - units_in_e18 as lot_start_e18, units_in_e18, cost_e12
    from trades
    where units_in_e18 > 0
),

sells as (
    select
        account,
        symbol,
        event_seq as sell_seq,
        cum_out_e18 - cum_unmatched_e18 - (quantity_out_e18 - unmatched_e18) as sell_start_e18,
        quantity_out_e18 - unmatched_e18 as matched_e18,
        quantity_out_e18,
        proceeds_e12,
        matched_proceeds_e12
    from trades
    where quantity_out_e18 - unmatched_e18 > 0
),

matched_ends as (
    select account, symbol, max(sell_start_e18 + matched_e18) as end_e18
    from sells
    group by account, symbol
),

breakpoints as (
    select l.account, l.symbol, l.lot_start_e18 as x_e18
    from lots as l
    inner join matched_ends as e on e.account = l.account and e.symbol = l.symbol and l.lot_start_e18 < e.end_e18
    union
    select account, symbol, sell_start_e18 from sells
    union
    select account, symbol, end_e18 from matched_ends
),

located as (
    select
        p.account,
        p.symbol,
        p.x_e18,
        l.lot_seq,
        l.cost_e12,
        s.sell_seq,
        s.proceeds_e12,
        s.matched_proceeds_e12,
        -- K(o) = cost * o / units at this point of its lot, P(o) = proceeds * o / quantity along its
        -- sell: the fractions o / units and o / quantity, in six steps of long division (a step per
        -- CTE keeps every expression on columns, see exact_fraction_start), 0 and 1 exactly at ends.
        exact_fraction_start(p.x_e18 - l.lot_start_e18, l.units_in_e18) as cost_fraction,
        exact_fraction_start(p.x_e18 - s.sell_start_e18, s.quantity_out_e18) as proceeds_fraction
    from breakpoints as p
    asof inner join lots as l on l.account = p.account and l.symbol = p.symbol and p.x_e18 >= l.lot_start_e18
    asof inner join sells as s on s.account = p.account and s.symbol = p.symbol and p.x_e18 >= s.sell_start_e18
),

step_1 as (
    select * replace (exact_fraction_step(cost_fraction) as cost_fraction, exact_fraction_step(proceeds_fraction) as proceeds_fraction)
    from located
),

step_2 as (
    select * replace (exact_fraction_step(cost_fraction) as cost_fraction, exact_fraction_step(proceeds_fraction) as proceeds_fraction)
    from step_1
),

step_3 as (
    select * replace (exact_fraction_step(cost_fraction) as cost_fraction, exact_fraction_step(proceeds_fraction) as proceeds_fraction)
    from step_2
),

step_4 as (
    select * replace (exact_fraction_step(cost_fraction) as cost_fraction, exact_fraction_step(proceeds_fraction) as proceeds_fraction)
    from step_3
),

step_5 as (
    select * replace (exact_fraction_step(cost_fraction) as cost_fraction, exact_fraction_step(proceeds_fraction) as proceeds_fraction)
    from step_4
),

step_6 as (
    select * replace (exact_fraction_step(cost_fraction) as cost_fraction, exact_fraction_step(proceeds_fraction) as proceeds_fraction)
    from step_5
),

fractions as (
    select
        * exclude (cost_fraction, proceeds_fraction),
        exact_fraction_end(cost_fraction) as cost_fraction,
        exact_fraction_end(proceeds_fraction) as proceeds_fraction
    from step_6
),

cumulative as (
    select
        account,
        symbol,
        x_e18,
        lot_seq,
        cost_e12,
        sell_seq,
        exact_mul_fraction(cost_e12, cost_fraction) as cost_at_e12,
        exact_mul_fraction(proceeds_e12, proceeds_fraction) as proceeds_at_e12,
        matched_proceeds_e12
    from fractions
),

segments as (
    select
        *,
        lead(x_e18) over w as next_x_e18,
        lead(lot_seq) over w as next_lot_seq,
        lead(cost_at_e12) over w as next_cost_at_e12,
        lead(sell_seq) over w as next_sell_seq,
        lead(proceeds_at_e12) over w as next_proceeds_at_e12
    from cumulative
    window w as (partition by account, symbol order by x_e18)
),

matches as (
    select
        account,
        symbol,
        sell_seq,
        lot_seq,
        next_x_e18 - x_e18 as quantity_e18,
        case when next_lot_seq = lot_seq then next_cost_at_e12 else cost_e12 end - cost_at_e12 as cost_e12,
        case when next_sell_seq = sell_seq then next_proceeds_at_e12 else matched_proceeds_e12 end - proceeds_at_e12 as proceeds_e12
    from segments
    where next_x_e18 is not null
),

unmatched as (
    select
        account,
        symbol,
        event_seq as sell_seq,
        cast(null as bigint) as lot_seq,
        unmatched_e18 as quantity_e18,
        cast(null as hugeint) as cost_e12,
        proceeds_e12 - matched_proceeds_e12 as proceeds_e12
    from trades
    where unmatched_e18 > 0
),

final as (
    select * from matches
    union all
    select * from unmatched
)

select * from final
