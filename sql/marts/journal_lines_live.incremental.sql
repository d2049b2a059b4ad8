-- journal_lines_live, incremental (docs/plans/incremental-builds.md, "The books"): the lines of the
-- entries from day D on are replaced, D the reporting-zone day of the earliest pending change
-- (marts.journal_sources hands on the day its entries were replaced from); those before it stay.
-- An entry's lines come from its own legs alone, all of one day. The remeasurements' lines are
-- made again whole, as journal_sources makes their entries. A pending row of no instant: every line.
-- The readers get (every account, D's start).
set variable journal_lines_zone = (select any_value(time_zone) from settings.reporting);

set variable journal_lines_from = (
    select case when bool_or(from_at is null) then date '-infinity' else min(local_date(from_at, getvariable('journal_lines_zone'))) end
    from temp.main.model_pending
);

create or replace temp table journal_lines_events as
select * from intermediate.int_coin_events where event_date >= getvariable('journal_lines_from');

create or replace temp table journal_lines_sources as
select * from marts.journal_sources where kind = 'remeasurement' or entry_date >= getvariable('journal_lines_from');

delete from marts.journal_lines_live
where kind = 'remeasurement' or entry_date >= getvariable('journal_lines_from');

insert into marts.journal_lines_live by name
select * from {{ model(intermediate.int_coin_events -> temp.main.journal_lines_events, marts.journal_sources -> temp.main.journal_lines_sources) }};

create or replace temp table model_pending as
select
    '*' as account,
    cast(null as varchar) as symbol,
    case when getvariable('journal_lines_from') = date '-infinity' then null
        else local_day_start(getvariable('journal_lines_from'), getvariable('journal_lines_zone')) end as from_at;

drop table temp.main.journal_lines_events;
drop table temp.main.journal_lines_sources;
reset variable journal_lines_from;
reset variable journal_lines_zone;
