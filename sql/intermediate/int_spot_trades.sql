-- Spot trades in cost-basis order: one row per fill, plus one per declared opening position (an
-- opening lot placed before every fill of its account and symbol), with running inventory.
-- Key: (account, symbol, event_seq). Inputs: staging.spot_fills, settings.opening_positions, settings.reporting.
-- Convention (README): a buy of q at price p with fee f (charged in the base coin) adds q - f units
-- costing q*p; a sell of q at p with fee f (charged in the quote coin) disposes of q units for
-- proceeds q*p - f. A fill without a price uses fill_total_amount for q*p. Order within (account,
-- symbol): the opening lot, then c_time_at, then fill_id as a number (length, then text: ids are
-- decimal integers without leading zeros). Quantity sold beyond the inventory is unmatched: the
-- inventory stays at zero (those units were bought before the history) and later buys are not used
-- for it. Columns *_e18 / *_e12 are the same amounts as integer units of 1e-18 / 1e-12 (exact_arith.sql).
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
        order_id,
        lower(side) as side,
        c_time_at as event_at,
        fill_quantity,
        fill_price,
        fees,
        case when lower(side) = 'buy' then fill_quantity_e18 - fees_e18 else cast(0 as hugeint) end as units_in_e18,
        case when lower(side) = 'sell' then fill_quantity_e18 else cast(0 as hugeint) end as quantity_out_e18,
        -- q*p in money units; without a price, fill_total_amount (1e-16) rounded to 1e-12.
        case
            when fill_price_e18 is not null then exact_mul_units(fill_quantity_e18, fill_price_e18)
            else exact_units_to_money(fill_total_amount_e16, 16)
        end as notional_e12,
        fees_e18
    from fills
    where lower(side) in ('buy', 'sell')
),

fill_values as (
    select
        * exclude (notional_e12, fees_e18),
        case when side = 'buy' then notional_e12 else cast(0 as hugeint) end as cost_e12,
        case when side = 'sell' then notional_e12 - exact_units_to_money(fees_e18, 18) else cast(0 as hugeint) end as proceeds_e12
    from fill_events
),

-- An opening position takes its coins from the fills of its symbol; without fills it has no row.
opening_events as (
    select
        o.account,
        o.symbol,
        any_value(f.base_coin) as base_coin,
        any_value(f.quote_coin) as quote_coin,
        'opening' as lot_source,
        cast(null as varchar) as fill_id,
        cast(null as varchar) as order_id,
        'buy' as side,
        cast(null as timestamptz) as event_at,
        any_value(o.quantity) as fill_quantity,
        cast(null as decimal(38, 18)) as fill_price,
        cast(0 as decimal(38, 18)) as fees,
        any_value(exact_parse_units(cast(o.quantity as varchar), 18)) as units_in_e18,
        cast(0 as hugeint) as quantity_out_e18,
        any_value(exact_parse_units(cast(o.cost as varchar), 12)) as cost_e12,
        cast(0 as hugeint) as proceeds_e12
    from opening_positions as o
    inner join fill_values as f on f.account = o.account and f.symbol = o.symbol
    group by o.account, o.symbol
),

events as (
    select * from opening_events
    union all by name
    select * from fill_values
),

sequenced as (
    select
        *,
        row_number() over (
            partition by account, symbol
            order by lot_source = 'opening' desc, event_at, length(fill_id), fill_id
        ) as event_seq
    from events
),

running as (
    select
        *,
        sum(units_in_e18) over w as cum_in_e18,
        sum(quantity_out_e18) over w as cum_out_e18,
        -- Units sold beyond inventory so far: the deepest the unclamped position has gone below 0.
        greatest(cast(0 as hugeint), max(sum_out_minus_in) over w) as cum_unmatched_e18
    from (
        select
            *,
            sum(quantity_out_e18 - units_in_e18) over w as sum_out_minus_in
        from sequenced
        window w as (partition by account, symbol order by event_seq rows between unbounded preceding and current row)
    )
    window w as (partition by account, symbol order by event_seq rows between unbounded preceding and current row)
),

matched as (
    select
        *,
        cum_unmatched_e18 - coalesce(lag(cum_unmatched_e18) over (partition by account, symbol order by event_seq), 0) as unmatched_e18,
        cum_in_e18 - cum_out_e18 + cum_unmatched_e18 as inventory_e18
    from running
),

shares as (
    select
        *,
        -- Proceeds follow the quantity: the matched part carries its share, the rest is unmatched.
        case
            when unmatched_e18 = 0 then proceeds_e12
            else exact_share(proceeds_e12, quantity_out_e18 - unmatched_e18, quantity_out_e18)
        end as matched_proceeds_e12
    from matched
),

final as (
    select
        s.account,
        s.symbol,
        s.base_coin,
        s.quote_coin,
        s.event_seq,
        s.lot_source,
        s.fill_id,
        s.order_id,
        s.side,
        s.event_at,
        cast(timezone(r.time_zone, coalesce(s.event_at, min(s.event_at) over (partition by s.account, s.symbol))) as date) as event_date,
        s.fill_quantity,
        s.fill_price,
        s.fees,
        exact_decimal_18(s.units_in_e18) as units_in,
        exact_decimal_12(s.cost_e12) as cost,
        exact_decimal_18(s.quantity_out_e18) as quantity_out,
        exact_decimal_12(s.proceeds_e12) as proceeds,
        exact_decimal_18(s.quantity_out_e18 - s.unmatched_e18) as matched_quantity,
        exact_decimal_12(s.matched_proceeds_e12) as matched_proceeds,
        exact_decimal_18(s.unmatched_e18) as unmatched_quantity,
        exact_decimal_12(s.proceeds_e12 - s.matched_proceeds_e12) as unmatched_proceeds,
        exact_decimal_18(s.inventory_e18) as inventory,
        s.units_in_e18,
        s.cost_e12,
        s.quantity_out_e18,
        s.proceeds_e12,
        s.unmatched_e18,
        s.matched_proceeds_e12,
        s.cum_in_e18,
        s.cum_out_e18,
        s.cum_unmatched_e18,
        s.inventory_e18
    from shares as s
    cross join reporting as r
)

select * from final
