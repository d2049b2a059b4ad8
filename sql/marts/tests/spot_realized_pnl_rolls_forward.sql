-- Open inventory is never negative (except under uk, between a sell and the later buys its 30-day
-- rule matched, and under pooling universal, where an account's figures are its contribution to the
-- pool) and rolls forward day by day: open_quantity = previous + opening_quantity +
-- quantity_bought - quantity_sold (exact), open_cost = previous + opening_cost + cost_bought - cost
-- (exact for the lot methods, within 1e-8 for the moving average, whose scan rounds to 1e-12), and
-- realized_pnl = proceeds - cost.
-- Checking what changed: whole (no {{ changed }}): each day reads the one before it, and the daily mart holds a row
-- per account, cost method, symbol and day with a trade, small next to the fills.
with daily as (
    select
        *,
        lag(open_quantity) over (partition by account, cost_method, symbol order by trade_date) as previous_quantity,
        lag(open_cost) over (partition by account, cost_method, symbol order by trade_date) as previous_cost
    from marts.spot_realized_pnl_daily
)

select account, cost_method, symbol, trade_date, open_quantity, previous_quantity, open_cost, previous_cost
from daily
where (cost_method <> 'uk' and (select any_value(pooling) from settings.reporting) = 'account' and (open_quantity < 0 or open_cost < 0))
    or open_quantity <> coalesce(previous_quantity, 0) + opening_quantity + quantity_bought - quantity_sold
    or (cost_method <> 'average' and open_cost <> coalesce(previous_cost, 0) + opening_cost + cost_bought - cost)
    or abs(open_cost - (coalesce(previous_cost, 0) + opening_cost + cost_bought - cost)) > 0.00000001
    or realized_pnl <> proceeds - cost
