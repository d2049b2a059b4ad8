import { defineReport } from '../src/export/report-definition.ts';

/** Affiliate commission received, and the invited users' activity. */
export const rebatesReport = defineReport({
  name: 'rebates',
  title: 'Affiliate rebates and referrals',
  streams: ['affiliate_commissions', 'affiliate_referrals'],
  sheets: [
    {
      name: 'Commission by month',
      description: 'Commission per month, coin, product type, source type (who traded: a direct client or a sub-agent) and symbol',
      mart: 'marts.affiliate_rebates_monthly',
      period: { column: 'commission_month', grain: 'month' },
      orderBy: ['coin', 'account', 'commission_month', 'product_type', 'source_type', 'symbol'],
      columns: [
        { column: 'account', header: 'Account', format: 'text' },
        { column: 'commission_month', header: 'Month', format: 'month' },
        { column: 'coin', header: 'Coin', format: 'text' },
        { column: 'product_type', header: 'Product type', format: 'text' },
        // The exchange's code in words (1 direct client, 2 sub-agent).
        { column: 'source_type_name', header: 'Source type', format: 'text' },
        { column: 'symbol', header: 'Symbol', format: 'text', width: 16 },
        { column: 'commission', header: 'Commission', format: 'amount', coinColumn: 'coin', total: true },
        { column: 'fee', header: 'Invited users fees', format: 'amount', coinColumn: 'coin', total: true },
        { column: 'taker_volume', header: 'Taker volume', format: 'amount', coinColumn: 'coin', total: true },
        { column: 'maker_volume', header: 'Maker volume', format: 'amount', coinColumn: 'coin', total: true },
        { column: 'record_count', header: 'Records', format: 'integer', total: true },
        { column: 'invited_user_count', header: 'Invited users', format: 'integer' },
        { column: 'reference', header: 'Reference (exledger explain)', format: 'id', width: 30 },
      ],
    },
    {
      name: 'Referrals by user',
      description: 'Per invited user and month (UTC days): deposits, withdrawals, spot and futures volume, commission, in the units the exchange reports',
      mart: 'marts.affiliate_referrals_monthly',
      period: { column: 'activity_month', grain: 'month' },
      orderBy: ['account', 'activity_month', 'uid'],
      columns: [
        { column: 'account', header: 'Account', format: 'text' },
        { column: 'uid', header: 'Invited user', format: 'id' },
        { column: 'activity_month', header: 'Month', format: 'month' },
        { column: 'deposit_amount', header: 'Deposits', format: 'amount', total: true },
        { column: 'withdrawal_amount', header: 'Withdrawals', format: 'amount', total: true },
        { column: 'spot_volume', header: 'Spot volume', format: 'amount', total: true },
        { column: 'futures_volume', header: 'Futures volume', format: 'amount', total: true },
        { column: 'commission', header: 'Commission', format: 'amount', total: true },
        { column: 'active_days', header: 'Active days', format: 'integer' },
        { column: 'reference', header: 'Reference (exledger explain)', format: 'id', width: 30 },
      ],
      // A line per invited user: per account and month for a very large network (Detail rows: the invited users).
      rollUp: { by: ['account', 'activity_month'], sum: ['deposit_amount', 'withdrawal_amount', 'spot_volume', 'futures_volume', 'commission'] },
    },
  ],
  summary: [
    {
      label: 'Commission (records)',
      sheet: 'Commission by month',
      sum: 'commission',
      by: ['product_type', 'coin'],
      coinColumn: 'coin',
      note: 'The commission paid: the sum of the commission records, each in its coin, placed by its deal time in the reporting time zone. The figure to book.',
    },
    { label: 'Invited users active', sheet: 'Referrals by user', by: [], note: 'Invited users with referral statistics in the period (UTC days).' },
    {
      label: 'Commission (referral statistics)',
      sheet: 'Referrals by user',
      sum: 'commission',
      note: 'The exchange\'s own totals per invited user and UTC day, with no coin named (USDT-paid commission only, in the sandbox). Not expected to equal the records: see the notes.',
    },
    { label: 'Deposits (referral statistics)', sheet: 'Referrals by user', sum: 'deposit_amount', note: 'Invited users\' deposits per UTC day, in the unit the exchange reports (not stated).' },
  ],
  notes: [
    'Commission (records) and Commission (referral statistics) measure different things and are not expected to be equal. The records (getAffiliateCommission) are the commission paid, one record per trade, in the coin paid, placed by deal time in the reporting time zone: the figure to book. The referral statistics (getChannelUserTradeAndAsset) are the exchange\'s summary per invited user and UTC day, one commission figure without a coin. They differ by date basis (UTC days against the reporting time zone\'s months: records near midnight UTC at the edge of the period fall on different sides), by coin (commission paid in BTC is in the records, not in the statistics\' figure), and by records the statistics do not count (identical twin records, records on the first or last millisecond of a month: both seen in the sandbox). A difference is for information, not an error.',
  ],
  chart: { title: 'Commission per month', mart: 'marts.affiliate_rebates_monthly', monthColumn: 'commission_month', valueColumn: 'commission', seriesBy: ['coin'], coinColumn: 'coin' },
});
