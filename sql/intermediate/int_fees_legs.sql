-- Fees and traded volumes per day (reporting zone) in legs of one coin each, per source (spot symbol and side, futures
-- contract, bill biz type): coin_leg 'fee', 'volume', or 'fee_and_volume' where both are in one coin.
-- Key: (account, product, source, coin_leg, coin, event_date) with product 'spot' | 'futures' | 'funding'.
-- Inputs: intermediate.int_spot_trades, intermediate.int_futures_fill_days, staging.funding_bills, settings.reporting.
-- Spot fills are read from int_spot_trades (parsed there once, with their day in the reporting zone).
with spot_trades as (
    select * from intermediate.int_spot_trades
),

futures_days as (
    select * from intermediate.int_futures_fill_days
),

bills as (
    select * from staging.funding_bills
),

reporting as (
    select time_zone from settings.reporting
),

spot_days as (
    select
        account,
        symbol,
        base_coin,
        quote_coin,
        side,
        event_date,
        count(*) as fill_count,
        exact_decimal_18(sum(fee_e18)) as fees,
        exact_decimal_18(sum(fill_quantity_e18)) as quantity,
        -- Notionals reach 1e21 per fill: summed as in int_futures_fill_days, values below 1e12 at their own scale
        -- then rounded once to 12 decimals, larger ones rounded to DECIMAL(38,12) one by one.
        cast(exact_decimal_16(coalesce(sum(case when abs(fill_total_e16) < cast('10000000000000000000000000000' as hugeint) then fill_total_e16 end), 0)) as decimal(38, 12))
            + coalesce(sum(case when abs(fill_total_e16) >= cast('10000000000000000000000000000' as hugeint) then cast(exact_decimal_16(fill_total_e16) as decimal(38, 12)) end), 0)
            as total
    from spot_trades
    where lot_source = 'fill'
    group by all
),

-- A spot fee is charged in the coin received: the base coin on buys, the quote coin on sells (exchange-notes
-- "Fee and sign conventions"). fee_basis_volume is the volume, in the fee's coin, of the trades the fees were
-- charged on (a buy's quantity, a sell's total), so fees / fee_basis_volume is a rate in one coin;
-- traded_volume is the quote-coin total, on the quote coin's leg.
spot_legs as (
    select
        account,
        'spot' as product,
        symbol || ' ' || side as source,
        leg.coin_leg,
        case when leg.coin_leg = 'fee' then base_coin else quote_coin end as coin,
        event_date,
        case when leg.coin_leg = 'volume' then 0 else fill_count end as fee_count,
        case when leg.coin_leg = 'volume' then cast(0 as decimal(38, 18)) else fees end as fee,
        cast(0 as decimal(38, 18)) as liquidation_fee,
        case
            when leg.coin_leg = 'volume' then cast(0 as decimal(38, 12))
            when leg.coin_leg = 'fee' then cast(quantity as decimal(38, 12))
            else total
        end as fee_basis_volume,
        case when leg.coin_leg = 'fee' then cast(0 as decimal(38, 12)) else total end as traded_volume
    from spot_days
    -- Buys split into a base-coin fee leg and a quote-coin volume leg; a sell's fee and volume share its quote coin.
    cross join lateral (
        select unnest(case when side = 'buy' then ['fee', 'volume'] else ['fee_and_volume'] end) as coin_leg
    ) as leg
),

-- A futures fee (fill_fee plus liquidate_fee, both positive when paid) is in the contract's margin coin, its
-- volume (fill_value) in the quote coin. When the two differ (a coin-margined contract) or the contract was never
-- listed, the fees' basis volume is unknown (null), which leaves the rate null rather than wrong.
futures_legs as (
    select
        futures_days.account,
        'futures' as product,
        futures_days.symbol as source,
        leg.coin_leg,
        case when leg.coin_leg = 'volume' then futures_days.quote_coin else futures_days.margin_coin end as coin,
        futures_days.fill_date as event_date,
        case when leg.coin_leg = 'volume' then 0 else futures_days.fill_count end as fee_count,
        case when leg.coin_leg = 'volume' then cast(0 as decimal(38, 18)) else futures_days.trading_fees + futures_days.liquidation_fees end as fee,
        case when leg.coin_leg = 'volume' then cast(0 as decimal(38, 18)) else futures_days.liquidation_fees end as liquidation_fee,
        case
            when leg.coin_leg = 'volume' then cast(0 as decimal(38, 12))
            when leg.coin_leg = 'fee_and_volume' then futures_days.volume
        end as fee_basis_volume,
        case when leg.coin_leg = 'fee' then cast(0 as decimal(38, 12)) else futures_days.volume end as traded_volume
    from futures_days
    cross join lateral (
        select unnest(
            case when futures_days.margin_coin = futures_days.quote_coin then ['fee_and_volume'] else ['fee', 'volume'] end
        ) as coin_leg
    ) as leg
),

-- Funding account fees: withdrawal fees and the like. Bills of biz type buy and sell are the two legs of spot
-- fills (their fees are the fills' fees, counted above), so they are left out here. No traded volume.
funding_legs as (
    select
        bills.account,
        'funding' as product,
        bills.biz_type as source,
        'fee' as coin_leg,
        bills.coin_name as coin,
        local_date(bills.c_time_at, reporting.time_zone) as event_date,
        count(*) as fee_count,
        sum(bills.fees) as fee,
        cast(0 as decimal(38, 18)) as liquidation_fee,
        cast(null as decimal(38, 12)) as fee_basis_volume,
        cast(null as decimal(38, 12)) as traded_volume
    from bills
    cross join reporting
    where bills.fees <> 0 and bills.biz_type not in ('buy', 'sell')
    group by all
),

final as (
    select * from spot_legs
    union all
    select * from futures_legs
    union all
    select * from funding_legs
)

select * from final
