/**
 * Where a mart row's figures come from: for each mart with a `reference` column (sql/macros/
 * references.sql), the queries `exledger explain <reference>` runs to list the row's source records
 * (docs/workbooks.md "From a figure to its sources"). Each query reads the mart row itself as `m`
 * (`WHERE m.reference = $1`, the only parameter: the reference is never written into SQL) and joins
 * the records it sums, so the comparisons are on typed columns, in the reporting zone as the mart's.
 * A query whose condition on `m` does not hold (a funding row has no fills) returns nothing.
 */

/** A figure of the mart row that its sources add up to, exactly. */
export interface SourceSum {
  /** The mart's column. */
  figure: string;
  /** The column of the source rows summed (DECIMAL), or `count` for the number of source rows. */
  column: string | 'count';
}

/** One kind of source record of a mart row. */
export interface SourceQuery {
  /** What the records are, as a person reads it ("spot fills whose fee is in the row's coin"). */
  title: string;
  /** Where the records are (a model id). */
  model: string;
  /**
   * SELECT … FROM marts.<mart> AS m JOIN … WHERE m.reference = $1 …, its rows in a stable order (no
   * ORDER BY: added). `FROM marts.<mart> AS m` is written so (explain narrows it to the row found).
   */
  sql: string;
  /** Order of the listed rows. */
  orderBy: string;
  /** The row's figures these records add up to. */
  sums: readonly SourceSum[];
  /**
   * Instants of the mart row (TIMESTAMPTZ columns) the query reads as constants,
   * `getvariable('explain_<column>')`, set by explain from the row found before the query runs:
   * a constant lets DuckDB skip the row groups of a large source outside it, which a join on the
   * row's own column does not (a fill of the 10M benchmark history: 8 ms against 0.6 s, warm).
   */
  instants?: readonly string[];
}

/** The reporting zone's day of an instant, as the marts take it (sql/macros/dates.sql). */
const day = (instant: string) => `local_date(${instant}, (SELECT time_zone FROM settings.reporting))`;
/** The same day's month. */
const month = (instant: string) => `CAST(date_trunc('month', ${day(instant)}) AS DATE)`;

/** The run of the sync whose snapshots a holdings_vs_exchange row `alias` compares (its instant is one of them). */
const syncRun = (alias: string) =>
  `SELECT _run_id FROM staging.spot_assets WHERE account = ${alias}.account AND snapshot_at = ${alias}.snapshot_at
   UNION SELECT _run_id FROM staging.futures_collateral WHERE account = ${alias}.account AND snapshot_at = ${alias}.snapshot_at`;

/** Spot fills of the row's account, their day the row's period (a fill's day: int_spot_trades.event_date). */
function spotFills(mart: string, periodMatch: string, coinMatch: string, title: string, sums: readonly SourceSum[]): SourceQuery {
  return {
    title,
    model: 'staging.spot_fills',
    sql: `SELECT f.fill_id, f.symbol, f.side, f.c_time_at, t.event_date AS day, f.fill_quantity, f.fill_price, f.fill_total_amount,
            exact_decimal_18(t.fee_e18) AS fee, CASE f.side WHEN 'buy' THEN f.base_coin ELSE f.quote_coin END AS fee_coin, f.order_id
          FROM ${mart} AS m
          JOIN intermediate.int_spot_trades AS t ON t.account = m.account AND t.lot_source = 'fill' AND ${periodMatch} AND ${coinMatch}
          JOIN staging.spot_fills AS f ON f.account = t.account AND f.symbol = t.symbol AND f.fill_id = t.fill_id
          WHERE m.reference = $1`,
    orderBy: 'c_time_at, fill_id',
    sums,
  };
}

/** Futures fills of the row's account, day or month and margin coin (and contract, where the row has one). */
function futuresFills(mart: string, periodColumn: string, monthly: boolean, byContract: boolean, sums: readonly SourceSum[]): SourceQuery {
  return {
    title: byContract ? 'futures fills of the contract' : 'futures fills whose fees are in the row\'s coin',
    model: 'staging.futures_fills',
    sql: `SELECT f.trade_id, f.symbol, f.order_side, f.position_side, f.created_time_at, f.fill_size, f.fill_value, f.realize_pnl, f.fill_fee, f.liquidate_fee,
            f.fill_fee + coalesce(f.liquidate_fee, 0) AS fee, d.margin_coin
          FROM ${mart} AS m
          JOIN intermediate.int_futures_fill_days AS d ON d.account = m.account AND d.margin_coin = m.${byContract ? 'margin_coin' : 'coin'}
            AND ${monthly ? `d.fill_month = m.${periodColumn}` : `d.fill_date = m.${periodColumn}`}${byContract ? ' AND d.symbol = m.symbol' : ''}
          JOIN staging.futures_fills AS f ON f.account = d.account AND f.symbol = d.symbol AND ${day('f.created_time_at')} = d.fill_date
          WHERE m.reference = $1${byContract ? ' AND m.symbol IS NOT NULL' : " AND m.product = 'futures'"}`,
    orderBy: 'created_time_at, trade_id',
    sums,
  };
}

/** Funding-account bills of the row's account and coin (intermediate.int_ledger_events: the bills in chain order, their month in the reporting zone). */
function bills(mart: string, match: string, title: string, sums: readonly SourceSum[]): SourceQuery {
  return {
    title,
    model: 'staging.funding_bills',
    sql: `SELECT e.bill_id, e.biz_type, e.c_time_at, e.delta_amount, e.fees, e.before_amount, e.after_amount, e.inflow, e.outflow, e.coin_name
          FROM ${mart} AS m JOIN intermediate.int_ledger_events AS e ON e.account = m.account AND ${match}
          WHERE m.reference = $1`,
    orderBy: 'c_time_at, bill_id',
    sums,
  };
}

function fees(period: 'fee_date' | 'fee_month'): SourceQuery[] {
  const mart = `marts.${period === 'fee_date' ? 'fees_daily' : 'fees_monthly'}`;
  const monthly = period === 'fee_month';
  const feeSums: SourceSum[] = [{ figure: 'fees_paid', column: 'fee' }, { figure: 'fee_count', column: 'count' }];
  return [
    // A spot fee is in the coin received: the base coin on buys, the quote coin on sells (int_fees_legs).
    spotFills(
      mart,
      monthly ? `date_trunc('month', t.event_date) = m.fee_month` : 't.event_date = m.fee_date',
      "m.product = 'spot' AND ((t.side = 'buy' AND t.base_coin = m.coin) OR (t.side = 'sell' AND t.quote_coin = m.coin))",
      'spot fills whose fee is in the row\'s coin',
      feeSums,
    ),
    futuresFills(mart, period, monthly, false, [
      { figure: 'fees_paid', column: 'fee' },
      { figure: 'liquidation_fees', column: 'liquidate_fee' },
    ]),
    // Bills of biz type buy and sell are the spot fills' own legs: their fees are the fills' (int_fees_legs).
    bills(
      mart,
      `e.coin_name = m.coin AND ${monthly ? 'e.c_time_month = m.fee_month' : `${day('e.c_time_at')} = m.fee_date`} AND m.product = 'funding' AND e.fees <> 0 AND e.biz_type NOT IN ('buy', 'sell')`,
      'funding-account bills with a fee',
      [{ figure: 'fees_paid', column: 'fees' }, { figure: 'fee_count', column: 'count' }],
    ),
  ];
}

function futures(period: 'pnl_date' | 'pnl_month'): SourceQuery[] {
  const mart = `marts.${period === 'pnl_date' ? 'futures_pnl_daily' : 'futures_pnl_monthly'}`;
  const monthly = period === 'pnl_month';
  return [
    futuresFills(mart, period, monthly, true, [
      { figure: 'realized_pnl', column: 'realize_pnl' },
      { figure: 'trading_fees', column: 'fill_fee' },
      { figure: 'liquidation_fees', column: 'liquidate_fee' },
      { figure: 'volume', column: 'fill_value' },
      { figure: 'fill_count', column: 'count' },
    ]),
    {
      title: 'collateral snapshots the funding is measured between (its running total\'s change)',
      model: 'intermediate.int_futures_funding_changes',
      sql: `SELECT c.previous_snapshot_at, c.snapshot_at, c.margin_mode, c.previous_cum_position_funding_amount, c.cum_position_funding_amount, c.funding, c.margin_coin
            FROM ${mart} AS m JOIN intermediate.int_futures_funding_changes AS c
              ON c.account = m.account AND c.margin_coin = m.margin_coin AND ${monthly ? 'c.snapshot_month = m.pnl_month' : 'c.snapshot_date = m.pnl_date'}
            WHERE m.reference = $1 AND m.symbol IS NULL`,
      orderBy: 'snapshot_at, margin_mode',
      sums: [{ figure: 'funding', column: 'funding' }],
    },
  ];
}

function spotPnl(period: 'trade_date' | 'trade_month'): SourceQuery[] {
  const mart = `marts.${period === 'trade_date' ? 'spot_realized_pnl_daily' : 'spot_realized_pnl_monthly'}`;
  const monthly = period === 'trade_month';
  return [
    spotFills(mart, monthly ? 'date_trunc(\'month\', t.event_date) = m.trade_month' : 't.event_date = m.trade_date', 't.symbol = m.symbol', 'spot fills of the symbol', []),
    {
      // The lots each sell took, by the row's cost method (average has no lots: its cost is the pool's average).
      title: 'lots consumed by the sells (exledger explain <lot match> for each)',
      model: 'marts.spot_lot_matches',
      sql: `SELECT l.reference, l.sell_fill_id, l.sell_at, l.match_rule, l.lot_source, l.lot_account, l.buy_fill_id, l.buy_at, l.quantity, l.cost,
              CASE WHEN l.lot_source <> 'unmatched' THEN l.proceeds END AS proceeds, l.realized_pnl,
              CASE WHEN l.lot_source <> 'unmatched' THEN l.quantity END AS matched_quantity,
              CASE WHEN l.lot_source = 'unmatched' THEN l.quantity END AS unmatched_quantity,
              CASE WHEN l.lot_source = 'unmatched' THEN l.proceeds END AS unmatched_proceeds
            FROM ${mart} AS m JOIN marts.spot_lot_matches AS l
              ON l.account = m.account AND l.cost_method = m.cost_method AND l.symbol = m.symbol AND ${monthly ? 'l.sell_month = m.trade_month' : 'l.sell_date = m.trade_date'}
            WHERE m.reference = $1`,
      orderBy: 'sell_at, sell_fill_id, buy_at, buy_fill_id',
      sums: [
        { figure: 'cost', column: 'cost' },
        { figure: 'proceeds', column: 'proceeds' },
        { figure: 'realized_pnl', column: 'realized_pnl' },
        { figure: 'quantity_sold', column: 'matched_quantity' },
        { figure: 'unmatched_quantity', column: 'unmatched_quantity' },
        { figure: 'unmatched_proceeds', column: 'unmatched_proceeds' },
      ],
    },
  ];
}

/**
 * The sources of each mart's rows, by mart name. A mart with a reference column and no entry here
 * fails test/mart-references.test.ts; the journal (entry_id) and the roll-forward have their own
 * explanations (src/jobs/explain-job.ts).
 */
export const MART_SOURCES: Readonly<Record<string, readonly SourceQuery[]>> = {
  fees_daily: fees('fee_date'),
  fees_monthly: fees('fee_month'),
  futures_pnl_daily: futures('pnl_date'),
  futures_pnl_monthly: futures('pnl_month'),
  spot_realized_pnl_daily: spotPnl('trade_date'),
  spot_realized_pnl_monthly: spotPnl('trade_month'),
  spot_lot_matches: [
    {
      title: 'the sell fill and the buy fill whose lot it took',
      model: 'staging.spot_fills',
      // Each fill by its own equality join and its instant (the row's sell_at and buy_at are the
      // fills' c_time_at, through int_spot_trades), also as a constant: DuckDB then reads only
      // the row groups of staging.spot_fills that can hold it, where a join on an OR of the two
      // fills read every fill (a lot match of the 10M benchmark history: 1.7 s, warm).
      sql: `SELECT 'sell' AS role, f.account, f.fill_id, f.side, f.c_time_at, f.fill_quantity, f.fill_price, f.fill_total_amount, f.fees, f.order_id
            FROM marts.spot_lot_matches AS m JOIN staging.spot_fills AS f
              ON f.symbol = m.symbol AND f.account = m.account AND f.fill_id = m.sell_fill_id AND f.c_time_at = m.sell_at
            WHERE m.reference = $1 AND f.c_time_at = getvariable('explain_sell_at')
            UNION ALL
            SELECT 'lot', f.account, f.fill_id, f.side, f.c_time_at, f.fill_quantity, f.fill_price, f.fill_total_amount, f.fees, f.order_id
            FROM marts.spot_lot_matches AS m JOIN staging.spot_fills AS f
              ON f.symbol = m.symbol AND f.account = m.lot_account AND f.fill_id = m.buy_fill_id AND f.c_time_at = m.buy_at
            WHERE m.reference = $1 AND f.c_time_at = getvariable('explain_buy_at')`,
      instants: ['sell_at', 'buy_at'],
      orderBy: 'c_time_at, fill_id',
      sums: [],
    },
  ],
  affiliate_rebates_monthly: [
    {
      title: 'commission records',
      model: 'staging.affiliate_commissions',
      sql: `SELECT c.record_key, c.uid, c.deal_time_at, c.commission, c.fee, c.rate, c.taker_amount, c.maker_amount, c.coin
            FROM marts.affiliate_rebates_monthly AS m JOIN staging.affiliate_commissions AS c
              ON c.account = m.account AND c.coin IS NOT DISTINCT FROM m.coin AND c.product_type IS NOT DISTINCT FROM m.product_type
              AND c.source_type IS NOT DISTINCT FROM m.source_type AND c.symbol IS NOT DISTINCT FROM m.symbol AND ${month('c.deal_time_at')} = m.commission_month
            WHERE m.reference = $1`,
      orderBy: 'deal_time_at, record_key',
      sums: [
        { figure: 'commission', column: 'commission' },
        { figure: 'fee', column: 'fee' },
        { figure: 'record_count', column: 'count' },
      ],
    },
  ],
  affiliate_referrals_monthly: [
    {
      title: 'the invited user\'s days (UTC)',
      model: 'staging.affiliate_referrals',
      sql: `SELECT r.activity_date, r.deposit_amount, r.withdrawal_amount, r.spot_trading_amount, r.futures_trading_amount, r.commission
            FROM marts.affiliate_referrals_monthly AS m JOIN staging.affiliate_referrals AS r
              ON r.account = m.account AND r.uid = m.uid AND date_trunc('month', r.activity_date) = m.activity_month
            WHERE m.reference = $1`,
      orderBy: 'activity_date',
      sums: [
        { figure: 'deposit_amount', column: 'deposit_amount' },
        { figure: 'withdrawal_amount', column: 'withdrawal_amount' },
        { figure: 'commission', column: 'commission' },
        { figure: 'active_days', column: 'count' },
      ],
    },
  ],
  balance_movements: [
    bills('marts.balance_movements', 'e.coin_name = m.coin_name AND e.c_time_month = m.balance_month AND e.biz_type IS NOT DISTINCT FROM m.biz_type', 'bills of the business type', [
      { figure: 'inflow', column: 'inflow' },
      { figure: 'outflow', column: 'outflow' },
      { figure: 'net_change', column: 'delta_amount' },
      { figure: 'fees', column: 'fees' },
      { figure: 'bill_count', column: 'count' },
    ]),
  ],
  balance_reconciliation: [
    bills('marts.balance_reconciliation', 'e.coin_name = m.coin_name AND e.c_time_month = m.balance_month', 'bills of the month', [
      { figure: 'total_inflow', column: 'inflow' },
      { figure: 'total_outflow', column: 'outflow' },
      { figure: 'fees', column: 'fees' },
      { figure: 'bill_count', column: 'count' },
    ]),
  ],
  balance_chain_breaks: [
    bills('marts.balance_chain_breaks', 'e.coin_name = m.coin_name AND e.bill_id IN (m.bill_id, m.previous_bill_id)', 'the bill and the previous bill of its coin', []),
  ],
  balance_vs_assets: [
    {
      title: 'the spot assets snapshot\'s coin',
      model: 'staging.spot_assets',
      sql: `SELECT a.snapshot_at, a.coin_name, a.available, a.frozen, a.equity
            FROM marts.balance_vs_assets AS m JOIN staging.spot_assets AS a ON a.account = m.account AND a.coin_name = m.coin_name AND a.snapshot_at = m.snapshot_at
            WHERE m.reference = $1`,
      orderBy: 'snapshot_at',
      sums: [{ figure: 'assets_equity', column: 'equity' }],
    },
    bills('marts.balance_vs_assets', 'e.coin_name = m.coin_name AND e.bill_id = m.bill_balance_bill_id', 'the last bill at or before the snapshot (bill_balance: its balance after)', []),
  ],
  futures_positions_valued: [
    {
      title: 'futures fills of the contract and side up to the month end (size and open value they add or take off)',
      model: 'staging.futures_fills',
      // As the mart rebuilds the position: an opening fill adds its size and value; a closing one takes off its size and the open value it closed.
      sql: `SELECT f.trade_id, f.created_time_at, f.order_side, f.fill_size, f.fill_value, f.realize_pnl,
              CASE WHEN m.size IS NULL THEN NULL WHEN (f.position_side = 'LONG') = (f.order_side = 'BUY') THEN f.fill_size ELSE -f.fill_size END AS size_change,
              CASE WHEN m.size IS NULL THEN NULL
                WHEN (f.position_side = 'LONG') = (f.order_side = 'BUY') THEN CAST(f.fill_value AS DECIMAL(38, 12))
                WHEN f.position_side = 'LONG' THEN -(CAST(f.fill_value AS DECIMAL(38, 12)) - CAST(f.realize_pnl AS DECIMAL(38, 12)))
                ELSE -(CAST(f.fill_value AS DECIMAL(38, 12)) + CAST(f.realize_pnl AS DECIMAL(38, 12))) END AS value_change
            FROM marts.futures_positions_valued AS m
            JOIN staging.futures_fills AS f ON f.account = m.account AND f.symbol = m.symbol AND f.position_side = m.position_side
              AND ${day('f.created_time_at')} <= m.mark_date
            WHERE m.reference = $1`,
      orderBy: 'created_time_at, trade_id',
      sums: [
        { figure: 'size', column: 'size_change' },
        { figure: 'open_value', column: 'value_change' },
      ],
    },
  ],
  holdings_vs_exchange: [
    {
      title: 'the spot assets snapshot\'s coin',
      model: 'staging.spot_assets',
      sql: `SELECT a.snapshot_at, a.coin_name, a.available, a.frozen, coalesce(a.equity, a.available + a.frozen) AS equity
            FROM marts.holdings_vs_exchange AS m
            JOIN staging.spot_assets AS a ON a.account = m.account AND a.coin_name = m.coin
              AND a._run_id IN (${syncRun('m')})
            WHERE m.reference = $1`,
      orderBy: 'snapshot_at',
      sums: [{ figure: 'spot_quantity', column: 'equity' }],
    },
    {
      title: 'the futures collateral in the coin',
      model: 'staging.futures_collateral',
      sql: `SELECT c.snapshot_at, c.coin_id, c.margin_mode, c.amount
            FROM marts.holdings_vs_exchange AS m
            JOIN staging.futures_collateral AS c ON c.account = m.account AND c._run_id IN (${syncRun('m')})
            LEFT JOIN (SELECT coin_id, arg_max(coin_name, snapshot_at) AS coin_name FROM staging.currencies GROUP BY coin_id) AS n ON n.coin_id = c.coin_id
            WHERE m.reference = $1 AND coalesce(n.coin_name, 'coin_id ' || c.coin_id) = m.coin`,
      orderBy: 'snapshot_at, margin_mode',
      sums: [{ figure: 'futures_quantity', column: 'amount' }],
    },
    {
      title: 'the movements of the coin up to the instant (the books; the futures fills of its own day are counted from the fills)',
      model: 'intermediate.int_coin_events',
      sql: `SELECT e.entry_ref, e.event_at, e.kind, e.direction, exact_qty(e.units_e18) AS units
            FROM marts.holdings_vs_exchange AS m
            JOIN intermediate.int_coin_events AS e ON e.account = m.account AND e.coin = m.coin
              AND coalesce(e.event_at, TIMESTAMPTZ '1970-01-01 00:00:00+00') <= m.snapshot_at
            WHERE m.reference = $1`,
      orderBy: 'event_at NULLS FIRST, entry_ref',
      sums: [],
    },
  ],
  needs_price: [
    {
      title: 'rows of the mart on the day, with an amount and no price',
      model: 'the mart named by the row',
      sql: `SELECT s.reference, s.figure, s.coin FROM marts.needs_price AS m JOIN (
              SELECT 'marts.spot_realized_pnl_daily' AS mart, account, quote_coin AS coin, trade_date AS day, reference, realized_pnl AS figure
              FROM marts.spot_realized_pnl_daily WHERE reporting_currency IS NOT NULL AND realized_pnl_rc IS NULL AND realized_pnl IS NOT NULL
              UNION ALL
              SELECT 'marts.fees_daily', account, coin, fee_date, reference, fees_paid
              FROM marts.fees_daily WHERE reporting_currency IS NOT NULL AND coin IS DISTINCT FROM reporting_currency AND price IS NULL AND coalesce(fees_paid, 0) <> 0
              UNION ALL
              SELECT 'marts.futures_pnl_daily', account, margin_coin, pnl_date, reference, net_result
              FROM marts.futures_pnl_daily WHERE reporting_currency IS NOT NULL AND price IS NULL AND coalesce(net_result, 0) <> 0
              UNION ALL
              SELECT 'marts.affiliate_rebates_monthly', account, coin, ${day('deal_time_at')}, 'commission record ' || record_key, commission
              FROM staging.affiliate_commissions WHERE coalesce(commission, 0) <> 0
                AND coin IS DISTINCT FROM (SELECT reporting_currency FROM settings.reporting) AND (SELECT reporting_currency FROM settings.reporting) IS NOT NULL
                AND NOT EXISTS (SELECT 1 FROM intermediate.int_prices AS p WHERE p.coin = affiliate_commissions.coin AND p.price_date = ${day('deal_time_at')})
              UNION ALL
              SELECT 'marts.journal_entries', account, value_coin, event_date, entry_ref, NULL
              FROM intermediate.int_coin_events WHERE value_basis IN ('market', 'declared') AND value_e12 IS NULL
              UNION ALL
              SELECT 'marts.futures_positions_valued', account, CASE WHEN mark_price IS NULL THEN 'contract:' || symbol ELSE margin_coin END, mark_date, reference, size
              FROM marts.futures_positions_valued WHERE valuation = 'fair_value' AND fair_value IS NULL AND size IS NOT NULL AND margin_coin = quote_coin
              UNION ALL
              SELECT 'marts.holdings_rollforward', account, coin, price_date, reference, closing_quantity
              FROM marts.holdings_rollforward WHERE valuation = 'fair_value' AND price IS NULL AND closing_quantity <> 0
                AND cost_method = (SELECT any_value(cost_method) FROM settings.journal)
            ) AS s ON s.mart = m.mart AND s.account = m.account AND s.coin IS NOT DISTINCT FROM m.coin AND s.day = m.needed_date
            WHERE m.reference = $1`,
      orderBy: 'reference',
      sums: [{ figure: 'row_count', column: 'count' }],
    },
  ],
};
