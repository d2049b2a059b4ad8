-- What the journal posts, one row per source row with an amount: a day of spot realized PnL (the
-- journal's cost method, settings.journal), of futures realized PnL per contract, of futures
-- funding per margin coin, of futures and funding-account fees per coin, a month of affiliate
-- commission. Key: (entry_id). Inputs: marts.spot_realized_pnl_daily, marts.futures_pnl_daily,
-- marts.fees_daily, marts.affiliate_rebates_monthly, settings.journal, settings.reporting.
-- status: posted (marts.journal_entries has its two lines), no_price (amount_rc NULL: never posted
-- as 0), zero_value (an amount whose value rounds to 0 at 12 decimals: nothing to post).
-- amount is DECIMAL(38,18) (exchange amounts have up to 18 decimals); a spot realized PnL of 1e20 or
-- more (DECIMAL(38,12), legal) does not fit it: its amount is NULL (unknown at this scale, exact in
-- its source mart: source_model, source_key), and amount_rc and status come from the exact value.
-- Spot fees are not a source: spot realized PnL is already net of them (docs/workbooks.md "Conventions":
-- fees are in the cost basis and in the proceeds); posting them again would count them twice.
-- Empty without a reporting currency (nothing is valued).
with reporting as (
    select reporting_currency from settings.reporting where reporting_currency is not null
),

journal as (
    select * from settings.journal
),

spot as (
    select
        'spot_realized_pnl' as kind,
        'spot' as product,
        'marts.spot_realized_pnl_daily' as source_model,
        'account=' || account || '; cost_method=' || cost_method || '; symbol=' || symbol || '; trade_date=' || strftime(trade_date, '%Y-%m-%d') as source_key,
        'spot-pnl/' || account || '/' || cost_method || '/' || symbol || '/' || strftime(trade_date, '%Y-%m-%d') as entry_id,
        account,
        trade_date as entry_date,
        quote_coin as coin,
        cast(null as decimal(38, 18)) as amount_18,
        realized_pnl as amount_12,
        realized_pnl_rc as amount_rc,
        price,
        cost_method,
        symbol,
        'Spot realized PnL ' || symbol || ' (' || cost_method || ')' as description
    from marts.spot_realized_pnl_daily
    where cost_method = (select any_value(cost_method) from journal)
),

futures as (
    select
        'futures_realized_pnl' as kind,
        'futures' as product,
        'marts.futures_pnl_daily' as source_model,
        'account=' || account || '; margin_coin=' || margin_coin || '; symbol=' || symbol || '; pnl_date=' || strftime(pnl_date, '%Y-%m-%d') as source_key,
        'futures-pnl/' || account || '/' || margin_coin || '/' || symbol || '/' || strftime(pnl_date, '%Y-%m-%d') as entry_id,
        account,
        pnl_date as entry_date,
        margin_coin as coin,
        cast(realized_pnl as decimal(38, 18)) as amount_18,
        cast(null as decimal(38, 12)) as amount_12,
        realized_pnl_rc as amount_rc,
        price,
        cast(null as varchar) as cost_method,
        symbol,
        'Futures realized PnL ' || symbol as description
    from marts.futures_pnl_daily
    where symbol is not null
),

funding as (
    select
        'funding' as kind,
        'futures' as product,
        'marts.futures_pnl_daily' as source_model,
        'account=' || account || '; margin_coin=' || margin_coin || '; symbol=NULL; pnl_date=' || strftime(pnl_date, '%Y-%m-%d') as source_key,
        'funding/' || account || '/' || margin_coin || '/' || strftime(pnl_date, '%Y-%m-%d') as entry_id,
        account,
        pnl_date as entry_date,
        margin_coin as coin,
        cast(funding as decimal(38, 18)) as amount_18,
        cast(null as decimal(38, 12)) as amount_12,
        funding_rc as amount_rc,
        price,
        cast(null as varchar) as cost_method,
        cast(null as varchar) as symbol,
        'Futures funding ' || margin_coin as description
    from marts.futures_pnl_daily
    where symbol is null
),

-- Futures fees (trading plus liquidation, in the margin coin) and the funding account's bill fees.
fees as (
    select
        'fees' as kind,
        product,
        'marts.fees_daily' as source_model,
        'account=' || account || '; product=' || product || '; coin=' || coin || '; fee_date=' || strftime(fee_date, '%Y-%m-%d') as source_key,
        'fees/' || account || '/' || product || '/' || coin || '/' || strftime(fee_date, '%Y-%m-%d') as entry_id,
        account,
        fee_date as entry_date,
        coin,
        cast(fees_paid as decimal(38, 18)) as amount_18,
        cast(null as decimal(38, 12)) as amount_12,
        fees_paid_rc as amount_rc,
        price,
        cast(null as varchar) as cost_method,
        cast(null as varchar) as symbol,
        case product when 'futures' then 'Futures trading and liquidation fees ' else 'Funding account fees ' end || coin as description
    from marts.fees_daily
    where product in ('futures', 'funding')
),

-- Commission is valued per record (affiliate_rebates_monthly); a month's row is posted on the
-- month's last day, whole or not at all (NULL when one of its records lacks a price).
commission as (
    select
        'commission' as kind,
        'affiliate' as product,
        'marts.affiliate_rebates_monthly' as source_model,
        'account=' || account || '; commission_month=' || strftime(commission_month, '%Y-%m-%d') || '; coin=' || coin
            || '; product_type=' || coalesce(product_type, 'NULL') || '; source_type=' || coalesce(cast(source_type as varchar), 'NULL') || '; symbol=' || coalesce(symbol, 'NULL') as source_key,
        'commission/' || account || '/' || coin || '/' || strftime(commission_month, '%Y-%m') || '/' || coalesce(product_type, '-') || '/' || coalesce(cast(source_type as varchar), '-') || '/' || coalesce(symbol, '-') as entry_id,
        account,
        cast(last_day(commission_month) as date) as entry_date,
        coin,
        cast(commission as decimal(38, 18)) as amount_18,
        cast(null as decimal(38, 12)) as amount_12,
        commission_rc as amount_rc,
        cast(null as decimal(38, 18)) as price,
        cast(null as varchar) as cost_method,
        symbol,
        'Affiliate commission ' || coin || coalesce(' ' || symbol, '') as description
    from marts.affiliate_rebates_monthly
),

-- Each source carries its exact amount in its own type: amount_18 (DECIMAL(38,18): futures, funding,
-- fees, commission, whose exchange amounts have up to 18 decimals) or amount_12 (DECIMAL(38,12): spot
-- realized PnL, which may reach 1e20 and more), the other NULL. One amount column would be unioned
-- as DECIMAL(38,12) (DuckDB's common type), rounding the 18-decimal amounts.
sources as (
    select * from spot
    union all
    select * from futures
    union all
    select * from funding
    union all
    select * from fees
    union all
    select * from commission
),

final as (
    select
        sources.entry_id,
        sources.account,
        cast(date_trunc('month', sources.entry_date) as date) as period,
        sources.entry_date,
        sources.kind,
        sources.product,
        sources.source_model,
        sources.source_key,
        sources.coin,
        -- The native amount at the journal's scale; NULL (unknown here) for a spot amount of 1e20 or
        -- more, which DECIMAL(38,18) cannot hold (exact in its source mart). A DECIMAL literal, not
        -- the DOUBLE 1e20, so the comparison is exact.
        case
            when sources.amount_12 is null then sources.amount_18
            when abs(sources.amount_12) < 100000000000000000000.0 then cast(sources.amount_12 as decimal(38, 18))
        end as amount,
        reporting.reporting_currency,
        sources.price,
        cast(sources.amount_rc as decimal(38, 12)) as amount_rc,
        case when sources.amount_rc is null then 'no_price' when sources.amount_rc = 0 then 'zero_value' else 'posted' end as status,
        sources.cost_method,
        sources.symbol,
        sources.description
    from sources
    cross join reporting
    -- An amount of 0 (a day of buys only, a funding of 0) has nothing to post and needs no price.
    -- The exact amount decides (never the NULL of an amount beyond DECIMAL(38,18)); each column
    -- compared in its own type (a coalesce of the two would round amount_18 to 12 decimals).
    where sources.amount_18 <> 0 or sources.amount_12 <> 0
)

select * from final
