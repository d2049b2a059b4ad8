-- The journal's posting grain (settings.journal posting, docs/workbooks.md "Journal entries").

-- The entry a source record's lines are posted in: its own (entry_id) with posting detail; with
-- posting summary, the summary entry of its exchange account, kind, day and coin
-- (summary/<account>/<kind>/<YYYY-MM-DD>/<coin>, the coin the record is about:
-- marts.journal_sources coin), whose lines are the sums of its records' lines.
create or replace macro posted_entry_id(posting, entry_id, account, kind, entry_date, coin) as
    case
        when posting = 'summary' then 'summary/' || account || '/' || kind || '/' || strftime(entry_date, '%Y-%m-%d') || '/' || coin
        else entry_id
    end;
