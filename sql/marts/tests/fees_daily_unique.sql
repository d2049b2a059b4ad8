-- One row per (account, product, coin, fee_date) in marts.fees_daily, products spot | futures | funding only.
select account, product, coin, fee_date, count(*) as n
from marts.fees_daily
group by all
having count(*) > 1 or account is null or fee_date is null or product not in ('spot', 'futures', 'funding')
