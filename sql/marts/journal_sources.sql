-- What the journal posts from: one row per source record whose coins moved (a spot fill, a
-- futures contract's day, a funding settlement, a commission record, a bill, an opening position),
-- with the legs it moved (intermediate.int_coin_events) valued by the journal's cost method
-- (settings.journal, intermediate.int_coin_lots). Key: (entry_id). Inputs:
-- intermediate.int_coin_events, intermediate.int_coin_lots, marts.holdings_rollforward (the
-- remeasurements of valuation fair_value), settings.journal, settings.reporting.
-- status: posted (every leg valued, every disposal's cost known: marts.journal_lines_live has the
-- entry's lines), suspense (posted, but a leg has no price or a disposal's cost is unknown: that part
-- is in the suspense account, never a gain, a loss or 0; add its price, marts.needs_price), no_price
-- (nothing of it could be valued: no line), zero_value (its values are 0: nothing to post).
-- amount and coin: the first leg's units and coin (what the record is about: the coin received by a
-- trade, the coin of any other record); amount_rc its value (a disposal's proceeds).
-- Empty without a reporting currency.
with reporting as (
    select reporting_currency from settings.reporting where reporting_currency is not null
),

journal as (
    select * from settings.journal
),

legs as (
    select
        e.*,
        l.cost_method,
        l.cost_e12,
        l.cost_known,
        l.proceeds_e12,
        case when e.direction = 'in' then l.cost_e12 else l.proceeds_e12 end as leg_value_e12,
        e.direction = 'in' and l.cost_e12 is null or e.direction = 'out' and (l.proceeds_e12 is null or not l.cost_known) as is_unvalued
    from intermediate.int_coin_events as e
    inner join intermediate.int_coin_lots as l using (pool, coin, event_seq)
    where l.cost_method = (select any_value(cost_method) from journal)
),

entries as (
    select
        entry_ref as entry_id,
        any_value(account) as account,
        min(event_date) as entry_date,
        arg_min(kind, leg) as kind,
        arg_min(source_model, leg) as source_model,
        arg_min(source_key, leg) as source_key,
        arg_min(coin, leg) as coin,
        arg_min(units_e18, leg) as units_e18,
        arg_min(price, leg) as price,
        arg_min(leg_value_e12, leg) as value_e12,
        bool_or(is_unvalued) as any_unvalued,
        -- Whether any line is posted: a lot's known cost, a disposal's known cost or proceeds.
        bool_or(direction = 'in' and coalesce(cost_e12, 0) <> 0 or direction = 'out' and (coalesce(cost_e12, 0) <> 0 or coalesce(proceeds_e12, 0) <> 0)) as has_lines,
        any_value(cost_method) as cost_method,
        arg_min(memo, leg) as description
    from legs
    group by entry_ref
),

-- valuation fair_value: each month end's remeasurement of a coin held (marts.holdings_rollforward).
remeasurements as (
    select
        'remeasurement/' || h.account || '/' || h.coin || '/' || strftime(h.period_month, '%Y-%m') as entry_id,
        h.account,
        h.period_month as period,
        h.price_date as entry_date,
        'remeasurement' as kind,
        'spot' as product,
        'marts.holdings_rollforward' as source_model,
        'account=' || h.account || '; coin=' || h.coin || '; cost_method=' || h.cost_method || '; period_month=' || strftime(h.period_month, '%Y-%m-%d') as source_key,
        h.coin,
        h.closing_quantity as amount,
        r.reporting_currency,
        h.price,
        h.remeasurement as amount_rc,
        'posted' as status,
        h.cost_method,
        'Remeasurement of ' || h.coin || ' to fair value at ' || strftime(h.price_date, '%Y-%m-%d') as description
    from marts.holdings_rollforward as h
    cross join reporting as r
    where h.valuation = 'fair_value' and h.remeasurement <> 0 and h.cost_method = (select any_value(cost_method) from journal)
),

-- valuation fair_value: each month end's remeasurement of an open futures position (marts.futures_positions_valued);
-- one without a fair value is listed, not posted (no_price).
position_remeasurements as (
    select
        'position/' || p.account || '/' || p.symbol || '/' || p.position_side || '/' || strftime(p.period_month, '%Y-%m') as entry_id,
        p.account,
        p.period_month as period,
        p.mark_date as entry_date,
        'remeasurement' as kind,
        'futures' as product,
        'marts.futures_positions_valued' as source_model,
        'account=' || p.account || '; symbol=' || p.symbol || '; position_side=' || p.position_side || '; period_month=' || strftime(p.period_month, '%Y-%m-%d') as source_key,
        p.margin_coin as coin,
        p.size as amount,
        r.reporting_currency,
        p.price,
        p.remeasurement as amount_rc,
        case when p.remeasurement is null then 'no_price' else 'posted' end as status,
        cast(null as varchar) as cost_method,
        'Remeasurement of the ' || lower(p.position_side) || ' position in ' || p.symbol || ' to fair value at ' || strftime(p.mark_date, '%Y-%m-%d')
            || coalesce(' (' || p.unvalued_reason || ')', '') as description
    from marts.futures_positions_valued as p
    cross join reporting as r
    where p.valuation = 'fair_value' and (p.remeasurement is null or p.remeasurement <> 0)
),

final as (
    select
        e.entry_id,
        e.account,
        cast(date_trunc('month', e.entry_date) as date) as period,
        e.entry_date,
        e.kind,
        case
            when e.source_model in ('staging.spot_fills', 'settings.opening_positions') then 'spot'
            when e.source_model = 'staging.funding_bills' then 'funding'
            when e.source_model = 'staging.affiliate_commissions' then 'affiliate'
            else 'futures'
        end as product,
        e.source_model,
        e.source_key,
        e.coin,
        exact_qty(e.units_e18) as amount,
        r.reporting_currency,
        e.price,
        exact_money(e.value_e12) as amount_rc,
        case
            when not e.has_lines and e.any_unvalued then 'no_price'
            when not e.has_lines then 'zero_value'
            when e.any_unvalued then 'suspense'
            else 'posted'
        end as status,
        e.cost_method,
        e.description
    from entries as e
    cross join reporting as r
    union all by name
    select * from remeasurements
    union all by name
    select * from position_remeasurements
)

select * from final
