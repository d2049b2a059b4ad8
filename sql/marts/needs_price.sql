-- The coins and days that need a price: a valued mart has a row of that coin and day with an
-- amount other than 0 and no price in the reporting currency (its *_rc columns are NULL, unknown).
-- Key: (account, coin, needed_date, mart). Inputs: marts.spot_realized_pnl_daily (quote coin),
-- intermediate.int_fees_periods (fee coin, the rows of fees_daily), marts.futures_pnl_daily (margin coin), staging.affiliate_commissions
-- (commission coin, per record: affiliate_rebates_monthly values each record on its day),
-- intermediate.int_coin_events (the journal: the coin that values each movement),
-- marts.holdings_rollforward (valuation fair_value: month ends without a price),
-- marts.futures_positions_valued (valuation fair_value: open positions without a mark price), settings.journal,
-- intermediate.int_prices, settings.reporting. Empty without a reporting currency.
with reporting as (
    select time_zone, reporting_currency from settings.reporting
),

prices as (
    select * from intermediate.int_prices
),

spot as (
    select account, quote_coin as coin, trade_date as needed_date, 'marts.spot_realized_pnl_daily' as mart, count(*) as row_count
    from marts.spot_realized_pnl_daily
    where reporting_currency is not null and realized_pnl_rc is null and realized_pnl is not null
    group by all
),

-- The rows of fees_daily, read from its input (as fees_monthly values them): a failed fees_daily
-- does not hide the other marts' needs.
fees as (
    select periods.account, periods.coin, periods.period_start as needed_date, 'marts.fees_daily' as mart, count(*) as row_count
    from intermediate.int_fees_periods as periods
    cross join reporting
    left join prices on prices.coin = periods.coin and prices.price_date = periods.period_start
    where periods.period = 'day'
        and reporting.reporting_currency is not null
        and periods.coin is distinct from reporting.reporting_currency
        and prices.price is null
        and coalesce(periods.fees_paid, 0) <> 0
    group by all
),

futures as (
    select account, margin_coin as coin, pnl_date as needed_date, 'marts.futures_pnl_daily' as mart, count(*) as row_count
    from marts.futures_pnl_daily
    where reporting_currency is not null and price is null and coalesce(net_result, 0) <> 0
    group by all
),

commissions as (
    select
        commissions.account,
        commissions.coin,
        local_date(commissions.deal_time_at, reporting.time_zone) as needed_date,
        'marts.affiliate_rebates_monthly' as mart,
        count(*) as row_count
    from staging.affiliate_commissions as commissions
    cross join reporting
    left join prices on prices.coin = commissions.coin and prices.price_date = local_date(commissions.deal_time_at, reporting.time_zone)
    where reporting.reporting_currency is not null
        and commissions.coin is distinct from reporting.reporting_currency
        and prices.price is null
        and coalesce(commissions.commission, 0) <> 0
    group by all
),

-- The books' movements (intermediate.int_coin_events) whose value has no price: the journal posts
-- them in part or not at all (marts.journal_sources status suspense, no_price). The coin is the one
-- whose price would value them (a trade: models.tradeValue's side).
books as (
    select account, value_coin as coin, event_date as needed_date, 'marts.journal_entries' as mart, count(*) as row_count
    from intermediate.int_coin_events
    where value_basis in ('market', 'declared') and value_e12 is null
    group by all
),

-- valuation fair_value: a coin held at a month end without a price for that day (its fair value and
-- remeasurement are unknown). The journal's cost method's rows: the other methods hold the same units.
month_ends as (
    select h.account, h.coin, h.price_date as needed_date, 'marts.holdings_rollforward' as mart, count(*) as row_count
    from marts.holdings_rollforward as h
    where h.valuation = 'fair_value' and h.price is null and h.closing_quantity <> 0
        and h.cost_method = (select any_value(cost_method) from settings.journal)
    group by all
),

-- valuation fair_value: an open futures position at a month end without a mark price (its coin:
-- contract:<symbol>, the prices file's line to add, in the contract's quote coin) or without a price
-- of its margin coin. A position opened before the history, or an inverse contract, needs no price:
-- none would value it (marts.futures_positions_valued unvalued_reason).
positions as (
    select
        p.account,
        case when p.mark_price is null then 'contract:' || p.symbol else p.margin_coin end as coin,
        p.mark_date as needed_date,
        'marts.futures_positions_valued' as mart,
        count(*) as row_count
    from marts.futures_positions_valued as p
    where p.valuation = 'fair_value' and p.fair_value is null and p.size is not null and p.margin_coin = p.quote_coin
    group by all
),

needed as (
    select * from books
    union all
    select * from positions
    union all
    select * from month_ends
    union all
    select * from spot
    union all
    select * from fees
    union all
    select * from futures
    union all
    select * from commissions
),

final as (
    select
        needed.account,
        needed.coin,
        needed.needed_date,
        cast(date_trunc('month', needed.needed_date) as date) as needed_month,
        needed.mart,
        needed.row_count,
        reporting.reporting_currency,
        'needs_price/' || concat_ws('/', ref_part(needed.account), ref_part(needed.coin), ref_part(needed.needed_date), ref_part(needed.mart)) as reference
    from needed
    cross join reporting
)

select * from final
