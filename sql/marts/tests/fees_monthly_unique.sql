-- One row per (account, product, coin, fee_month) in marts.fees_monthly.
select account, product, coin, fee_month, count(*) as n
from marts.fees_monthly
group by all
having count(*) > 1 or account is null or fee_month is null or product not in ('spot', 'futures', 'funding')
