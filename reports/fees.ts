import { defineReport } from '../src/export/report-definition.ts';
import { needsPriceSheet, UNPRICED } from './needs-price.ts';

const feeColumns = (periodColumn: string, periodHeader: string, periodFormat: 'date' | 'month') =>
  [
    { column: 'account', header: 'Account', format: 'text' },
    { column: 'product', header: 'Product', format: 'text' },
    { column: 'coin', header: 'Coin', format: 'text' },
    { column: periodColumn, header: periodHeader, format: periodFormat },
    { column: 'fees_paid', header: 'Fees paid', format: 'amount', coinColumn: 'coin', total: true },
    { column: 'liquidation_fees', header: 'of which liquidation', format: 'amount', coinColumn: 'coin', total: true },
    // NULL: the funding account does not trade, and futures quoted in another coin have no volume in this one.
    // The quote notional of trades quoted in this coin, as the exchange counts volume (a WXT/USDT trade is USDT volume, none in WXT).
    { column: 'traded_volume', header: 'Traded volume (quote notional)', format: 'amount', coinColumn: 'coin', total: true, nullMeans: 'not-applicable' },
    { column: 'fee_basis_volume', header: 'Volume charged in this coin', format: 'amount', coinColumn: 'coin', total: true, nullMeans: 'not-applicable' },
    { column: 'effective_fee_rate', header: 'Effective fee rate', format: 'rate', nullMeans: 'not-applicable' },
    { column: 'fee_count', header: 'Fills or bills', format: 'integer', total: true },
    { column: 'reporting_currency', header: 'Reporting currency', format: 'text', valuation: true },
    { column: 'fees_paid_rc', header: 'Fees paid (reporting currency)', format: 'amount', coinColumn: 'reporting_currency', valuation: true },
    ...(periodFormat === 'date'
      ? ([
          { column: 'price', header: 'Price', format: 'price', valuation: true },
          { column: 'price_source', header: 'Price source', format: 'text', valuation: true },
        ] as const)
      : ([{ column: 'unpriced_days', header: 'Days without a price', format: 'integer', valuation: true }] as const)),
    // Fees by day prints below 70% one page wide with it: its rows' references (fees_daily/<account>/<product>/<coin>/<day>) are
    // in the mart and in explain's output; Fees by month shows its own.
    ...(periodFormat === 'month' ? ([{ column: 'reference', header: 'Reference (exledger explain)', format: 'id', width: 30 }] as const) : []),
  ] as const;

/** Fees paid per product (spot, futures, funding account) and coin, by month and by day. */
export const feesReport = defineReport({
  name: 'fees',
  title: 'Fees paid',
  streams: ['spot_fills', 'futures_fills', 'funding_bills'],
  sheets: [
    {
      name: 'Fees by month',
      description: 'Fees per product, coin and month, with the traded volume and the effective fee rate',
      mart: 'marts.fees_monthly',
      period: { column: 'fee_month', grain: 'month' },
      orderBy: ['coin', 'account', 'fee_month', 'product'],
      columns: feeColumns('fee_month', 'Month', 'month'),
    },
    {
      name: 'Fees by day',
      description: 'The same per day',
      mart: 'marts.fees_daily',
      period: { column: 'fee_date', grain: 'day' },
      orderBy: ['coin', 'account', 'fee_date', 'product'],
      columns: feeColumns('fee_date', 'Day', 'date'),
    },
    needsPriceSheet(['marts.fees_daily']),
  ],
  summary: [
    { label: 'Fees paid in the reporting currency', sheet: 'Fees by month', sum: 'fees_paid_rc', by: ['reporting_currency'], coinColumn: 'reporting_currency', unpriced: UNPRICED },
    { label: 'Fees paid', sheet: 'Fees by month', sum: 'fees_paid', by: ['product', 'coin'], coinColumn: 'coin' },
    {
      label: 'Traded volume (quote notional)',
      sheet: 'Fees by month',
      sum: 'traded_volume',
      by: ['product', 'coin'],
      coinColumn: 'coin',
      note: 'The value of the trades quoted in this coin (price × quantity), as the exchange counts volume: selling a coin for USDT is USDT volume; a coin only ever traded against another has no volume of its own (the Quantity sold of the pnl report\'s Spot PnL by month shows its units).',
    },
  ],
  chart: { title: 'Fees paid per month', mart: 'marts.fees_monthly', monthColumn: 'fee_month', valueColumn: 'fees_paid', seriesBy: ['coin'], coinColumn: 'coin' },
});
