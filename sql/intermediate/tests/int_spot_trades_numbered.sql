-- intermediate.int_spot_trades numbers each (pool, symbol) 1..n without gaps (from 1 up to the row count:
-- no number twice is int_spot_trades_unique's part), with at most one opening lot per account, the
-- opening lots first, and each fill once.
-- Checking what changed (docs/architecture.md "The incremental check"): the numbering is a property of
-- the whole partition, so every row of a changed partition is counted (narrow columns, no sort); a
-- fill's rows share its instant, so a fill twice, or without its id, is among the changed rows.
select pool, symbol, null as fill_id, count(*) as n, max(event_seq) as last_seq
from intermediate.int_spot_trades
where {{ changed(account: pool, symbol: symbol) }}
group by pool, symbol
having max(event_seq) <> count(*) or min(event_seq) <> 1
    or count(*) filter (where lot_source = 'opening') > count(distinct account) filter (where lot_source = 'opening')
    or coalesce(max(event_seq) filter (where lot_source = 'opening'), 0) <> count(*) filter (where lot_source = 'opening')
union all
select account, symbol, fill_id, count(*), null
from intermediate.int_spot_trades
where {{ changed(account: pool, symbol: symbol, at: event_at) }} and lot_source = 'fill'
group by account, symbol, fill_id
having count(*) > 1 or fill_id is null
