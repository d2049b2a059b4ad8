-- Futures result per account, margin coin, contract and month (reporting zone), and funding per account, margin coin and month.
-- Key: (account, margin_coin, symbol, pnl_month); symbol is null on the funding rows (see futures_pnl_daily).
-- Input: marts.futures_pnl_daily (a month is the sum of its local days, so the two always agree).
with daily as (
    select * from marts.futures_pnl_daily
),

final as (
    select
        account,
        margin_coin,
        symbol,
        cast(date_trunc('month', pnl_date) as date) as pnl_month,
        cast(sum(fill_count) as bigint) as fill_count,
        sum(volume) as volume,
        sum(realized_pnl) as realized_pnl,
        sum(trading_fees) as trading_fees,
        sum(liquidation_fees) as liquidation_fees,
        sum(funding) as funding,
        sum(net_result) as net_result,
        min(funding_from_at) as funding_from_at,
        max(funding_to_at) as funding_to_at
    from daily
    group by all
)

select * from final
