-- Calendar days of instants, in the reporting zone (settings.reporting time_zone).

-- The calendar day of instant ts in the zone time_zone (settings.reporting). In UTC it is read off
-- the epoch (exact): DuckDB converts through ICU on one thread, 2 s for 10M instants.
create or replace macro local_date(ts, time_zone) as
    case
        when time_zone = 'UTC' then date '1970-01-01' + cast(floor(epoch_ms(ts) / 86400000) as integer)
        else cast(timezone(time_zone, ts) as date)
    end;

-- The first instant of calendar day d in the zone time_zone (local midnight; the day's start where
-- a clock change skips midnight): what an incremental step hands on when a whole day changed.
create or replace macro local_day_start(d, time_zone) as
    timezone(time_zone, cast(cast(d as date) as timestamp));
