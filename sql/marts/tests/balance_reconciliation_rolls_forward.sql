-- Each month's closing balance equals opening + inflow - outflow, and opening equals the previous month's closing.
-- Returns the months that do not roll forward (a chain break inside them shows here as well).
-- Checking what changed: whole (no {{ changed }}): each month reads the one before it, and marts.balance_reconciliation
-- is rebuilt whole when a bill comes (a row per coin and month).
with months as (
    select
        *,
        lag(closing_balance) over (partition by account, coin_name order by balance_month) as previous_closing
    from marts.balance_reconciliation
)

select account, coin_name, balance_month, opening_balance, previous_closing, computed_closing, closing_balance, difference, chain_break_count
from months
where difference <> 0
    or opening_balance is distinct from coalesce(previous_closing, opening_balance)
order by account, coin_name, balance_month
