-- int_ledger_events, incremental (docs/plans/incremental-builds.md, "The contract"): per pending
-- account, the bills from the earliest changed one's instant on are replaced in every coin's chain;
-- those before it stay, and the replaced ones continue the chain (chain_seq, the previous bill).
-- Chain order is c_time_at first, so every kept bill precedes every replaced one.
-- 1. ledger_frontier: per pending account the earliest changed instant (NULL: the whole account,
--    as after a reset). Those rows are deleted.
-- 2. ledger_kept: the last kept bill of each chain of those accounts, with its chain_seq.
-- 3. The model's own SQL runs on the kept bills and the bills at or after the frontier: each chain
--    starts at its kept bill (numbered 1, the lag before the first replaced bill), so the replaced
--    rows are offset by the kept chain_seq - 1 and the kept bill's own row is dropped.
-- 4. The readers get what the staging table handed on: (account, every coin, the frontier).
create or replace temp table ledger_frontier as
with requested as (
    select account, from_at from temp.main.model_pending where account <> '*'
    union all
    -- A pending row naming every account (a wildcard hand-on): every account there is.
    select b.account, p.from_at
    from (select distinct account from staging.funding_bills) as b
    cross join (select from_at from temp.main.model_pending where account = '*') as p
)

select account, case when bool_or(from_at is null) then null else min(from_at) end as from_at
from requested
group by account;

delete from intermediate.int_ledger_events as e
using temp.main.ledger_frontier as f
where f.account = e.account and (f.from_at is null or e.c_time_at >= f.from_at);

create or replace temp table ledger_kept as
select e.account, e.coin_name, e.bill_id, e.chain_seq
from intermediate.int_ledger_events as e
inner join temp.main.ledger_frontier as f on f.account = e.account
qualify row_number() over (partition by e.account, e.coin_name order by e.chain_seq desc) = 1;

create or replace temp table ledger_bills as
select b.*
from staging.funding_bills as b
inner join temp.main.ledger_frontier as f on f.account = b.account
where f.from_at is null or b.c_time_at >= f.from_at
union all
select b.*
from staging.funding_bills as b
semi join temp.main.ledger_kept as k on k.account = b.account and k.bill_id = b.bill_id;

insert into intermediate.int_ledger_events by name
select n.* replace (n.chain_seq + coalesce(k.chain_seq - 1, 0) as chain_seq)
from {{ model(staging.funding_bills -> temp.main.ledger_bills) }} as n
left join temp.main.ledger_kept as k on k.account = n.account and k.coin_name is not distinct from n.coin_name
where k.bill_id is null or n.bill_id <> k.bill_id;

drop table temp.main.ledger_frontier;
drop table temp.main.ledger_kept;
drop table temp.main.ledger_bills;
