-- The sub-ledger ties (Bitwave's period-end check: the journal's net change of each digital-asset
-- account equals the change of what it holds): for every pool (an account, or * with pooling
-- universal), coin and month end, the balance of the coin's digital-assets account in the journal
-- as posted (marts.journal_entries, its accounts' lines summed) equals the cost of the lots held
-- then under the journal's cost method (intermediate.int_coin_lots carrying_e12: the known part;
-- a lot without a price is posted nowhere, docs/workbooks.md "Books in the reporting currency"),
-- plus, with valuation fair_value, the fair-value adjustment standing (marts.holdings_rollforward).
-- Month ends of open periods only: a closed period's journal stays as closed while late data moves
-- its lots, and the difference is booked as adjusting entries in the first open period, from whose
-- end on the posted journal ties again (docs/workbooks.md "Closing a period"); a close refuses to
-- happen while this check fails. Rows returned: the pools, coins and month ends where they differ.
-- Checking what changed: whole (no {{ changed }}): the journal and the lots are rebuilt whole when anything they read
-- changed (no incremental step), and each month end reads the whole history before it.
with journal as (
    select * from settings.journal
),

reporting as (
    select pooling, time_zone from settings.reporting
),

lots as (
    select l.pool, l.coin, e.event_date, l.event_seq, l.carrying_e12, l.carrying_known
    from intermediate.int_coin_lots as l
    inner join intermediate.int_coin_events as e using (pool, coin, event_seq)
    where l.cost_method = (select any_value(cost_method) from journal)
),

-- The digital-assets lines of each pool and coin: the ledger account the chart gives the line's coin and account.
asset_lines as (
    select
        case when r.pooling = 'universal' then '*' else j.account end as pool,
        j.coin,
        j.entry_date,
        j.net_amount
    from marts.journal_entries as j
    cross join journal as c
    cross join reporting as r
    where j.ledger_account = replace(replace(c.digital_assets, '{coin}', j.coin), '{account}', j.account)
),

closed_until as (
    select max(period_to) as last_day from settings.closed_periods
),

month_ends as (
    select * from (
        select distinct pool, coin, cast(last_day(event_date) as date) as month_end from lots
        union
        select distinct pool, coin, cast(last_day(entry_date) as date) from asset_lines
    )
    where month_end > coalesce((select last_day from closed_until), date '0001-01-01')
),

-- The fair-value adjustment standing at each month end (valuation fair_value; 0 at cost).
adjustments as (
    select account as pool, coin, cast(last_day(period_month) as date) as month_end, closing_carrying_value - closing_cost as adjustment
    from marts.holdings_rollforward
    where cost_method = (select any_value(cost_method) from journal)
),

held as (
    select m.pool, m.coin, m.month_end, coalesce(arg_max(l.carrying_e12, l.event_seq), 0) as carrying_e12, coalesce(any_value(a.adjustment), 0) as adjustment
    from month_ends as m
    left join lots as l on l.pool = m.pool and l.coin = m.coin and l.event_date <= m.month_end
    left join adjustments as a on a.pool = m.pool and a.coin = m.coin and a.month_end = m.month_end
    group by all
),

posted as (
    select m.pool, m.coin, m.month_end, coalesce(sum(a.net_amount), 0) as balance
    from month_ends as m
    left join asset_lines as a on a.pool = m.pool and a.coin = m.coin and a.entry_date <= m.month_end
    group by all
)

select h.pool, h.coin, h.month_end, exact_money(h.carrying_e12) + h.adjustment as lots_carrying_value, p.balance as journal_balance
from held as h
inner join posted as p using (pool, coin, month_end)
where exact_money(h.carrying_e12) + h.adjustment <> p.balance
order by h.pool, h.coin, h.month_end
