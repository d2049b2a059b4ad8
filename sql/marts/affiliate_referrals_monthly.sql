-- Invited users' activity per account, invited user (uid) and month: deposits, withdrawals, spot and futures volume, commission.
-- Key: (account, uid, activity_month). Input: staging.affiliate_referrals (totals per user and UTC day).
-- The exchange only gives totals per requested range, so days are UTC days on the exchange side: a month here is the
-- month of the UTC day, whatever the reporting zone (in a non-UTC zone a day's activity is bucketed by its UTC day).
with referrals as (
    select * from staging.affiliate_referrals
),

totals as (
    select
        account,
        uid,
        cast(date_trunc('month', activity_date) as date) as activity_month,
        sum(deposit_amount) as deposit_amount,
        sum(withdrawal_amount) as withdrawal_amount,
        sum(cast(spot_trading_amount as decimal(38, 12))) as spot_volume,
        sum(cast(futures_trading_amount as decimal(38, 12))) as futures_volume,
        sum(commission) as commission,
        count(*) as active_days
    from referrals
    group by all
),

-- Each row's reference (sql/macros/references.sql).
final as (
    select
        *,
        'affiliate_referrals_monthly/' || concat_ws('/', ref_part(account), ref_part(uid), ref_part(ref_month(activity_month))) as reference
    from totals
)

select * from final
