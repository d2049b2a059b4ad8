import type { Database } from '../store/database.ts';

type Row = Record<string, string | boolean | null>;

/**
 * A summary entry explained (models.journal.posting summary, docs/workbooks.md "Journal
 * entries"): its lines as posted, the detail entries it sums (every source record of its account,
 * kind, day and coin, each with its status and amount: the sum of its debits, unknown for a record
 * not posted), and their lines, whose sums per ledger account and coin are the summary's lines.
 */
export interface SummaryExplanation {
  kind: 'summary';
  reference: string;
  entry: Row;
  lines: Row[];
  entries: Row[];
  entryLines: Row[];
}

/** `summary/<account>/<kind>/<YYYY-MM-DD>/<coin>` (the macro posted_entry_id). */
const SUMMARY_REFERENCE = /^summary\/([^/]+)\/([a-z_]+)\/(\d{4}-\d{2}-\d{2})\/([^/]+)$/;

/** A summary entry's detail entries and lines, or undefined when the reference is not one of this database. */
export async function explainSummary(db: Database, reference: string): Promise<SummaryExplanation | undefined> {
  const match = SUMMARY_REFERENCE.exec(reference);
  if (match === null) return undefined;
  const [, account, kind, day, coin] = match as unknown as [string, string, string, string, string];
  const lines = await db.all<Row>('SELECT line_no, ledger_account, coin, debit, credit, coin_amount, kind, memo FROM marts.journal_entries WHERE entry_id = $1 ORDER BY line_no', [reference]);
  const sources = 'SELECT entry_id, status, description FROM marts.journal_sources WHERE account = $1 AND kind = $2 AND entry_date = CAST($3 AS DATE) AND coin = $4';
  const entries = await db.all<Row>(
    `SELECT s.entry_id, s.status, sum(l.debit) AS amount, s.description
     FROM (${sources}) AS s LEFT JOIN marts.journal_lines_live AS l ON l.entry_id = s.entry_id
     GROUP BY ALL ORDER BY s.entry_id`,
    [account, kind, day, coin],
  );
  if (lines.length === 0 && entries.length === 0) return undefined;
  const entryLines = await db.all<Row>(
    `SELECT l.entry_id, l.line_no, l.ledger_account, l.coin, l.debit, l.credit
     FROM marts.journal_lines_live AS l WHERE l.entry_id IN (SELECT entry_id FROM (${sources})) ORDER BY l.entry_id, l.line_no`,
    [account, kind, day, coin],
  );
  const posted = entries.filter((entry) => entry.amount !== null).length;
  return {
    kind: 'summary',
    reference,
    entry: { entry_id: reference, account, kind, entry_date: day, coin, description: String(lines[0]?.memo ?? `Summary of ${kind} entries of ${coin} on ${day} (${account})`), entries: String(entries.length), posted_entries: String(posted) },
    lines,
    entries,
    entryLines,
  };
}
