-- journal_sources, incremental (docs/plans/incremental-builds.md, "The books"): the entries from
-- day D on are replaced, D the reporting-zone day of the earliest pending change (int_coin_events'
-- B, int_coin_lots' day its match resumed from, the month end of a changed roll-forward or futures
-- position row); those before it stay. An entry is one source record, all its legs of one day, so
-- it lies wholly on one side of D. The remeasurements (a few rows per coin and month) are made
-- again whole. A pending row of no instant: every entry.
-- The readers get (every account, D's start).
set variable journal_sources_zone = (select any_value(time_zone) from settings.reporting);

set variable journal_sources_from = (
    select case when bool_or(from_at is null) then date '-infinity' else min(local_date(from_at, getvariable('journal_sources_zone'))) end
    from temp.main.model_pending
);

create or replace temp table journal_sources_events as
select * from intermediate.int_coin_events where event_date >= getvariable('journal_sources_from');

delete from marts.journal_sources
where kind = 'remeasurement' or entry_date >= getvariable('journal_sources_from');

insert into marts.journal_sources by name
select * from {{ model(intermediate.int_coin_events -> temp.main.journal_sources_events) }}
where kind = 'remeasurement' or entry_date >= getvariable('journal_sources_from');

create or replace temp table model_pending as
select
    '*' as account,
    cast(null as varchar) as symbol,
    case when getvariable('journal_sources_from') = date '-infinity' then null
        else local_day_start(getvariable('journal_sources_from'), getvariable('journal_sources_zone')) end as from_at;

drop table temp.main.journal_sources_events;
reset variable journal_sources_from;
reset variable journal_sources_zone;
