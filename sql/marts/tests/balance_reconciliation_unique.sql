-- One row per (account, coin_name, balance_month) in marts.balance_reconciliation, and none with a null key.
select account, coin_name, balance_month, count(*) as n
from marts.balance_reconciliation
group by all
having count(*) > 1 or account is null or coin_name is null or balance_month is null
