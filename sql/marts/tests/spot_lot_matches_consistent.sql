-- marts.spot_lot_matches: a buy fill exactly on 'fill' rows, a lot account exactly on lot rows (fill
-- or opening; the selling account's own under pooling account), cost and PnL known exactly where matched
-- and absent where unmatched, every quantity positive (key and lot_source values: sql/marts/_models.ts).
-- Checking what changed: a condition on each row alone, so the changed rows.
select account, symbol, sell_fill_id, lot_source, lot_account, buy_fill_id, quantity, cost, proceeds, realized_pnl
from marts.spot_lot_matches
where {{ changed(account: account, symbol: symbol, at: sell_at) }}
    and ((lot_source = 'fill') <> (buy_fill_id is not null)
        or (lot_source in ('fill', 'opening')) <> (lot_account is not null)
        or (lot_account <> account and (select any_value(pooling) from settings.reporting) = 'account')
        or (lot_source = 'unmatched') <> (cost is null)
        or quantity <= 0
        or realized_pnl <> proceeds - cost)
