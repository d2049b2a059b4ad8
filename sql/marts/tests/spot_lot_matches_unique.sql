-- One row per (account, symbol, sell_fill_id, lot_source, buy_fill_id) in marts.spot_lot_matches
-- (one opening lot per symbol, one unmatched part per sell); cost and PnL known exactly where matched.
select account, symbol, sell_fill_id, lot_source, buy_fill_id, count(*) as n
from marts.spot_lot_matches
group by all
having count(*) > 1
    or sell_fill_id is null
    or any_value(lot_source) not in ('fill', 'opening', 'unmatched')
    or bool_or((lot_source = 'fill') <> (buy_fill_id is not null))
    or bool_or((lot_source = 'unmatched') <> (cost is null))
    or bool_or(quantity <= 0)
    or bool_or(realized_pnl <> proceeds - cost)
