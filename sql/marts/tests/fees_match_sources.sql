-- Per account and product, marts.fees_daily holds every fee and volume of its sources: spot fills, futures fills
-- (fee plus liquidation fee), and funding bills other than the spot fills' own buy and sell bills (volumes to
-- their rounding at 12 decimals).
with sources as (
    select account, 'spot' as product, sum(fees) as fees_paid, sum(cast(fill_total_amount as decimal(38, 12))) as traded_volume
    from staging.spot_fills
    where lower(side) in ('buy', 'sell')
    group by account
    union all
    select account, 'futures', sum(fill_fee + liquidate_fee), sum(cast(fill_value as decimal(38, 12)))
    from staging.futures_fills
    group by account
    union all
    select account, 'funding', sum(fees), null
    from staging.funding_bills
    where fees <> 0 and biz_type not in ('buy', 'sell')
    group by account
),

mart as (
    select account, product, sum(fees_paid) as fees_paid, sum(traded_volume) as traded_volume, count(*) as mart_rows
    from marts.fees_daily
    group by account, product
),

source_counts as (
    select account, 'spot' as product, count(*) as records from staging.spot_fills group by account
    union all
    select account, 'futures', count(*) from staging.futures_fills group by account
)

select
    coalesce(sources.account, mart.account) as account,
    coalesce(sources.product, mart.product) as product,
    sources.fees_paid as source_fees_paid,
    mart.fees_paid as mart_fees_paid,
    sources.traded_volume as source_traded_volume,
    mart.traded_volume as mart_traded_volume
from sources
full join mart on sources.account = mart.account and sources.product = mart.product
left join source_counts on source_counts.account = sources.account and source_counts.product = sources.product
where sources.fees_paid is distinct from mart.fees_paid
    or (sources.traded_volume is null) <> (mart.traded_volume is null)
    -- Volumes are rounded to 12 decimals per symbol, side and day in the mart, per fill here: they agree to that.
    or abs(sources.traded_volume - mart.traded_volume) > 0.000000000001 * (coalesce(source_counts.records, 0) + mart.mart_rows)
