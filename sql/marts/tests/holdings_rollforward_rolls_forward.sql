-- The holdings roll-forward rolls: each month opens where the previous one closed; its closing
-- quantity is the opening plus acquisitions less the disposals matched to what was held; its closing
-- carrying value is the opening plus the acquisitions' and less the disposals' known cost, plus the
-- remeasurement; its closing cost equals the lots' (intermediate.int_coin_lots) after the month's
-- last event; a realized gain, where known, is proceeds less cost. Rows returned: the months that do not.
-- Checking what changed: whole (no {{ changed }}): each month reads the one before it, and marts.holdings_rollforward
-- is rebuilt whole when anything it reads changed (no incremental step).
with months as (
    select
        *,
        lag(closing_quantity) over w as previous_quantity,
        lag(closing_carrying_value) over w as previous_carrying_value
    from marts.holdings_rollforward
    window w as (partition by account, coin, cost_method order by period_month)
)

select account, coin, cost_method, period_month, opening_quantity, closing_quantity, opening_carrying_value, closing_carrying_value
from months
where opening_quantity <> coalesce(previous_quantity, 0)
    or opening_carrying_value <> coalesce(previous_carrying_value, 0)
    or closing_quantity <> opening_quantity + acquisitions_quantity - (disposals_quantity - unmatched_quantity)
    or closing_carrying_value <> opening_carrying_value + acquisitions_cost_known_part - disposals_cost_known_part + coalesce(remeasurement, 0)
    or (realized_gain is not null and realized_gain <> disposals_proceeds - disposals_cost)
