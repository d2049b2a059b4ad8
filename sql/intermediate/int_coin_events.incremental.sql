-- int_coin_events, incremental (docs/plans/incremental-builds.md, "The books"): the events from one
-- instant B on are replaced, in every pool and coin; those before it stay, and the replaced ones
-- continue each pool's and coin's event_seq. Order is time first (opening lots, of no instant,
-- before all), so every kept event precedes every replaced one.
-- 1. B: the start of the reporting-zone day before the earliest pending change (a deposit pairs
--    with another account's withdrawal of up to a day before it; prices are per day, and int_prices
--    hands on a changed day from its start). A pending row of no instant: -infinity, every event;
--    but for a spot partition replaced whole without an opening lot (a new symbol), the start of
--    its events, old or new (below).
--    One change reaches events before B without a pending row saying when: a newer currencies
--    listing that names a collateral's coin otherwise renames the funding settled before its
--    first snapshot (first_funding in the model), whenever that was: where a stored one's coin is
--    not the name the listings give now, B is -infinity.
-- 2. The model's own SQL runs on the spot trades, futures days and commissions at or after B (and
--    the opening positions), and on its other inputs whole (the bills: the transfers pair deposits
--    with withdrawals numbered over all of them; the collateral's first snapshots; funding: few);
--    its events at or after B replace the stored ones, numbered after each pool's and coin's last
--    kept event_seq.
-- 3. The readers get (pool, coin, B) for every pool and coin with events replaced or removed.
set variable coin_events_zone = (select any_value(time_zone) from settings.reporting);

-- Without a reporting currency the books are empty, before and after (another setting is another
-- fingerprint: a whole rebuild): nothing is read, as a constant DuckDB folds the reads away by (the
-- trades' opening lots are otherwise found by a scan of the whole table, every night).
set variable coin_events_books = (select count(*) > 0 from settings.reporting where reporting_currency is not null);

-- A pending row of no instant from int_spot_trades names a spot partition it replaced whole: a new
-- symbol (every night a firm trades one), or a change at or before its first fill. Without an
-- opening lot (which has no instant), its events begin at its first trade now or its first event
-- stored (found by the symbol its events' memo names), whichever is earlier.
set variable coin_events_low = (
    with spot_replaced as (
        select p.account as pool, p.symbol
        from temp.main.model_pending as p
        where p.from_at is null and p.symbol is not null
            and exists (select 1 from intermediate.int_spot_trades as t where t.pool = p.account and t.symbol = p.symbol)
            and not exists (select 1 from intermediate.int_spot_trades as t where t.pool = p.account and t.symbol = p.symbol and t.lot_source = 'opening')
    ),

    bounds as (
        select from_at from temp.main.model_pending where from_at is not null
        union all
        select min(t.event_at) from intermediate.int_spot_trades as t semi join spot_replaced as s on s.pool = t.pool and s.symbol = t.symbol
        union all
        select min(e.event_at)
        from intermediate.int_coin_events as e
        semi join spot_replaced as s on s.pool = e.pool and e.memo like '% ' || s.symbol || ' fill %'
        where e.source_model = 'staging.spot_fills'
        union all
        select '-infinity'::timestamptz
        from temp.main.model_pending as p
        where p.from_at is null and not exists (select 1 from spot_replaced as s where s.pool = p.account and s.symbol = p.symbol)
    )

    select case
        when min(from_at) = '-infinity'::timestamptz then '-infinity'::timestamptz
        else local_day_start(min(local_date(from_at, getvariable('coin_events_zone'))) - 1, getvariable('coin_events_zone'))
    end
    from bounds
    where from_at is not null
);

-- A collateral's funding before its first snapshot, as stored, named otherwise than the
-- currencies listings name its coin now (the model's first_funding): every event.
set variable coin_events_low = (
    select case when exists (
        select 1
        from intermediate.int_coin_events as e
        left join (select coin_id, arg_max(coin_name, snapshot_at) as coin_name from staging.currencies group by coin_id) as n
            on n.coin_id = try_cast(regexp_extract(e.source_key, 'coin_id=([0-9]+);', 1) as bigint)
        where e.source_model = 'staging.futures_collateral'
            and e.event_at < getvariable('coin_events_low')
            and e.coin is distinct from coalesce(n.coin_name, 'coin_id ' || regexp_extract(e.source_key, 'coin_id=([0-9]+);', 1))
    ) then '-infinity'::timestamptz else getvariable('coin_events_low') end
);

create or replace temp table coin_events_trades as
select * from intermediate.int_spot_trades where getvariable('coin_events_books') and event_at >= getvariable('coin_events_low') and lot_source <> 'opening'
union all
select * from intermediate.int_spot_trades where getvariable('coin_events_books') and lot_source = 'opening';

create or replace temp table coin_events_fill_days as
select * from intermediate.int_futures_fill_days
where getvariable('coin_events_books')
    and (fill_date >= local_date(getvariable('coin_events_low'), getvariable('coin_events_zone')) or getvariable('coin_events_low') = '-infinity'::timestamptz);

create or replace temp table coin_events_commissions as
select * from staging.affiliate_commissions where getvariable('coin_events_books') and deal_time_at >= getvariable('coin_events_low');

create or replace temp table coin_events_new as
select * exclude (event_seq)
from {{ model(intermediate.int_spot_trades -> temp.main.coin_events_trades, intermediate.int_futures_fill_days -> temp.main.coin_events_fill_days, staging.affiliate_commissions -> temp.main.coin_events_commissions) }}
where getvariable('coin_events_books') and (getvariable('coin_events_low') = '-infinity'::timestamptz or event_at >= getvariable('coin_events_low'));

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

drop table temp.main.coin_events_trades;
drop table temp.main.coin_events_fill_days;
drop table temp.main.coin_events_commissions;
drop table temp.main.coin_events_new;
drop table temp.main.coin_events_touched;
reset variable coin_events_low;
reset variable coin_events_zone;
reset variable coin_events_books;
