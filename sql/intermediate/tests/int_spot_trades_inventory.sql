-- The inventory never goes below zero and equals units in - units out + units sold beyond it;
-- a buy adds units (its fee in the base coin is below its quantity: otherwise the fill is listed,
-- and counted as adding none).
-- Checking what changed: a condition on each row alone (its running sums are its own columns), so
-- the changed rows.
select account, symbol, event_seq, fill_id, side, units_in_e18, inventory_e18, cum_unmatched_e18
from intermediate.int_spot_trades
where {{ changed(account: pool, symbol: symbol, at: event_at) }}
    and (inventory_e18 < 0
        or inventory_e18 <> cum_in_e18 - cum_out_e18 + cum_unmatched_e18
        or unmatched_e18 < 0 or unmatched_e18 > quantity_out_e18
        or (side = 'buy' and units_in_e18 <= 0))
