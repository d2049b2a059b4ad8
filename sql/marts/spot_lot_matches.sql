-- Lot matches of every lot-based cost method: one row per (cost method, sell fill, buy fill or
-- opening lot or pool) whose units the sell disposed of, plus one row per sell part beyond what was
-- known (lot_source 'unmatched': no cost and no PnL, never a silent zero). A method's rows exist
-- when it is a reporting cost method (fifo from int_spot_fifo_segments; lifo, hifo and uk from
-- int_spot_lot_segments); average has no lots.
-- Key: (account, cost_method, symbol, sell_fill_id, lot_source, lot_account, buy_fill_id). account is
-- the selling account; lot_account the lot's (another account's under pooling 'universal').
-- Inputs: intermediate.int_spot_fifo_segments, intermediate.int_spot_lot_segments, intermediate.int_spot_trades.
-- Convention: see int_spot_trades (cost of a buy q*p for q - fee units, proceeds q*p - fee).
with segments as (
    select pool, symbol, 'fifo' as cost_method, sell_seq, case when lot_seq is null then 'unmatched' else 'lot' end as match_rule, lot_seq, quantity_e18, cost_e12, proceeds_e12
    from intermediate.int_spot_fifo_segments
    union all
    select pool, symbol, cost_method, sell_seq, match_rule, lot_seq, quantity_e18, cost_e12, proceeds_e12
    from intermediate.int_spot_lot_segments
),

-- Sells and lots read apart, each only its rows and columns (one shared CTE would be kept in memory whole).
sell_trades as (
    select pool, account, symbol, event_seq, base_coin, quote_coin, fill_id, event_at, event_date
    from intermediate.int_spot_trades
    where side = 'sell'
),

lot_trades as (
    select pool, account, symbol, event_seq, lot_source, fill_id, event_at
    from intermediate.int_spot_trades
    where units_in_e18 > 0
),

final as (
    select
        sell.account,
        s.cost_method,
        s.symbol,
        sell.base_coin,
        sell.quote_coin,
        sell.fill_id as sell_fill_id,
        sell.event_at as sell_at,
        sell.event_date as sell_date,
        cast(date_trunc('month', sell.event_date) as date) as sell_month,
        case s.match_rule when 'unmatched' then 'unmatched' when 'pool' then 'pool' else lot.lot_source end as lot_source,
        s.match_rule,
        lot.account as lot_account,
        lot.fill_id as buy_fill_id,
        lot.event_at as buy_at,
        exact_decimal_18(s.quantity_e18) as quantity,
        exact_decimal_12(s.cost_e12) as cost,
        exact_decimal_12(s.proceeds_e12) as proceeds,
        exact_decimal_12(s.proceeds_e12 - s.cost_e12) as realized_pnl,
        'spot_lot_matches/' || concat_ws('/', ref_part(sell.account), ref_part(s.cost_method), ref_part(s.symbol), ref_part(sell.fill_id), ref_part(case s.match_rule when 'unmatched' then 'unmatched' when 'pool' then 'pool' else lot.lot_source end), ref_part(lot.account), ref_part(lot.fill_id)) as reference
    from segments as s
    inner join sell_trades as sell on sell.pool = s.pool and sell.symbol = s.symbol and sell.event_seq = s.sell_seq
    left join lot_trades as lot on lot.pool = s.pool and lot.symbol = s.symbol and lot.event_seq = s.lot_seq
)

select * from final
