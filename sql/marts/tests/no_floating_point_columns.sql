-- Money is exact: no model column may be a binary float (DuckDB turns decimal / decimal into
-- DOUBLE, so a division slipped into a model shows up here). Returns the offending columns.
-- Checking what changed: whole: it reads the catalog, not a model.
select table_schema, table_name, column_name, data_type
from information_schema.columns
where table_schema in ('staging', 'intermediate', 'marts')
    and data_type in ('DOUBLE', 'FLOAT', 'REAL')
order by all
