-- The text of a query of `table_name`'s rows whose `column_name` is one of `instants` (a list of
-- TIMESTAMPTZ; a null among them: the rows where it is null too), for query(): constants that
-- DuckDB checks against each row group's range of the column before reading it. An incremental
-- step reads so the old rows it needs (the lots an old FIFO frontier or a lifo or hifo sell takes
-- from, months or years back) after finding their keys in a few narrow columns: a range from the
-- oldest would decode every column of every row since. The caller keeps the rows whose keys it
-- found: the query may return more rows than those at the instants.
-- - Up to 256 distinct instants: a list of them, and the earliest as a bound.
-- - More, in at most 64 runs (instants less than an hour apart) that span 7 days in all at most:
--   one range read per run (a range returns every row in it: a run of weeks would read weeks). The
--   instants a night reads by are mostly a few runs of thousands (its own lots; the FIFO lots it
--   sells from, bought over a few days weeks before), and a list of thousands of constants is
--   slow to write and to plan: on the 30M benchmark history the FIFO balance test's 26k older
--   lots took 0.23 s to write as two lists and 0.45 s to query by them, against 0.04 s and
--   0.14 s by their runs.
-- - More runs, or longer: the list, as above, up to 100,000 instants; beyond, the range from the
--   earliest.
create or replace macro rows_at_instants_sql(table_name, column_name, instants) as (
    with sorted as (
        select list_sort(list_distinct(coalesce(instants, []))) as xs
    ),

    runs as (
        select xs, list_filter(range(1, len(xs) + 1), i -> i = 1 or epoch_ms(cast(xs[i] as timestamptz)) - epoch_ms(cast(xs[i - 1] as timestamptz)) > 3600000) as starts
        from sorted
    ),

    -- Each run's first and last instant's index.
    bounds as (
        select xs, starts, list_transform(range(1, len(starts) + 1), k -> [starts[k], case when k = len(starts) then len(xs) else starts[k + 1] - 1 end]) as ends
        from runs
    )

    select case
        when len(xs) = 0 then 'select * from ' || table_name || ' where false'
        when len(xs) > 256 and len(starts) <= 64
            and coalesce(list_sum(list_transform(ends, e -> epoch_ms(cast(xs[e[2]] as timestamptz)) - epoch_ms(cast(xs[e[1]] as timestamptz)))), 0) <= 7 * 86400000
            then array_to_string(list_transform(ends, e ->
            'select * from ' || table_name || ' where ' || column_name || ' >= timestamptz ''' || cast(xs[e[1]] as varchar) || ''' and '
            || column_name || ' <= timestamptz ''' || cast(xs[e[2]] as varchar) || ''''), ' union all ')
        when len(xs) <= 100000 then 'select * from ' || table_name || ' where ' || column_name || ' >= timestamptz ''' || cast(xs[1] as varchar) || ''' and ' || column_name || ' in ('
            || array_to_string(list_transform(xs, x -> 'timestamptz ''' || cast(x as varchar) || ''''), ', ') || ')'
        else 'select * from ' || table_name || ' where ' || column_name || ' >= timestamptz ''' || cast(xs[1] as varchar) || ''''
    end || case
        when list_contains(list_transform(coalesce(instants, []), x -> x is null), true) then ' union all select * from ' || table_name || ' where ' || column_name || ' is null'
        else ''
    end
    from bounds
);
