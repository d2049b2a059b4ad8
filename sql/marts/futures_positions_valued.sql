-- Open futures positions at each month end (reporting zone), valued at the contract's mark price from
-- the prices file (docs/workbooks.md "Open futures positions"). Key: (account, symbol, position_side,
-- period_month). Inputs: intermediate.int_futures_position_months (the fills' changes per month),
-- intermediate.int_futures_fill_days (the contract's coins), settings.prices (mark prices: coin
-- `contract:<symbol>`, in the contract's quote coin), intermediate.int_prices (the margin coin's
-- month-end price), intermediate.int_coin_events (the months of the books), settings.reporting,
-- settings.books.
-- A position is rebuilt from its fills, so it is known at any instant, not only at the exchange's
-- snapshots (whose positions name a contract id the fills do not carry): an opening fill adds its
-- size and value; a closing fill takes off its size and the open value it closed, which the
-- exchange's realized PnL gives exactly (a long: fill value - realized PnL; a short: fill value +
-- realized PnL). Where the fills close more than they opened, the position was opened before the
-- history: its size is unknown from then on (NULL, never 0).
-- Unrealized PnL at the mark price m (in the margin coin, a linear contract: margin coin = quote
-- coin): a long m * size - open value, a short open value - m * size; in the reporting currency at
-- the margin coin's month-end price. models.valuation cost: a position costs nothing (its margin is
-- collateral, in the coin lots), so it is carried at 0; fair_value: at its fair value, the change
-- since the previous month end its remeasurement (the journal's position/... entries).
with reporting as (
    select time_zone, reporting_currency from settings.reporting
),

books as (
    select * from settings.books
),

contracts as (
    select symbol, any_value(margin_coin) as margin_coin, any_value(quote_coin) as quote_coin
    from intermediate.int_futures_fill_days
    group by symbol
),

-- Per position and month the fills' change of its size and open value, and the lowest the size went
-- within the month from its start (intermediate.int_futures_position_months). Rolled up: the size and
-- open value at each month end, and the lowest size of the month (below 0: a position from before the history).
month_ends as (
    select
        account, symbol, position_side, period_month,
        sum(size_change) over w as size_end,
        sum(value_change) over w as value_end,
        sum(size_change) over w - size_change + lowest_size_change as lowest_size
    from intermediate.int_futures_position_months
    window w as (partition by account, symbol, position_side order by period_month rows between unbounded preceding and current row)
),

last_month as (
    select greatest(
        (select max(period_month) from intermediate.int_futures_position_months),
        (select cast(date_trunc('month', max(event_date)) as date) from intermediate.int_coin_events)
    ) as last_month
),

months as (
    select p.account, p.symbol, p.position_side, cast(m.month as date) as period_month
    from (select account, symbol, position_side, min(period_month) as first_month from month_ends group by all) as p
    cross join last_month as l
    cross join lateral generate_series(p.first_month, l.last_month, interval 1 month) as m(month)
),

rolled as (
    select
        m.*,
        last_value(e.size_end ignore nulls) over w as size_end,
        last_value(e.value_end ignore nulls) over w as value_end,
        -- Known while the running size never went below 0 up to this month.
        coalesce(min(e.lowest_size) over w, 0) >= 0 as size_known
    from months as m
    left join month_ends as e using (account, symbol, position_side, period_month)
    window w as (partition by m.account, m.symbol, m.position_side order by m.period_month rows between unbounded preceding and current row)
),

-- A contract's mark price on the month's last day: a close line wins over instants of that day, else its last instant.
marks as (
    select symbol, currency, price_date, price, line
    from (
        select
            substr(p.coin, 10) as symbol,
            p.currency,
            coalesce(p.price_date, local_date(p.price_at, r.time_zone)) as price_date,
            p.price,
            p.line,
            row_number() over (
                partition by p.coin, p.currency, coalesce(p.price_date, local_date(p.price_at, r.time_zone))
                order by p.price_date is not null desc, p.price_at desc nulls first, p.line desc
            ) as rank
        from settings.prices as p
        cross join reporting as r
        where p.coin like 'contract:%'
    )
    where rank = 1
),

priced as (
    select
        r.*,
        c.margin_coin,
        c.quote_coin,
        cast(last_day(r.period_month) as date) as mark_date,
        k.price as mark_price,
        k.line as mark_line,
        rep.reporting_currency,
        valued_price(c.margin_coin, rep.reporting_currency, p.price) as price,
        valued_source(c.margin_coin, rep.reporting_currency, p.price_source) as price_source,
        b.valuation
    from rolled as r
    cross join reporting as rep
    cross join books as b
    left join contracts as c on c.symbol = r.symbol
    left join marks as k on k.symbol = r.symbol and k.currency = c.quote_coin and k.price_date = last_day(r.period_month)
    left join intermediate.int_prices as p on p.coin = c.margin_coin and p.price_date = last_day(r.period_month)
),

valued as (
    select
        *,
        case when size_known then size_end end as size,
        case when size_known then value_end end as open_value,
        case
            when not size_known then null
            when size_end = 0 then cast(0 as decimal(38, 12))
            when mark_price is null or margin_coin is distinct from quote_coin then null
            when position_side = 'LONG' then exact_mul(size_end, mark_price) - value_end
            else value_end - exact_mul(size_end, mark_price)
        end as unrealized_pnl
    from priced
),

fair as (
    select
        *,
        valued_money(unrealized_pnl, price, reporting_currency) as fair_value
    from valued
),

final as (
    select
        'futures_positions_valued/' || ref_part(account) || '/' || ref_part(symbol) || '/' || ref_part(position_side) || '/' || ref_month(period_month) as reference,
        account,
        symbol,
        position_side,
        period_month,
        margin_coin,
        quote_coin,
        size,
        open_value,
        -- open_value / size, exact, rounded half up to 18 decimals: V (1e-12) / S (1e-18) in 1e-18 is V * 1e24 / S;
        -- null from 1e20 on, which DECIMAL(38, 18) cannot hold (an average entry price, not a figure summed).
        case when size > 0 and open_value >= 0 and exact_money_units(open_value) // exact_qty_units(size) < 100000000000000 then exact_qty(
            (exact_money_units(open_value) // exact_qty_units(size)) * cast('1000000000000000000000000' as hugeint)
            + exact_round_div(exact_ratio(exact_money_units(open_value) % exact_qty_units(size), exact_qty_units(size)), cast(1000000000000 as hugeint))
        ) end as entry_price,
        mark_date,
        mark_price,
        case when mark_line is not null then 'prices file line ' || mark_line end as mark_source,
        unrealized_pnl,
        price,
        price_source,
        fair_value,
        -- The fair value standing: this month's, else the last month end's that had one (0 before any).
        case
            when reporting_currency is null then null
            when valuation = 'cost' then cast(0 as decimal(38, 12))
            else coalesce(last_value(fair_value ignore nulls) over upto, 0)
        end as carrying_value,
        case
            when reporting_currency is null then null
            when valuation = 'cost' then cast(0 as decimal(38, 12))
            -- The change since the last month end that had a fair value; unknown when this one has none.
            else fair_value - coalesce(last_value(fair_value ignore nulls) over before, 0)
        end as remeasurement,
        case
            when not size_known then 'opened before the history: its fills close more than they open (size unknown)'
            when size_end = 0 then null
            when margin_coin is null then 'contract not in the exchange''s listing (margin and quote coin unknown)'
            when margin_coin <> quote_coin then 'inverse contract (margin coin ' || margin_coin || ', quote coin ' || quote_coin || '): not valued'
            when mark_price is null then 'no mark price: add ' || strftime(last_day(period_month), '%Y-%m-%d') || ',contract:' || symbol || ',' || quote_coin || ',<price> to the prices file'
            when reporting_currency is not null and price is null then 'no price of ' || margin_coin || ' on ' || strftime(last_day(period_month), '%Y-%m-%d')
        end as unvalued_reason,
        reporting_currency,
        valuation
    from fair
    window
        upto as (partition by account, symbol, position_side order by period_month rows between unbounded preceding and current row),
        before as (partition by account, symbol, position_side order by period_month rows between unbounded preceding and 1 preceding)
)

-- A month with nothing open, before and after, says nothing.
select * from final
where size is null or size <> 0 or remeasurement <> 0 or carrying_value <> 0
