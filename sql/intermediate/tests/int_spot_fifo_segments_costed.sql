-- Every FIFO segment's quantity is positive, its cost known exactly where matched and absent where
-- unmatched (one match per sell and lot, one unmatched part per sell: the declared key).
-- Checking what changed: a condition on each row alone, so the changed rows.
select pool, symbol, sell_seq, lot_seq, quantity_e18, cost_e12
from intermediate.int_spot_fifo_segments
where {{ changed(account: pool, symbol: symbol, at: sell_at) }}
    and (quantity_e18 <= 0 or (lot_seq is null) <> (cost_e12 is null))
