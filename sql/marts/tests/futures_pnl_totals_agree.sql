-- Per account and month (reporting zone): every futures fill is in marts.futures_pnl_daily, its days add up to
-- marts.futures_pnl_monthly, and the funding rows add up to intermediate.int_futures_funding_changes (a change is
-- the day of its later snapshot). Lists the accounts and months where any total differs (volumes: beyond the
-- rounding to 12 decimals). Per month, so that a difference names its month, and so that a check of what changed
-- can compare the months from the changed one on.
-- Checking what changed (docs/architecture.md "The incremental check"): a month's fills, days, month rows and
-- funding changes share the account and the month, so the months of the changed accounts from the changed
-- instant's month on (cut: month) are complete on every side; any symbol's change selects the account's months.
-- The days are the mart's: those of the time zone it was built with (settings.model_builds), which a build
-- refused for another zone leaves as they were while settings.reporting names the new one.
with reporting as (
    select coalesce(
        (select any_value(time_zone) from settings.model_builds where model = 'marts.futures_pnl_daily'),
        (select any_value(time_zone) from settings.reporting)
    ) as time_zone
),

fills as (
    select
        f.account,
        cast(date_trunc('month', local_date(f.created_time_at, r.time_zone)) as date) as pnl_month,
        count(*) as fill_count,
        sum(cast(f.fill_value as decimal(38, 12))) as volume,
        sum(f.realize_pnl) as realized_pnl,
        sum(f.fill_fee) as trading_fees,
        sum(f.liquidate_fee) as liquidation_fees
    from staging.futures_fills as f
    cross join reporting as r
    where {{ changed(account: f.account, at: f.created_time_at, cut: month) }}
    group by all
),

funding as (
    select c.account, cast(date_trunc('month', local_date(c.snapshot_at, r.time_zone)) as date) as pnl_month, sum(c.funding) as funding
    from intermediate.int_futures_funding_changes as c
    cross join reporting as r
    where {{ changed(account: c.account, at: c.snapshot_at, cut: month) }}
    group by all
),

daily as (
    select
        account,
        cast(date_trunc('month', pnl_date) as date) as pnl_month,
        sum(fill_count) as fill_count,
        sum(volume) as volume,
        sum(realized_pnl) as realized_pnl,
        sum(trading_fees) as trading_fees,
        sum(liquidation_fees) as liquidation_fees,
        sum(funding) as funding,
        sum(net_result) as net_result,
        count(*) as day_rows
    from marts.futures_pnl_daily
    where {{ changed(account: account, date: pnl_date, cut: month) }}
    group by all
),

monthly as (
    select
        account,
        pnl_month,
        sum(fill_count) as fill_count,
        sum(volume) as volume,
        sum(realized_pnl) as realized_pnl,
        sum(trading_fees) as trading_fees,
        sum(liquidation_fees) as liquidation_fees,
        sum(funding) as funding,
        sum(net_result) as net_result
    from marts.futures_pnl_monthly
    where {{ changed(account: account, date: pnl_month, cut: month) }}
    group by all
),

compared as (
    select
        account,
        pnl_month,
        coalesce(fills.fill_count, 0) as fills_count,
        daily.fill_count as daily_fill_count,
        monthly.fill_count as monthly_fill_count,
        fills.realized_pnl as fills_realized_pnl,
        daily.realized_pnl as daily_realized_pnl,
        monthly.realized_pnl as monthly_realized_pnl,
        funding.funding as snapshot_funding,
        daily.funding as daily_funding,
        monthly.funding as monthly_funding,
        -- Volumes are rounded to 12 decimals per contract and day in the mart, per fill here: they agree to that.
        abs(coalesce(fills.volume, 0) - coalesce(daily.volume, 0)) <= 0.000000000001 * (coalesce(fills.fill_count, 0) + coalesce(daily.day_rows, 0))
            and fills.trading_fees is not distinct from daily.trading_fees
            and fills.liquidation_fees is not distinct from daily.liquidation_fees
            and daily.volume is not distinct from monthly.volume
            and daily.trading_fees is not distinct from monthly.trading_fees
            and daily.liquidation_fees is not distinct from monthly.liquidation_fees
            and daily.net_result is not distinct from monthly.net_result as other_totals_agree
    from fills
    full join funding using (account, pnl_month)
    full join daily using (account, pnl_month)
    full join monthly using (account, pnl_month)
)

select *
from compared
where fills_count is distinct from coalesce(daily_fill_count, 0)
    or daily_fill_count is distinct from monthly_fill_count
    or fills_realized_pnl is distinct from daily_realized_pnl
    or daily_realized_pnl is distinct from monthly_realized_pnl
    or snapshot_funding is distinct from daily_funding
    or daily_funding is distinct from monthly_funding
    or not other_totals_agree
