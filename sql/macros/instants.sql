-- The text of a query of `table_name`'s rows whose `column_name` is one of `instants` (a list of
-- TIMESTAMPTZ; a null among them: the rows where it is null too), for query(): a constant list (and
-- its earliest as a bound) that DuckDB checks against each row group's range of the column before
-- reading it. An incremental step
-- reads so the old rows it needs (the lots an old FIFO frontier or a lifo or hifo sell takes from,
-- months or years back) after finding their keys in a few narrow columns: a range from the oldest
-- would decode every column of every row since. More than 100,000 distinct instants read the range
-- from the earliest one instead. The caller keeps the rows whose keys it found (others may share an
-- instant).
create or replace macro rows_at_instants_sql(table_name, column_name, instants) as
    'select * from ' || table_name || ' where ' || case
        when len(list_distinct(coalesce(instants, []))) = 0 then 'false'
        when len(list_distinct(instants)) <= 100000 then
            column_name || ' >= timestamptz ''' || cast(list_min(instants) as varchar) || ''' and ' || column_name || ' in (' || array_to_string(list_transform(list_distinct(instants), x -> 'timestamptz ''' || cast(x as varchar) || ''''), ', ') || ')'
        else column_name || ' >= timestamptz ''' || cast(list_min(instants) as varchar) || ''''
    end || case
        when list_contains(list_transform(coalesce(instants, []), x -> x is null), true) then ' union all select * from ' || table_name || ' where ' || column_name || ' is null'
        else ''
    end;
