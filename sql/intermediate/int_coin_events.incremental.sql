-- int_coin_events, incremental (docs/plans/incremental-builds.md, "The books"): the events from one
-- instant B on are replaced, in every pool and coin; those before it stay, and the replaced ones
-- continue each pool's and coin's event_seq. Order is time first (opening lots, of no instant,
-- before all), so every kept event precedes every replaced one.
-- 1. B: the start of the reporting-zone day before the earliest pending change (a deposit pairs
--    with another account's withdrawal of up to a day before it; prices are per day, and int_prices
--    hands on a changed day from its start). A pending row of no instant (a spot partition replaced
--    whole, as when a backfill moves its opening lot): -infinity, every event.
--    One change reaches events before B without a pending row saying when: a newer currencies
--    listing that names a collateral's coin otherwise than before B renames the funding settled
--    before its first snapshot (first_funding in the model), whenever that was: B is -infinity.
-- 2. The model's own SQL runs on the spot trades, futures days and commissions at or after B (and
--    the opening positions), and on its other inputs whole (the bills: the transfers pair deposits
--    with withdrawals numbered over all of them; the collateral's first snapshots; funding: few);
--    its events at or after B replace the stored ones, numbered after each pool's and coin's last
--    kept event_seq.
-- 3. The readers get (pool, coin, B) for every pool and coin with events replaced or removed.
set variable coin_events_zone = (select any_value(time_zone) from settings.reporting);

set variable coin_events_low = (
    select case
        when bool_or(from_at is null) then '-infinity'::timestamptz
        else local_day_start(min(local_date(from_at, getvariable('coin_events_zone'))) - 1, getvariable('coin_events_zone'))
    end
    from temp.main.model_pending
);

set variable coin_events_low = (
    select case when exists (
        select 1
        from (
            select coin_id, arg_max(coin_name, snapshot_at) as coin_name,
                arg_max(coin_name, snapshot_at) filter (where snapshot_at < getvariable('coin_events_low')) as coin_name_before
            from staging.currencies
            group by coin_id
        ) as n
        where n.coin_name is distinct from n.coin_name_before
            and n.coin_id in (select coin_id from staging.futures_collateral where snapshot_at < getvariable('coin_events_low'))
    ) then '-infinity'::timestamptz else getvariable('coin_events_low') end
);

-- The inputs from B on (each a constant bound DuckDB skips older row groups by): the spot trades,
-- and the futures days and commissions; the opening positions whole (they have no instant).
create or replace temp table coin_events_trades as
select * from intermediate.int_spot_trades where event_at >= getvariable('coin_events_low') and lot_source <> 'opening'
union all
select * from intermediate.int_spot_trades where lot_source = 'opening';

create or replace temp table coin_events_fill_days as
select * from intermediate.int_futures_fill_days
where fill_date >= local_date(getvariable('coin_events_low'), getvariable('coin_events_zone')) or getvariable('coin_events_low') = '-infinity'::timestamptz;

create or replace temp table coin_events_commissions as
select * from staging.affiliate_commissions where deal_time_at >= getvariable('coin_events_low');

create or replace temp table coin_events_new as
select * exclude (event_seq)
from {{ model(intermediate.int_spot_trades -> temp.main.coin_events_trades, intermediate.int_futures_fill_days -> temp.main.coin_events_fill_days, staging.affiliate_commissions -> temp.main.coin_events_commissions) }}
where getvariable('coin_events_low') = '-infinity'::timestamptz or event_at >= getvariable('coin_events_low');

-- What the readers are told: every pool and coin with an event removed or added.
create or replace temp table coin_events_touched as
select pool, coin from intermediate.int_coin_events
where getvariable('coin_events_low') = '-infinity'::timestamptz or event_at >= getvariable('coin_events_low')
union
select pool, coin from temp.main.coin_events_new;

delete from intermediate.int_coin_events
where getvariable('coin_events_low') = '-infinity'::timestamptz or event_at >= getvariable('coin_events_low');

insert into intermediate.int_coin_events by name
select
    n.*,
    coalesce(k.event_seq, 0) + row_number() over (partition by n.pool, n.coin order by n.event_at nulls first, n.entry_ref, n.leg, n.account) as event_seq
from temp.main.coin_events_new as n
left join (
    select pool, coin, max(event_seq) as event_seq from intermediate.int_coin_events group by pool, coin
) as k on k.pool = n.pool and k.coin = n.coin;

create or replace temp table model_pending as
select
    pool as account,
    coin as symbol,
    case when getvariable('coin_events_low') = '-infinity'::timestamptz then null else getvariable('coin_events_low') end as from_at
from temp.main.coin_events_touched;

drop table temp.main.coin_events_trades;
drop table temp.main.coin_events_fill_days;
drop table temp.main.coin_events_commissions;
drop table temp.main.coin_events_new;
drop table temp.main.coin_events_touched;
reset variable coin_events_low;
reset variable coin_events_zone;
