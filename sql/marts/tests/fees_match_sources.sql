-- Per account, product and day (reporting zone), marts.fees_daily holds every fee and volume of its sources: spot
-- fills, futures fills (fee plus liquidation fee), and funding bills other than the spot fills' own buy and sell
-- bills (volumes to their rounding at 12 decimals). Per day, so that a difference names its day, and so that a
-- check of what changed can compare the days from the changed one on.
-- Checking what changed (docs/architecture.md "The incremental check"): a day's sources and its mart rows
-- share the account and the day, so the days of the changed accounts from the changed instant's day on
-- (cut: day) are complete on both sides; any symbol's change selects the account's days (no symbol here).
-- The days are the mart's: those of the time zone it was built with (settings.model_builds), which a build
-- refused for another zone leaves as they were while settings.reporting names the new one.
with reporting as (
    select coalesce(
        (select any_value(time_zone) from settings.model_builds where model = 'marts.fees_daily'),
        (select any_value(time_zone) from settings.reporting)
    ) as time_zone
),

sources as (
    select f.account, 'spot' as product, local_date(f.c_time_at, r.time_zone) as fee_date,
        sum(f.fees) as fees_paid, sum(cast(f.fill_total_amount as decimal(38, 12))) as traded_volume, count(*) as records
    from staging.spot_fills as f
    cross join reporting as r
    where lower(f.side) in ('buy', 'sell') and {{ changed(account: f.account, at: f.c_time_at, cut: day) }}
    group by all
    union all
    select f.account, 'futures', local_date(f.created_time_at, r.time_zone),
        sum(f.fill_fee + f.liquidate_fee), sum(cast(f.fill_value as decimal(38, 12))), count(*)
    from staging.futures_fills as f
    cross join reporting as r
    where {{ changed(account: f.account, at: f.created_time_at, cut: day) }}
    group by all
    union all
    select b.account, 'funding', local_date(b.c_time_at, r.time_zone), sum(b.fees), null, 0
    from staging.funding_bills as b
    cross join reporting as r
    where b.fees <> 0 and b.biz_type not in ('buy', 'sell') and {{ changed(account: b.account, at: b.c_time_at, cut: day) }}
    group by all
),

mart as (
    select account, product, fee_date, sum(fees_paid) as fees_paid, sum(traded_volume) as traded_volume, count(*) as mart_rows
    from marts.fees_daily
    where {{ changed(account: account, date: fee_date) }}
    group by account, product, fee_date
)

select
    coalesce(sources.account, mart.account) as account,
    coalesce(sources.product, mart.product) as product,
    coalesce(sources.fee_date, mart.fee_date) as fee_date,
    sources.fees_paid as source_fees_paid,
    mart.fees_paid as mart_fees_paid,
    sources.traded_volume as source_traded_volume,
    mart.traded_volume as mart_traded_volume
from sources
full join mart on sources.account = mart.account and sources.product = mart.product and sources.fee_date = mart.fee_date
where sources.fees_paid is distinct from mart.fees_paid
    or (sources.traded_volume is null) <> (mart.traded_volume is null)
    -- Volumes are rounded to 12 decimals per symbol, side and day in the mart, per fill here: they agree to that.
    or abs(sources.traded_volume - mart.traded_volume) > 0.000000000001 * (coalesce(sources.records, 0) + mart.mart_rows)
