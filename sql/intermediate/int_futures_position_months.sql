-- Futures fills summed per position (account, contract, side) and month (reporting zone): what the
-- month's fills change the position's size and open value by, and the lowest the size went within
-- the month relative to its start. futures_positions_valued rolls these up month by month instead
-- of reading every fill, so its nightly rebuild reads months, not the history.
-- Key: (account, symbol, position_side, period_month). Inputs: staging.futures_fills, settings.reporting.
-- An opening fill adds its size and value; a closing fill takes off its size and the open value it
-- closed, which the exchange's realized PnL gives exactly (a long: fill value - realized PnL; a
-- short: fill value + realized PnL).
with reporting as (
    select time_zone from settings.reporting
),

changes as (
    select
        f.account,
        f.symbol,
        f.position_side,
        cast(date_trunc('month', local_date(f.created_time_at, r.time_zone)) as date) as period_month,
        f.created_time_at,
        f.trade_id,
        case when (f.position_side = 'LONG') = (f.order_side = 'BUY') then f.fill_size else -f.fill_size end as size_change,
        -- At 12 decimals: a fill's value reaches 1e21, beyond the realized PnL's DECIMAL(38, 18).
        case
            when (f.position_side = 'LONG') = (f.order_side = 'BUY') then cast(f.fill_value as decimal(38, 12))
            when f.position_side = 'LONG' then -(cast(f.fill_value as decimal(38, 12)) - cast(f.realize_pnl as decimal(38, 12)))
            else -(cast(f.fill_value as decimal(38, 12)) + cast(f.realize_pnl as decimal(38, 12)))
        end as value_change
    from staging.futures_fills as f
    cross join reporting as r
),

-- The size after each fill, counted from the month's start.
running as (
    select
        *,
        sum(size_change) over (
            partition by account, symbol, position_side, period_month
            order by created_time_at, trade_id
            rows between unbounded preceding and current row
        ) as size_from_month_start
    from changes
),

final as (
    select
        account,
        symbol,
        position_side,
        period_month,
        count(*) as fill_count,
        sum(size_change) as size_change,
        sum(value_change) as value_change,
        min(size_from_month_start) as lowest_size_change
    from running
    group by account, symbol, position_side, period_month
)

select * from final
