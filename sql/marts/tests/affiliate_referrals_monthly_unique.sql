-- One row per (account, uid, activity_month) in marts.affiliate_referrals_monthly.
select account, uid, activity_month, count(*) as n
from marts.affiliate_referrals_monthly
group by all
having count(*) > 1 or account is null or uid is null or activity_month is null
