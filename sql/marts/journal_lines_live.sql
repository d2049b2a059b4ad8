-- The journal lines as the data gives them now: double-entry lines in the reporting currency;
-- each posted row of marts.journal_sources is one entry of two lines that balance (sum(debit) =
-- sum(credit) per entry_id), posted to the chart of accounts of settings.journal ({coin}: the
-- line's coin, {account}: the exchange account). marts.journal_entries posts these, except in closed
-- periods, whose lines stay as closed (a difference becomes an adjusting entry: docs/operating.md
-- "Closing a period"). Key: (entry_id, line_no). Inputs: marts.journal_sources, settings.journal.
-- The asset side is the coin's digital-assets account: debited when the source adds value (a gain,
-- funding or commission received), credited when it takes value (a loss, a fee, funding paid);
-- the other side is realized gains and losses, trading fees, other exchange fees, funding income
-- or expense, or commission income. debit and credit are both non-negative and one of them is 0;
-- line 1 is the debit line. Rows without a price are not posted (journal_sources.status no_price).
-- coin_amount is NULL where journal_sources.amount is (a spot PnL of 1e20 or more, beyond its scale).
with sources as (
    select * from marts.journal_sources where status = 'posted'
),

journal as (
    select * from settings.journal
),

-- The asset account's change: a fee lowers it, every other kind adds its (signed) amount.
changes as (
    select
        sources.*,
        case when kind = 'fees' then -amount_rc else amount_rc end as asset_change_rc,
        -- NULL (unknown) for an amount beyond DECIMAL(38,18); the lines post amount_rc, which is exact.
        abs(amount) as coin_amount,
        case
            when kind in ('spot_realized_pnl', 'futures_realized_pnl') then journal.realized_gains
            when kind = 'funding' and amount > 0 then journal.funding_income
            when kind = 'funding' then journal.funding_expense
            when kind = 'fees' and product = 'futures' then journal.trading_fees
            when kind = 'fees' then journal.other_fees
            when kind = 'commission' then journal.commission_income
        end as counter_template,
        journal.digital_assets as asset_template
    from sources
    cross join journal
),

lines as (
    select *, true as is_asset_line from changes
    union all
    select *, false as is_asset_line from changes
),

final as (
    select
        entry_id,
        -- The debit line first.
        case when is_asset_line = (asset_change_rc > 0) then 1 else 2 end as line_no,
        account,
        period,
        entry_date,
        replace(replace(case when is_asset_line then asset_template else counter_template end, '{coin}', coin), '{account}', account) as ledger_account,
        cast(case when is_asset_line = (asset_change_rc > 0) then abs(asset_change_rc) else 0 end as decimal(38, 12)) as debit,
        cast(case when is_asset_line = (asset_change_rc > 0) then 0 else abs(asset_change_rc) end as decimal(38, 12)) as credit,
        cast(case when is_asset_line then asset_change_rc else -asset_change_rc end as decimal(38, 12)) as net_amount,
        reporting_currency as currency,
        coin,
        coin_amount,
        price,
        kind,
        product,
        cost_method,
        -- An amount beyond DECIMAL(38,18) is NULL in journal_sources: the memo says where it is exact.
        description || ': ' || coalesce(
            regexp_replace(regexp_replace(cast(amount as varchar), '(\.\d*?)0+$', '\1'), '\.$', '') || ' ' || coin,
            coin || ' amount too large for 18 decimals (exact in ' || source_model || ')'
        ) as memo,
        source_model,
        source_key
    from lines
)

select * from final
