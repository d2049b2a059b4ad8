-- net_result = realized_pnl - trading_fees - liquidation_fees + funding on every row of marts.futures_pnl_daily and
-- marts.futures_pnl_monthly (contract rows have no funding, funding rows no trading columns); contract rows
-- carry every trading column and no funding, funding rows a funding amount.
-- Checking what changed: whole (no {{ changed }}): a row per account, contract and day or month, small next to the fills.
select 'daily' as mart, account, margin_coin, symbol, pnl_date as period, net_result, realized_pnl, trading_fees, liquidation_fees, funding
from marts.futures_pnl_daily
where net_result is distinct from coalesce(realized_pnl, 0) - coalesce(trading_fees, 0) - coalesce(liquidation_fees, 0) + coalesce(funding, 0)
    or (symbol is not null and (realized_pnl is null or trading_fees is null or liquidation_fees is null or fill_count is null or funding is not null))
    or (symbol is null and funding is null)
union all
select 'monthly', account, margin_coin, symbol, pnl_month, net_result, realized_pnl, trading_fees, liquidation_fees, funding
from marts.futures_pnl_monthly
where net_result is distinct from coalesce(realized_pnl, 0) - coalesce(trading_fees, 0) - coalesce(liquidation_fees, 0) + coalesce(funding, 0)
