-- Fees and traded volumes as legs in one coin each: a spot buy gives a fee leg in its base coin and a volume leg
-- in its quote coin, a spot sell or a futures fill one leg for both, a funding bill with a fee one fee leg.
-- Key: (account, product, source_id, coin_leg) with product 'spot' | 'futures' | 'funding'.
-- Inputs: staging.spot_fills, staging.futures_fills, staging.futures_contracts, staging.funding_bills, settings.reporting.
with spot_fills as (
    select * from staging.spot_fills
),

futures_fills as (
    select * from staging.futures_fills
),

contracts as (
    select * from staging.futures_contracts
),

bills as (
    select * from staging.funding_bills
),

reporting as (
    select time_zone from settings.reporting
),

-- Margin and quote coin of each contract as last listed (the listing is public: any account's snapshot will do).
contract_coins as (
    select symbol, arg_max(coin, snapshot_at) as margin_coin, arg_max(quote_currency, snapshot_at) as quote_coin
    from contracts
    group by symbol
),

-- A spot fee is charged in the coin received: the base coin on buys, the quote coin on sells (exchange-notes
-- "Fee and sign conventions"). fee_basis_volume is the volume, in the fee's coin, of the trade the fee was
-- charged on (a buy's quantity, a sell's total), so fee / fee_basis_volume is a rate in one coin;
-- traded_volume is the quote-coin total, booked on the quote coin's leg.
spot_legs as (
    select
        account,
        'spot' as product,
        fill_id as source_id,
        leg.coin_leg,
        case when leg.coin_leg = 'fee' then base_coin else quote_coin end as coin,
        c_time_at as event_at,
        case when leg.coin_leg = 'volume' then cast(0 as decimal(38, 18)) else fees end as fee,
        cast(0 as decimal(38, 18)) as liquidation_fee,
        case
            when leg.coin_leg = 'volume' then cast(0 as decimal(38, 12))
            when leg.coin_leg = 'fee' then cast(fill_quantity as decimal(38, 12))
            else cast(fill_total_amount as decimal(38, 12))
        end as fee_basis_volume,
        case when leg.coin_leg = 'fee' then cast(0 as decimal(38, 12)) else cast(fill_total_amount as decimal(38, 12)) end as traded_volume,
        leg.coin_leg <> 'volume' as is_fee_record
    from spot_fills
    -- Buys split into a base-coin fee leg and a quote-coin volume leg; sells have one quote-coin leg for both.
    cross join lateral (
        select unnest(case when lower(side) = 'buy' then ['fee', 'volume'] else ['fee_and_volume'] end) as coin_leg
    ) as leg
    where lower(side) in ('buy', 'sell')
),

-- A futures fee (fill_fee plus liquidate_fee, both positive when paid) is in the contract's margin coin, its
-- volume (fill_value) in the quote coin. When the two differ (a coin-margined contract) or a contract was never
-- listed, the fee's basis volume is unknown (null), which leaves that day's rate null rather than wrong.
futures_legs as (
    select
        futures_fills.account,
        'futures' as product,
        futures_fills.trade_id as source_id,
        leg.coin_leg,
        case when leg.coin_leg = 'volume' then contract_coins.quote_coin else contract_coins.margin_coin end as coin,
        futures_fills.created_time_at as event_at,
        case when leg.coin_leg = 'volume' then cast(0 as decimal(38, 18)) else futures_fills.fill_fee + futures_fills.liquidate_fee end as fee,
        case when leg.coin_leg = 'volume' then cast(0 as decimal(38, 18)) else futures_fills.liquidate_fee end as liquidation_fee,
        case
            when leg.coin_leg = 'volume' then cast(0 as decimal(38, 12))
            when leg.coin_leg = 'fee_and_volume' then cast(futures_fills.fill_value as decimal(38, 12))
        end as fee_basis_volume,
        case when leg.coin_leg = 'fee' then cast(0 as decimal(38, 12)) else cast(futures_fills.fill_value as decimal(38, 12)) end as traded_volume,
        leg.coin_leg <> 'volume' as is_fee_record
    from futures_fills
    left join contract_coins using (symbol)
    cross join lateral (
        select unnest(
            case
                when contract_coins.margin_coin = contract_coins.quote_coin then ['fee_and_volume']
                else ['fee', 'volume']
            end
        ) as coin_leg
    ) as leg
),

-- Funding account fees: withdrawal fees and the like. Bills of biz type buy and sell are the two legs of spot
-- fills (their fees are the fills' fees, already counted above), so they are left out here.
funding_legs as (
    select
        account,
        'funding' as product,
        bill_id as source_id,
        'fee' as coin_leg,
        coin_name as coin,
        c_time_at as event_at,
        fees as fee,
        cast(0 as decimal(38, 18)) as liquidation_fee,
        cast(null as decimal(38, 12)) as fee_basis_volume,
        cast(null as decimal(38, 12)) as traded_volume,
        true as is_fee_record
    from bills
    where fees <> 0 and biz_type not in ('buy', 'sell')
),

legs as (
    select * from spot_legs
    union all
    select * from futures_legs
    union all
    select * from funding_legs
),

final as (
    select
        legs.account,
        legs.product,
        legs.source_id,
        legs.coin_leg,
        legs.coin,
        legs.event_at,
        cast(timezone(reporting.time_zone, legs.event_at) as date) as event_date,
        cast(date_trunc('month', cast(timezone(reporting.time_zone, legs.event_at) as date)) as date) as event_month,
        legs.fee,
        legs.liquidation_fee,
        legs.fee_basis_volume,
        legs.traded_volume,
        legs.is_fee_record
    from legs
    cross join reporting
)

select * from final
