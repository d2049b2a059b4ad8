-- intermediate.int_spot_trades numbers each (pool, symbol) 1..n without gaps (from 1 up to the row count:
-- no number twice is int_spot_trades_unique's part), with at most one opening lot per account, the
-- opening lots first, and each fill once.
-- Checking what changed (docs/architecture.md "The incremental check"): a build numbers again the
-- rows of a partition from its change on and keeps those before it (numbered 1..k, which the last
-- pass checked), so the changed rows must run without a gap from one past the last number before
-- them (k + 1; 1 where the partition changed whole, openings and all) to the partition's last
-- number. Each partition's last number before its changed rows is found among its rows of the 2
-- days before the earliest change, a constant DuckDB skips row groups by; a partition with none
-- there (idle for days) is read before its changed rows by its keys, over the whole table, which
-- DuckDB skips row groups by (the history is stored by partition). Counting every row of each
-- changed partition, as this test did, read most of the history each night (0.45 s at 10M fills,
-- 1.45 s at 30M). A fill's rows share its instant, so a fill twice, or without its id, is among
-- the changed rows. Checking everything, every row is a changed row: each partition's numbers must
-- run from 1 to its last.
set variable int_spot_trades_numbered_from = (
    select coalesce(min(event_at), 'infinity'::timestamptz) - interval 2 day
    from intermediate.int_spot_trades
    where {{ changed(account: pool, symbol: symbol, at: event_at) }}
);

-- The changed partitions whose first changed number is past 1 with no row before it in those
-- days: their rows before it are read by their keys.
set variable int_spot_trades_numbered_idle = (
    with changed_from as (
        select pool, symbol, min(event_seq) as first_seq
        from intermediate.int_spot_trades
        where {{ changed(account: pool, symbol: symbol, at: event_at) }}
        group by pool, symbol
        having min(event_seq) > 1
    ),

    kept as (
        select distinct t.pool, t.symbol
        from intermediate.int_spot_trades as t
        inner join changed_from as c on c.pool = t.pool and c.symbol = t.symbol
        where t.event_at >= getvariable('int_spot_trades_numbered_from') and t.event_seq < c.first_seq
    )

    select coalesce(list({'pool': c.pool, 'symbol': c.symbol, 'first_seq': c.first_seq}), [])
    from changed_from as c
    anti join kept as k on k.pool = c.pool and k.symbol = c.symbol
);

with changed_rows as (
    select
        pool, symbol, count(*) as n, min(event_seq) as first_seq, max(event_seq) as last_seq,
        count(*) filter (where lot_source = 'opening') as openings,
        count(distinct account) filter (where lot_source = 'opening') as opening_accounts,
        coalesce(max(event_seq) filter (where lot_source = 'opening'), 0) as last_opening_seq
    from intermediate.int_spot_trades
    where {{ changed(account: pool, symbol: symbol, at: event_at) }}
    group by pool, symbol
),

idle as (
    select unnest(getvariable('int_spot_trades_numbered_idle'), recursive := true)
),

-- Per changed partition: its last number before the changed rows, and its last number of all
-- (of the rows since the bound: every changed row is among them but the openings, numbered first).
around as (
    select t.pool, t.symbol, max(t.event_seq) filter (where t.event_seq < c.first_seq) as kept_seq, max(t.event_seq) as partition_last_seq
    from intermediate.int_spot_trades as t
    inner join changed_rows as c on c.pool = t.pool and c.symbol = t.symbol
    where t.event_at >= getvariable('int_spot_trades_numbered_from')
    group by t.pool, t.symbol
    union all
    select t.pool, t.symbol, max(t.event_seq), null
    from intermediate.int_spot_trades as t
    inner join idle as i on i.pool = t.pool and i.symbol = t.symbol
    where len(getvariable('int_spot_trades_numbered_idle')) > 0 and t.event_seq < i.first_seq
    group by t.pool, t.symbol
),

bounds as (
    select pool, symbol, max(kept_seq) as kept_seq, max(partition_last_seq) as partition_last_seq
    from around
    group by pool, symbol
)

select c.pool, c.symbol, null as fill_id, c.n, c.last_seq
from changed_rows as c
left join bounds as b on b.pool = c.pool and b.symbol = c.symbol
where c.last_seq - c.first_seq + 1 <> c.n
    or c.first_seq - 1 is distinct from coalesce(b.kept_seq, 0)
    or coalesce(b.partition_last_seq, c.last_seq) > c.last_seq
    or c.openings > c.opening_accounts
    or c.last_opening_seq <> c.openings
union all
select account, symbol, fill_id, count(*), null
from intermediate.int_spot_trades
where {{ changed(account: pool, symbol: symbol, at: event_at) }} and lot_source = 'fill'
group by account, symbol, fill_id
having count(*) > 1 or fill_id is null
