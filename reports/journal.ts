import { defineReport } from '../src/export/report-definition.ts';
import { needsPriceSheet } from './needs-price.ts';

const NOT_VALUED = 'Not valued in full';

/**
 * Journal entries (marts.journal_entries) in the reporting currency, for a general ledger: the
 * lines as a workbook and, beside it, as a CSV in an import layout (docs/workbooks.md "Journal entries").
 */
/**
 * The row selection both journal sheets share, so "Journal line sources" holds the same lines as
 * "Journal lines" in the same order, row for row, and the columns that name a line on both.
 */
const JOURNAL_LINE_ROWS = {
  mart: 'marts.journal_entries',
  period: { column: 'entry_date', grain: 'day' },
  orderBy: ['currency', 'entry_date', 'entry_id', 'line_no'],
} as const;
const JOURNAL_LINE_KEYS = [
  { column: 'entry_date', header: 'Date', format: 'date' },
  { column: 'entry_id', header: 'Reference', format: 'id', width: 30 },
  { column: 'line_no', header: 'Line', format: 'integer' },
] as const;

export const journalReport = defineReport({
  name: 'journal',
  title: 'Journal entries',
  streams: ['spot_fills', 'futures_fills', 'futures_accounts', 'funding_bills', 'affiliate_commissions'],
  requiresReportingCurrency: true,
  sheets: [
    {
      name: 'Journal lines',
      description:
        'Double-entry lines in the reporting currency: every movement of every coin, an entry per source record (a line per ledger account and coin, debits first); each entry balances; Reference leads back to the source record (Journal line sources)',
      ...JOURNAL_LINE_ROWS,
      // The booking columns; where each line comes from is on "Journal line sources", row for row,
      // so each sheet prints one page wide at full size (the 17 columns together need ~45%).
      columns: [
        ...JOURNAL_LINE_KEYS,
        { column: 'account', header: 'Exchange account', format: 'text' },
        { column: 'ledger_account', header: 'Ledger account', format: 'text', width: 24 },
        { column: 'debit', header: 'Debit', format: 'amount', coinColumn: 'currency', total: true },
        { column: 'credit', header: 'Credit', format: 'amount', coinColumn: 'currency', total: true },
        { column: 'net_amount', header: 'Debit − credit', format: 'amount', coinColumn: 'currency', total: true },
        { column: 'currency', header: 'Currency', format: 'text' },
        { column: 'memo', header: 'Memo', format: 'text', width: 40 },
      ],
      // A line per movement: per day, exchange account and ledger account past the limit (the CSV keeps every line).
      rollUp: { by: ['entry_date', 'account', 'ledger_account', 'currency'], sum: ['debit', 'credit', 'net_amount'] },
    },
    {
      name: 'Journal line sources',
      description:
        'The same lines, in the same order, with what each was computed from: the units of coin a digital-assets line adds or takes, the price, the kind and cost method, the source model and key',
      ...JOURNAL_LINE_ROWS,
      columns: [
        ...JOURNAL_LINE_KEYS,
        { column: 'kind', header: 'Kind', format: 'text', width: 16 },
        { column: 'coin', header: 'Coin', format: 'text' },
        // Units on the digital-assets lines only.
        { column: 'coin_amount', header: 'Coin amount', format: 'amount', coinColumn: 'coin', nullMeans: 'not-applicable' },
        // A price with every decimal it has (0.9996 USD, not 1.00).
        { column: 'price', header: 'Price', format: 'price', nullMeans: 'not-applicable' },
        { column: 'currency', header: 'Currency', format: 'text' },
        { column: 'cost_method', header: 'Cost method', format: 'text' },
        { column: 'source_model', header: 'Source', format: 'text', width: 20 },
        { column: 'source_key', header: 'Source key', format: 'text', width: 40 },
      ],
      rollUp: { by: ['entry_date', 'kind', 'coin', 'currency', 'cost_method', 'source_model'], sum: ['coin_amount'] },
    },
    {
      name: NOT_VALUED,
      description:
        'Source records a price is missing for: without any value, not posted (no_price); with part of it, posted with that part in the suspense account (suspense), never as a gain, a loss or 0. Add their prices (Needs a price) and build again',
      mart: 'marts.journal_sources',
      period: { column: 'entry_date', grain: 'day' },
      orderBy: ['coin', 'entry_date', 'account', 'entry_id'],
      only: { column: 'status', values: ['no_price', 'suspense'] },
      emptyText: 'Every source record is valued in full: nothing is in suspense.',
      columns: [
        { column: 'entry_date', header: 'Date', format: 'date' },
        { column: 'account', header: 'Exchange account', format: 'text' },
        { column: 'kind', header: 'Kind', format: 'text' },
        { column: 'coin', header: 'Coin', format: 'text' },
        { column: 'amount', header: 'Amount', format: 'amount', coinColumn: 'coin', nullMeans: 'unknown' },
        { column: 'status', header: 'Status', format: 'text' },
        { column: 'entry_id', header: 'Reference', format: 'id', width: 30 },
        { column: 'source_model', header: 'Source', format: 'text', width: 20 },
        { column: 'source_key', header: 'Source key', format: 'text', width: 40 },
      ],
      // Without its amount (no price), a line of records is unknown.
      rollUp: { by: ['entry_date', 'account', 'kind', 'coin', 'status'], sum: ['amount'] },
    },
    needsPriceSheet(['marts.journal_entries']),
  ],
  summary: [
    { label: 'Debits', sheet: 'Journal lines', sum: 'debit', by: ['currency'], coinColumn: 'currency', note: 'Equal to the credits: every entry balances.' },
    { label: 'Credits', sheet: 'Journal lines', sum: 'credit', by: ['currency'], coinColumn: 'currency' },
    {
      label: 'Balance per ledger account (debits − credits)',
      sheet: 'Journal lines',
      sum: 'net_amount',
      by: ['ledger_account', 'currency'],
      coinColumn: 'currency',
      note: 'Realized gains and losses: minus the spot (journal cost method) and futures realized PnL; income accounts credit, expense accounts debit.',
    },
    { label: 'Source records not valued in full (no price)', sheet: NOT_VALUED, note: 'Listed on the sheet "Not valued in full": not posted, or posted in part to the suspense account; their coins and days on "Needs a price".' },
  ],
  notes: [
    'Every movement is posted (docs/workbooks.md "Books in the reporting currency"): a trade as the coin received at its value and the coin given up at the cost of its lots, the difference to realized gains and losses; fees, futures results, funding and commission at their value; deposits and withdrawals against transfers clearing. Each coin\'s digital-assets account equals the cost of its lots held (the check journal_ties_to_holdings).',
    'The CSV beside this workbook holds the same lines: date, account (the ledger account), debit, credit (the other side empty), currency, memo, reference (the entry).',
  ],

  chart: { title: 'Debits per month', mart: 'marts.journal_entries', monthColumn: 'period', valueColumn: 'debit', seriesBy: ['currency'], coinColumn: 'currency' },
  csv: {
    sheet: 'Journal lines',
    columns: [
      { header: 'date', column: 'entry_date' },
      { header: 'account', column: 'ledger_account' },
      { header: 'debit', column: 'debit', emptyWhenZero: true },
      { header: 'credit', column: 'credit', emptyWhenZero: true },
      { header: 'currency', column: 'currency' },
      { header: 'memo', column: 'memo' },
      { header: 'reference', column: 'entry_id' },
    ],
    omitted: { sheet: NOT_VALUED, note: 'a price in the reporting currency is missing: not posted, or posted in part to the suspense account; see the sheet "Not valued in full" of the workbook, add their prices and build again' },
  },
  // `--format quickbooks,xero,netsuite,hledger`: the same lines, rounded to the currency's minor unit (docs/workbooks.md "Ledger imports").
  ledger: {
    sheet: 'Journal lines',
    columns: { entry: 'entry_id', line: 'line_no', date: 'entry_date', account: 'ledger_account', amount: 'net_amount', currency: 'currency', memo: 'memo' },
    omitted: { sheet: NOT_VALUED, note: 'a price in the reporting currency is missing: not posted, or posted in part to the suspense account; see the sheet "Not valued in full" of the workbook, add their prices and build again' },
  },
});
