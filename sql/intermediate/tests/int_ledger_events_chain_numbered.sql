-- Each coin's chain in intermediate.int_ledger_events is numbered 1..n without gaps
-- (the key and its nulls are declared in sql/intermediate/_models.ts).
-- Checking what changed: whole (no {{ changed }}). The numbering spans each coin's whole chain, and
-- int_ledger_events is rebuilt whole when a bill comes (it has no incremental step).
select account, coin_name, count(*) as n, max(chain_seq) as last_seq
from intermediate.int_ledger_events
group by account, coin_name
having max(chain_seq) <> count(*) or count(distinct chain_seq) <> count(*)
