-- Every journal entry balances in the reporting currency: sum(debit) = sum(credit) per entry_id,
-- each line with one side 0 and neither negative, at least two lines, no two lines of one ledger
-- account and coin. Every source record of marts.journal_sources of an open period that posts
-- (status posted or suspense) has its entry, and no other one has (in a closed period the lines stay
-- as closed: their later changes are the adjusting entries, marts.period_adjustments). Rows
-- returned: the entries (or source records) that do not.
with lines as (
    select * from marts.journal_entries
),

closed_until as (
    select max(period_to) as last_day from settings.closed_periods
),

sources as (
    select * from marts.journal_sources
    where entry_date > coalesce((select last_day from closed_until), DATE '0001-01-01')
),

entries as (
    select
        entry_id,
        bool_or(kind = 'adjustment') as is_adjusting,
        min(entry_date) as entry_date,
        sum(debit) as debits,
        sum(credit) as credits,
        count(*) as line_count,
        count(distinct ledger_account || ' ' || coin) as account_count,
        count(*) filter (where debit < 0 or credit < 0 or (debit <> 0 and credit <> 0) or net_amount <> debit - credit) as bad_lines
    from lines
    group by entry_id
),

unbalanced as (
    select 'entry does not balance or has bad lines' as problem, entry_id, debits, credits
    from entries
    where debits <> credits or line_count < 2 or (account_count <> line_count and not is_adjusting) or bad_lines > 0
),

unposted as (
    select 'posted source record without its entry' as problem, sources.entry_id, entries.debits, entries.credits
    from sources
    left join entries on entries.entry_id = sources.entry_id
    where sources.status in ('posted', 'suspense') and entries.entry_id is null
),

overposted as (
    select 'entry of a source record that posts nothing' as problem, entries.entry_id, entries.debits, entries.credits
    from entries
    left join sources on sources.entry_id = entries.entry_id
    where not entries.is_adjusting
        and entries.entry_date > coalesce((select last_day from closed_until), DATE '0001-01-01')
        and sources.status not in ('posted', 'suspense')
)

select * from unbalanced
union all
select * from unposted
union all
select * from overposted
