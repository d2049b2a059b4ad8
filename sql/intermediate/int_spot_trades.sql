-- Spot trades in cost-basis order: one row per fill, plus one per declared opening position (an
-- opening lot placed before every fill of its pool and symbol), with running inventory per pool.
-- Key: (pool, symbol, event_seq). Inputs: staging.spot_fills, settings.opening_positions, settings.reporting.
-- The pool is the account (pooling 'account') or '*', every account's units of the symbol as one
-- inventory (pooling 'universal'): each row keeps its account, to which a sell's PnL belongs.
-- Convention (README): a buy of q at price p with fee f (charged in the base coin) adds q - f units
-- costing q*p; a sell of q at p with fee f (charged in the quote coin) disposes of q units for
-- proceeds q*p - f. A fill without a price uses fill_total_amount for q*p. Order within (pool,
-- symbol): the opening lots (by account), then c_time_at, then fill_id as a number (by length, then
-- as text: ids are decimal integers without leading zeros), then account (two accounts' fills of one
-- instant and id). Quantity sold beyond the inventory is unmatched: the
-- inventory stays at zero (those units were bought before the history) and later buys are not used
-- for it. Amounts are integer units (exact_arith.sql): *_e18 of 1e-18 (quantities), *_e12 of 1e-12
-- (quote-coin money); the marts turn them into DECIMALs. The fill's own quantity, fee (in the coin
-- it was charged in) and total (fill_quantity_e18, fee_e18, fill_total_e16; null on an opening lot)
-- are kept for the fees model, so that the spot fills are parsed from their JSON once per build.
with fills as (
    select * from staging.spot_fills
),

opening_positions as (
    select * from settings.opening_positions
),

reporting as (
    select * from settings.reporting
),

-- q*p in money units; without a price, fill_total_amount (1e-16) rounded to 1e-12. Both are
-- computed for every row and picked by coalesce: inside a CASE branch DuckDB does not share the
-- repeated parts of these macros, which makes them ten times slower.
fill_events as (
    select
        account,
        symbol,
        base_coin,
        quote_coin,
        false as is_opening,
        fill_id,
        lower(side) as side,
        c_time_at as event_at,
        fill_quantity_e18,
        fees_e18 as fee_e18,
        fill_total_amount_e16 as fill_total_e16,
        coalesce(exact_mul_units(fill_quantity_e18, fill_price_e18), exact_units_to_money(fill_total_amount_e16, 16)) as notional_e12,
        exact_units_to_money(fees_e18, 18) as fee_e12
    from fills
),

-- An opening lot takes its coins and its day from the first fill of its symbol (next to it in the
-- order below, after the other opening lots of its pool), and is dropped where its symbol has no fill.
opening_events as (
    select
        account,
        symbol,
        cast(null as varchar) as base_coin,
        cast(null as varchar) as quote_coin,
        true as is_opening,
        cast(null as varchar) as fill_id,
        'buy' as side,
        cast(null as timestamptz) as event_at,
        exact_parse_units(cast(quantity as varchar), 18) as fill_quantity_e18,
        cast(null as hugeint) as fee_e18,
        cast(null as hugeint) as fill_total_e16,
        exact_parse_units(cast(cost as varchar), 12) as value_e12
    from opening_positions
),

-- value_e12: the cost of a buy or opening lot, the proceeds of a sell. The rows stay narrow (the
-- two windows below sort them all): units in and out are derived from the quantity and the side.
events as (
    select * from opening_events
    union all by name
    select
        * exclude (notional_e12, fee_e12),
        case when side = 'buy' then notional_e12 when side = 'sell' then notional_e12 - fee_e12 else cast(0 as hugeint) end as value_e12
    from fill_events
),

pooled as (
    select e.*, case when r.pooling = 'universal' then '*' else e.account end as pool
    from events as e
    cross join reporting as r
),

-- One sort for the order and the running sums of units in and out. A buy whose fee reaches its
-- quantity adds no units (never negative ones; a test lists such buys). Fills of another side than
-- buy or sell (none are known) count for nothing.
running as (
    select
        *,
        row_number() over w as event_seq,
        sum(case when is_opening then fill_quantity_e18 when side = 'buy' then greatest(fill_quantity_e18 - fee_e18, 0) else 0 end)
            over (w rows unbounded preceding) as cum_in_e18,
        sum(case when side = 'sell' then fill_quantity_e18 else 0 end) over (w rows unbounded preceding) as cum_out_e18
    from pooled
    window w as (partition by pool, symbol order by is_opening desc, event_at, length(fill_id), fill_id, account)
),

-- Units sold beyond inventory before this event: the deepest the unclamped position (in - out) had
-- gone below zero before it (a running maximum of the position before each event: a frame ending
-- at the current row is cheaper than one ending at the previous); with this event's own position,
-- the same after it.
unmatched as (
    select
        *,
        greatest(cast(0 as hugeint), coalesce(max(
            cum_out_e18 - case when side = 'sell' then fill_quantity_e18 else 0 end
            - (cum_in_e18 - case when is_opening then fill_quantity_e18 when side = 'buy' then greatest(fill_quantity_e18 - fee_e18, 0) else 0 end)
        ) over (w rows unbounded preceding), 0)) as previous_unmatched_e18,
        -- Computed here rather than in the first window: what that window adds, this one sorts.
        -- The next fill (past the pool's other opening lots), as one struct that is null only for an opening lot.
        lead(case when not is_opening then {'base_coin': base_coin, 'quote_coin': quote_coin, 'event_at': event_at} end ignore nulls) over w as next_fill
    from running
    window w as (partition by pool, symbol order by event_seq)
),

positions as (
    select
        * exclude (base_coin, quote_coin),
        case when is_opening then next_fill.base_coin else base_coin end as base_coin,
        case when is_opening then next_fill.quote_coin else quote_coin end as quote_coin,
        -- The opening lot is reported on the day of the symbol's first fill.
        case when is_opening then next_fill.event_at else event_at end as reported_at,
        greatest(previous_unmatched_e18, cum_out_e18 - cum_in_e18) as cum_unmatched_e18,
        case when is_opening then fill_quantity_e18 when side = 'buy' then greatest(fill_quantity_e18 - fee_e18, 0) else cast(0 as hugeint) end as units_in_e18,
        case when side = 'sell' then fill_quantity_e18 else cast(0 as hugeint) end as quantity_out_e18,
        case when side = 'sell' then value_e12 else cast(0 as hugeint) end as proceeds_e12
    from unmatched
    where side in ('buy', 'sell') and not (is_opening and next_fill is null)
),

final as (
    select
        p.pool,
        p.account,
        p.symbol,
        p.base_coin,
        p.quote_coin,
        p.event_seq,
        case when p.is_opening then 'opening' else 'fill' end as lot_source,
        p.fill_id,
        p.side,
        p.event_at,
        local_date(p.reported_at, r.time_zone) as event_date,
        p.units_in_e18,
        case when p.side = 'buy' then p.value_e12 else cast(0 as hugeint) end as cost_e12,
        p.quantity_out_e18,
        p.proceeds_e12,
        p.cum_unmatched_e18 - p.previous_unmatched_e18 as unmatched_e18,
        -- Proceeds follow the quantity: the matched part carries its share, the rest is unmatched
        -- (exact_share only where some is unmatched, which is rare).
        case
            when p.cum_unmatched_e18 = p.previous_unmatched_e18 then p.proceeds_e12
            else exact_share(p.proceeds_e12, p.quantity_out_e18 - (p.cum_unmatched_e18 - p.previous_unmatched_e18), p.quantity_out_e18)
        end as matched_proceeds_e12,
        p.cum_in_e18,
        p.cum_out_e18,
        p.cum_unmatched_e18,
        p.cum_in_e18 - p.cum_out_e18 + p.cum_unmatched_e18 as inventory_e18,
        case when p.is_opening then null else p.fill_quantity_e18 end as fill_quantity_e18,
        p.fee_e18,
        p.fill_total_e16
    from positions as p
    cross join reporting as r
)

select * from final
