-- A mart row's reference (docs/workbooks.md "From a figure to its sources"): <mart>/<key value>/…
-- in the order of the mart's declared key, which `exledger explain` resolves to the row's sources.
-- Each value is text with '%' and '/' written %25 and %2F, so every '/' separates two values (the
-- exchange names biz types and product types, not this project); NULL is written as nothing (a key
-- value is never empty text); days as YYYY-MM-DD, months as YYYY-MM, instants in UTC as
-- YYYY-MM-DDTHH:MM:SS.mmmZ (ref_month, ref_instant).
create or replace macro ref_part(v) as
    coalesce(replace(replace(cast(v as varchar), '%', '%25'), '/', '%2F'), '');

create or replace macro ref_month(d) as strftime(d, '%Y-%m');

create or replace macro ref_instant(ts) as strftime(timezone('UTC', ts), '%Y-%m-%dT%H:%M:%S.%gZ');
