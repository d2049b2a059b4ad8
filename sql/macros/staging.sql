-- What the staging views share: reading the exchange's decimal strings, and keeping one row of a
-- record fetched more than once. Staging views are created by every sync, before any build
-- (src/models/build.ts createStagingViews), so that creates the macro files first too; macros
-- are stored in the database file, so its published copy keeps them.

-- The integer units (value * 10^scale, HUGEINT) of a decimal string, scale 16 or 18, exactly
-- what cast(s as decimal(38, scale)) holds. A plain decimal ('-12.5', '7', '3.') with at most
-- `scale` decimals is its digits read as one integer, times 10^(scale - decimals): exact, and ten
-- times faster than the cast, which parses 128 bits at ~5 µs a value (DuckDB 1.5). Anything else
-- (an exponent, more decimals, blanks) goes through that cast (which rounds), and is read as
-- units as exact_qty_units does; text that is no number fails as the cast does. NULL stays NULL
-- (an empty string is no number: write nullif(s, '') where the exchange may send one).
create or replace macro parse_decimal_units(s, scale) as
    case
        when regexp_full_match(s, '-?[0-9]+(\.[0-9]{0,' || scale || '})?') then exact_plain_units(s, scale)
        when scale = 18 then list_transform([cast(s as decimal(38, 18))], pdu_x ->
            cast(trunc(pdu_x) as hugeint) * cast(1000000000000000000 as hugeint)
            + cast((pdu_x - trunc(pdu_x)) * cast(1000000000000000000 as decimal(19, 0)) as hugeint))[1]
        when scale = 16 then list_transform([cast(s as decimal(38, 16))], pdu_x ->
            cast(trunc(pdu_x) as hugeint) * cast(10000000000000000 as hugeint)
            + cast((pdu_x - trunc(pdu_x)) * cast(10000000000000000 as decimal(17, 0)) as hugeint))[1]
        else error('parse_decimal_units: scale must be 16 or 18')
    end;

-- A decimal string as DECIMAL(38,18) (parse_decimal_18) or DECIMAL(38,16) (parse_decimal_16, for
-- notionals up to 1e21), equal to cast(s as decimal(38, x)), in three steps: a string of at most 9
-- digits on each side of the point and no exponent goes through DECIMAL(18,9), a 64-bit parse,
-- exactly; a plain decimal with at most x decimals is read as units (as above), the DECIMAL made
-- from them by a multiplication that only sets the scale; anything else takes the cast. Written out
-- rather than through parse_decimal_units, whose lambdas took twice as long to bind: a query
-- reading a view binds its macros again (futures_collateral, 20 amounts: ~20 ms against ~45 ms).
create or replace macro parse_decimal_18(s) as
    case
        when strpos(s, 'e') + strpos(s, 'E') = 0
            and ((strpos(s, '.') = 0 and length(s) <= 9) or (strpos(s, '.') between 2 and 10 and length(s) - strpos(s, '.') <= 9))
            then cast(cast(s as decimal(18, 9)) as decimal(38, 18))
        when regexp_full_match(s, '-?[0-9]+(\.[0-9]{0,18})?') then exact_decimal_18(exact_plain_units(s, 18))
        else cast(s as decimal(38, 18))
    end;
create or replace macro parse_decimal_16(s) as
    case
        when strpos(s, 'e') + strpos(s, 'E') = 0
            and ((strpos(s, '.') = 0 and length(s) <= 9) or (strpos(s, '.') between 2 and 10 and length(s) - strpos(s, '.') <= 9))
            then cast(cast(s as decimal(18, 9)) as decimal(38, 16))
        when regexp_full_match(s, '-?[0-9]+(\.[0-9]{0,16})?') then exact_decimal_16(exact_plain_units(s, 16))
        else cast(s as decimal(38, 16))
    end;

-- The rows of a raw history table (`raw.<stream>`, by name) with each (_account, _key) once: of a
-- key fetched more than once, the first fetch stays (the earliest _fetched_at, then the first
-- run, then the first stored row). Repeated keys are looked for among the bookkeeping columns
-- alone, each read apart, so the records are neither sorted nor held in memory: over 1M spot
-- fills with 1% fetched twice it takes half the time of a row_number() over every row, which
-- sorts every record. query() takes the table by name with its rowid (query_table() has none).
create or replace macro first_fetches(raw_table) as table
    select source.* exclude (_row)
    from query('select *, rowid as _row from ' || raw_table) as source
    anti join (
        select fetches._row
        from query('select _account, _key, _fetched_at, _run_id, rowid as _row from ' || raw_table) as fetches
        semi join (
            select _account, _key
            from query('select _account, _key from ' || raw_table)
            group by _account, _key
            having count(*) > 1
        ) as repeated_keys on repeated_keys._account = fetches._account and repeated_keys._key = fetches._key
        qualify row_number() over (partition by fetches._account, fetches._key order by fetches._fetched_at, fetches._run_id, fetches._row) > 1
    ) as superseded on superseded._row = source._row;
