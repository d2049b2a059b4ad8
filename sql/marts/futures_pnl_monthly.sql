-- Futures result per account, margin coin, contract and month (reporting zone), and funding per account, margin coin and month.
-- Key: (account, margin_coin, symbol, pnl_month); symbol is null on the funding rows (see futures_pnl_daily).
-- Input: marts.futures_pnl_daily (a month is the sum of its local days, so the two always agree).
with daily as (
    select
        *,
        -- A day with an amount but no price to value it (listed in marts.needs_price).
        reporting_currency is not null and price is null and coalesce(net_result, 0) <> 0 as is_unpriced
    from marts.futures_pnl_daily
),

totals as (
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
        max(funding_to_at) as funding_to_at,
        any_value(reporting_currency) as reporting_currency,
        -- In the reporting currency: the sum of the days' values, NULL when a day lacks a price.
        case when count(*) filter (where is_unpriced) = 0 then sum(realized_pnl_rc) end as realized_pnl_rc,
        case when count(*) filter (where is_unpriced) = 0 then sum(trading_fees_rc) end as trading_fees_rc,
        case when count(*) filter (where is_unpriced) = 0 then sum(liquidation_fees_rc) end as liquidation_fees_rc,
        case when count(*) filter (where is_unpriced) = 0 then sum(funding_rc) end as funding_rc,
        case when count(*) filter (where is_unpriced) = 0 then sum(net_result_rc) end as net_result_rc,
        count(*) filter (where is_unpriced) as unpriced_days
    from daily
    group by account, margin_coin, symbol, pnl_month
),

-- Each row's reference (sql/macros/references.sql).
final as (
    select
        *,
        'futures_pnl_monthly/' || concat_ws('/', ref_part(account), ref_part(margin_coin), ref_part(symbol), ref_part(ref_month(pnl_month))) as reference
    from totals
)

select * from final
