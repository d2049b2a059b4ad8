-- Each row of marts.fees_monthly is the sum of its days in marts.fees_daily (a basis volume unknown on any day
-- leaves the month's unknown), and the rate is null exactly where the basis is unknown or 0.
-- Checking what changed: whole (no {{ changed }}): a row per account, product, coin and day or month, small next to
-- the fills.
with days as (
    select
        account, product, coin,
        cast(date_trunc('month', fee_date) as date) as fee_month,
        sum(fees_paid) as fees_paid,
        sum(liquidation_fees) as liquidation_fees,
        sum(traded_volume) as traded_volume,
        case when count(*) filter (where fee_basis_volume is null) = 0 then sum(fee_basis_volume) end as fee_basis_volume,
        sum(fee_count) as fee_count
    from marts.fees_daily
    group by all
)

select
    coalesce(months.account, days.account) as account,
    coalesce(months.product, days.product) as product,
    coalesce(months.coin, days.coin) as coin,
    coalesce(months.fee_month, days.fee_month) as fee_month,
    months.fees_paid as monthly_fees_paid,
    days.fees_paid as daily_fees_paid,
    months.fee_basis_volume as monthly_fee_basis_volume,
    days.fee_basis_volume as daily_fee_basis_volume,
    months.effective_fee_rate
from marts.fees_monthly as months
full join days
    on months.account = days.account
    and months.product = days.product
    and months.coin is not distinct from days.coin
    and months.fee_month = days.fee_month
where months.fees_paid is distinct from days.fees_paid
    or months.liquidation_fees is distinct from days.liquidation_fees
    or months.traded_volume is distinct from days.traded_volume
    or months.fee_basis_volume is distinct from days.fee_basis_volume
    or months.fee_count is distinct from days.fee_count
    or (months.effective_fee_rate is null) <> (coalesce(months.fee_basis_volume, 0) = 0)
