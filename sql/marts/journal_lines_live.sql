-- The journal lines as the data gives them now: every movement of every coin posted in the
-- reporting currency (docs/workbooks.md "Books in the reporting currency"), one entry per source
-- record of marts.journal_sources, on the chart of accounts of settings.journal ({coin}: the line's
-- coin, {account}: the exchange account, {counterpart}: external, c2c, opening or the other
-- account). marts.journal_entries posts these, except in closed periods (their lines stay as closed:
-- a difference becomes an adjusting entry, docs/operating.md "Closing a period"). Key: (entry_id,
-- line_no). Inputs: intermediate.int_coin_events, intermediate.int_coin_lots (the journal's cost
-- method), marts.journal_sources (its remeasurements), settings.journal, settings.reporting.
-- Per leg of a source record:
--   a coin in: Dr Digital assets:<coin> at the lot's cost; Cr what it came from (the trade, income,
--     a clearing account);
--   a coin out: Cr Digital assets:<coin> at the cost of the lots it took; Dr what it went to (the
--     trade, an expense, a clearing account) at its proceeds; the difference to realized gains and
--     losses.
-- A trade's legs meet in the trade: the value the coin received costs is the value the coin given
-- up fetches, so those lines cancel within the entry. What cannot be valued goes to the suspense
-- account, never to a gain, a loss or 0: a disposal's proceeds without a price (Dr suspense at its
-- cost), the gain on a disposal of unknown cost (units held before the history, or a lot without a
-- price: the proceeds less the known cost), and what a trade leg without a price leaves unbalanced.
-- A coin in without a price posts nothing: its lot's cost is unknown (intermediate.int_coin_lots
-- carrying_known), and so is the carrying value it would add. With models.valuation fair_value, each
-- month end's remeasurement (marts.holdings_rollforward) is an entry of its own: the coin's
-- digital-assets account against unrealized gains and losses. Each (ledger account, coin) of an entry
-- is one line; debit and credit are non-negative, one of them 0; debits come first.
with reporting as (
    select reporting_currency from settings.reporting where reporting_currency is not null
),

journal as (
    select * from settings.journal
),

sources as (
    select * from marts.journal_sources
),

legs as (
    select e.*, l.cost_method, l.cost_e12, l.cost_known, l.proceeds_e12
    from intermediate.int_coin_events as e
    inner join intermediate.int_coin_lots as l using (pool, coin, event_seq)
    where l.cost_method = (select any_value(cost_method) from journal)
),

-- What a leg's value goes to or comes from (a key of the chart, resolved below).
countered as (
    select
        *,
        case
            when kind = 'trade' or (kind = 'fee' and counterpart = 'trade') then 'trade'
            when kind = 'fee' or kind = 'futures_fee' then 'trading_fees'
            when kind = 'bill_fee' then 'other_fees'
            when kind = 'futures_pnl' then 'realized_gains'
            when kind = 'funding' and direction = 'in' then 'funding_income'
            when kind = 'funding' then 'funding_expense'
            when kind = 'commission' then 'commission_income'
            else 'transfers_clearing'
        end as counter
    from legs
),

-- Signed amounts of 1e-12: debit positive.
amounts as (
    -- A coin in: the asset at the lot's cost, against what it came from.
    -- (units_e18 signed as the asset moves: the line's coin amount)
    select entry_ref, coin, units_e18, 'digital_assets' as target, cost_e12 as amount_e12 from countered where direction = 'in' and cost_e12 is not null
    union all
    select entry_ref, coin, units_e18, counter, -cost_e12 from countered where direction = 'in' and cost_e12 is not null
    -- A coin out: the asset at the cost taken (its known part) ...
    union all
    select entry_ref, coin, -units_e18, 'digital_assets', -cost_e12 from countered where direction = 'out'
    -- ... against what it went to at its proceeds, the difference a gain or loss (suspense when the cost is not all known) ...
    union all
    select entry_ref, coin, units_e18, counter, proceeds_e12 from countered where direction = 'out' and proceeds_e12 is not null
    union all
    select entry_ref, coin, units_e18, case when cost_known then 'realized_gains' else 'suspense' end, cost_e12 - proceeds_e12
    from countered where direction = 'out' and proceeds_e12 is not null
    -- ... or, without a price for its proceeds, against suspense at its cost.
    union all
    select entry_ref, coin, units_e18, 'suspense', cost_e12 from countered where direction = 'out' and proceeds_e12 is null
),

-- A trade's legs cancel; what they leave (a leg without a price) goes to suspense, on the entry's first coin.
trade_residue as (
    select entry_ref, min(coin) as coin, cast(0 as hugeint) as units_e18, 'suspense' as target, sum(amount_e12) as amount_e12
    from amounts
    where target = 'trade'
    group by entry_ref
    having sum(amount_e12) <> 0
),

-- valuation fair_value: a month end's remeasurement, the coin's asset against unrealized gains and losses.
remeasured as (
    select
        entry_id as entry_ref, coin, cast(0 as hugeint) as units_e18,
        case when source_model = 'marts.futures_positions_valued' then 'futures_positions' else 'digital_assets' end as target,
        exact_money_units(amount_rc) as amount_e12
    from sources where kind = 'remeasurement' and amount_rc is not null
    union all
    select entry_id, coin, cast(0 as hugeint), 'unrealized_gains', -exact_money_units(amount_rc)
    from sources where kind = 'remeasurement' and amount_rc is not null
),

posted as (
    select * from amounts where target <> 'trade' and amount_e12 <> 0
    union all
    select * from trade_residue
    union all
    select * from remeasured
),

-- One line per entry, ledger account and coin.
lines as (
    select
        p.entry_ref as entry_id,
        p.coin,
        replace(replace(replace(replace(
            case p.target
                when 'digital_assets' then j.digital_assets
                when 'trading_fees' then j.trading_fees
                when 'other_fees' then j.other_fees
                when 'realized_gains' then j.realized_gains
                when 'funding_income' then j.funding_income
                when 'funding_expense' then j.funding_expense
                when 'commission_income' then j.commission_income
                when 'transfers_clearing' then j.transfers_clearing
                when 'unrealized_gains' then j.unrealized_gains
                when 'futures_positions' then j.futures_positions
                else j.suspense
            end, '{coin}', p.coin), '{account}', s.account), '{counterpart}', coalesce(c.counterpart, 'external')),
            -- A position's remeasurement (position/<account>/<contract>/<side>/<YYYY-MM>) names its contract.
            '{contract}', coalesce(regexp_extract(p.entry_ref, '^position/.*/([^/]+)/(LONG|SHORT)/[0-9]{4}-[0-9]{2}$', 1), '')) as ledger_account,
        sum(p.amount_e12) as amount_e12,
        sum(p.units_e18) filter (where p.target = 'digital_assets') as asset_units_e18
    from posted as p
    cross join journal as j
    inner join sources as s on s.entry_id = p.entry_ref
    -- The counterpart of an entry's clearing leg (a deposit, withdrawal, c2c trade or opening position: one leg).
    left join (select entry_ref, any_value(counterpart) as counterpart from countered where counter = 'transfers_clearing' group by entry_ref) as c on c.entry_ref = p.entry_ref
    group by all
    having sum(p.amount_e12) <> 0
),

final as (
    select
        l.entry_id,
        cast(row_number() over (partition by l.entry_id order by l.amount_e12 < 0, l.ledger_account, l.coin) as integer) as line_no,
        s.account,
        s.period,
        s.entry_date,
        l.ledger_account,
        exact_money(greatest(l.amount_e12, 0)) as debit,
        exact_money(greatest(-l.amount_e12, 0)) as credit,
        exact_money(l.amount_e12) as net_amount,
        r.reporting_currency as currency,
        l.coin,
        exact_qty(abs(l.asset_units_e18)) as coin_amount,
        case when l.coin = s.coin then s.price end as price,
        s.kind,
        s.product,
        s.cost_method,
        s.description as memo,
        s.source_model,
        s.source_key
    from lines as l
    inner join sources as s on s.entry_id = l.entry_id
    cross join reporting as r
)

select * from final
