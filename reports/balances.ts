import { defineReport } from '../src/export/report-definition.ts';

/**
 * Funding account roll-forward per coin and month, the chain of bills, and the reconciliation of
 * the bills with the spot assets snapshot (separate accounts: differences are shown, not failed).
 */
export const balancesReport = defineReport({
  name: 'balances',
  title: 'Balances and reconciliation',
  streams: ['funding_bills', 'spot_assets'],
  sheets: [
    {
      name: 'Roll-forward',
      description: 'Opening balance, inflows, outflows, fees and closing balance per coin and month; a difference means a break in the bills',
      mart: 'marts.balance_reconciliation',
      period: { column: 'balance_month', grain: 'month' },
      streams: ['funding_bills'],
      orderBy: ['coin_name', 'account', 'balance_month'],
      columns: [
        { column: 'account', header: 'Account', format: 'text' },
        { column: 'coin_name', header: 'Coin', format: 'text' },
        { column: 'balance_month', header: 'Month', format: 'month' },
        { column: 'opening_balance', header: 'Opening balance', format: 'amount', coinColumn: 'coin_name' },
        { column: 'total_inflow', header: 'Inflows', format: 'amount', coinColumn: 'coin_name', total: true },
        { column: 'total_outflow', header: 'Outflows', format: 'amount', coinColumn: 'coin_name', total: true },
        { column: 'fees', header: 'Fees (inside the flows)', format: 'amount', coinColumn: 'coin_name', total: true },
        { column: 'closing_balance', header: 'Closing balance', format: 'amount', coinColumn: 'coin_name' },
        { column: 'computed_closing', header: 'Opening + in - out', format: 'amount', coinColumn: 'coin_name' },
        { column: 'difference', header: 'Difference', format: 'amount', coinColumn: 'coin_name', total: true },
        { column: 'bill_count', header: 'Bills', format: 'integer', total: true },
        { column: 'chain_break_count', header: 'Chain breaks', format: 'integer', total: true },
        { column: 'reference', header: 'Reference (exledger explain)', format: 'id', width: 20 },
      ],
      highlight: { column: 'difference', when: 'nonzero' },
    },
    {
      name: 'Movements',
      description: 'Inflows and outflows per coin, month and business type',
      mart: 'marts.balance_movements',
      period: { column: 'balance_month', grain: 'month' },
      streams: ['funding_bills'],
      orderBy: ['coin_name', 'account', 'balance_month', 'biz_type'],
      columns: [
        { column: 'account', header: 'Account', format: 'text' },
        { column: 'coin_name', header: 'Coin', format: 'text' },
        { column: 'balance_month', header: 'Month', format: 'month' },
        { column: 'biz_type', header: 'Business type', format: 'text', width: 18 },
        { column: 'inflow', header: 'Inflow', format: 'amount', coinColumn: 'coin_name', total: true },
        { column: 'outflow', header: 'Outflow', format: 'amount', coinColumn: 'coin_name', total: true },
        { column: 'net_change', header: 'Net change', format: 'amount', coinColumn: 'coin_name', total: true },
        { column: 'fees', header: 'Fees', format: 'amount', coinColumn: 'coin_name', total: true },
        { column: 'bill_count', header: 'Bills', format: 'integer', total: true },
        { column: 'reference', header: 'Reference (exledger explain)', format: 'id', width: 30 },
      ],
    },
    {
      name: 'Chain breaks',
      description: 'Bills that do not continue their coin\'s chain (after - delta differs from the previous bill\'s after): each one is a missing or altered bill',
      mart: 'marts.balance_chain_breaks',
      period: { column: 'c_time_month', grain: 'month' },
      streams: ['funding_bills'],
      orderBy: ['coin_name', 'account', 'c_time_at', 'bill_id'],
      columns: [
        { column: 'account', header: 'Account', format: 'text' },
        { column: 'coin_name', header: 'Coin', format: 'text' },
        { column: 'c_time_at', header: 'Bill time (UTC)', format: 'datetime' },
        { column: 'bill_id', header: 'Bill', format: 'id' },
        { column: 'biz_type', header: 'Business type', format: 'text' },
        { column: 'delta_amount', header: 'Delta', format: 'amount', coinColumn: 'coin_name' },
        { column: 'after_amount', header: 'After', format: 'amount', coinColumn: 'coin_name' },
        { column: 'expected_before_amount', header: 'Expected before', format: 'amount', coinColumn: 'coin_name' },
        { column: 'found_before_amount', header: 'Found before', format: 'amount', coinColumn: 'coin_name' },
        { column: 'gap', header: 'Gap', format: 'amount', coinColumn: 'coin_name', total: true },
        { column: 'previous_bill_id', header: 'Previous bill', format: 'id' },
        { column: 'previous_c_time_at', header: 'Previous bill time (UTC)', format: 'datetime' },
        { column: 'reference', header: 'Reference (exledger explain)', format: 'id', width: 30 },
      ],
      highlight: { column: 'gap', when: 'always' },
      // A chain broken on every bill (a stream synced with gaps) breaks once per bill.
      rollUp: { by: ['account', 'coin_name', { column: 'c_time_month', header: 'Month', format: 'month' }, 'biz_type'], sum: ['gap'] },
    },
    {
      name: 'Bills vs assets',
      description:
        'Reconciliation of the funding bills\' balance with the spot assets snapshot nearest the end of the period (before or after it: its time is under the table), per coin, the bills taken up to the snapshot\'s time; separate accounts, so a highlighted difference is to explain, not an error',
      mart: 'marts.balance_vs_assets',
      period: { column: 'snapshot_at', grain: 'nearest' },
      // The bills' balance at the snapshot's time does not depend on the period's bills: only the snapshot does.
      streams: ['spot_assets'],
      orderBy: ['account', 'coin_name'],
      columns: [
        { column: 'account', header: 'Account', format: 'text' },
        { column: 'coin_name', header: 'Coin', format: 'text' },
        { column: 'found_in', header: 'Found in', format: 'text' },
        { column: 'snapshot_at', header: 'Snapshot (UTC)', format: 'datetime' },
        // NULL: a coin found in the assets only has no bills (Found in says so); the difference counts it as 0.
        { column: 'bill_balance', header: 'Balance from bills', format: 'amount', coinColumn: 'coin_name', nullMeans: 'not-applicable' },
        { column: 'bill_balance_at', header: 'Last bill before it (UTC)', format: 'datetime' },
        { column: 'bills_after_snapshot', header: 'Bills after it', format: 'integer' },
        { column: 'assets_equity', header: 'Assets snapshot', format: 'amount', coinColumn: 'coin_name' },
        { column: 'difference', header: 'Difference', format: 'amount', coinColumn: 'coin_name' },
        { column: 'reference', header: 'Reference (exledger explain)', format: 'id', width: 30 },
      ],
      highlight: { column: 'difference', when: 'nonzero' },
    },
  ],
  summary: [
    { label: 'Closing balance', sheet: 'Roll-forward', last: 'closing_balance', by: ['coin_name'], coinColumn: 'coin_name' },
    { label: 'Roll-forward differences', sheet: 'Roll-forward', sum: 'difference', by: ['coin_name'], coinColumn: 'coin_name' },
    { label: 'Chain breaks', sheet: 'Chain breaks', by: ['coin_name'] },
    { label: 'Coins whose bills differ from the assets (reconciliation)', sheet: 'Bills vs assets', where: 'is_different' },
  ],
  notes: [
    'Bills vs assets is a reconciliation, not a check: the funding bills and the spot assets snapshot are separate accounts in the exchange\'s data, so their balances may differ without anything being wrong. Its highlighted rows are the coins to explain; only Roll-forward differences and Chain breaks point to missing or altered bills.',
  ],
  chart: { title: 'Closing balance per month', mart: 'marts.balance_reconciliation', monthColumn: 'balance_month', valueColumn: 'closing_balance', seriesBy: ['account', 'coin_name'], coinColumn: 'coin_name' },
});
