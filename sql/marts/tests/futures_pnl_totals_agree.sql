-- Per account: every futures fill is in marts.futures_pnl_daily, its months add up to marts.futures_pnl_monthly, and
-- the funding rows add up to intermediate.int_futures_funding_changes. Lists accounts where any total differs
-- (volumes: beyond the rounding to 12 decimals).
with fills as (
    select
        account,
        count(*) as fill_count,
        sum(cast(fill_value as decimal(38, 12))) as volume,
        sum(realize_pnl) as realized_pnl,
        sum(fill_fee) as trading_fees,
        sum(liquidate_fee) as liquidation_fees
    from staging.futures_fills
    group by account
),

funding as (
    select account, sum(funding) as funding from intermediate.int_futures_funding_changes group by account
),

daily as (
    select
        account,
        sum(fill_count) as fill_count,
        sum(volume) as volume,
        sum(realized_pnl) as realized_pnl,
        sum(trading_fees) as trading_fees,
        sum(liquidation_fees) as liquidation_fees,
        sum(funding) as funding,
        sum(net_result) as net_result,
        count(*) as day_rows
    from marts.futures_pnl_daily
    group by account
),

monthly as (
    select
        account,
        sum(fill_count) as fill_count,
        sum(volume) as volume,
        sum(realized_pnl) as realized_pnl,
        sum(trading_fees) as trading_fees,
        sum(liquidation_fees) as liquidation_fees,
        sum(funding) as funding,
        sum(net_result) as net_result
    from marts.futures_pnl_monthly
    group by account
),

compared as (
    select
        account,
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
        abs(coalesce(fills.volume, 0) - coalesce(daily.volume, 0)) <= 0.000000000001 * (coalesce(fills.fill_count, 0) + daily.day_rows)
            and fills.trading_fees is not distinct from daily.trading_fees
            and fills.liquidation_fees is not distinct from daily.liquidation_fees
            and daily.volume is not distinct from monthly.volume
            and daily.trading_fees is not distinct from monthly.trading_fees
            and daily.liquidation_fees is not distinct from monthly.liquidation_fees
            and daily.net_result is not distinct from monthly.net_result as other_totals_agree
    from fills
    full join funding using (account)
    full join daily using (account)
    full join monthly using (account)
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
