-- Fees paid and traded volume per account, product ('spot' | 'futures' | 'funding'), coin and month (reporting zone).
-- Key: (account, product, coin, fee_month). Input: intermediate.int_fees_periods. Columns as in fees_daily; the
-- rate is the month's fees over the month's basis volume (not an average of daily rates).
-- fees_paid_rc: the sum over the month's days of each day's fees at its price (as fees_daily's
-- fees_paid_rc; intermediate.int_prices), NULL when a day lacks a price (unpriced_days counts them).
with periods as (
    select * from intermediate.int_fees_periods
),

reporting as (
    select reporting_currency from settings.reporting
),

prices as (
    select * from intermediate.int_prices
),

daily as (
    select
        periods.account,
        periods.product,
        periods.coin,
        periods.period_start as fee_date,
        reporting.reporting_currency,
        valued_amount(
            periods.fees_paid,
            valued_price(periods.coin, reporting.reporting_currency, prices.price),
            reporting.reporting_currency
        ) as fees_paid_rc
    from periods
    cross join reporting
    left join prices on prices.coin = periods.coin and prices.price_date = periods.period_start
    where periods.period = 'day'
),

valued as (
    select
        account,
        product,
        coin,
        cast(date_trunc('month', fee_date) as date) as fee_month,
        any_value(reporting_currency) as reporting_currency,
        case when count(*) filter (where fees_paid_rc is null) = 0 then sum(fees_paid_rc) end as fees_paid_rc,
        count(*) filter (where fees_paid_rc is null and reporting_currency is not null) as unpriced_days
    from daily
    group by all
),

final as (
    select
        periods.account,
        periods.product,
        periods.coin,
        periods.period_start as fee_month,
        periods.fees_paid,
        periods.liquidation_fees,
        periods.traded_volume,
        periods.fee_basis_volume,
        periods.effective_fee_rate,
        periods.fee_count,
        valued.reporting_currency,
        valued.fees_paid_rc,
        coalesce(valued.unpriced_days, 0) as unpriced_days,
        'fees_monthly/' || concat_ws('/', ref_part(periods.account), ref_part(periods.product), ref_part(periods.coin), ref_part(ref_month(periods.period_start))) as reference
    from periods
    left join valued
        on valued.account = periods.account and valued.product = periods.product
        and valued.coin is not distinct from periods.coin and valued.fee_month = periods.period_start
    where periods.period = 'month'
)

select * from final
