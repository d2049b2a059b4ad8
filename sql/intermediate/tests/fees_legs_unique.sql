-- One row per (account, product, source, coin_leg, coin, event_date) in intermediate.int_fees_legs.
select account, product, source, coin_leg, coin, event_date, count(*) as n
from intermediate.int_fees_legs
group by all
having count(*) > 1 or account is null or product is null or coin_leg is null or event_date is null
