import { defineReport } from '../src/export/report-definition.ts';
import { needsPriceSheet } from './needs-price.ts';

/**
 * The holdings roll-forward in the reporting currency (marts.holdings_rollforward): per coin and
 * month, opening, acquisitions, disposals at cost, realized gain, remeasurement, closing quantity,
 * cost, carrying value and fair value at the month-end price (docs/workbooks.md "Books in the
 * reporting currency"), the disclosure ASU 2023-08 asks for.
 */
/** The rows both roll-forward sheets show, in the same order, and the columns that name a row on both. */
const ROLLFORWARD_ROWS = {
  mart: 'marts.holdings_rollforward',
  period: { column: 'period_month', grain: 'month' },
  orderBy: ['reporting_currency', 'cost_method', 'coin', 'account', 'period_month'],
} as const;
const ROLLFORWARD_KEYS = [
  { column: 'account', header: 'Account', format: 'text' },
  { column: 'coin', header: 'Coin', format: 'text' },
  { column: 'cost_method', header: 'Method', format: 'text' },
  { column: 'period_month', header: 'Month', format: 'month' },
] as const;

export const holdingsReport = defineReport({
  name: 'holdings',
  title: 'Holdings roll-forward',
  streams: ['spot_fills', 'funding_bills', 'futures_fills', 'futures_accounts', 'affiliate_commissions'],
  requiresReportingCurrency: true,
  sheets: [
    {
      name: 'Roll-forward',
      description:
        'Per coin, cost method and month, in the reporting currency: opening carrying value, acquisitions and disposals at cost, proceeds, realized gain, remeasurement (valuation fair_value), closing carrying value and fair value; "unknown" where a price or a cost is missing (never 0)',
      ...ROLLFORWARD_ROWS,
      columns: [
        ...ROLLFORWARD_KEYS,
        { column: 'opening_carrying_value', header: 'Opening carrying value', format: 'amount', coinColumn: 'reporting_currency' },
        { column: 'acquisitions_cost', header: 'Acquisitions at cost', format: 'amount', coinColumn: 'reporting_currency', nullMeans: 'unknown', total: true },
        { column: 'disposals_cost', header: 'Disposals at cost', format: 'amount', coinColumn: 'reporting_currency', nullMeans: 'unknown', total: true },
        { column: 'disposals_proceeds', header: 'Proceeds', format: 'amount', coinColumn: 'reporting_currency', nullMeans: 'unknown', total: true },
        { column: 'realized_gain', header: 'Realized gain', format: 'amount', coinColumn: 'reporting_currency', nullMeans: 'unknown', total: true },
        { column: 'remeasurement', header: 'Remeasurement', format: 'amount', coinColumn: 'reporting_currency', nullMeans: 'unknown', total: true },
        { column: 'closing_carrying_value', header: 'Closing carrying value', format: 'amount', coinColumn: 'reporting_currency' },
        { column: 'fair_value', header: 'Fair value', format: 'amount', coinColumn: 'reporting_currency', nullMeans: 'unknown' },
        { column: 'reporting_currency', header: 'Currency', format: 'text' },
        // No Reference column: the same rows, in the same order, as Roll-forward's, which has it (here it would print below 70%).
      ],
    },
    {
      name: 'Quantities and prices',
      description:
        'The same rows, in the same order: units held at the start, acquired, disposed of (and of those, beyond what was held), held at the end; the closing cost and whether all of it is known; the month-end price and its source',
      ...ROLLFORWARD_ROWS,
      columns: [
        ...ROLLFORWARD_KEYS,
        { column: 'opening_quantity', header: 'Opening quantity', format: 'amount', coinColumn: 'coin' },
        { column: 'acquisitions_quantity', header: 'Acquired', format: 'amount', coinColumn: 'coin' },
        { column: 'disposals_quantity', header: 'Disposed of', format: 'amount', coinColumn: 'coin' },
        { column: 'unmatched_quantity', header: 'Of which not held', format: 'amount', coinColumn: 'coin' },
        { column: 'closing_quantity', header: 'Closing quantity', format: 'amount', coinColumn: 'coin' },
        { column: 'closing_cost', header: 'Closing cost (known part)', format: 'amount', coinColumn: 'reporting_currency' },
        { column: 'closing_cost_known', header: 'Cost all known', format: 'text' },
        { column: 'price', header: 'Month-end price', format: 'price', nullMeans: 'unknown' },
        { column: 'price_source', header: 'Price source', format: 'text' },
        { column: 'reporting_currency', header: 'Currency', format: 'text' },
        // No Reference column: the same rows, in the same order, as Roll-forward's, which has it (here it would print below 70%).
      ],
    },
    needsPriceSheet(['marts.journal_entries', 'marts.holdings_rollforward']),
  ],
  summary: [
    { label: 'Realized gain', sheet: 'Roll-forward', sum: 'realized_gain', by: ['cost_method', 'reporting_currency'], coinColumn: 'reporting_currency', unpriced: 'a disposal\'s proceeds or cost is unknown', note: 'Over the rows whose realized gain is known; a row with one unknown disposal shows "unknown".' },
    { label: 'Remeasurement', sheet: 'Roll-forward', sum: 'remeasurement', by: ['cost_method', 'reporting_currency'], coinColumn: 'reporting_currency', unpriced: 'no month-end price, or a cost held unknown', note: 'valuation fair_value: the change of the adjustment to the month-end price; 0 at cost.' },
  ],
  chart: {
    title: 'Carrying value held at each month end',
    mart: 'marts.holdings_rollforward',
    monthColumn: 'period_month',
    valueColumn: 'closing_carrying_value',
    seriesBy: ['cost_method', 'reporting_currency'],
    coinColumn: 'reporting_currency',
  },
  notes: [
    'Identity per row: closing carrying value = opening carrying value + acquisitions at cost - disposals at cost + remeasurement (the check holdings_rollforward_rolls_forward); realized gain = proceeds - disposals at cost.',
    'Fair value is the closing quantity at the month-end price (prices file or derived from that day\'s fills); without one it is unknown, never carried from another day.',
  ],
});
