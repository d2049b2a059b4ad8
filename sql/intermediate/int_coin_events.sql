-- Every movement of every coin, valued in the reporting currency at its time: the books' events
-- (docs/workbooks.md "Books in the reporting currency"). Key: (pool, coin, event_seq). Inputs:
-- intermediate.int_spot_trades, intermediate.int_futures_fill_days,
-- intermediate.int_futures_funding_changes, staging.futures_collateral, staging.currencies,
-- staging.affiliate_commissions,
-- intermediate.int_ledger_events, intermediate.int_prices, settings.reporting, settings.books.
-- One row is one leg: units of one coin coming in (an acquisition: a lot, at cost value_e12) or
-- going out (a disposal, for proceeds value_e12). The legs of one source record share entry_ref:
--   a spot buy of the base coin for the quote coin: the base coin in, the quote coin out, and the fee
--     out of the base coin (models.fees, spot_legs below); a sale the mirror. Both sides are worth
--     the trade's value: the coin given up at its price (models.tradeValue given), or the coin received;
--   a fee paid in a coin (spot, futures, a withdrawal's fee): out, for its value;
--   futures realized PnL per contract and day, funding, affiliate commission: in (income) when
--     received, out when paid, at their value;
--   deposits and c2c purchases in at market value; withdrawals out at their carrying cost
--     (value_e12 NULL, value_basis carrying_cost: no gain); c2c sales out at market value. A deposit
--     matched with another account's withdrawal of the same coin and amount within a day after it
--     is a transfer: it carries the withdrawal's cost over (value_basis carried, transfer_ref);
--   an opening position (models.openingPositions) in before every other event, at its declared
--     cost valued at the quote coin's price on its day.
-- Funding settled before the first futures snapshot is one movement at that snapshot (no earlier one
-- says when). Transfers between the spot and futures wallets of one account move nothing (the books hold the
-- account, not a wallet); spot buy and sell bills are the spot fills' (counted once, from the fills).
-- Order within (pool, coin): time (an opening lot first; a futures day's result at the day's last
-- instant), then entry_ref, then leg. A value without a price is NULL (unknown, listed in
-- marts.needs_price), never 0. Units are 1e-18 of the coin, money 1e-12 of the reporting currency.
-- Empty without a reporting currency.
with reporting as (
    select time_zone, pooling, reporting_currency from settings.reporting where reporting_currency is not null
),

books as (
    select * from settings.books
),

prices as (
    select coin, price_date, price, price_source from intermediate.int_prices
),

-- Read only when there are books to keep: without a reporting currency nothing below reads a row
-- (the spot history is not copied for nothing: 19 s on 10M fills).
trades as (
    select * from intermediate.int_spot_trades where exists (select 1 from reporting)
),

-- A spot fill's notional in the quote coin: money units (1e-12) are quote-coin units * 1e-6.
-- A quote amount of 1.7e20 coins or more does not fit the books' units (HUGEINT of 1e-18): such a
-- fill fails the model by name rather than be held wrongly (the quote-coin PnL marts hold it exactly).
fills as (
    select
        t.*,
        case
            when n.notional_e12 >= cast('170141183460469231731687303715884' as hugeint)
                then error('the books hold coin amounts below 1.7e20: fill ' || t.fill_id || ' of ' || t.account || ' (' || t.symbol || ') moves ' || cast(exact_money(n.notional_e12) as varchar) || ' ' || t.quote_coin)
            else n.notional_e12
        end as notional_e12
    from trades as t
    -- Without a reporting currency the books are empty (and refuse nothing).
    cross join reporting as r
    cross join lateral (
        select case when t.side = 'buy' then t.cost_e12 else t.proceeds_e12 + exact_units_to_money(t.fee_e18, 18) end as notional_e12
    ) as n
    where t.lot_source = 'fill'
),

-- Each fill's value and its fee's value in the reporting currency: a trade against the reporting
-- currency is worth that amount; any other is worth the coin given up (models.tradeValue given: the
-- quote paid on a buy, the base sold on a sale) or the coin received, its gross amount at its
-- price. The fee, in the base coin on a buy and in the quote coin on a sale, is worth its units at
-- that coin's price. NULL without a price.
fill_prices as (
    select
        f.*,
        b.fees,
        -- Which side values the trade: the reporting currency itself where it is one of the coins
        -- (the fiat amount, exactly), else the coin given up or received (models.tradeValue).
        case
            when f.quote_coin = r.reporting_currency then 'quote'
            when f.base_coin = r.reporting_currency then 'base'
            when (b.trade_value = 'given') = (f.side = 'buy') then 'quote'
            else 'base'
        end as value_side,
        -- The prices as units, each a column of its own: exact_mul_units names its arguments many
        -- times (macros are text), so an expression passed to it is computed each time (a
        -- list_transform each: 132.6 s instead of 17.0 s on 1M fills, measured 2026-11-28).
        exact_qty_units(valued_price(f.base_coin, r.reporting_currency, bp.price)) as base_price_e18,
        exact_qty_units(valued_price(f.quote_coin, r.reporting_currency, qp.price)) as quote_price_e18
    from fills as f
    cross join books as b
    cross join reporting as r
    left join prices as bp on bp.coin = f.base_coin and bp.price_date = f.event_date
    left join prices as qp on qp.coin = f.quote_coin and qp.price_date = f.event_date
),

fill_values as (
    select
        f.*,
        case when f.value_side = 'quote' then f.quote_coin else f.base_coin end as value_coin,
        case
            when f.value_side = 'quote' then exact_mul_units(f.notional_e12 * 1000000, f.quote_price_e18)
            else exact_mul_units(f.fill_quantity_e18, f.base_price_e18)
        end as trade_e12,
        case
            when f.fee_e18 = 0 then cast(0 as hugeint)
            when f.side = 'buy' then exact_mul_units(f.fee_e18, f.base_price_e18)
            else exact_mul_units(f.fee_e18, f.quote_price_e18)
        end as fee_value_e12
    from fill_prices as f
),

-- The legs of a fill (models.fees):
--   in_units: the fee is part of the trade: a buy acquires quantity - fee of the base coin for the
--     trade's value; a sale's proceeds and the quote coin received are the trade's value less the
--     fee's, and its units less the fee (the quote-coin PnL marts' convention, rotki's
--     include_fees_in_cost_basis);
--   expense: the fee is a disposal of its coin for its value, which is an expense (trading fees);
--   capitalize: the fee is a disposal of its coin for its value, which is part of the trade: added
--     to the cost of the coin a buy acquires, taken from the proceeds of the coin a sale gives up
--     (HMRC's allowable costs, CRYPTO22280; RP2; Koinly).
spot_legs as (
    -- The coin received: the base on a buy, the quote on a sale.
    select
        f.*, 1 as leg, 'trade' as kind, 'in' as direction,
        case when f.side = 'buy' then f.base_coin else f.quote_coin end as coin,
        case
            when f.side = 'buy' then f.fill_quantity_e18 - case when f.fees = 'in_units' then f.fee_e18 else 0 end
            else f.notional_e12 * 1000000 - case when f.fees = 'in_units' then f.fee_e18 else 0 end
        end as units_e18,
        case
            when f.side = 'buy' and f.fees = 'capitalize' then f.trade_e12 + f.fee_value_e12
            when f.side = 'sell' and f.fees = 'in_units' then f.trade_e12 - f.fee_value_e12
            else f.trade_e12
        end as leg_value_e12,
        case when f.side = 'buy' then f.quote_coin else f.base_coin end as counterpart
    from fill_values as f
    union all
    -- The coin given up.
    select
        f.*, 2, 'trade', 'out',
        case when f.side = 'buy' then f.quote_coin else f.base_coin end,
        case when f.side = 'buy' then f.notional_e12 * 1000000 else f.fill_quantity_e18 end,
        case when f.side = 'sell' and f.fees <> 'expense' then f.trade_e12 - f.fee_value_e12 else f.trade_e12 end,
        case when f.side = 'buy' then f.base_coin else f.quote_coin end
    from fill_values as f
    union all
    -- The fee, a disposal of the coin it was charged in.
    select
        f.*, 3, 'fee', 'out',
        case when f.side = 'buy' then f.base_coin else f.quote_coin end,
        f.fee_e18,
        f.fee_value_e12,
        case when f.fees = 'capitalize' then 'trade' else 'trading fee' end
    from fill_values as f
    where f.fees <> 'in_units' and f.fee_e18 > 0
),

spot_events as (
    select
        account, event_at, event_date, 'spot/' || account || '/' || fill_id as entry_ref, leg, kind, direction, coin, units_e18,
        case when kind = 'fee' then coin else value_coin end as value_coin,
        cast(null as hugeint) as value_units_e18,
        leg_value_e12 as spot_value_e12,
        'market' as value_basis, counterpart, cast(null as varchar) as transfer_ref,
        'staging.spot_fills' as source_model,
        'account=' || account || '; fill_id=' || fill_id as source_key,
        case when kind = 'fee' then 'Trading fee ' || symbol || ' fill ' || fill_id
             else 'Spot ' || side || ' ' || symbol || ' fill ' || fill_id end as memo
    from spot_legs
),

-- Declared opening positions: the base coin in, at the declared cost in the quote coin, before every fill.
opening_events as (
    select
        t.account, cast(null as timestamptz) as event_at, t.event_date, 'opening/' || t.account || '/' || t.symbol as entry_ref, 1 as leg,
        'opening' as kind, 'in' as direction, t.base_coin as coin, t.units_in_e18 as units_e18,
        t.quote_coin as value_coin, t.cost_e12 * 1000000 as value_units_e18,
        'declared' as value_basis, 'opening' as counterpart, cast(null as varchar) as transfer_ref,
        'settings.opening_positions' as source_model,
        'account=' || t.account || '; symbol=' || t.symbol as source_key,
        'Opening position ' || t.symbol as memo,
    from trades as t
    where t.lot_source = 'opening'
),

-- Futures results per contract and day, at the day's last instant: realized PnL and fees.
futures_amounts as (
    select account, symbol, margin_coin, fill_date, 'futures_pnl' as kind, realized_pnl as amount from intermediate.int_futures_fill_days
    union all
    select account, symbol, margin_coin, fill_date, 'futures_fee', -(coalesce(trading_fees, 0) + coalesce(liquidation_fees, 0)) from intermediate.int_futures_fill_days
),

futures_events as (
    select
        a.account,
        local_day_start(a.fill_date + 1, r.time_zone) - interval 1 microsecond as event_at,
        a.fill_date as event_date,
        'futures/' || a.account || '/' || a.symbol || '/' || strftime(a.fill_date, '%Y-%m-%d') as entry_ref,
        case when a.kind = 'futures_pnl' then 1 else 2 end as leg,
        a.kind,
        case when a.amount > 0 then 'in' else 'out' end as direction,
        a.margin_coin as coin,
        exact_qty_units(abs(a.amount)) as units_e18,
        a.margin_coin as value_coin,
        exact_qty_units(abs(a.amount)) as value_units_e18,
        'market' as value_basis, a.symbol as counterpart, cast(null as varchar) as transfer_ref,
        'intermediate.int_futures_fill_days' as source_model,
        'account=' || a.account || '; symbol=' || a.symbol || '; fill_date=' || strftime(a.fill_date, '%Y-%m-%d') as source_key,
        case when a.kind = 'futures_pnl' then 'Futures realized PnL ' else 'Futures fees ' end || a.symbol as memo,
    from futures_amounts as a cross join reporting as r
    where a.amount is not null and a.amount <> 0 and a.margin_coin is not null
),

funding_events as (
    select
        f.account, f.snapshot_at as event_at, f.snapshot_date as event_date,
        'funding/' || f.account || '/' || f.margin_coin || '/' || strftime(f.snapshot_at, '%Y-%m-%dT%H:%M:%S.%gZ') as entry_ref, 1 as leg,
        'funding' as kind, case when f.funding > 0 then 'in' else 'out' end as direction, f.margin_coin as coin,
        exact_qty_units(abs(f.funding)) as units_e18, f.margin_coin as value_coin, exact_qty_units(abs(f.funding)) as value_units_e18,
        'market' as value_basis, 'funding' as counterpart, cast(null as varchar) as transfer_ref,
        'intermediate.int_futures_funding_changes' as source_model,
        'account=' || f.account || '; margin_coin=' || f.margin_coin || '; snapshot_at=' || strftime(f.snapshot_at, '%Y-%m-%dT%H:%M:%S.%gZ') as source_key,
        'Futures funding ' || f.margin_coin as memo,
    from intermediate.int_futures_funding_changes as f
    where f.funding is not null and f.funding <> 0 and f.margin_coin is not null
),

-- Funding settled before an entry's first snapshot: its running total then (paid positive), dated at
-- that snapshot, since no earlier one tells when (int_futures_funding_changes starts after it).
first_funding as (
    select
        c.account,
        c.snapshot_at,
        coalesce(n.coin_name, 'coin_id ' || c.coin_id) as margin_coin,
        -c.cum_position_funding_amount as funding,
        c.coin_id, c.margin_mode, c.cross_contract_id, c.isolated_position_id
    from staging.futures_collateral as c
    left join (select coin_id, arg_max(coin_name, snapshot_at) as coin_name from staging.currencies group by coin_id) as n using (coin_id)
    qualify row_number() over (partition by c.account, c.coin_id, c.margin_mode, c.cross_contract_id, c.isolated_position_id order by c.snapshot_at) = 1
),

first_funding_events as (
    select
        f.account, f.snapshot_at as event_at, local_date(f.snapshot_at, r.time_zone) as event_date,
        'funding/' || f.account || '/' || f.margin_coin || '/' || strftime(f.snapshot_at, '%Y-%m-%dT%H:%M:%S.%gZ') || '/before' as entry_ref, 1 as leg,
        'funding' as kind, case when f.funding > 0 then 'in' else 'out' end as direction, f.margin_coin as coin,
        exact_qty_units(abs(f.funding)) as units_e18, f.margin_coin as value_coin, exact_qty_units(abs(f.funding)) as value_units_e18,
        'market' as value_basis, 'funding' as counterpart, cast(null as varchar) as transfer_ref,
        'staging.futures_collateral' as source_model,
        'account=' || f.account || '; coin_id=' || f.coin_id || '; margin_mode=' || f.margin_mode || '; cross_contract_id=' || coalesce(f.cross_contract_id, 'NULL')
            || '; isolated_position_id=' || coalesce(f.isolated_position_id, 'NULL') || '; snapshot_at=' || strftime(f.snapshot_at, '%Y-%m-%dT%H:%M:%S.%gZ') as source_key,
        'Futures funding ' || f.margin_coin || ' settled before the first snapshot (its running total)' as memo
    from first_funding as f cross join reporting as r
    where f.funding is not null and f.funding <> 0
),

commission_events as (
    select
        c.account, c.deal_time_at as event_at, local_date(c.deal_time_at, r.time_zone) as event_date,
        'commission/' || c.account || '/' || c.record_key as entry_ref, 1 as leg,
        'commission' as kind, 'in' as direction, c.coin,
        exact_qty_units(c.commission) as units_e18, c.coin as value_coin, exact_qty_units(c.commission) as value_units_e18,
        'market' as value_basis, 'affiliate' as counterpart, cast(null as varchar) as transfer_ref,
        'staging.affiliate_commissions' as source_model,
        'account=' || c.account || '; record_key=' || c.record_key as source_key,
        'Affiliate commission, user ' || c.uid as memo,
    from staging.affiliate_commissions as c cross join reporting as r
    where c.commission > 0
),

-- Bills that move coins in or out of the account (not spot fills' bills, not wallet transfers).
bills as (
    select
        e.*,
        case when e.biz_type = 'withdraw' then -e.delta_amount - coalesce(e.fees, 0) else abs(e.delta_amount) end as moved
    from intermediate.int_ledger_events as e
    where e.biz_type in ('deposit', 'withdraw', 'c2c_buy', 'c2c_sell') and e.delta_amount <> 0 and exists (select 1 from reporting)
),

-- A deposit taken for another account's withdrawal of the same coin and amount within a day
-- before it: the n-th such deposit of (coin, amount) pairs with the n-th such withdrawal.
withdrawals as (
    select account, bill_id, coin_name, moved, c_time_at, row_number() over (partition by coin_name, moved order by c_time_at, bill_id) as n
    from bills where biz_type = 'withdraw'
),

deposits as (
    select account, bill_id, coin_name, moved, c_time_at, row_number() over (partition by coin_name, moved order by c_time_at, bill_id) as n
    from bills where biz_type = 'deposit'
),

transfers as (
    select d.account, d.bill_id, w.account as from_account, w.bill_id as from_bill_id
    from deposits as d
    inner join withdrawals as w
        on w.coin_name = d.coin_name and w.moved = d.moved and w.n = d.n and w.account <> d.account
        and w.c_time_at <= d.c_time_at and d.c_time_at <= w.c_time_at + interval 1 day
),

bill_events as (
    select
        b.account, b.c_time_at as event_at, b.c_time_date as event_date, 'bill/' || b.account || '/' || b.bill_id as entry_ref, 1 as leg,
        case when b.biz_type like 'c2c%' then 'c2c' when b.biz_type = 'deposit' then 'deposit' else 'withdrawal' end as kind,
        case when b.biz_type in ('deposit', 'c2c_buy') then 'in' else 'out' end as direction,
        b.coin_name as coin,
        exact_qty_units(b.moved) as units_e18, b.coin_name as value_coin, exact_qty_units(b.moved) as value_units_e18,
        case when t.from_account is not null then 'carried' when b.biz_type = 'withdraw' then 'carrying_cost' else 'market' end as value_basis,
        case when b.biz_type like 'c2c%' then 'c2c' else coalesce(t.from_account, w.to_account, 'external') end as counterpart,
        case when t.from_account is not null then 'bill/' || t.from_account || '/' || t.from_bill_id end as transfer_ref,
        'staging.funding_bills' as source_model,
        'account=' || b.account || '; bill_id=' || b.bill_id as source_key,
        b.biz_type || ' ' || b.coin_name || ' bill ' || b.bill_id as memo,
    from bills as b
    left join transfers as t on t.account = b.account and t.bill_id = b.bill_id
    left join (select from_account, from_bill_id, account as to_account from transfers) as w on w.from_account = b.account and w.from_bill_id = b.bill_id
    union all
    -- A withdrawal's fee: a disposal of the coin at its value.
    select
        b.account, b.c_time_at, b.c_time_date, 'bill/' || b.account || '/' || b.bill_id, 2,
        'bill_fee', 'out', b.coin_name,
        exact_qty_units(b.fees), b.coin_name, exact_qty_units(b.fees),
        'market', 'bill fee', null,
        'staging.funding_bills',
        'account=' || b.account || '; bill_id=' || b.bill_id,
        'Fee of ' || b.biz_type || ' bill ' || b.bill_id,
    from bills as b
    where b.biz_type = 'withdraw' and b.fees > 0
),

events as (
    select * from opening_events
    union all by name select * from spot_events
    union all by name select * from futures_events
    union all by name select * from funding_events
    union all by name select * from first_funding_events
    union all by name select * from commission_events
    union all by name select * from bill_events
),

-- The value: the valuing units at the valuing coin's price on the event's day (the reporting
-- currency itself at 1), exact; NULL without a price. A withdrawal is valued by the lots (its
-- carrying cost), a carried deposit by the withdrawal's.
valued as (
    select
        e.*,
        case when r.pooling = 'universal' then '*' else e.account end as pool,
        valued_price(e.value_coin, r.reporting_currency, p.price) as value_price,
        valued_source(e.value_coin, r.reporting_currency, p.price_source) as value_price_source,
        -- As units for exact_mul_units in final, only where final reads it (a spot leg has its value):
        -- a conversion on every leg took 11 s of 25 s on 1M fills.
        case when e.source_model <> 'staging.spot_fills' then exact_qty_units(valued_price(e.value_coin, r.reporting_currency, p.price)) end as value_price_e18,
        valued_price(e.coin, r.reporting_currency, own.price) as price,
        valued_source(e.coin, r.reporting_currency, own.price_source) as price_source
    from events as e
    cross join reporting as r
    left join prices as p on p.coin = e.value_coin and p.price_date = e.event_date
    left join prices as own on own.coin = e.coin and own.price_date = e.event_date
    where e.units_e18 > 0 and e.coin is not null
),

final as (
    select
        pool,
        account,
        coin,
        row_number() over (partition by pool, coin order by event_at nulls first, entry_ref, leg, account) as event_seq,
        event_at,
        event_date,
        entry_ref,
        leg,
        kind,
        direction,
        units_e18,
        case
            when value_basis in ('carrying_cost', 'carried') then null
            -- A spot leg's value is the trade's and its fee's (spot_legs).
            when source_model = 'staging.spot_fills' then spot_value_e12
            when value_units_e18 = 0 then cast(0 as hugeint)
            when value_price is null then null
            else exact_mul_units(value_units_e18, value_price_e18)
        end as value_e12,
        value_basis,
        value_coin,
        value_price,
        value_price_source,
        price,
        price_source,
        counterpart,
        transfer_ref,
        source_model,
        source_key,
        memo
    from valued
)

select * from final
