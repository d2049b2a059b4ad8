-- Futures result per account, margin coin, contract and day (reporting zone), and funding per account, margin coin and day.
-- Key: (account, margin_coin, symbol, pnl_date); symbol is null on the funding rows (the collateral, and so its
-- running funding total, is per coin, not per contract). Inputs: staging.futures_fills, staging.futures_contracts,
-- intermediate.int_futures_funding_changes, settings.reporting. Sum net_result over a day's rows for the day's total.
with fills as (
    select * from staging.futures_fills
),

contracts as (
    select * from staging.futures_contracts
),

funding_changes as (
    select * from intermediate.int_futures_funding_changes
),

reporting as (
    select time_zone from settings.reporting
),

-- The margin coin of each contract as last listed (by any account: the listing is public). A contract never seen
-- in a listing has a null margin coin rather than a guessed one.
contract_coins as (
    select symbol, arg_max(coin, snapshot_at) as margin_coin
    from contracts
    group by symbol
),

-- realize_pnl is taken as excluding fees on every fill: it is 0 on opening fills while their fee is charged
-- (exchange-notes "Fee and sign conventions"), the exchange does not say whether closing fills net their fee,
-- and the collateral moves by realized PnL minus fees (the sandbox's futures-ledger.ts). So net_result
-- subtracts trading and liquidation fees once. fill_fee is positive when paid (a negative one is a rebate).
contract_days as (
    select
        fills.account,
        contract_coins.margin_coin,
        fills.symbol,
        cast(timezone(reporting.time_zone, fills.created_time_at) as date) as pnl_date,
        count(*) as fill_count,
        -- Notionals reach 1e21 per fill: summed as DECIMAL(38,12) (up to 1e26), never at the fill's scale.
        sum(cast(fills.fill_value as decimal(38, 12))) as volume,
        sum(fills.realize_pnl) as realized_pnl,
        sum(fills.fill_fee) as trading_fees,
        sum(fills.liquidate_fee) as liquidation_fees
    from fills
    cross join reporting
    left join contract_coins using (symbol)
    group by all
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

final as (
    select
        account,
        margin_coin,
        symbol,
        pnl_date,
        fill_count,
        volume,
        realized_pnl,
        trading_fees,
        liquidation_fees,
        -- Funding is known per coin only: null on contract rows, its own row below.
        cast(null as decimal(38, 18)) as funding,
        realized_pnl - trading_fees - liquidation_fees as net_result,
        cast(null as timestamptz) as funding_from_at,
        cast(null as timestamptz) as funding_to_at
    from contract_days
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
)

select * from final
