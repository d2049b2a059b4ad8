-- One row per (account, commission_month, coin, product_type, source_type, symbol) in marts.affiliate_rebates_monthly.
select account, commission_month, coin, product_type, source_type, symbol, count(*) as n
from marts.affiliate_rebates_monthly
group by all
having count(*) > 1 or account is null or commission_month is null
