-- Futures result per account, margin coin, contract and day (reporting zone), and funding per account, margin coin and day.
-- Key: (account, margin_coin, symbol, pnl_date); symbol is null on the funding rows (the collateral, and so its
-- running funding total, is per coin, not per contract). Inputs: intermediate.int_futures_fill_days,
-- intermediate.int_futures_funding_changes. Sum net_result over a day's rows for the day's total.
-- *_rc: the amounts in settings.reporting's currency at the margin coin's price on pnl_date
-- (intermediate.int_prices; docs/workbooks.md "Reporting currency"), NULL where it has none.
with fill_days as (
    select * from intermediate.int_futures_fill_days
),

funding_changes as (
    select * from intermediate.int_futures_funding_changes
),

funding_days as (
    select
        account,
        margin_coin,
        snapshot_date as pnl_date,
        sum(funding) as funding,
        min(previous_snapshot_at) as funding_from_at,
        max(snapshot_at) as funding_to_at
    from funding_changes
    group by all
),

results as (
    select
        account,
        margin_coin,
        symbol,
        fill_date as pnl_date,
        fill_count,
        volume,
        realized_pnl,
        trading_fees,
        liquidation_fees,
        -- Funding is known per coin only: null on contract rows, its own row below.
        cast(null as decimal(38, 18)) as funding,
        -- realize_pnl is taken as excluding fees on every fill: it is 0 on opening fills while their fee is
        -- charged (exchange-notes "Fee and sign conventions"), the exchange does not say whether closing fills net
        -- their fee, and the collateral moves by realized PnL minus fees (the sandbox's futures-ledger.ts). So fees
        -- are subtracted once here. fill_fee is positive when paid (a negative one would be a rebate).
        realized_pnl - trading_fees - liquidation_fees as net_result,
        cast(null as timestamptz) as funding_from_at,
        cast(null as timestamptz) as funding_to_at
    from fill_days
    union all
    select
        account,
        margin_coin,
        cast(null as varchar) as symbol,
        pnl_date,
        cast(null as bigint) as fill_count,
        cast(null as decimal(38, 12)) as volume,
        cast(null as decimal(38, 18)) as realized_pnl,
        cast(null as decimal(38, 18)) as trading_fees,
        cast(null as decimal(38, 18)) as liquidation_fees,
        -- Attributed to the day of the later snapshot; funding_from_at..funding_to_at is the span it covers.
        funding,
        funding as net_result,
        funding_from_at,
        funding_to_at
    from funding_days
),

reporting as (
    select reporting_currency from settings.reporting
),

prices as (
    select * from intermediate.int_prices
),

priced as (
    select
        results.*,
        reporting.reporting_currency,
        valued_price(results.margin_coin, reporting.reporting_currency, prices.price) as price,
        valued_source(results.margin_coin, reporting.reporting_currency, prices.price_source) as price_source
    from results
    cross join reporting
    left join prices on prices.coin = results.margin_coin and prices.price_date = results.pnl_date
),

final as (
    select
        * exclude (price, price_source),
        price,
        case when price is not null then pnl_date end as price_date,
        price_source,
        valued_amount(realized_pnl, price, reporting_currency) as realized_pnl_rc,
        valued_amount(trading_fees, price, reporting_currency) as trading_fees_rc,
        valued_amount(liquidation_fees, price, reporting_currency) as liquidation_fees_rc,
        valued_amount(funding, price, reporting_currency) as funding_rc,
        valued_amount(net_result, price, reporting_currency) as net_result_rc,
        'futures_pnl_daily/' || concat_ws('/', ref_part(account), ref_part(margin_coin), ref_part(symbol), ref_part(pnl_date)) as reference
    from priced
)

select * from final
