-- One row per (account, margin_coin, symbol, pnl_date) in marts.futures_pnl_daily (symbol null: the funding row).
select account, margin_coin, symbol, pnl_date, count(*) as n
from marts.futures_pnl_daily
group by all
having count(*) > 1 or account is null or pnl_date is null
