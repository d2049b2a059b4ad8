-- One row per (account, symbol, fill_date) in intermediate.int_futures_fill_days.
select account, symbol, fill_date, count(*) as n
from intermediate.int_futures_fill_days
group by all
having count(*) > 1 or account is null or symbol is null or fill_date is null
