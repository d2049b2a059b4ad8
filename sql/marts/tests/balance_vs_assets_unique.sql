-- One row per (account, coin_name) in marts.balance_vs_assets, and none with a null key.
select account, coin_name, count(*) as n
from marts.balance_vs_assets
group by all
having count(*) > 1 or account is null or coin_name is null
