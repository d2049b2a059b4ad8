-- marts.holdings_vs_exchange, incremental (docs/plans/incremental-builds.md, "The contract"): the
-- instants from each account's frontier on are replaced by the model's own SQL, run on those
-- instants' syncs, on the movements from the frontier on (those before it summed into movements of
-- no instant) and on the futures fills of the instants' days alone. So a night reads its
-- new snapshot and day, not every futures fill of the history (each instant joins the fills of its
-- local day: a whole rebuild converts the time zone of every fill, 0.38 s a night on the 30M
-- benchmark against 0.12 s on the 10M one).
-- 1. The frontier F of an account: the earliest pending change naming it (or every account; no
--    instant: -infinity). An instant is a sync's (the latest of its snapshots), so a sync with a
--    snapshot at or after F may have had another instant before (a snapshot added to a sync that was
--    already built): F moves back to the first snapshot of every such sync. Every row from F on is
--    replaced; a sync whose instant is before F is unchanged, and so are the movements, fills and
--    contracts it reads (the pending rows say so).
-- 2. One input reaches instants before F without a pending row saying when: the currencies listings
--    name a collateral's coin by their latest snapshot (a new one is handed on from its own instant).
--    The kept instants' futures side is computed again (the model's SQL on the snapshots alone) and
--    compared with the stored one: where a coin's name or amount differs, every instant is replaced.
-- 3. The readers get (account, F) for every account with instants replaced.
create or replace temp table hve_runs as
select account, _run_id as run_id, min(snapshot_at) as first_at, max(snapshot_at) as instant
from (
    select account, _run_id, snapshot_at from staging.spot_assets
    union all
    select account, _run_id, snapshot_at from staging.futures_collateral
)
group by all;

-- Every account with an instant (rows exist only at a sync's instant), its frontier or infinity.
create or replace temp table hve_frontier as
with accounts as (
    select distinct account from temp.main.hve_runs
    union
    select distinct account from marts.holdings_vs_exchange
),

pending as (
    select a.account, min(coalesce(p.from_at, '-infinity'::timestamptz)) as from_at
    from temp.main.model_pending as p
    inner join accounts as a on p.account = a.account or p.account = '*'
    group by all
)

select a.account, coalesce(least(p.from_at, (select min(r.first_at) from temp.main.hve_runs as r where r.account = a.account and r.instant >= p.from_at)), 'infinity'::timestamptz) as from_at
from accounts as a
left join pending as p using (account);

-- 2. The futures side of every instant as the listings name it now: the model on the snapshots alone
-- (no movements, no fills, the spot assets counted as nothing), whose rows are the non-zero futures
-- quantities; the stored rows of the kept instants must hold the same.
create or replace temp table hve_no_events as select * from intermediate.int_coin_events limit 0;
create or replace temp table hve_no_fills as select * from staging.futures_fills limit 0;
create or replace temp table hve_spot_nothing as
select * replace (equity - equity as equity, available - available as available, frozen - frozen as frozen) from staging.spot_assets;

create or replace temp table hve_futures_now as
{{ model(intermediate.int_coin_events -> temp.main.hve_no_events, staging.futures_fills -> temp.main.hve_no_fills, staging.spot_assets -> temp.main.hve_spot_nothing) }};

create or replace temp table hve_kept_now as
select n.account, n.snapshot_at, n.coin, n.futures_quantity
from temp.main.hve_futures_now as n
inner join temp.main.hve_frontier as f using (account)
where n.futures_quantity <> 0 and n.snapshot_at < f.from_at;

create or replace temp table hve_kept_stored as
select h.account, h.snapshot_at, h.coin, h.futures_quantity
from marts.holdings_vs_exchange as h
inner join temp.main.hve_frontier as f using (account)
where h.futures_quantity <> 0 and h.snapshot_at < f.from_at;

update temp.main.hve_frontier set from_at = '-infinity'::timestamptz
where exists (select * from temp.main.hve_kept_now except all select * from temp.main.hve_kept_stored)
    or exists (select * from temp.main.hve_kept_stored except all select * from temp.main.hve_kept_now);

-- The earliest frontier as a constant: DuckDB skips the fills' and events' row groups before it.
set variable holdings_vs_exchange_from = (select min(from_at) from temp.main.hve_frontier);

-- The syncs replaced (their instant at or after the frontier), and their snapshots.
create or replace temp table hve_replaced as
select r.account, r.run_id
from temp.main.hve_runs as r
inner join temp.main.hve_frontier as f using (account)
where r.instant >= f.from_at;

create or replace temp table hve_spot as
select s.* from staging.spot_assets as s semi join temp.main.hve_replaced as r on r.account = s.account and r.run_id = s._run_id;

create or replace temp table hve_collateral as
select c.* from staging.futures_collateral as c semi join temp.main.hve_replaced as r on r.account = c.account and r.run_id = c._run_id;

-- The movements from the frontier on as they are; those before it (and the opening positions, of
-- no instant) summed per account, coin, direction and kind, as movements of no instant (which the
-- model puts before all): its running balance then starts from what they sum to, exactly.
create or replace temp table hve_events as
select e.account, e.coin, e.event_at, e.direction, e.units_e18, e.kind
from intermediate.int_coin_events as e
inner join temp.main.hve_frontier as f using (account)
where e.event_at >= f.from_at and e.event_at >= getvariable('holdings_vs_exchange_from')
union all
select e.account, e.coin, null, e.direction, sum(e.units_e18), e.kind
from intermediate.int_coin_events as e
inner join temp.main.hve_frontier as f using (account)
where f.from_at < 'infinity'::timestamptz and (e.event_at < f.from_at or e.event_at is null)
group by e.account, e.coin, e.direction, e.kind;

-- An instant's local day begins at most 25 hours before it: two days cover it in every zone.
create or replace temp table hve_fills as
select ff.*
from staging.futures_fills as ff
inner join temp.main.hve_frontier as f using (account)
where ff.created_time_at >= f.from_at - interval 2 day
    and ff.created_time_at >= getvariable('holdings_vs_exchange_from') - interval 2 day;

delete from marts.holdings_vs_exchange as h
using temp.main.hve_frontier as f
where h.account = f.account and h.snapshot_at >= f.from_at;

create or replace temp table hve_new as
{{ model(staging.spot_assets -> temp.main.hve_spot, staging.futures_collateral -> temp.main.hve_collateral, intermediate.int_coin_events -> temp.main.hve_events, staging.futures_fills -> temp.main.hve_fills) }};

insert into marts.holdings_vs_exchange by name
select * from temp.main.hve_new;

-- 3. What changed: each account's instants from its frontier on.
delete from temp.main.model_pending;

insert into temp.main.model_pending (account, symbol, from_at)
select account, null, case when isinf(from_at) then null else from_at end
from temp.main.hve_frontier
where from_at < 'infinity'::timestamptz;

drop table temp.main.hve_new;
drop table temp.main.hve_fills;
drop table temp.main.hve_events;
drop table temp.main.hve_collateral;
drop table temp.main.hve_spot;
drop table temp.main.hve_replaced;
drop table temp.main.hve_kept_stored;
drop table temp.main.hve_kept_now;
drop table temp.main.hve_futures_now;
drop table temp.main.hve_spot_nothing;
drop table temp.main.hve_no_fills;
drop table temp.main.hve_no_events;
drop table temp.main.hve_frontier;
drop table temp.main.hve_runs;
reset variable holdings_vs_exchange_from;
