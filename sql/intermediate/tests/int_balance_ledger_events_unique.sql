-- One row per (account, bill_id) in intermediate.int_ledger_events, and each coin's chain numbered 1..n without gaps.
select account, bill_id, count(*) as n, null as coin_name, null as chain_seq
from intermediate.int_ledger_events
group by account, bill_id
having count(*) > 1 or bill_id is null
union all
select account, null, count(*), coin_name, max(chain_seq)
from intermediate.int_ledger_events
group by account, coin_name
having max(chain_seq) <> count(*) or count(distinct chain_seq) <> count(*)
