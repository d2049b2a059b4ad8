import type { ColumnDeclaration } from '../../src/models/declaration.ts';

// The columns of a journal line, shared by marts.journal_lines_live (the lines the data gives
// now) and marts.journal_entries (the lines posted: closed periods as closed, adjusting entries in
// the first open period, then the open periods' lines).

const DAY = 'local day, reporting zone';
const MONTH = 'first day of the month, reporting zone';

/** What moved a coin (intermediate.int_coin_events kind), or a month end's remeasurement to fair value: the kind of a journal entry. */
export const BOOK_KINDS = ['trade', 'fee', 'opening', 'futures_pnl', 'futures_fee', 'funding', 'commission', 'deposit', 'withdrawal', 'c2c', 'bill_fee', 'remeasurement'];

/** The columns of journal_lines_live (`posted` false) or of journal_entries (`posted` true, with the adjusting entries' columns). */
export function journalLineColumns(posted: boolean): ColumnDeclaration[] {
  const kinds = BOOK_KINDS;
  return [
    posted
      ? { name: 'entry_id', description: 'The entry: the source record it posts (journal_sources.entry_id: spot/<account>/<fill id>, bill/…, futures/…), or with models.journal.posting summary the records of an account, kind, day and coin it sums (summary/<account>/<kind>/<YYYY-MM-DD>/<coin>); an adjusting entry: adjustment/<day booked>/<the entry it adjusts>; the CSV\'s reference, and the row\'s reference: `exledger explain` resolves it to its sources', notNull: true }
      : { name: 'entry_id', description: 'The entry: the source record it posts (journal_sources.entry_id: spot/<account>/<fill id>, bill/…, futures/…); the row\'s reference: `exledger explain` resolves it to its sources', notNull: true, relationship: { model: 'marts.journal_sources', column: 'entry_id' } },
    posted
      ? { name: 'line_no', description: 'Line of the entry: one per ledger account and coin it changes, debits first', notNull: true }
      : { name: 'line_no', description: 'Line of the entry: one per ledger account and coin it changes, debits first', notNull: true },
    { name: 'account', description: 'Account name of the configuration', notNull: true },
    { name: 'period', description: 'Month of entry_date', unit: MONTH, notNull: true },
    { name: 'entry_date', description: posted ? 'Day posted: the source row\'s day (a commission month: its last day); an adjusting entry: the first day of the first open period' : 'Day posted: the source row\'s day (a commission month: its last day)', unit: DAY, notNull: true },
    { name: 'ledger_account', description: 'Account of the chart of accounts (models.journal.accounts, {coin} and {account} replaced)', notNull: true },
    { name: 'debit', description: 'Debit amount, non-negative; 0 on the credit line', unit: 'coin: currency', notNull: true },
    { name: 'credit', description: 'Credit amount, non-negative; 0 on the debit line', unit: 'coin: currency', notNull: true },
    { name: 'net_amount', description: 'debit - credit (an account\'s balance is the sum of its lines\')', unit: 'coin: currency', notNull: true },
    { name: 'currency', description: 'The reporting currency (models.reportingCurrency): the unit of debit and credit', unit: 'currency code', notNull: true },
    { name: 'coin', description: 'Coin the line is about: a digital-assets line\'s coin; a counter line\'s leg coin', unit: 'coin code', notNull: true },
    {
      name: 'coin_amount',
      description: posted
        ? 'A digital-assets line: the units of coin it adds or takes, non-negative; null on other lines and on adjusting lines (their value changed, not necessarily their units)'
        : 'A digital-assets line: the units of coin it adds or takes, non-negative; null on other lines',
      unit: 'coin: coin',
    },
    { name: 'price', description: 'Price of one coin in the reporting currency on the entry\'s day, where the line\'s coin is the entry\'s first (null: another coin, no price, an adjusting line)', unit: 'coin: currency per unit of coin' },
    { name: 'kind', description: posted ? 'What the entry posts; adjustment: a change to a closed period\'s entry (adjusted_entry_id)' : 'What the entry posts', notNull: true, acceptedValues: posted ? [...kinds, 'adjustment'] : kinds },
    { name: 'product', description: 'Where the amount arose', notNull: true, acceptedValues: ['spot', 'futures', 'funding', 'affiliate'] },
    { name: 'cost_method', description: 'Cost method whose costs the entry carries (models.journal.costMethod); null on an adjusting line', acceptedValues: ['fifo', 'average', 'lifo', 'hifo', 'uk'] },
    { name: 'memo', description: 'What the entry is, with the source amount and its coin' },
    { name: 'source_model', description: 'The mart holding the source row (a summary entry: marts.journal_sources, its records by source_key)', notNull: true },
    { name: 'source_key', description: 'The source row\'s key columns and values (key=value; ...)', notNull: true },
    ...(posted
      ? [
          { name: 'adjusted_period', description: 'An adjusting entry: the closed period whose entry it changes (e.g. 2026-10); null on every other line' },
          { name: 'adjusted_entry_id', description: 'An adjusting entry: the entry of the closed period it changes (its lines as closed are in closed.journal_entries); null on every other line' },
        ]
      : []),
  ];
}

/** The table of marts.journal_entries, in the declared order (its program creates it). */
export const JOURNAL_ENTRIES_TABLE = `entry_id VARCHAR NOT NULL, line_no INTEGER NOT NULL, account VARCHAR NOT NULL, period DATE NOT NULL, entry_date DATE NOT NULL,
  ledger_account VARCHAR NOT NULL, debit DECIMAL(38, 12) NOT NULL, credit DECIMAL(38, 12) NOT NULL, net_amount DECIMAL(38, 12) NOT NULL, currency VARCHAR NOT NULL,
  coin VARCHAR NOT NULL, coin_amount DECIMAL(38, 18), price DECIMAL(38, 18), kind VARCHAR NOT NULL, product VARCHAR NOT NULL, cost_method VARCHAR, memo VARCHAR,
  source_model VARCHAR NOT NULL, source_key VARCHAR NOT NULL, adjusted_period VARCHAR, adjusted_entry_id VARCHAR`;

/** The columns of a journal line as marts.journal_lines_live holds them, in order. */
export const JOURNAL_LINE_COLUMNS = 'entry_id, line_no, account, period, entry_date, ledger_account, debit, credit, net_amount, currency, coin, coin_amount, price, kind, product, cost_method, memo, source_model, source_key';

/**
 * The lines the data gives now (marts.journal_lines_live), at the grain the journal posts
 * (settings.journal posting, read by the caller): with `detail` as they are, an entry per source
 * record; with `summary`, summed into an entry per exchange account, day, kind and coin (the macro
 * posted_entry_id): a line per ledger account and coin, its net the sum of its detail lines' (one
 * that sums to 0 is left out, as the detail lines leave theirs), debit and credit non-negative, one
 * of them 0, debits first. A summary line's units (coin_amount) are its detail lines' net units
 * (a debit's added, a credit's taken); its price is theirs where they all have the same one, else
 * null. Its source is the detail entries it sums: marts.journal_sources by account, kind, day and
 * coin (exledger explain lists them). Columns JOURNAL_LINE_COLUMNS.
 */
export function postedLiveLines(posting: string): string {
  if (posting !== 'summary') return `SELECT ${JOURNAL_LINE_COLUMNS} FROM marts.journal_lines_live`;
  return `
    WITH detail AS (
      SELECT l.*, s.coin AS entry_coin, posted_entry_id('summary', l.entry_id, l.account, l.kind, l.entry_date, s.coin) AS summary_id
      FROM marts.journal_lines_live AS l
      INNER JOIN marts.journal_sources AS s ON s.entry_id = l.entry_id
    ),
    entries AS (
      SELECT summary_id, count(DISTINCT entry_id) AS detail_entries FROM detail GROUP BY summary_id
    ),
    summed AS (
      SELECT
        summary_id, account, entry_date, kind, entry_coin, ledger_account, coin,
        any_value(period) AS period, any_value(currency) AS currency, any_value(product) AS product, any_value(cost_method) AS cost_method,
        sum(net_amount) AS net_amount,
        sum(CASE WHEN net_amount > 0 THEN coin_amount ELSE -coin_amount END) AS units,
        CASE WHEN count(price) = count(*) AND min(price) = max(price) THEN min(price) END AS price
      FROM detail
      GROUP BY summary_id, account, entry_date, kind, entry_coin, ledger_account, coin
      HAVING sum(net_amount) <> 0
    )
    SELECT
      s.summary_id AS entry_id,
      CAST(row_number() OVER (PARTITION BY s.summary_id ORDER BY s.net_amount < 0, s.ledger_account, s.coin) AS INTEGER) AS line_no,
      s.account, s.period, s.entry_date, s.ledger_account,
      CAST(greatest(s.net_amount, 0) AS DECIMAL(38, 12)) AS debit,
      CAST(greatest(-s.net_amount, 0) AS DECIMAL(38, 12)) AS credit,
      CAST(s.net_amount AS DECIMAL(38, 12)) AS net_amount,
      s.currency, s.coin,
      CAST(abs(s.units) AS DECIMAL(38, 18)) AS coin_amount,
      s.price, s.kind, s.product, s.cost_method,
      'Summary of ' || e.detail_entries || ' ' || s.kind || ' entr' || CASE WHEN e.detail_entries = 1 THEN 'y' ELSE 'ies' END || ' of ' || s.entry_coin || ' on ' || strftime(s.entry_date, '%Y-%m-%d') || ' (' || s.account || ')' AS memo,
      'marts.journal_sources' AS source_model,
      'account=' || s.account || '; kind=' || s.kind || '; entry_date=' || strftime(s.entry_date, '%Y-%m-%d') || '; coin=' || s.entry_coin AS source_key
    FROM summed AS s
    INNER JOIN entries AS e USING (summary_id)`;
}
