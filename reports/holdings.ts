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
  streams: ['spot_fills', 'funding_bills', 'futures_fills', 'futures_accounts', 'affiliate_commissions', 'spot_assets'],
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
    {
      name: 'Futures positions',
      description:
        'Open futures positions at the month end, rebuilt from their fills: size, entry and mark price, unrealized PnL in the margin coin, fair value and carrying value in the reporting currency, or why a position has no value (a mark price comes from the prices file as contract:<symbol>)',
      mart: 'marts.futures_positions_valued',
      period: { column: 'period_month', grain: 'month' },
      orderBy: ['reporting_currency', 'account', 'symbol', 'position_side', 'period_month'],
      highlight: { column: 'unvalued_reason', when: 'nonzero' },
      streams: ['futures_fills'],
      emptyText: 'No futures position was open at the month end.',
      columns: [
        { column: 'account', header: 'Account', format: 'text' },
        { column: 'symbol', header: 'Contract', format: 'text' },
        { column: 'position_side', header: 'Side', format: 'text' },
        { column: 'period_month', header: 'Month', format: 'month' },
        { column: 'size', header: 'Size', format: 'amount', nullMeans: 'unknown' },
        { column: 'entry_price', header: 'Entry price', format: 'price', nullMeans: 'not-applicable' },
        { column: 'mark_price', header: 'Mark price', format: 'price', nullMeans: 'unknown' },
        { column: 'unrealized_pnl', header: 'Unrealized PnL', format: 'amount', coinColumn: 'margin_coin', nullMeans: 'unknown' },
        { column: 'margin_coin', header: 'Margin coin', format: 'text' },
        { column: 'fair_value', header: 'Fair value', format: 'amount', coinColumn: 'reporting_currency', nullMeans: 'unknown', total: true },
        { column: 'carrying_value', header: 'Carrying value', format: 'amount', coinColumn: 'reporting_currency', total: true },
        { column: 'remeasurement', header: 'Remeasurement', format: 'amount', coinColumn: 'reporting_currency', nullMeans: 'unknown', total: true },
        { column: 'unvalued_reason', header: 'Why no value', format: 'text', width: 28 },
        { column: 'reporting_currency', header: 'Currency', format: 'text' },
        { column: 'reference', header: 'Reference (exledger explain)', format: 'id', width: 24 },
      ],
    },
    {
      name: 'Quantities vs exchange',
      description:
        'Units the books hold against the exchange\'s own snapshot (spot assets plus futures collateral) of the sync nearest the period\'s end; a reconciliation: a difference is to explain (commission the books count as income beside it)',
      mart: 'marts.holdings_vs_exchange',
      period: { column: 'snapshot_at', grain: 'nearest' },
      orderBy: ['account', 'coin'],
      highlight: { column: 'difference', when: 'nonzero' },
      streams: ['spot_assets', 'futures_accounts'],
      emptyText: 'No snapshot of the exchange\'s assets was taken.',
      columns: [
        { column: 'account', header: 'Account', format: 'text' },
        { column: 'coin', header: 'Coin', format: 'text' },
        { column: 'snapshot_at', header: 'Snapshot (UTC)', format: 'datetime' },
        { column: 'books_quantity', header: 'Books (lots)', format: 'amount', coinColumn: 'coin' },
        { column: 'spot_quantity', header: 'Spot assets', format: 'amount', coinColumn: 'coin' },
        { column: 'futures_quantity', header: 'Futures collateral', format: 'amount', coinColumn: 'coin' },
        { column: 'exchange_quantity', header: 'Exchange', format: 'amount', coinColumn: 'coin' },
        { column: 'difference', header: 'Difference', format: 'amount', coinColumn: 'coin' },
        { column: 'commission_quantity', header: 'Commission received', format: 'amount', coinColumn: 'coin' },
        { column: 'reference', header: 'Reference (exledger explain)', format: 'id', width: 30 },
      ],
    },
    needsPriceSheet(['marts.journal_entries', 'marts.holdings_rollforward', 'marts.futures_positions_valued']),
  ],
  summary: [
    { label: 'Open futures positions at fair value', sheet: 'Futures positions', sum: 'fair_value', by: ['reporting_currency'], coinColumn: 'reporting_currency', unpriced: 'a position has no mark price, or opened before the history', note: 'The month end\'s open positions at their mark price (unrealized PnL in the reporting currency); carried at it with valuation fair_value, at 0 at cost.' },
    { label: 'Coins whose units differ from the exchange\'s (reconciliation)', sheet: 'Quantities vs exchange', where: 'is_different' },
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
    'Quantities vs exchange is a reconciliation, not a check: the books count every movement the exchange records (commission as income when its record says so), its snapshots what its wallets hold; a highlighted row is a coin to explain. The check holdings_vs_exchange_lots asserts the books\' side is the lots\' quantity.',
    'Identity per row: closing carrying value = opening carrying value + acquisitions at cost - disposals at cost + remeasurement (the check holdings_rollforward_rolls_forward); realized gain = proceeds - disposals at cost.',
    'Fair value is the closing quantity at the month-end price (prices file or derived from that day\'s fills); without one it is unknown, never carried from another day.',
  ],
});
