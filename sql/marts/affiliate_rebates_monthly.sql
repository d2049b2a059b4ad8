-- Affiliate commission per account, month (reporting zone), coin, product type, source type and symbol.
-- Key: (account, commission_month, coin, product_type, source_type, symbol).
-- Inputs: staging.affiliate_commissions, settings.reporting. source_type: 1 direct client, 2 sub-agent.
with commissions as (
    select * from staging.affiliate_commissions
),

reporting as (
    select time_zone from settings.reporting
),

final as (
    select
        commissions.account,
        cast(date_trunc('month', local_date(commissions.deal_time_at, reporting.time_zone)) as date) as commission_month,
        commissions.coin,
        commissions.product_type,
        commissions.source_type,
        commissions.symbol,
        sum(commissions.commission) as commission,
        -- fee: the invited users' net trading fees the commission was paid on.
        sum(commissions.fee) as fee,
        sum(cast(commissions.taker_amount as decimal(38, 12))) as taker_volume,
        sum(cast(commissions.maker_amount as decimal(38, 12))) as maker_volume,
        -- Identical records are distinct rows in staging (no id on the wire), so each counts.
        count(*) as record_count,
        count(distinct commissions.uid) as invited_user_count
    from commissions
    cross join reporting
    group by all
)

select * from final
