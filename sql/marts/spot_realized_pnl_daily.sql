-- Spot realized PnL per account, cost method, symbol and reporting-zone day, in the quote coin,
-- with the open inventory and its cost at the end of the day. A day with any trade has a row
-- (buys alone change the inventory). One set of rows per cost method of settings.reporting.
-- Key: (account, cost_method, symbol, trade_date). Inputs: intermediate.int_spot_trades,
-- intermediate.int_spot_fifo_segments, intermediate.int_spot_average_cost,
-- intermediate.int_spot_lot_segments (lifo, hifo, uk), settings.reporting.
-- quantity_sold, proceeds, cost and realized_pnl (= proceeds - cost) cover the units matched to
-- inventory; unmatched_quantity and unmatched_proceeds the units sold beyond it (no cost known),
-- so everything sold is quantity_sold + unmatched_quantity. opening_* is a declared opening
-- position (on the day of the symbol's first fill), quantity_bought the units buys added (q - fee)
-- and cost_bought their cost, so open_cost rolls forward: previous + opening_cost + cost_bought - cost.
-- For lifo, hifo and uk the sells' matched and unmatched parts come from their lot segments (uk's
-- 30-day rule matches a sell with later buys, so its unmatched part can differ from the others').
-- realized_pnl_rc: realized_pnl in settings.reporting's currency at the quote coin's price on
-- trade_date (intermediate.int_prices; docs/workbooks.md "Reporting currency"), NULL where it has none.
-- Under pooling 'universal' the lots are every account's (int_spot_trades' pool '*'): a sell's
-- figures stay on the selling account's rows, a buy's on the buyer's, and open_quantity and
-- open_cost are each account's running contribution to the pool (what it put in less what its sells
-- took out), so they add up over the accounts to the pool's, and one account's may be below zero.
-- How: each (account, symbol, day)'s trades are summed once (trade_days: what every method shares,
-- with fifo's and average's matched and unmatched parts, which the trades carry), and each method's
-- sells are summed per day from their segments (sell_days: fifo's costs; the lot methods' matched
-- and unmatched parts), or for average from its own costs. (Each trade once per method, joined to
-- its sell's parts, then summed: 47 s of a 10M-fill five-method build on 2 cores; so: 14 s.)
-- int_spot_trades is read by each CTE that needs it, its own columns: one shared CTE would be kept
-- in memory whole.
with fifo_segments as (
    select * from intermediate.int_spot_fifo_segments
),

average_cost as (
    select * from intermediate.int_spot_average_cost
),

chosen as (
    select any_value(cost_methods) as cost_methods from settings.reporting
),

reporting_zone as (
    select any_value(time_zone) as time_zone, any_value(pooling) as pooling from settings.reporting
),

-- The lot methods chosen.
lot_methods as (
    select unnest(list_filter(cost_methods, m -> m in ('lifo', 'hifo', 'uk'))) as cost_method
    from chosen
),

-- What every cost method shares of a day's trades: the openings, the buys, the units and proceeds
-- of the sells, and the inventory after the day. The trades carry fifo's matched and unmatched
-- parts, which are also average's (the same inventory).
trade_days as (
    select
        account,
        symbol,
        event_date as trade_date,
        any_value(base_coin) as base_coin,
        any_value(quote_coin) as quote_coin,
        sum(case when lot_source = 'opening' then units_in_e18 else 0 end) as opening_quantity_e18,
        sum(case when lot_source = 'opening' then cost_e12 else 0 end) as opening_cost_e12,
        sum(case when lot_source = 'fill' then units_in_e18 else 0 end) as quantity_bought_e18,
        sum(case when lot_source = 'fill' then cost_e12 else 0 end) as cost_bought_e12,
        sum(quantity_out_e18 - unmatched_e18) as quantity_sold_e18,
        sum(matched_proceeds_e12) as proceeds_e12,
        sum(unmatched_e18) as unmatched_quantity_e18,
        sum(proceeds_e12 - matched_proceeds_e12) as unmatched_proceeds_e12,
        arg_max(inventory_e18, event_seq) as open_quantity_e18
    from intermediate.int_spot_trades
    group by account, symbol, event_date
),

-- Under pooling 'universal' a sell's account is its trade's (the pool is '*'); under 'account' it is
-- the pool, and this is empty.
universal_sells as (
    select pool, symbol, event_seq, account
    from intermediate.int_spot_trades
    where side = 'sell' and (select pooling from reporting_zone) = 'universal'
),

-- The sells' segments under fifo (their costs are fifo's; the units and proceeds of its matched and
-- unmatched parts are the trades' own) and under each lot method chosen.
segments as (
    select pool, symbol, 'fifo' as cost_method, sell_seq, sell_at, case when lot_seq is null then 'unmatched' else 'lot' end as match_rule, quantity_e18, cost_e12, proceeds_e12
    from fifo_segments
    where list_contains((select cost_methods from chosen), 'fifo')
    union all
    select pool, symbol, cost_method, sell_seq, sell_at, match_rule, quantity_e18, cost_e12, proceeds_e12
    from intermediate.int_spot_lot_segments
),

-- Summed per (account, cost method, symbol, day) of the selling account, by the sell's instant.
-- A sell's segments part its units and proceeds (int_spot_lot_segments_quantities checks it), so a
-- lot method's matched and unmatched parts are its segments' sums.
sell_days as (
    select
        coalesce(u.account, s.pool) as account,
        s.cost_method,
        s.symbol,
        local_date(s.sell_at, z.time_zone) as event_date,
        sum(s.cost_e12) filter (where s.match_rule <> 'unmatched') as cost_e12,
        sum(s.quantity_e18) filter (where s.match_rule <> 'unmatched') as quantity_sold_e18,
        sum(s.proceeds_e12) filter (where s.match_rule <> 'unmatched') as proceeds_e12,
        sum(s.quantity_e18) filter (where s.match_rule = 'unmatched') as unmatched_e18,
        sum(s.proceeds_e12) filter (where s.match_rule = 'unmatched') as unmatched_proceeds_e12
    from segments as s
    cross join reporting_zone as z
    left join universal_sells as u on u.pool = s.pool and u.symbol = s.symbol and u.event_seq = s.sell_seq
    group by all
),

-- The moving average's costs out and its inventory's cost after the day (a day has average rows
-- where its trades have average costs: 'average' is chosen).
average_days as (
    select
        t.account,
        t.symbol,
        t.event_date,
        sum(coalesce(a.cost_e12, 0)) as cost_e12,
        arg_max(a.inventory_cost_e12, t.event_seq) as average_open_cost_e12
    from intermediate.int_spot_trades as t
    inner join average_cost as a on a.pool = t.pool and a.symbol = t.symbol and a.event_seq = t.event_seq
    group by t.account, t.symbol, t.event_date
),

-- Each day once per cost method (by name: each method has its own cost, the lot methods their own
-- matched and unmatched parts).
days as (
    select d.*, 'fifo' as cost_method, coalesce(c.cost_e12, 0) as cost_e12, cast(null as hugeint) as average_open_cost_e12
    from trade_days as d
    left join sell_days as c on c.cost_method = 'fifo' and c.account = d.account and c.symbol = d.symbol and c.event_date = d.trade_date
    where list_contains((select cost_methods from chosen), 'fifo')
    union all by name
    select d.*, 'average' as cost_method, a.cost_e12, a.average_open_cost_e12
    from trade_days as d
    inner join average_days as a on a.account = d.account and a.symbol = d.symbol and a.event_date = d.trade_date
    union all by name
    select
        d.* replace (
            coalesce(c.quantity_sold_e18, 0) as quantity_sold_e18,
            coalesce(c.proceeds_e12, 0) as proceeds_e12,
            coalesce(c.unmatched_e18, 0) as unmatched_quantity_e18,
            coalesce(c.unmatched_proceeds_e12, 0) as unmatched_proceeds_e12
        ),
        m.cost_method,
        coalesce(c.cost_e12, 0) as cost_e12,
        cast(null as hugeint) as average_open_cost_e12
    from trade_days as d
    cross join lot_methods as m
    left join sell_days as c on c.cost_method = m.cost_method and c.account = d.account and c.symbol = d.symbol and c.event_date = d.trade_date
),

pnl as (
    select
        account,
        cost_method,
        symbol,
        trade_date,
        cast(date_trunc('month', trade_date) as date) as trade_month,
        base_coin,
        quote_coin,
        exact_decimal_18(opening_quantity_e18) as opening_quantity,
        exact_decimal_12(opening_cost_e12) as opening_cost,
        exact_decimal_18(quantity_bought_e18) as quantity_bought,
        exact_decimal_12(cost_bought_e12) as cost_bought,
        exact_decimal_18(quantity_sold_e18) as quantity_sold,
        exact_decimal_12(proceeds_e12) as proceeds,
        exact_decimal_12(cost_e12) as cost,
        exact_decimal_12(proceeds_e12 - cost_e12) as realized_pnl,
        exact_decimal_18(unmatched_quantity_e18) as unmatched_quantity,
        exact_decimal_12(unmatched_proceeds_e12) as unmatched_proceeds,
        -- FIFO and average per account: the inventory after the day's last event. The lot methods
        -- roll their own (uk's can be below zero between a sell and the later buys its 30-day rule
        -- matched), as does every method under pooling universal (the account's contribution).
        exact_decimal_18(
            case
                when cost_method in ('fifo', 'average') and pooling = 'account' then open_quantity_e18
                else sum(opening_quantity_e18 + quantity_bought_e18 - quantity_sold_e18) over (
                    partition by account, cost_method, symbol order by trade_date rows unbounded preceding
                )
            end
        ) as open_quantity,
        exact_decimal_12(
            case
                when cost_method = 'average' and pooling = 'account' then average_open_cost_e12
                else sum(opening_cost_e12 + cost_bought_e12 - cost_e12) over (
                    partition by account, cost_method, symbol order by trade_date rows unbounded preceding
                )
            end
        ) as open_cost
    from days
    cross join (select any_value(pooling) as pooling from settings.reporting)
),

reporting as (
    select reporting_currency from settings.reporting
),

prices as (
    select * from intermediate.int_prices
),

priced as (
    select
        pnl.*,
        reporting.reporting_currency,
        valued_price(pnl.quote_coin, reporting.reporting_currency, prices.price) as price,
        valued_source(pnl.quote_coin, reporting.reporting_currency, prices.price_source) as price_source
    from pnl
    cross join reporting
    left join prices on prices.coin = pnl.quote_coin and prices.price_date = pnl.trade_date
),

final as (
    select
        * exclude (price, price_source),
        price,
        case when price is not null then trade_date end as price_date,
        price_source,
        valued_money(realized_pnl, price, reporting_currency) as realized_pnl_rc,
        'spot_realized_pnl_daily/' || concat_ws('/', ref_part(account), ref_part(cost_method), ref_part(symbol), ref_part(trade_date)) as reference
    from priced
)

select * from final
