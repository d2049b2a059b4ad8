-- Spot trades in cost-basis order: one row per fill, plus one per declared opening position (an
-- opening lot placed before every fill of its account and symbol), with running inventory.
-- Key: (account, symbol, event_seq). Inputs: staging.spot_fills, settings.opening_positions, settings.reporting.
-- Convention (README): a buy of q at price p with fee f (charged in the base coin) adds q - f units
-- costing q*p; a sell of q at p with fee f (charged in the quote coin) disposes of q units for
-- proceeds q*p - f. A fill without a price uses fill_total_amount for q*p. Order within (account,
-- symbol): the opening lot, then c_time_at, then fill_id as a number (by length, then as text: ids
-- are decimal integers without leading zeros). Quantity sold beyond the inventory is unmatched: the
-- inventory stays at zero (those units were bought before the history) and later buys are not used
-- for it. Amounts are integer units (exact_arith.sql): *_e18 of 1e-18 (quantities), *_e12 of 1e-12
-- (quote-coin money); the marts turn them into DECIMALs.
with fills as (
    select * from staging.spot_fills
),

opening_positions as (
    select * from settings.opening_positions
),

reporting as (
    select * from settings.reporting
),

fill_events as (
    select
        account,
        symbol,
        base_coin,
        quote_coin,
        'fill' as lot_source,
        fill_id,
        lower(side) as side,
        c_time_at as event_at,
        -- A fee at or above the quantity cannot be (a test lists such buys): no units, never negative ones.
        case when lower(side) = 'buy' then greatest(fill_quantity_e18 - fees_e18, 0) else cast(0 as hugeint) end as units_in_e18,
        case when lower(side) = 'sell' then fill_quantity_e18 else cast(0 as hugeint) end as quantity_out_e18,
        -- q*p in money units; without a price, fill_total_amount (1e-16) rounded to 1e-12. Both
        -- are computed for every row and picked by coalesce: inside a CASE branch DuckDB does not
        -- share the repeated parts of these macros, which makes them ten times slower.
        coalesce(exact_mul_units(fill_quantity_e18, fill_price_e18), exact_units_to_money(fill_total_amount_e16, 16)) as notional_e12,
        exact_units_to_money(fees_e18, 18) as fee_e12
    from fills
),

fill_values as (
    select
        * exclude (notional_e12, fee_e12),
        case when side = 'buy' then notional_e12 else cast(0 as hugeint) end as cost_e12,
        case when side = 'sell' then notional_e12 - fee_e12 else cast(0 as hugeint) end as proceeds_e12
    from fill_events
),

symbols as (
    select account, symbol, max(base_coin) as base_coin, max(quote_coin) as quote_coin, min(event_at) as first_fill_at
    from fill_values
    group by account, symbol
),

-- An opening position takes its coins from the fills of its symbol, and is dropped where it has none.
opening_events as (
    select
        o.account,
        o.symbol,
        s.base_coin,
        s.quote_coin,
        'opening' as lot_source,
        cast(null as varchar) as fill_id,
        'buy' as side,
        cast(null as timestamptz) as event_at,
        -- The lot is reported on the day of the symbol's first fill.
        s.first_fill_at as reported_at,
        exact_parse_units(cast(o.quantity as varchar), 18) as units_in_e18,
        cast(0 as hugeint) as quantity_out_e18,
        exact_parse_units(cast(o.cost as varchar), 12) as cost_e12,
        cast(0 as hugeint) as proceeds_e12
    from opening_positions as o
    inner join symbols as s on s.account = o.account and s.symbol = o.symbol
),

events as (
    select * from opening_events
    union all by name
    select *, event_at as reported_at from fill_values
),

-- One sort for the order and the running sums of units in and out. Fills of another side than
-- buy or sell (none are known) count for nothing.
running as (
    select
        *,
        row_number() over w as event_seq,
        sum(units_in_e18) over (w rows unbounded preceding) as cum_in_e18,
        sum(quantity_out_e18) over (w rows unbounded preceding) as cum_out_e18
    from events
    window w as (partition by account, symbol order by lot_source = 'opening' desc, event_at, length(fill_id), fill_id)
),

-- Units sold beyond inventory so far: the deepest the unclamped position (in - out) has gone
-- below zero, before and after this event.
unmatched as (
    select
        *,
        greatest(cast(0 as hugeint), max(cum_out_e18 - cum_in_e18) over (w rows unbounded preceding)) as cum_unmatched_e18,
        greatest(cast(0 as hugeint), coalesce(max(cum_out_e18 - cum_in_e18) over (w rows between unbounded preceding and 1 preceding), 0)) as previous_unmatched_e18
    from running
    window w as (partition by account, symbol order by event_seq)
),

final as (
    select
        u.account,
        u.symbol,
        u.base_coin,
        u.quote_coin,
        u.event_seq,
        u.lot_source,
        u.fill_id,
        u.side,
        u.event_at,
        cast(timezone(r.time_zone, u.reported_at) as date) as event_date,
        u.units_in_e18,
        u.cost_e12,
        u.quantity_out_e18,
        u.proceeds_e12,
        u.cum_unmatched_e18 - u.previous_unmatched_e18 as unmatched_e18,
        -- Proceeds follow the quantity: the matched part carries its share, the rest is unmatched
        -- (exact_share only where some is unmatched, which is rare).
        case
            when u.cum_unmatched_e18 = u.previous_unmatched_e18 then u.proceeds_e12
            else exact_share(u.proceeds_e12, u.quantity_out_e18 - (u.cum_unmatched_e18 - u.previous_unmatched_e18), u.quantity_out_e18)
        end as matched_proceeds_e12,
        u.cum_in_e18,
        u.cum_out_e18,
        u.cum_unmatched_e18,
        u.cum_in_e18 - u.cum_out_e18 + u.cum_unmatched_e18 as inventory_e18
    from unmatched as u
    cross join reporting as r
    where u.side in ('buy', 'sell')
)

select * from final
