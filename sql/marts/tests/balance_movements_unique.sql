-- One row per (account, coin_name, balance_month, biz_type) in marts.balance_movements.
select account, coin_name, balance_month, biz_type, count(*) as n
from marts.balance_movements
group by all
having count(*) > 1
