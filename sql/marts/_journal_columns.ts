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
      ? { name: 'entry_id', description: 'The entry: the source record it posts (journal_sources.entry_id: spot/<account>/<fill id>, bill/…, futures/…); an adjusting entry: adjustment/<day booked>/<the entry it adjusts>; the CSV\'s reference, and the row\'s reference: `exledger explain` resolves it to its sources', notNull: true }
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
    { name: 'source_model', description: 'The mart holding the source row', notNull: true },
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
