-- One FIFO match per (account, symbol, sell_seq, lot_seq), at most one unmatched part per sell,
-- every quantity positive, the cost known exactly where matched and absent where unmatched.
select account, symbol, sell_seq, lot_seq, count(*) as n
from intermediate.int_spot_fifo_segments
group by account, symbol, sell_seq, lot_seq
having count(*) > 1
    or bool_or(quantity_e18 <= 0)
    or bool_or((lot_seq is null) <> (cost_e12 is null))
