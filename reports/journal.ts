import { defineReport } from '../src/export/report-definition.ts';
import { needsPriceSheet } from './needs-price.ts';

const NOT_POSTED = 'Not posted (no price)';

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
        'Double-entry lines in the reporting currency, two per entry (line 1 the debit, line 2 the credit); each entry balances; Reference leads back to the source row (Journal line sources)',
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
    },
    {
      name: 'Journal line sources',
      description:
        'The same lines, in the same order, with what each was computed from: the coin amount, its price, the kind and cost method, the source model and key; Coin amount "unknown": a spot realized PnL of 1e20 or more, beyond the journal\'s 18 decimals, exact in its Source (the debit and credit are exact)',
      ...JOURNAL_LINE_ROWS,
      columns: [
        ...JOURNAL_LINE_KEYS,
        { column: 'kind', header: 'Kind', format: 'text', width: 16 },
        { column: 'coin', header: 'Coin', format: 'text' },
        // NULL beyond DECIMAL(38,18) (marts.journal_sources.amount): "unknown", never blank or 0.
        { column: 'coin_amount', header: 'Coin amount', format: 'amount', coinColumn: 'coin', nullMeans: 'unknown' },
        // A price with every decimal it has (0.9996 USD, not 1.00).
        { column: 'price', header: 'Price', format: 'price', nullMeans: 'not-applicable' },
        { column: 'currency', header: 'Currency', format: 'text' },
        { column: 'cost_method', header: 'Cost method', format: 'text' },
        { column: 'source_model', header: 'Source', format: 'text', width: 20 },
        { column: 'source_key', header: 'Source key', format: 'text', width: 40 },
      ],
    },
    {
      name: NOT_POSTED,
      description: 'Source rows with an amount but no price in the reporting currency: not posted (never as 0), neither in the sheet nor in the CSV; add their prices (Needs a price) and build again',
      mart: 'marts.journal_sources',
      period: { column: 'entry_date', grain: 'day' },
      orderBy: ['coin', 'entry_date', 'account', 'entry_id'],
      only: { column: 'status', values: ['no_price'] },
      emptyText: 'Every source row has a price: all are posted.',
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
    },
    needsPriceSheet(['marts.spot_realized_pnl_daily', 'marts.futures_pnl_daily', 'marts.fees_daily', 'marts.affiliate_rebates_monthly']),
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
    { label: 'Source rows not posted (no price)', sheet: NOT_POSTED, note: 'Listed on the sheet "Not posted (no price)"; their coins and days on "Needs a price". Not in the CSV either.' },
  ],
  notes: [
    'Sources: spot realized PnL of one cost method (the Journal line above), futures realized PnL per contract and funding per margin coin, futures trading and liquidation fees and funding-account fees (fees report), affiliate commission per month (posted on its last day). Spot fees are not posted separately: spot realized PnL is already net of them (fees in the cost basis and in the proceeds).',
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
    omitted: { sheet: NOT_POSTED, note: 'they have no price in the reporting currency; see the sheet "Not posted (no price)" of the workbook, add their prices and build again' },
  },
  // `--format quickbooks,xero,netsuite,hledger`: the same lines, rounded to the currency's minor unit (docs/workbooks.md "Ledger imports").
  ledger: {
    sheet: 'Journal lines',
    columns: { entry: 'entry_id', line: 'line_no', date: 'entry_date', account: 'ledger_account', amount: 'net_amount', currency: 'currency', memo: 'memo' },
    omitted: { sheet: NOT_POSTED, note: 'they have no price in the reporting currency; see the sheet "Not posted (no price)" of the workbook, add their prices and build again' },
  },
});
