-- Fees paid and traded volume per account, product ('spot' | 'futures' | 'funding'), coin and day (reporting zone).
-- Key: (account, product, coin, fee_date). Input: intermediate.int_fees_periods (legs: intermediate.int_fees_legs).
-- fees_paid: fees charged in this coin (futures: trading plus liquidation fees; funding: bill fees other than the
-- spot fills' own bills). traded_volume: total of the trades quoted in this coin (null for the funding account).
-- fee_basis_volume: volume, in this coin, of the trades whose fees are in this coin (spot buys by quantity, sells by
-- total); effective_fee_rate = fees_paid / fee_basis_volume, exact to 18 decimals, null where that basis is unknown or 0.
with periods as (
    select * from intermediate.int_fees_periods
),

final as (
    select
        account,
        product,
        coin,
        period_start as fee_date,
        fees_paid,
        liquidation_fees,
        traded_volume,
        fee_basis_volume,
        effective_fee_rate,
        fee_count
    from periods
    where period = 'day'
)

select * from final
