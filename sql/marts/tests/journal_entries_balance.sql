-- Every journal entry balances in the reporting currency: sum(debit) = sum(credit) per entry_id,
-- each line with one side 0 and neither negative, at least two lines, no two lines of one ledger
-- account and coin. Every source record of marts.journal_sources of an open period that posts
-- (status posted or suspense) has its entry, and no other one has (in a closed period the lines stay
-- as closed: their later changes are the adjusting entries, marts.period_adjustments). Its entry is
-- its own, or with models.journal.posting summary the summary entry of its account, kind, day and
-- coin (posted_entry_id), whose lines must be the sums of its records' lines (marts.journal_lines_live)
-- per ledger account and coin; a summary whose lines all sum to 0 has no entry. Rows returned: the
-- entries (or source records) that do not.
-- Checking what changed: whole (no {{ changed }}): the journal's marts are rebuilt whole when anything they read changed
-- (no incremental step).
with lines as (
    select * from marts.journal_entries
),

journal as (
    select any_value(posting) as posting from settings.journal
),

closed_until as (
    select max(period_to) as last_day from settings.closed_periods
),

sources as (
    select *, posted_entry_id((select posting from journal), entry_id, account, kind, entry_date, coin) as posted_id
    from marts.journal_sources
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

-- The open periods' lines the data gives now, summed per entry posted, ledger account and coin.
live as (
    select s.posted_id as entry_id, l.ledger_account, l.coin, sum(l.net_amount) as net_amount
    from marts.journal_lines_live as l
    inner join sources as s on s.entry_id = l.entry_id
    group by all
    having sum(l.net_amount) <> 0
),

open_lines as (
    select entry_id, ledger_account, coin, sum(net_amount) as net_amount
    from lines
    where kind <> 'adjustment' and entry_date > coalesce((select last_day from closed_until), DATE '0001-01-01')
    group by all
),

unbalanced as (
    select 'entry does not balance or has bad lines' as problem, entry_id, debits, credits
    from entries
    where debits <> credits or line_count < 2 or (account_count <> line_count and not is_adjusting) or bad_lines > 0
),

unposted as (
    select distinct 'posted source record without its entry' as problem, sources.entry_id, entries.debits, entries.credits
    from sources
    left join entries on entries.entry_id = sources.posted_id
    where sources.status in ('posted', 'suspense') and entries.entry_id is null
        and ((select posting from journal) = 'detail' or sources.posted_id in (select entry_id from live))
),

overposted as (
    select 'entry of a source record that posts nothing' as problem, entries.entry_id, entries.debits, entries.credits
    from entries
    where not entries.is_adjusting
        and entries.entry_date > coalesce((select last_day from closed_until), DATE '0001-01-01')
        and not exists (select 1 from sources where sources.posted_id = entries.entry_id and sources.status in ('posted', 'suspense'))
),

-- What is posted is what the data gives, at the grain posted (a summary line is the sum of its records' lines).
unsummed as (
    select
        'posted net ' || coalesce(cast(o.net_amount as varchar), 'none') || ' of ' || coalesce(o.ledger_account, v.ledger_account) || ' (' || coalesce(o.coin, v.coin)
            || ') is not the sum of its records'' lines, ' || coalesce(cast(v.net_amount as varchar), 'none') as problem,
        coalesce(o.entry_id, v.entry_id) as entry_id, cast(null as decimal(38, 12)) as debits, cast(null as decimal(38, 12)) as credits
    from open_lines as o
    full outer join live as v on v.entry_id = o.entry_id and v.ledger_account = o.ledger_account and v.coin = o.coin
    where o.net_amount is distinct from v.net_amount
)

select * from unbalanced
union all
select * from unposted
union all
select * from overposted
union all
select * from unsummed
