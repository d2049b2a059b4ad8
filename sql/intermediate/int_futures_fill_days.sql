-- Futures fills summed per account, contract and day (reporting zone), with the contract's margin and quote coin.
-- Key: (account, symbol, fill_date). Inputs: staging.futures_fills, staging.futures_contracts, settings.reporting.
-- Read once here for both futures PnL and fees: every fill's amounts are parsed from JSON text on each read.
with fills as (
    select * from staging.futures_fills
),

contracts as (
    select * from staging.futures_contracts
),

reporting as (
    select time_zone from settings.reporting
),

-- Margin and quote coin of each contract as last listed (by any account: the listing is public). A contract never
-- seen in a listing has null coins rather than guessed ones.
contract_coins as (
    select symbol, arg_max(coin, snapshot_at) as margin_coin, arg_max(quote_currency, snapshot_at) as quote_coin
    from contracts
    group by symbol
),

days as (
    select
        fills.account,
        fills.symbol,
        local_date(fills.created_time_at, reporting.time_zone) as fill_date,
        count(*) as fill_count,
        -- Notionals reach 1e21 per fill, and DECIMAL(38,16) overflows at 1e22: values below 1e12 are summed at
        -- their own scale (1e8 of them stay below 1e20) and the sum rounded once to 12 decimals; larger ones are
        -- rounded to DECIMAL(38,12) one by one (up to 1e26). Rounding each one would cost a 128-bit division per fill.
        cast(coalesce(sum(case when abs(fills.fill_value) < 1000000000000 then fills.fill_value end), 0) as decimal(38, 12))
            + coalesce(sum(case when abs(fills.fill_value) >= 1000000000000 then cast(fills.fill_value as decimal(38, 12)) end), 0)
            as volume,
        sum(fills.realize_pnl) as realized_pnl,
        sum(fills.fill_fee) as trading_fees,
        sum(fills.liquidate_fee) as liquidation_fees
    from fills
    cross join reporting
    group by all
),

final as (
    select
        days.account,
        days.symbol,
        contract_coins.margin_coin,
        contract_coins.quote_coin,
        days.fill_date,
        cast(date_trunc('month', days.fill_date) as date) as fill_month,
        days.fill_count,
        days.volume,
        days.realized_pnl,
        days.trading_fees,
        days.liquidation_fees
    from days
    left join contract_coins using (symbol)
)

select * from final
