-- The holdings roll-forward per account (the pool: * with pooling universal), coin, cost method and month (reporting zone): opening units,
-- cost and carrying value; acquisitions; disposals at cost, their proceeds and the realized gain;
-- the remeasurement; closing units, cost, carrying value and fair value at the period-end price
-- (docs/workbooks.md "Books in the reporting currency"). Key: (account, coin, cost_method, period_month).
-- Inputs: intermediate.int_coin_lot_months, intermediate.int_prices,
-- settings.reporting, settings.books.
-- models.valuation cost: the carrying value is the cost of the lots held, no remeasurement.
-- fair_value (US GAAP ASU 2023-08): at each month end the holding is remeasured to the month-end
-- price: fair_value_adjustment = fair value - cost, and remeasurement = its change since the last
-- month end that had one; the carrying value is cost + the adjustment. Where the month-end price or
-- the cost held is unknown, the month has no adjustment (NULL, never 0) and the last one stands.
-- Identity per row: closing_carrying_value = opening_carrying_value + acquisitions_cost -
-- disposals_cost + remeasurement (each known), and realized_gain = disposals_proceeds - disposals_cost.
-- A month runs from the coin's first event to the latest month of any event.
with reporting as (
    select reporting_currency from settings.reporting where reporting_currency is not null
),

books as (
    select * from settings.books
),

-- Each (pool, coin, method)'s months with events (intermediate.int_coin_lot_months: the lots summed
-- per month), and every month from its first to the latest of any.
flows as (
    select * from intermediate.int_coin_lot_months
),

months as (
    select p.pool, p.coin, p.cost_method, cast(m.month as date) as period_month
    from (select pool, coin, cost_method, min(period_month) as first_month from flows group by all) as p
    cross join (select max(period_month) as last_month from flows) as l
    cross join lateral generate_series(p.first_month, l.last_month, interval 1 month) as m(month)
),

-- Each month with its flows, and what is held at its end: the last event's holding up to it.
rolled as (
    select
        m.*,
        f.acquired_e18, f.acquired_cost_e12, f.acquired_unknown, f.disposed_e18, f.disposed_cost_e12, f.disposed_unknown,
        f.proceeds_e12, f.proceeds_unknown, f.gain_e12, f.gain_unknown, f.unmatched_e18,
        last_value(f.holding_e18 ignore nulls) over w as closing_e18,
        last_value(f.carrying_e12 ignore nulls) over w as closing_cost_e12,
        last_value(f.carrying_known ignore nulls) over w as closing_known
    from months as m
    left join flows as f using (pool, coin, cost_method, period_month)
    window w as (partition by m.pool, m.coin, m.cost_method order by m.period_month rows between unbounded preceding and current row)
),

priced as (
    select
        r.*,
        cast(last_day(r.period_month) as date) as price_date,
        valued_price(r.coin, rep.reporting_currency, p.price) as price,
        valued_source(r.coin, rep.reporting_currency, p.price_source) as price_source,
        rep.reporting_currency,
        b.valuation
    from rolled as r
    cross join reporting as rep
    cross join books as b
    left join intermediate.int_prices as p on p.coin = r.coin and p.price_date = last_day(r.period_month)
),

valued as (
    select
        *,
        case when price is null then null else exact_mul(exact_qty(closing_e18), price) end as fair_value,
        -- The month-end adjustment to fair value: known only with the price and the whole cost held.
        case
            when valuation = 'fair_value' and price is not null and closing_known
                then exact_mul(exact_qty(closing_e18), price) - exact_money(closing_cost_e12)
        end as adjustment
    from priced
),

adjusted as (
    select
        *,
        coalesce(last_value(adjustment ignore nulls) over (partition by pool, coin, cost_method order by period_month rows between unbounded preceding and 1 preceding), 0) as previous_adjustment,
        coalesce(last_value(adjustment ignore nulls) over (partition by pool, coin, cost_method order by period_month rows between unbounded preceding and current row), 0) as standing_adjustment
    from valued
),

final as (
    select
        'holdings/' || pool || '/' || coin || '/' || cost_method || '/' || strftime(period_month, '%Y-%m') as reference,
        pool as account,
        coin,
        cost_method,
        period_month,
        exact_qty(coalesce(lag(closing_e18) over w, 0)) as opening_quantity,
        exact_money(coalesce(lag(closing_cost_e12) over w, 0)) as opening_cost,
        coalesce(lag(closing_known) over w, true) as opening_cost_known,
        exact_money(coalesce(lag(closing_cost_e12) over w, 0)) + coalesce(lag(standing_adjustment) over w, 0) as opening_carrying_value,
        exact_qty(coalesce(acquired_e18, 0)) as acquisitions_quantity,
        case when coalesce(acquired_unknown, 0) = 0 then exact_money(coalesce(acquired_cost_e12, 0)) end as acquisitions_cost,
        exact_money(coalesce(acquired_cost_e12, 0)) as acquisitions_cost_known_part,
        exact_qty(coalesce(disposed_e18, 0)) as disposals_quantity,
        case when coalesce(disposed_unknown, 0) = 0 then exact_money(coalesce(disposed_cost_e12, 0)) end as disposals_cost,
        exact_money(coalesce(disposed_cost_e12, 0)) as disposals_cost_known_part,
        case when coalesce(proceeds_unknown, 0) = 0 then exact_money(coalesce(proceeds_e12, 0)) end as disposals_proceeds,
        case when coalesce(gain_unknown, 0) = 0 then exact_money(coalesce(gain_e12, 0)) end as realized_gain,
        exact_qty(coalesce(unmatched_e18, 0)) as unmatched_quantity,
        case when valuation = 'cost' then cast(0 as decimal(38, 12)) when adjustment is not null then adjustment - previous_adjustment end as remeasurement,
        exact_qty(coalesce(closing_e18, 0)) as closing_quantity,
        exact_money(coalesce(closing_cost_e12, 0)) as closing_cost,
        coalesce(closing_known, true) as closing_cost_known,
        exact_money(coalesce(closing_cost_e12, 0)) + standing_adjustment as closing_carrying_value,
        fair_value,
        price,
        price_date,
        price_source,
        reporting_currency,
        valuation
    from adjusted
    window w as (partition by pool, coin, cost_method order by period_month)
)

select * from final
