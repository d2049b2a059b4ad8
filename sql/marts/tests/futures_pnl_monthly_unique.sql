-- One row per (account, margin_coin, symbol, pnl_month) in marts.futures_pnl_monthly (symbol null: the funding row).
select account, margin_coin, symbol, pnl_month, count(*) as n
from marts.futures_pnl_monthly
group by all
having count(*) > 1 or account is null or pnl_month is null
