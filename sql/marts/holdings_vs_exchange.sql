-- Reconciliation, not a check: the units the books hold (the lots' quantity) against what the exchange's own
-- snapshots hold, per account, coin and sync (docs/workbooks.md "Quantities against the exchange"). Key:
-- (account, coin, snapshot_at). Inputs: intermediate.int_coin_events, staging.spot_assets,
-- staging.futures_collateral, staging.currencies, staging.futures_fills, settings.reporting.
-- The exchange's side: the spot assets (equity, else available + frozen) plus the futures collateral
-- (amount: transfers in less out, realized PnL, fees and funding) of the same sync; snapshot_at is the later
-- of the two instants. The books' side: every movement up to that instant, in less out (the lots' units:
-- int_coin_lots holds exactly these). A futures day's PnL and fees are one movement at the day's end: on the
-- snapshot's own day, the fills up to the instant are counted from the fills instead.
-- A difference is to explain, not an error: commission is income in the books when the exchange records it,
-- and commission_quantity shows it beside the difference (the sandbox never credits it to a wallet).
with reporting as (
    select time_zone from settings.reporting
),

coin_names as (
    select coin_id, arg_max(coin_name, snapshot_at) as coin_name from staging.currencies group by coin_id
),

spot as (
    select account, _run_id as run_id, snapshot_at, coin_name as coin, coalesce(equity, available + frozen) as units
    from staging.spot_assets
),

futures as (
    select c.account, c._run_id as run_id, c.snapshot_at, coalesce(n.coin_name, 'coin_id ' || c.coin_id) as coin, sum(c.amount) as units
    from staging.futures_collateral as c
    left join coin_names as n using (coin_id)
    group by all
),

-- One instant per account and sync: the later of its spot assets and futures account snapshots.
syncs as (
    select account, run_id, max(snapshot_at) as snapshot_at
    from (select account, run_id, snapshot_at from spot union all select account, run_id, snapshot_at from futures)
    group by all
),

exchange as (
    select s.account, s.snapshot_at, u.coin, sum(u.spot_units) as spot_quantity, sum(u.futures_units) as futures_quantity
    from syncs as s
    inner join (
        select account, run_id, coin, units as spot_units, 0 as futures_units from spot
        union all
        select account, run_id, coin, 0, units from futures
    ) as u using (account, run_id)
    group by all
),

instants as (
    select distinct account, snapshot_at, local_date(snapshot_at, r.time_zone) as snapshot_date
    from syncs cross join reporting as r
),

-- The books: the running balance of every movement up to the instant (ASOF: the last movement at or before
-- it). A futures day's results sit at the day's end, after any instant of that day ...
movements as (
    select
        account, coin,
        -- A declared opening position has no instant: it comes before everything.
        coalesce(event_at, timestamptz '1970-01-01 00:00:00+00') as event_at,
        sum(case when direction = 'in' then units_e18 else -units_e18 end) as units_e18,
        coalesce(sum(units_e18) filter (where kind = 'commission'), 0) as commission_e18
    from intermediate.int_coin_events
    group by all
),

running as (
    select
        account, coin, event_at,
        sum(units_e18) over w as units_e18,
        sum(commission_e18) over w as commission_e18
    from movements
    window w as (partition by account, coin order by event_at rows between unbounded preceding and current row)
),

moved as (
    select i.account, i.snapshot_at, c.coin, r.units_e18, r.commission_e18
    from instants as i
    inner join (select distinct account, coin from movements) as c using (account)
    asof join running as r on r.account = i.account and r.coin = c.coin and r.event_at <= i.snapshot_at
),

-- ... which come from that day's fills up to the instant: realized PnL less fees, in the margin coin.
contract_coins as (
    select symbol, any_value(margin_coin) as margin_coin from intermediate.int_futures_fill_days group by symbol
),

same_day as (
    select i.account, i.snapshot_at, c.margin_coin as coin, exact_qty_units(sum(f.realize_pnl - f.fill_fee - f.liquidate_fee)) as units_e18
    from instants as i
    cross join reporting as r
    inner join staging.futures_fills as f
        on f.account = i.account and f.created_time_at <= i.snapshot_at and local_date(f.created_time_at, r.time_zone) = i.snapshot_date
    inner join contract_coins as c using (symbol)
    group by all
),

books as (
    select account, snapshot_at, coin, sum(units_e18) as units_e18, sum(commission_e18) as commission_e18
    from (
        select account, snapshot_at, coin, units_e18, commission_e18 from moved
        union all
        select account, snapshot_at, coin, units_e18, null from same_day
    )
    group by all
),

final as (
    select
        'holdings_vs_exchange/' || ref_part(coalesce(b.account, x.account)) || '/' || ref_part(coalesce(b.coin, x.coin)) || '/'
            || ref_instant(coalesce(b.snapshot_at, x.snapshot_at)) as reference,
        coalesce(b.account, x.account) as account,
        coalesce(b.coin, x.coin) as coin,
        coalesce(b.snapshot_at, x.snapshot_at) as snapshot_at,
        exact_qty(coalesce(b.units_e18, 0)) as books_quantity,
        coalesce(x.spot_quantity, 0) as spot_quantity,
        coalesce(x.futures_quantity, 0) as futures_quantity,
        coalesce(x.spot_quantity, 0) + coalesce(x.futures_quantity, 0) as exchange_quantity,
        exact_qty(coalesce(b.units_e18, 0)) - coalesce(x.spot_quantity, 0) - coalesce(x.futures_quantity, 0) as difference,
        exact_qty(coalesce(b.commission_e18, 0)) as commission_quantity
    from books as b
    full join exchange as x on x.account = b.account and x.snapshot_at = b.snapshot_at and x.coin = b.coin
)

select *, difference <> 0 as is_different
from final
-- A coin neither side holds says nothing.
where books_quantity <> 0 or exchange_quantity <> 0
