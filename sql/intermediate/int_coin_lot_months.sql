-- What each cost method's lots make of every coin's month: the units and cost acquired and
-- disposed of, the proceeds and gain, how many of each were unknown, and what is held at the
-- month's end (the last event's holding). marts.holdings_rollforward rolls these up, so that it
-- reads a row per pool, coin, method and month, not every lot. Key: (pool, coin, cost_method,
-- period_month). Inputs: intermediate.int_coin_lots, intermediate.int_coin_events.
-- A month has a row where the coin had an event; the months between are the roll-forward's.
with events as (
    select l.*, cast(date_trunc('month', e.event_date) as date) as period_month
    from intermediate.int_coin_lots as l
    inner join intermediate.int_coin_events as e using (pool, coin, event_seq)
),

final as (
    select
        pool,
        coin,
        cost_method,
        period_month,
        sum(units_e18) filter (where direction = 'in') as acquired_e18,
        sum(cost_e12) filter (where direction = 'in') as acquired_cost_e12,
        count(*) filter (where direction = 'in' and cost_e12 is null) as acquired_unknown,
        sum(units_e18) filter (where direction = 'out') as disposed_e18,
        sum(cost_e12) filter (where direction = 'out') as disposed_cost_e12,
        count(*) filter (where direction = 'out' and not cost_known) as disposed_unknown,
        sum(proceeds_e12) filter (where direction = 'out') as proceeds_e12,
        count(*) filter (where direction = 'out' and proceeds_e12 is null) as proceeds_unknown,
        sum(gain_e12) filter (where direction = 'out') as gain_e12,
        count(*) filter (where direction = 'out' and gain_e12 is null) as gain_unknown,
        sum(unmatched_e18) filter (where direction = 'out') as unmatched_e18,
        arg_max(holding_e18, event_seq) as holding_e18,
        arg_max(carrying_e12, event_seq) as carrying_e12,
        arg_max(carrying_known, event_seq) as carrying_known
    from events
    group by pool, coin, cost_method, period_month
)

select * from final
