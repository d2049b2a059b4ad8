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
-- int_spot_trades is read once per cost method (one shared CTE would be kept in memory whole).
-- realized_pnl_rc: realized_pnl in settings.reporting's currency at the quote coin's price on
-- trade_date (intermediate.int_prices; docs/workbooks.md "Reporting currency"), NULL where it has none.
-- Under pooling 'universal' the lots are every account's (int_spot_trades' pool '*'): a sell's
-- figures stay on the selling account's rows, a buy's on the buyer's, and open_quantity and
-- open_cost are each account's running contribution to the pool (what it put in less what its sells
-- took out), so they add up over the accounts to the pool's, and one account's may be below zero.
with fifo_trades as (
    select * from intermediate.int_spot_trades
    where list_contains((select any_value(cost_methods) from settings.reporting), 'fifo')
),

average_trades as (
    select * from intermediate.int_spot_trades
),

fifo_segments as (
    select * from intermediate.int_spot_fifo_segments
),

average_cost as (
    select * from intermediate.int_spot_average_cost
),

-- The lot methods chosen, and each sell's parts under each.
lot_methods as (
    select unnest(list_filter(any_value(cost_methods), m -> m in ('lifo', 'hifo', 'uk'))) as cost_method
    from settings.reporting
),

lot_trades as (
    select * from intermediate.int_spot_trades
    where exists (select 1 from lot_methods)
),

lot_sells as (
    select
        pool,
        symbol,
        cost_method,
        sell_seq,
        coalesce(sum(proceeds_e12) filter (where match_rule <> 'unmatched'), 0) as matched_proceeds_e12,
        coalesce(sum(cost_e12), 0) as cost_e12,
        coalesce(sum(quantity_e18) filter (where match_rule = 'unmatched'), 0) as unmatched_e18
    from intermediate.int_spot_lot_segments
    group by pool, symbol, cost_method, sell_seq
),

fifo_sell_costs as (
    select pool, symbol, sell_seq, sum(cost_e12) as cost_e12
    from fifo_segments
    where lot_seq is not null
    group by pool, symbol, sell_seq
),

-- Each trade once per cost method, with the cost its sell disposed of. FIFO's inventory cost is
-- the running sum of costs in less costs out (per day, below); the average method's is its own.
costed as (
    select t.*, 'fifo' as cost_method, coalesce(f.cost_e12, 0) as disposed_cost_e12, cast(null as hugeint) as inventory_cost_e12
    from fifo_trades as t
    left join fifo_sell_costs as f on f.pool = t.pool and f.symbol = t.symbol and f.sell_seq = t.event_seq
    union all
    select t.*, 'average' as cost_method, coalesce(a.cost_e12, 0) as disposed_cost_e12, a.inventory_cost_e12
    from average_trades as t
    inner join average_cost as a on a.pool = t.pool and a.symbol = t.symbol and a.event_seq = t.event_seq
    union all
    select
        t.* replace (coalesce(l.unmatched_e18, 0) as unmatched_e18, coalesce(l.matched_proceeds_e12, 0) as matched_proceeds_e12),
        m.cost_method,
        coalesce(l.cost_e12, 0) as disposed_cost_e12,
        cast(null as hugeint) as inventory_cost_e12
    from lot_trades as t
    cross join lot_methods as m
    left join lot_sells as l on l.pool = t.pool and l.symbol = t.symbol and l.cost_method = m.cost_method and l.sell_seq = t.event_seq
),

days as (
    select
        account,
        cost_method,
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
        sum(disposed_cost_e12) as cost_e12,
        sum(unmatched_e18) as unmatched_quantity_e18,
        sum(proceeds_e12 - matched_proceeds_e12) as unmatched_proceeds_e12,
        arg_max(inventory_e18, event_seq) as open_quantity_e18,
        arg_max(inventory_cost_e12, event_seq) as average_open_cost_e12
    from costed
    group by account, cost_method, symbol, event_date
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
