-- The funding balance from bills equals the latest spot assets snapshot (equity), coin by coin.
-- Returns the coins that differ, a coin found on one side only included.
select account, coin_name, found_in, snapshot_at, bill_balance, assets_equity, difference, bill_balance_bill_id
from marts.balance_vs_assets
where difference <> 0
order by account, coin_name
