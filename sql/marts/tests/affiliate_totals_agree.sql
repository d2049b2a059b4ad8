-- Per account, marts.affiliate_rebates_monthly holds every commission record of staging.affiliate_commissions, and
-- marts.affiliate_referrals_monthly every referral day of staging.affiliate_referrals.
-- Checking what changed: whole (no {{ changed }}). Totals per account over the whole history; the affiliate marts
-- are rebuilt whole when a record comes (no incremental step), and hold a row per month.
with records as (
    select account, sum(commission) as commission, sum(fee) as fee, count(*) as record_count
    from staging.affiliate_commissions
    group by account
),

rebates as (
    select account, sum(commission) as commission, sum(fee) as fee, sum(record_count) as record_count
    from marts.affiliate_rebates_monthly
    group by account
),

referral_days as (
    select
        account,
        sum(deposit_amount) as deposit_amount,
        sum(withdrawal_amount) as withdrawal_amount,
        sum(commission) as commission,
        count(*) as day_count
    from staging.affiliate_referrals
    group by account
),

referral_months as (
    select
        account,
        sum(deposit_amount) as deposit_amount,
        sum(withdrawal_amount) as withdrawal_amount,
        sum(commission) as commission,
        sum(active_days) as day_count
    from marts.affiliate_referrals_monthly
    group by account
)

select
    'commissions' as mart,
    coalesce(records.account, rebates.account) as account,
    records.commission as source_commission,
    rebates.commission as mart_commission,
    records.record_count as source_rows,
    rebates.record_count as mart_rows
from records
full join rebates using (account)
where records.commission is distinct from rebates.commission
    or records.fee is distinct from rebates.fee
    or records.record_count is distinct from rebates.record_count
union all
select
    'referrals',
    coalesce(referral_days.account, referral_months.account),
    referral_days.commission,
    referral_months.commission,
    referral_days.day_count,
    referral_months.day_count
from referral_days
full join referral_months using (account)
where referral_days.commission is distinct from referral_months.commission
    or referral_days.deposit_amount is distinct from referral_months.deposit_amount
    or referral_days.withdrawal_amount is distinct from referral_months.withdrawal_amount
    or referral_days.day_count is distinct from referral_months.day_count
