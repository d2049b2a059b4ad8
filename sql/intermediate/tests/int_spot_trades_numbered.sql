-- intermediate.int_spot_trades numbers each (pool, symbol) 1..n without gaps, with at most one
-- opening lot per account, the opening lots first, and each fill once.
select pool, symbol, null as fill_id, count(*) as n, max(event_seq) as last_seq
from intermediate.int_spot_trades
group by pool, symbol
having max(event_seq) <> count(*) or count(distinct event_seq) <> count(*)
    or count(*) filter (where lot_source = 'opening') > count(distinct account) filter (where lot_source = 'opening')
    or coalesce(max(event_seq) filter (where lot_source = 'opening'), 0) <> count(*) filter (where lot_source = 'opening')
union all
select account, symbol, fill_id, count(*), null
from intermediate.int_spot_trades
where lot_source = 'fill'
group by account, symbol, fill_id
having count(*) > 1 or fill_id is null
