// The journal as posted (docs/workbooks.md "Closing a period"): in closed periods, the lines as
// closed (closed.journal_entries, adjusting entries included); then, on the first day of the first
// open period, an adjusting entry per closed entry whose lines changed since (from
// marts.period_adjustments: a line per ledger account whose balance changed, debits first; an
// entry with an unknown change is not posted); then the open periods' lines as the data gives them
// (marts.journal_lines_live). Without a closed period: every line of journal_lines_live. Each
// entry balances: the lines as closed did, the lines now do, so their difference does.
// models.journal.posting summary: the lines are posted summed, an entry per exchange account, day,
// kind and coin (postedLiveLines); the lines as closed and the adjustments are at that grain too
// (the build refuses another posting while periods closed at one are in force).
// Key: (entry_id, line_no). Inputs: marts.journal_lines_live, marts.journal_sources,
// marts.period_adjustments, settings.journal, settings.closed_periods, closed.journal_entries.
import { declareProgramModel } from '../../src/models/program-model.ts';
import type { Database } from '../../src/store/database.ts';
import { hasClosedTable, readClosedPeriods } from '../../src/store/period-closes.ts';
import { JOURNAL_ENTRIES_TABLE, JOURNAL_LINE_COLUMNS as COLUMNS, postedLiveLines } from './_journal_columns.ts';

/** The adjusting entries booked in the first open period, as lines of the journal (live: the lines now at the grain posted). */
const adjustingLines = (live: string) => `
  WITH changes AS (
    SELECT account, json_extract_string(key_json, '$.entry_id') AS adjusted_entry_id, json_extract_string(key_json, '$.ledger_account') AS ledger_account,
      closed_period, booked_from, adjustment
    FROM marts.period_adjustments
    WHERE mart = 'marts.journal_entries' AND measure = 'net_amount' AND status = 'pending'
  ),
  -- An entry is adjusted whole or not at all: one unknown line would leave it unbalanced.
  known AS (
    SELECT * FROM changes WHERE adjusted_entry_id NOT IN (SELECT adjusted_entry_id FROM changes WHERE adjustment IS NULL)
  ),
  -- What the adjusted line is: as the data gives it now, else as closed.
  originals AS (
    SELECT entry_id, ledger_account, currency, coin, product, cost_method, memo, source_model, source_key, 1 AS preference FROM (${live})
    UNION ALL
    SELECT entry_id, ledger_account, currency, coin, product, cost_method, memo, source_model, source_key, 2 FROM closed.journal_entries WHERE adjusted_entry_id IS NULL
  ),
  original AS (
    SELECT * FROM originals QUALIFY row_number() OVER (PARTITION BY entry_id, ledger_account ORDER BY preference) = 1
  )
  SELECT
    'adjustment/' || strftime(k.booked_from, '%Y-%m-%d') || '/' || k.adjusted_entry_id AS entry_id,
    CAST(row_number() OVER (PARTITION BY k.adjusted_entry_id ORDER BY k.adjustment < 0, k.ledger_account) AS INTEGER) AS line_no,
    k.account,
    CAST(date_trunc('month', k.booked_from) AS DATE) AS period,
    k.booked_from AS entry_date,
    k.ledger_account,
    CAST(greatest(k.adjustment, 0) AS DECIMAL(38, 12)) AS debit,
    CAST(greatest(-k.adjustment, 0) AS DECIMAL(38, 12)) AS credit,
    CAST(k.adjustment AS DECIMAL(38, 12)) AS net_amount,
    o.currency, o.coin,
    CAST(NULL AS DECIMAL(38, 18)) AS coin_amount,
    CAST(NULL AS DECIMAL(38, 18)) AS price,
    'adjustment' AS kind,
    o.product, o.cost_method,
    'Adjustment to ' || k.closed_period || ' (closed): ' || coalesce(o.memo, k.adjusted_entry_id) AS memo,
    o.source_model, o.source_key,
    k.closed_period AS adjusted_period,
    k.adjusted_entry_id
  FROM known AS k
  INNER JOIN original AS o ON o.entry_id = k.adjusted_entry_id AND o.ledger_account = k.ledger_account`;

export default declareProgramModel({
  name: 'journal_entries',
  layer: 'marts',
  references: ['marts.journal_lines_live', 'marts.journal_sources', 'marts.period_adjustments'],
  columns: JOURNAL_ENTRIES_TABLE,
  build: buildWhole,
  // Incremental (docs/plans/incremental-builds.md, "The books"): the live lines from day D on (the
  // reporting-zone day of the earliest pending change; in an open period) are posted again, and
  // the adjusting entries made again whole (a few lines per closed entry that changed); the lines
  // before D, and those of closed periods, stay. A close or a reopen changes
  // marts.period_adjustments' fingerprint, which rebuilds this model whole.
  async incremental(db: Database): Promise<void> {
    const [bound] = await db.all<{ day: string | null; from_start: boolean | null }>(`
      SELECT CAST(min(local_date(p.from_at, r.time_zone)) AS VARCHAR) AS day, bool_or(p.from_at IS NULL) AS from_start
      FROM temp.main.model_pending AS p, (SELECT any_value(time_zone) AS time_zone FROM settings.reporting) AS r`);
    const from = bound?.from_start === true || bound?.day === null || bound?.day === undefined ? '-infinity' : bound.day;
    const [journal] = await db.all<{ posting: string }>('SELECT any_value(posting) AS posting FROM settings.journal');
    const live = postedLiveLines(journal?.posting ?? 'detail');
    const latest = (await readClosedPeriods(db)).at(-1);
    const closed = latest !== undefined && (await hasClosedTable(db, 'journal_entries'));
    // The open periods' lines only (after the latest close).
    const open = closed ? ` AND entry_date > CAST('${latest.to}' AS DATE)` : '';
    await db.run(`DELETE FROM marts.journal_entries WHERE kind <> 'adjustment' AND entry_date >= CAST('${from}' AS DATE)${open}`);
    await db.run(`INSERT INTO marts.journal_entries SELECT ${COLUMNS}, NULL, NULL FROM (${live}) WHERE entry_date >= CAST('${from}' AS DATE)${open}`);
    if (closed) {
      await db.run(`DELETE FROM marts.journal_entries WHERE kind = 'adjustment'${open}`);
      await db.run(`INSERT INTO marts.journal_entries ${adjustingLines(live)}`);
    }
    await db.run(
      `CREATE OR REPLACE TEMP TABLE model_pending AS
       SELECT '*' AS account, CAST(NULL AS VARCHAR) AS symbol, ${from === '-infinity' ? 'CAST(NULL AS TIMESTAMPTZ)' : `local_day_start(DATE '${from}', (SELECT any_value(time_zone) FROM settings.reporting))`} AS from_at`,
    );
  },
});

async function buildWhole(db: Database): Promise<void> {
  // settings.journal: the grain posted (detail or summary).
  const [journal] = await db.all<{ posting: string }>('SELECT any_value(posting) AS posting FROM settings.journal');
  const live = postedLiveLines(journal?.posting ?? 'detail');
  // settings.closed_periods: the closes in force.
  const latest = (await readClosedPeriods(db)).at(-1);
  if (latest === undefined || !(await hasClosedTable(db, 'journal_entries'))) {
    await db.run(`INSERT INTO marts.journal_entries SELECT ${COLUMNS}, NULL, NULL FROM (${live})`);
    return;
  }
  await db.run(`INSERT INTO marts.journal_entries SELECT ${COLUMNS}, adjusted_period, adjusted_entry_id FROM closed.journal_entries`);
  await db.run(`INSERT INTO marts.journal_entries ${adjustingLines(live)}`);
  await db.run(`INSERT INTO marts.journal_entries SELECT ${COLUMNS}, NULL, NULL FROM (${live}) WHERE entry_date > CAST($1 AS DATE)`, [latest.to]);
}
