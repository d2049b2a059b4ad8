-- Valuation in the reporting currency (docs/workbooks.md "Reporting currency") agrees with itself:
-- every daily row with an amount has a price or is listed in marts.needs_price (never both, never
-- neither), and a monthly *_rc is NULL exactly when one of its days lacks a price, else the sum of
-- its days'. Rows returned: the disagreements.
-- Checking what changed: whole (no {{ changed }}): marts.needs_price is rebuilt whole when anything it reads changed,
-- and the daily and monthly marts hold a row per day or month, small next to the fills.
with spot_days as (
    select account, cost_method, symbol, trade_date, quote_coin, realized_pnl, realized_pnl_rc, reporting_currency
    from marts.spot_realized_pnl_daily
),

needs as (
    select * from marts.needs_price
),

-- A spot day without a value must be listed; a listed day must lack one.
unlisted as (
    select 'spot day without a price, not in needs_price' as problem, account, symbol as what, trade_date as day
    from spot_days
    where reporting_currency is not null and realized_pnl_rc is null
        and not exists (
            select 1 from needs
            where needs.account = spot_days.account and needs.coin = spot_days.quote_coin
                and needs.needed_date = spot_days.trade_date and needs.mart = 'marts.spot_realized_pnl_daily'
        )
),

overlisted as (
    select 'needs_price lists a spot day that has its price' as problem, needs.account, needs.coin as what, needs.needed_date as day
    from needs
    where needs.mart = 'marts.spot_realized_pnl_daily'
        and not exists (
            select 1 from spot_days
            where spot_days.account = needs.account and spot_days.quote_coin = needs.coin
                and spot_days.trade_date = needs.needed_date and spot_days.realized_pnl_rc is null
        )
),

months as (
    select account, cost_method, symbol, trade_month, sum(realized_pnl_rc) as summed, count(*) filter (where realized_pnl_rc is null) as unpriced
    from marts.spot_realized_pnl_daily
    group by all
),

monthly as (
    select 'spot month disagrees with its days' as problem, m.account, m.symbol as what, m.trade_month as day
    from marts.spot_realized_pnl_monthly as m
    inner join months as d using (account, cost_method, symbol, trade_month)
    where (d.unpriced > 0 and m.realized_pnl_rc is not null)
        or (d.unpriced = 0 and m.realized_pnl_rc is distinct from d.summed)
),

final as (
    select * from unlisted
    union all
    select * from overlisted
    union all
    select * from monthly
)

select * from final
