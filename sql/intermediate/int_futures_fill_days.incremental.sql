-- int_futures_fill_days, incremental (docs/plans/incremental-builds.md, "The contract"): a row is one
-- account, contract and reporting-zone day, and nothing runs across days, so for each pending account
-- and contract the days from the earliest changed fill's on are replaced whole, the others kept.
-- 1. fill_days_frontier: per pending (account or '*', contract or NULL: every one) the first day to
--    replace, local_date(from_at) (NULL from_at: every day), and that day's first instant.
-- 2. Those rows are deleted; the model's own SQL runs on the fills of those accounts, contracts and
--    days alone (the contracts' coins are read whole: a row per listing, and a new listing rebuilds
--    this model whole). The fills are read from a constant lower bound (the earliest replaced day,
--    less a day), so DuckDB skips the row groups of older fills instead of testing every fill.
-- 3. The readers get (account, contract, start of the first replaced day): whole days changed.
-- A new listing reaches this step as a pending row of its account from the listing's time (the
-- staging table of a snapshot stream hands on its new rows only). The coins are each contract's
-- last listing, by any account, on every day: a contract whose listed coins differ from those
-- its rows carry is replaced on every day, for every account.
insert into temp.main.model_pending
select '*', t.symbol, null
from (
    select symbol, any_value(margin_coin) as margin_coin, any_value(quote_coin) as quote_coin
    from intermediate.int_futures_fill_days
    group by symbol
) as t
left join (
    select symbol, arg_max(coin, snapshot_at) as margin_coin, arg_max(quote_currency, snapshot_at) as quote_coin
    from staging.futures_contracts
    group by symbol
) as c on c.symbol = t.symbol
where t.margin_coin is distinct from c.margin_coin or t.quote_coin is distinct from c.quote_coin;

create or replace temp table fill_days_frontier as
select
    p.account,
    p.symbol,
    case when bool_or(p.from_at is null) then null else min(local_date(p.from_at, r.time_zone)) end as from_date,
    local_day_start(from_date, r.time_zone) as from_start
from temp.main.model_pending as p
cross join (select any_value(time_zone) as time_zone from settings.reporting) as r
group by p.account, p.symbol, r.time_zone;

set variable fill_days_low = (
    select case when bool_or(from_start is null) then '-infinity'::timestamptz else min(from_start) - interval 1 day end
    from fill_days_frontier
);

create or replace temp table fill_days_fills as
select s.*
from staging.futures_fills as s
cross join (select any_value(time_zone) as time_zone from settings.reporting) as r
where s.created_time_at >= getvariable('fill_days_low')
    and exists (
        select 1 from fill_days_frontier as f
        where (f.account = '*' or f.account = s.account)
            and (f.symbol is null or f.symbol = s.symbol)
            and (f.from_date is null or local_date(s.created_time_at, r.time_zone) >= f.from_date)
    );

delete from intermediate.int_futures_fill_days as t
where exists (
    select 1 from fill_days_frontier as f
    where (f.account = '*' or f.account = t.account)
        and (f.symbol is null or f.symbol = t.symbol)
        and (f.from_date is null or t.fill_date >= f.from_date)
);

insert into intermediate.int_futures_fill_days by name
select * from {{ model(staging.futures_fills -> temp.main.fill_days_fills) }};

create or replace temp table model_pending as
select account, symbol, from_start as from_at from fill_days_frontier;

drop table fill_days_frontier;
drop table fill_days_fills;
reset variable fill_days_low;
