import { defineReport } from '../src/export/report-definition.ts';
import { needsPriceSheet, UNPRICED } from './needs-price.ts';

/** Realized PnL: spot by symbol and month with the lot detail of each lot-based cost method, futures by contract and month. */
/** The rows both spot monthly sheets show (PnL and inventory: the same rows, split to print legibly), and the columns naming a row. */
const SPOT_MONTH_ROWS = {
  mart: 'marts.spot_realized_pnl_monthly',
  period: { column: 'trade_month', grain: 'month' },
  streams: ['spot_fills'],
  orderBy: ['cost_method', 'quote_coin', 'account', 'symbol', 'trade_month'],
} as const;
const SPOT_MONTH_KEYS = [
  { column: 'account', header: 'Account', format: 'text' },
  { column: 'cost_method', header: 'Cost method', format: 'text' },
  { column: 'symbol', header: 'Symbol', format: 'text' },
  { column: 'trade_month', header: 'Month', format: 'month' },
] as const;

export const pnlReport = defineReport({
  name: 'pnl',
  title: 'Realized profit and loss',
  streams: ['spot_fills', 'futures_fills', 'futures_accounts'],
  sheets: [
    {
      name: 'Spot PnL by month',
      description: 'Spot realized PnL per cost method, symbol and month, in the quote coin (the quantities and open inventory: Spot inventory by month)',
      ...SPOT_MONTH_ROWS,
      columns: [
        ...SPOT_MONTH_KEYS,
        { column: 'quote_coin', header: 'Quote coin', format: 'text' },
        { column: 'proceeds', header: 'Proceeds', format: 'amount', coinColumn: 'quote_coin', total: true },
        { column: 'cost', header: 'Cost of units sold', format: 'amount', coinColumn: 'quote_coin', total: true },
        { column: 'realized_pnl', header: 'Realized PnL', format: 'amount', coinColumn: 'quote_coin', total: true },
        { column: 'unmatched_proceeds', header: 'Unmatched proceeds', format: 'amount', coinColumn: 'quote_coin', total: true },
        { column: 'reporting_currency', header: 'Reporting currency', format: 'text', valuation: true },
        { column: 'realized_pnl_rc', header: 'Realized PnL (reporting currency)', format: 'amount', coinColumn: 'reporting_currency', valuation: true },
        { column: 'unpriced_days', header: 'Days without a price', format: 'integer', valuation: true },
        { column: 'reference', header: 'Reference (exledger explain)', format: 'id', width: 30 },
      ],
      totalsPer: ['cost_method'],
      highlight: { column: 'unmatched_proceeds', when: 'nonzero' },
    },
    {
      name: 'Spot inventory by month',
      description: 'The same rows\' quantities: bought and its cost, sold, sold beyond the inventory (unmatched: no cost), and the open inventory at month end',
      ...SPOT_MONTH_ROWS,
      // Split from Spot PnL by month so each prints one page wide at a legible size (the 19 columns together: ~52%).
      columns: [
        ...SPOT_MONTH_KEYS,
        { column: 'base_coin', header: 'Base coin', format: 'text' },
        { column: 'quote_coin', header: 'Quote coin', format: 'text' },
        { column: 'quantity_bought', header: 'Quantity bought', format: 'amount', coinColumn: 'base_coin' },
        { column: 'cost_bought', header: 'Cost of buys', format: 'amount', coinColumn: 'quote_coin', total: true },
        { column: 'quantity_sold', header: 'Quantity sold', format: 'amount', coinColumn: 'base_coin' },
        { column: 'unmatched_quantity', header: 'Unmatched quantity', format: 'amount', coinColumn: 'base_coin' },
        { column: 'open_quantity', header: 'Open quantity', format: 'amount', coinColumn: 'base_coin' },
        { column: 'open_cost', header: 'Open cost', format: 'amount', coinColumn: 'quote_coin' },
        { column: 'reference', header: 'Reference (exledger explain)', format: 'id', width: 30 },
      ],
      totalsPer: ['cost_method'],
      highlight: { column: 'unmatched_quantity', when: 'nonzero' },
    },
    {
      name: 'Spot lot detail',
      description: 'Per lot-based cost method (fifo, lifo, hifo, uk): each sell fill against the buy fills, opening lot or uk pool it consumed, and the rule that matched them; unmatched parts have no cost',
      mart: 'marts.spot_lot_matches',
      period: { column: 'sell_date', grain: 'day' },
      streams: ['spot_fills'],
      orderBy: ['cost_method', 'quote_coin', 'account', 'symbol', 'sell_at', 'sell_fill_id', 'lot_source', 'buy_at', 'buy_fill_id'],
      columns: [
        { column: 'account', header: 'Account', format: 'text' },
        { column: 'cost_method', header: 'Cost method', format: 'text' },
        { column: 'symbol', header: 'Symbol', format: 'text' },
        { column: 'sell_at', header: 'Sold at (UTC)', format: 'datetime' },
        // Fill ids wrap (two lines): the sheet prints one page wide at a legible size.
        { column: 'sell_fill_id', header: 'Sell fill', format: 'id', width: 12 },
        { column: 'lot_source', header: 'Lot', format: 'text' },
        { column: 'match_rule', header: 'Rule', format: 'text' },
        { column: 'buy_at', header: 'Bought at (UTC)', format: 'datetime' },
        { column: 'buy_fill_id', header: 'Buy fill', format: 'id', width: 12 },
        { column: 'base_coin', header: 'Base coin', format: 'text' },
        { column: 'quantity', header: 'Quantity', format: 'amount', coinColumn: 'base_coin' },
        { column: 'quote_coin', header: 'Quote coin', format: 'text' },
        { column: 'cost', header: 'Cost', format: 'amount', coinColumn: 'quote_coin', total: true },
        { column: 'proceeds', header: 'Proceeds', format: 'amount', coinColumn: 'quote_coin', total: true },
        { column: 'realized_pnl', header: 'Realized PnL', format: 'amount', coinColumn: 'quote_coin', total: true },
        // No Reference column: a lot match's (spot_lot_matches/<account>/<method>/<symbol>/<sell fill>/<lot>/<lot account>/<buy fill>)
        // would print this sheet below 70% one page wide. Its key is on the sheet, and explaining the day's Spot PnL row lists each match's reference.
      ],
      totalsPer: ['cost_method'],
      // A month of a busy account matches millions of lots per method: per symbol, day of the sale and rule
      // (the unmatched parts, whose cost is unknown, on lines of their own).
      rollUp: {
        by: ['account', 'cost_method', 'symbol', { column: 'sell_date', header: 'Sold on', format: 'date' }, 'match_rule', 'base_coin', 'quote_coin'],
        sum: ['quantity', 'cost', 'proceeds', 'realized_pnl'],
      },
    },
    {
      name: 'Futures PnL by month',
      description: 'Futures realized PnL, trading and liquidation fees per contract and month; funding per margin coin (rows without a contract)',
      mart: 'marts.futures_pnl_monthly',
      period: { column: 'pnl_month', grain: 'month' },
      streams: ['futures_fills', 'futures_accounts'],
      orderBy: ['margin_coin', 'account', 'pnl_month', 'symbol'],
      columns: [
        { column: 'account', header: 'Account', format: 'text' },
        { column: 'margin_coin', header: 'Margin coin', format: 'text' },
        { column: 'symbol', header: 'Contract', format: 'text' },
        { column: 'pnl_month', header: 'Month', format: 'month' },
        { column: 'fill_count', header: 'Fills', format: 'integer', total: true },
        { column: 'volume', header: 'Volume', format: 'amount', coinColumn: 'margin_coin', total: true },
        { column: 'realized_pnl', header: 'Realized PnL', format: 'amount', coinColumn: 'margin_coin', total: true },
        { column: 'trading_fees', header: 'Trading fees', format: 'amount', coinColumn: 'margin_coin', total: true },
        { column: 'liquidation_fees', header: 'Liquidation fees', format: 'amount', coinColumn: 'margin_coin', total: true },
        // Funding is known per margin coin only, on its own rows (no contract); without two collateral snapshots there is none: unknown.
        { column: 'funding', header: 'Funding', format: 'amount', coinColumn: 'margin_coin', total: true, nullMeans: 'elsewhere' },
        { column: 'net_result', header: 'Net result', format: 'amount', coinColumn: 'margin_coin', total: true },
        { column: 'reference', header: 'Reference (exledger explain)', format: 'id', width: 30 },
      ],
    },
    {
      name: 'Futures PnL valued by month',
      description: 'The same rows in the reporting currency, each day at the margin coin\'s price that day (split from Futures PnL by month so each prints one page wide at a legible size)',
      mart: 'marts.futures_pnl_monthly',
      period: { column: 'pnl_month', grain: 'month' },
      streams: ['futures_fills', 'futures_accounts'],
      orderBy: ['margin_coin', 'account', 'pnl_month', 'symbol'],
      valuation: true,
      columns: [
        { column: 'account', header: 'Account', format: 'text' },
        { column: 'margin_coin', header: 'Margin coin', format: 'text' },
        { column: 'symbol', header: 'Contract', format: 'text' },
        { column: 'pnl_month', header: 'Month', format: 'month' },
        { column: 'reporting_currency', header: 'Reporting currency', format: 'text' },
        { column: 'realized_pnl_rc', header: 'Realized PnL (reporting currency)', format: 'amount', coinColumn: 'reporting_currency' },
        { column: 'trading_fees_rc', header: 'Trading fees (reporting currency)', format: 'amount', coinColumn: 'reporting_currency' },
        { column: 'liquidation_fees_rc', header: 'Liquidation fees (reporting currency)', format: 'amount', coinColumn: 'reporting_currency' },
        { column: 'funding_rc', header: 'Funding (reporting currency)', format: 'amount', coinColumn: 'reporting_currency', nullMeans: 'elsewhere' },
        { column: 'net_result_rc', header: 'Net result (reporting currency)', format: 'amount', coinColumn: 'reporting_currency' },
        { column: 'unpriced_days', header: 'Days without a price', format: 'integer' },
        { column: 'reference', header: 'Reference (exledger explain)', format: 'id', width: 30 },
      ],
    },
    needsPriceSheet(['marts.spot_realized_pnl_daily', 'marts.futures_pnl_daily']),
  ],
  summary: [
    // One number per cost method and one for futures, each in the reporting currency (docs/workbooks.md "Reporting currency").
    { label: 'Spot realized PnL in the reporting currency', sheet: 'Spot PnL by month', sum: 'realized_pnl_rc', by: ['cost_method', 'reporting_currency'], coinColumn: 'reporting_currency', unpriced: UNPRICED },
    {
      label: 'Futures net result in the reporting currency',
      sheet: 'Futures PnL valued by month',
      sum: 'net_result_rc',
      by: ['reporting_currency'],
      coinColumn: 'reporting_currency',
      unpriced: UNPRICED,
      includesAnyGroup: ['Futures funding'],
      note: 'Realized PnL − fees + funding where known (see Futures funding), each day at the margin coin\'s price that day.',
    },
    { label: 'Spot realized PnL', sheet: 'Spot PnL by month', sum: 'realized_pnl', by: ['cost_method', 'quote_coin'], coinColumn: 'quote_coin' },
    { label: 'Spot unmatched proceeds (sold beyond inventory)', sheet: 'Spot PnL by month', sum: 'unmatched_proceeds', by: ['cost_method', 'quote_coin'], coinColumn: 'quote_coin' },
    { label: 'Futures realized PnL', sheet: 'Futures PnL by month', sum: 'realized_pnl', by: ['margin_coin'], coinColumn: 'margin_coin' },
    { label: 'Futures trading fees', sheet: 'Futures PnL by month', sum: 'trading_fees', by: ['margin_coin'], coinColumn: 'margin_coin' },
    { label: 'Futures liquidation fees', sheet: 'Futures PnL by month', sum: 'liquidation_fees', by: ['margin_coin'], coinColumn: 'margin_coin' },
    {
      label: 'Futures funding',
      sheet: 'Futures PnL by month',
      sum: 'funding',
      by: ['margin_coin'],
      coinColumn: 'margin_coin',
      unknown: 'funding is the change of the collateral\'s running funding total between two snapshots (futures_accounts), and the period has no such pair',
    },
    {
      label: 'Futures net result',
      sheet: 'Futures PnL by month',
      sum: 'net_result',
      by: ['margin_coin'],
      coinColumn: 'margin_coin',
      note: 'Realized PnL − trading fees − liquidation fees + funding.',
      includes: ['Futures funding'],
    },
  ],
  notes: [
    'Futures trading fees plus liquidation fees equal the futures fees of the fees report for the same period (both read the same fills).',
  ],
  chart: {
    title: 'Spot realized PnL per month',
    mart: 'marts.spot_realized_pnl_monthly',
    monthColumn: 'trade_month',
    valueColumn: 'realized_pnl',
    seriesBy: ['cost_method', 'quote_coin'],
    coinColumn: 'quote_coin',
  },
});
