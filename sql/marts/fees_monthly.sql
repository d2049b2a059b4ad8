-- Fees paid and traded volume per account, product ('spot' | 'futures' | 'funding'), coin and month (reporting zone).
-- Key: (account, product, coin, fee_month). Input: intermediate.int_fees_periods. Columns as in fees_daily; the
-- rate is the month's fees over the month's basis volume (not an average of daily rates).
with periods as (
    select * from intermediate.int_fees_periods
),

final as (
    select
        account,
        product,
        coin,
        period_start as fee_month,
        fees_paid,
        liquidation_fees,
        traded_volume,
        fee_basis_volume,
        effective_fee_rate,
        fee_count
    from periods
    where period = 'month'
)

select * from final
