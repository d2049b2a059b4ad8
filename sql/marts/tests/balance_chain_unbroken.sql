-- Every bill continues its coin's chain: after_amount - delta_amount = the previous bill's after_amount.
-- Returns the breaks, with the expected and found balance before the bill and both bills.
-- Checking what changed: whole (no {{ changed }}): marts.balance_chain_breaks is rebuilt whole when a bill comes.
select
    account,
    coin_name,
    bill_id,
    c_time_at,
    expected_before_amount,
    found_before_amount,
    gap,
    previous_bill_id,
    previous_c_time_at
from marts.balance_chain_breaks
order by account, coin_name, c_time_at, bill_id
