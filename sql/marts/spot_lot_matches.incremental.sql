-- Incremental step of marts.spot_lot_matches (docs/plans/incremental-builds.md, "The contract"):
-- run inside the model's transaction instead of CREATE OR REPLACE, it leaves the table equal to a
-- whole rebuild.
-- What changed: each row of temp.main.model_pending says that rows at or after from_at (NULL: from
-- the beginning) of an account ('*': every account, as pooling 'universal' hands it on) and a
-- symbol (NULL: every symbol) may have changed. The rows are keyed by sell, and a sell's matches
-- change only at or after its pool's frontier: its parents replaced the segments of those sells
-- (uk's 30-day look-ahead is already in the frontier they hand on).
-- How: spot_lot_matches_frontier holds per (account, symbol) the earliest from_at of the pending
-- rows that name it, for the pairs with a sell at or after the earliest of all (a filter on the
-- instant, no sort). Their rows of sells at or after it are deleted and inserted again by the
-- model's own CTE `final` (a test keeps it the same text as in spot_lot_matches.sql) over those
-- sells, their segments and the lots those segments name, the only rows read before the frontier.
-- The pending rows are passed on unchanged.

create or replace temp table spot_lot_matches_scope as
select
    coalesce(account, '*') as account,
    coalesce(symbol, '*') as symbol,
    min(coalesce(from_at, cast('-infinity' as timestamptz))) as from_at
from temp.main.model_pending
group by all;

create or replace temp table spot_lot_matches_frontier as
with pairs as (
    select distinct account, symbol
    from marts.spot_lot_matches
    where sell_at >= (select min(from_at) from temp.main.spot_lot_matches_scope)
    union
    select distinct account, symbol
    from intermediate.int_spot_trades
    where side = 'sell' and event_at >= (select min(from_at) from temp.main.spot_lot_matches_scope)
)

select pairs.account, pairs.symbol, least(exact_pair.from_at, every_account.from_at, every_symbol.from_at, everything.from_at) as from_at
from pairs
left join temp.main.spot_lot_matches_scope as exact_pair on exact_pair.account = pairs.account and exact_pair.symbol = pairs.symbol
left join temp.main.spot_lot_matches_scope as every_account on every_account.account = '*' and every_account.symbol = pairs.symbol
left join temp.main.spot_lot_matches_scope as every_symbol on every_symbol.account = pairs.account and every_symbol.symbol = '*'
left join temp.main.spot_lot_matches_scope as everything on everything.account = '*' and everything.symbol = '*'
where least(exact_pair.from_at, every_account.from_at, every_symbol.from_at, everything.from_at) is not null;

delete from marts.spot_lot_matches as m
using temp.main.spot_lot_matches_frontier as f
where m.account = f.account and m.symbol = f.symbol and m.sell_at >= f.from_at;

insert into marts.spot_lot_matches by name
with frontier as (
    select * from temp.main.spot_lot_matches_frontier
),

-- The sells whose rows are replaced.
sell_trades as (
    select t.pool, t.account, t.symbol, t.event_seq, t.base_coin, t.quote_coin, t.fill_id, t.event_at, t.event_date
    from intermediate.int_spot_trades as t
    inner join frontier as f on f.account = t.account and f.symbol = t.symbol
    where t.side = 'sell' and t.event_at >= f.from_at and t.event_at >= (select min(from_at) from frontier)
),

segments as (
    select s.*
    from (
        select pool, symbol, 'fifo' as cost_method, sell_seq, case when lot_seq is null then 'unmatched' else 'lot' end as match_rule, lot_seq, quantity_e18, cost_e12, proceeds_e12
        from intermediate.int_spot_fifo_segments
        union all
        select pool, symbol, cost_method, sell_seq, match_rule, lot_seq, quantity_e18, cost_e12, proceeds_e12
        from intermediate.int_spot_lot_segments
    ) as s
    semi join sell_trades as sell on sell.pool = s.pool and sell.symbol = s.symbol and sell.event_seq = s.sell_seq
),

-- The lots those segments name (before the frontier too: a sell takes from old lots).
lot_trades as (
    select t.pool, t.account, t.symbol, t.event_seq, t.lot_source, t.fill_id, t.event_at
    from intermediate.int_spot_trades as t
    semi join segments as s on s.pool = t.pool and s.symbol = t.symbol and s.lot_seq = t.event_seq
    where t.units_in_e18 > 0
),

final as (
    select
        sell.account,
        s.cost_method,
        s.symbol,
        sell.base_coin,
        sell.quote_coin,
        sell.fill_id as sell_fill_id,
        sell.event_at as sell_at,
        sell.event_date as sell_date,
        cast(date_trunc('month', sell.event_date) as date) as sell_month,
        case s.match_rule when 'unmatched' then 'unmatched' when 'pool' then 'pool' else lot.lot_source end as lot_source,
        s.match_rule,
        lot.account as lot_account,
        lot.fill_id as buy_fill_id,
        lot.event_at as buy_at,
        exact_decimal_18(s.quantity_e18) as quantity,
        exact_decimal_12(s.cost_e12) as cost,
        exact_decimal_12(s.proceeds_e12) as proceeds,
        exact_decimal_12(s.proceeds_e12 - s.cost_e12) as realized_pnl
    from segments as s
    inner join sell_trades as sell on sell.pool = s.pool and sell.symbol = s.symbol and sell.event_seq = s.sell_seq
    left join lot_trades as lot on lot.pool = s.pool and lot.symbol = s.symbol and lot.event_seq = s.lot_seq
)

select * from final;

drop table temp.main.spot_lot_matches_frontier;
drop table temp.main.spot_lot_matches_scope;
