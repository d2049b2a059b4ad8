-- Fees paid and traded volume per account, product, coin and reporting-zone day, and per month, with the exact
-- effective fee rate. Key: (account, product, coin, period, period_start) with period 'day' | 'month'.
-- Input: intermediate.int_fees_legs. Both grains come from one grouping so the rate is written once.
with legs as (
    select * from intermediate.int_fees_legs
),

dated as (
    select *, cast(date_trunc('month', event_date) as date) as event_month
    from legs
),

grouped as (
    select
        account,
        product,
        coin,
        case when grouping(event_date) = 0 then 'day' else 'month' end as period,
        coalesce(event_date, event_month) as period_start,
        sum(fee) as fees_paid,
        sum(liquidation_fee) as liquidation_fees,
        sum(traded_volume) as traded_volume,
        -- Known only if every fee in the group has a basis in its own coin (funding bills and coin-margined
        -- futures have none).
        case
            when coalesce(bool_and(fee_basis_volume is not null) filter (where coin_leg <> 'volume'), true)
            then sum(fee_basis_volume)
        end as fee_basis_volume,
        cast(sum(fee_count) as bigint) as fee_count
    from dated
    group by grouping sets ((account, product, coin, event_date), (account, product, coin, event_month))
),

-- fees_paid / fee_basis_volume without DOUBLE (DECIMAL / DECIMAL is DOUBLE in DuckDB): as integers, fees in
-- units of 1e-18 (n) over the volume in units of 1e-18 (d = 1e-12 units * 1e6). Past 1e31 units of 1e-12
-- (a volume of 1e19) d would leave int128, so both are taken in units of 1e-12 instead (the fee rounded to
-- 1e-12, a relative error below 1e-31 at such volumes).
units as (
    select
        *,
        case
            when exact_money_units(fee_basis_volume) < cast('10000000000000000000000000000000' as hugeint)
            then abs(exact_qty_units(fees_paid))
            else abs(exact_round_div(exact_qty_units(fees_paid), cast(1000000 as hugeint)))
        end as rate_n,
        case
            when exact_money_units(fee_basis_volume) < cast('10000000000000000000000000000000' as hugeint)
            then exact_money_units(fee_basis_volume) * cast(1000000 as hugeint)
            else exact_money_units(fee_basis_volume)
        end as rate_d
    from grouped
),

final as (
    select
        account,
        product,
        coin,
        period,
        period_start,
        fees_paid,
        liquidation_fees,
        traded_volume,
        fee_basis_volume,
        -- n / d = whole part + exact_ratio of the remainder (in units of 1e-36), rounded half away from zero to 18 decimals.
        case
            when fee_basis_volume > 0 then exact_qty(
                sign(exact_qty_units(fees_paid)) * (
                    (rate_n // rate_d) * cast(1000000000000000000 as hugeint)
                    + exact_round_div(exact_ratio(rate_n % rate_d, rate_d), cast(1000000000000000000 as hugeint))
                )
            )
        end as effective_fee_rate,
        fee_count
    from units
)

select * from final
