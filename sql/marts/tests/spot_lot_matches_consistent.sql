-- marts.spot_lot_matches: a buy fill exactly on 'fill' rows, cost and PnL known exactly where matched
-- and absent where unmatched, every quantity positive (key and lot_source values: sql/marts/_models.ts).
select account, symbol, sell_fill_id, lot_source, buy_fill_id, quantity, cost, proceeds, realized_pnl
from marts.spot_lot_matches
where (lot_source = 'fill') <> (buy_fill_id is not null)
    or (lot_source = 'unmatched') <> (cost is null)
    or quantity <= 0
    or realized_pnl <> proceeds - cost
