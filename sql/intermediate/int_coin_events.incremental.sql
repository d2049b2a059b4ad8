-- int_coin_events, incremental (docs/plans/incremental-builds.md, "The books"): the events from one
-- instant B on are replaced, in every pool and coin; those before it stay, and the replaced ones
-- continue each pool's and coin's event_seq. Order is time first (opening lots, of no instant,
-- before all), so every kept event precedes every replaced one.
-- 1. B0: the start of the reporting-zone day before the earliest pending change (a deposit pairs
--    with another account's withdrawal of up to a day before it; prices are per day, and int_prices
--    hands on a changed day from its start). A pending row of no instant: B is -infinity (all).
-- 2. Every event but the spot fills' is computed again whole, with the model's own SQL on the
--    opening positions alone for trades: they are few (a bill, a futures day, a funding, a
--    commission, an opening lot), and some may change before B0 without a pending row saying so
--    (a coin's name in a newer currencies listing renames an old collateral's funding; a backfill
--    moves an opening lot's day). Where they differ from the stored ones before B0, B moves back to
--    the start of the day before the earliest difference (-infinity for an opening lot).
-- 3. The model's own SQL runs on the spot trades at or after B (and the opening positions); its
--    events at or after B replace the stored ones, numbered after each pool's and coin's last
--    kept event_seq.
-- 4. The readers get (pool, coin, B) for every pool and coin with events replaced or removed.
set variable coin_events_zone = (select any_value(time_zone) from settings.reporting);

set variable coin_events_low = (
    select case
        when bool_or(from_at is null) then '-infinity'::timestamptz
        else local_day_start(min(local_date(from_at, getvariable('coin_events_zone'))) - 1, getvariable('coin_events_zone'))
    end
    from temp.main.model_pending
);

create or replace temp table coin_events_openings as
select * from intermediate.int_spot_trades where lot_source = 'opening';

create or replace temp table coin_events_small as
select * exclude (event_seq)
from {{ model(intermediate.int_spot_trades -> temp.main.coin_events_openings) }}
where source_model <> 'staging.spot_fills';

-- The events before B0 of every source but the spot fills, stored and computed now: the first
-- that differs (either way) moves B back.
set variable coin_events_low = (
    with differing as (
        (select * from temp.main.coin_events_small where event_at is null or event_at < getvariable('coin_events_low')
         except all
         select * exclude (event_seq) from intermediate.int_coin_events
         where source_model <> 'staging.spot_fills' and (event_at is null or event_at < getvariable('coin_events_low')))
        union all
        (select * exclude (event_seq) from intermediate.int_coin_events
         where source_model <> 'staging.spot_fills' and (event_at is null or event_at < getvariable('coin_events_low'))
         except all
         select * from temp.main.coin_events_small where event_at is null or event_at < getvariable('coin_events_low'))
    )

    select case
        when count(*) = 0 then getvariable('coin_events_low')
        when bool_or(event_at is null) then '-infinity'::timestamptz
        else least(getvariable('coin_events_low'), local_day_start(min(local_date(event_at, getvariable('coin_events_zone'))) - 1, getvariable('coin_events_zone')))
    end
    from differing
);

create or replace temp table coin_events_trades as
select * from intermediate.int_spot_trades
where lot_source = 'opening' or event_at >= getvariable('coin_events_low');

create or replace temp table coin_events_new as
select * exclude (event_seq)
from {{ model(intermediate.int_spot_trades -> temp.main.coin_events_trades) }}
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

drop table temp.main.coin_events_openings;
drop table temp.main.coin_events_small;
drop table temp.main.coin_events_trades;
drop table temp.main.coin_events_new;
drop table temp.main.coin_events_touched;
reset variable coin_events_low;
reset variable coin_events_zone;
