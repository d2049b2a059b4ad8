-- Affiliate commission per account, month (reporting zone), coin, product type, source type and symbol.
-- Key: (account, commission_month, coin, product_type, source_type, symbol).
-- Inputs: staging.affiliate_commissions, settings.reporting, intermediate.int_prices. source_type: 1 direct client, 2 sub-agent.
-- commission_rc: each record's commission at the coin's price on its day (reporting zone), summed;
-- NULL when a record lacks a price (unpriced_records counts them; docs/workbooks.md "Reporting currency").
with commissions as (
    select * from staging.affiliate_commissions
),

reporting as (
    select time_zone, reporting_currency from settings.reporting
),

prices as (
    select * from intermediate.int_prices
),

valued as (
    select
        commissions.*,
        valued_amount(
            commissions.commission,
            valued_price(commissions.coin, reporting.reporting_currency, prices.price),
            reporting.reporting_currency
        ) as commission_rc
    from commissions
    cross join reporting
    left join prices on prices.coin = commissions.coin and prices.price_date = local_date(commissions.deal_time_at, reporting.time_zone)
),

totals as (
    select
        commissions.account,
        cast(date_trunc('month', local_date(commissions.deal_time_at, reporting.time_zone)) as date) as commission_month,
        commissions.coin,
        commissions.product_type,
        commissions.source_type,
        -- The code's meaning (exchange-api.md, getAffiliateCommission: sourceType).
        case commissions.source_type when 1 then 'direct client' when 2 then 'sub-agent' else 'code ' || commissions.source_type end as source_type_name,
        commissions.symbol,
        sum(commissions.commission) as commission,
        -- fee: the invited users' net trading fees the commission was paid on.
        sum(commissions.fee) as fee,
        sum(cast(commissions.taker_amount as decimal(38, 12))) as taker_volume,
        sum(cast(commissions.maker_amount as decimal(38, 12))) as maker_volume,
        -- Identical records are distinct rows in staging (no id on the wire), so each counts.
        count(*) as record_count,
        count(distinct commissions.uid) as invited_user_count,
        any_value(reporting.reporting_currency) as reporting_currency,
        case when count(*) filter (where commissions.commission_rc is null) = 0 then sum(commissions.commission_rc) end as commission_rc,
        count(*) filter (where commissions.commission_rc is null and reporting.reporting_currency is not null) as unpriced_records
    from valued as commissions
    cross join reporting
    group by all
),

-- Each row's reference (sql/macros/references.sql).
final as (
    select
        *,
        'affiliate_rebates_monthly/' || concat_ws('/', ref_part(account), ref_part(ref_month(commission_month)), ref_part(coin), ref_part(product_type), ref_part(source_type), ref_part(symbol)) as reference
    from totals
)

select * from final
