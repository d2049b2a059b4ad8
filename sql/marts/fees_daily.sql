-- Fees paid and traded volume per account, product ('spot' | 'futures' | 'funding'), coin and day (reporting zone).
-- Key: (account, product, coin, fee_date). Input: intermediate.int_fees_periods (legs: intermediate.int_fees_legs).
-- effective_fee_rate = fees_paid / fee_basis_volume, exact to 18 decimals, null where that basis is unknown or 0.
-- fees_paid_rc: fees_paid at the coin's price on fee_date (intermediate.int_prices), NULL without one.
with periods as (
    select * from intermediate.int_fees_periods
),

reporting as (
    select reporting_currency from settings.reporting
),

prices as (
    select * from intermediate.int_prices
),

days as (
    select
        account,
        product,
        coin,
        period_start as fee_date,
        -- Fees charged in this coin: spot fees (in the coin received), futures trading plus liquidation fees (in the
        -- margin coin), funding-account bill fees other than those of the spot fills' own buy and sell bills.
        fees_paid,
        liquidation_fees,
        -- Total of the trades quoted in this coin (null for the funding account, which does not trade).
        traded_volume,
        -- Volume, in this coin, of the trades whose fees are in this coin: spot buys by quantity, sells by total,
        -- futures by value when margin and quote coin are the same (else null, as for funding-account fees).
        fee_basis_volume,
        effective_fee_rate,
        -- Fills (or bills) whose fees are in this coin.
        fee_count
    from periods
    where period = 'day'
),

priced as (
    select
        days.*,
        reporting.reporting_currency,
        valued_price(days.coin, reporting.reporting_currency, prices.price) as price,
        valued_source(days.coin, reporting.reporting_currency, prices.price_source) as price_source
    from days
    cross join reporting
    left join prices on prices.coin = days.coin and prices.price_date = days.fee_date
),

final as (
    select
        * exclude (price, price_source),
        price,
        case when price is not null then fee_date end as price_date,
        price_source,
        valued_amount(fees_paid, price, reporting_currency) as fees_paid_rc,
        'fees_daily/' || concat_ws('/', ref_part(account), ref_part(product), ref_part(coin), ref_part(fee_date)) as reference
    from priced
)

select * from final
