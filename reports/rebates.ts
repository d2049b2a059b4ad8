import { defineReport } from '../src/export/report-definition.ts';

/** Affiliate commission received, and the invited users' activity. */
export const rebatesReport = defineReport({
  name: 'rebates',
  title: 'Affiliate rebates and referrals',
  streams: ['affiliate_commissions', 'affiliate_referrals'],
  sheets: [
    {
      name: 'Commission by month',
      description: 'Commission per month, coin, product type, source type (1 direct client, 2 sub-agent) and symbol',
      mart: 'marts.affiliate_rebates_monthly',
      period: { column: 'commission_month', grain: 'month' },
      orderBy: ['coin', 'account', 'commission_month', 'product_type', 'source_type', 'symbol'],
      columns: [
        { column: 'account', header: 'Account', format: 'text' },
        { column: 'commission_month', header: 'Month', format: 'month' },
        { column: 'coin', header: 'Coin', format: 'text' },
        { column: 'product_type', header: 'Product type', format: 'text' },
        { column: 'source_type', header: 'Source type', format: 'text' },
        { column: 'symbol', header: 'Symbol', format: 'text', width: 16 },
        { column: 'commission', header: 'Commission', format: 'amount', coinColumn: 'coin', total: true },
        { column: 'fee', header: 'Invited users fees', format: 'amount', coinColumn: 'coin', total: true },
        { column: 'taker_volume', header: 'Taker volume', format: 'amount', coinColumn: 'coin', total: true },
        { column: 'maker_volume', header: 'Maker volume', format: 'amount', coinColumn: 'coin', total: true },
        { column: 'record_count', header: 'Records', format: 'integer', total: true },
        { column: 'invited_user_count', header: 'Invited users', format: 'integer' },
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
      ],
    },
  ],
  summary: [
    { label: 'Commission', sheet: 'Commission by month', sum: 'commission', by: ['product_type', 'coin'], coinColumn: 'coin' },
    { label: 'Invited users active', sheet: 'Referrals by user', by: [] },
    { label: 'Referral commission (exchange units)', sheet: 'Referrals by user', sum: 'commission' },
    { label: 'Referral deposits (exchange units)', sheet: 'Referrals by user', sum: 'deposit_amount' },
  ],
  chart: { title: 'Commission per month', mart: 'marts.affiliate_rebates_monthly', monthColumn: 'commission_month', valueColumn: 'commission', seriesBy: ['coin'], coinColumn: 'coin' },
});
