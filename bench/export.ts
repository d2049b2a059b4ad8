/**
 * Benchmark of `exledger report`: the pnl workbook of one month whose FIFO lot detail holds
 * 1,000,000 rows, run as a child process so its wall time and peak memory are those of the real
 * command, twice: as configured by default (past reports.detailRowLimit, 100,000, the sheet is
 * rolled up and its full detail written beside the workbook as Parquet and CSV: issue 28), and
 * with the limit at its largest, 1,047,575 (the whole sheet in the workbook, as before the
 * roll-up). Target (issue 5): under 60 s and under 1 GB of peak RSS.
 *
 *   npm run bench -- export
 *
 * The database is generated once by DuckDB itself and cached under data/bench/ (generation is not
 * measured): the marts the pnl report reads, with the column names and types of the real ones
 * (test/bench-export-data.test.ts compares them with a real build), settings.reporting, and the
 * raw and meta tables the Summary's stream freshness reads. Each run reads a fresh copy.
 *
 * What the lot detail holds, on purpose: every row sold in the same month (2025-06, UTC), so a
 * one-month report puts all of them in one sheet; sells of 1 to several lots (a new sell starts
 * on 60% of rows); two accounts; the symbol shares of bench/build-data.ts (85% BTCUSDT_SPBL,
 * ETHBTC_SPBL with 18-decimal quantities, SHIBUSDT_SPBL with quantities up to 5e9); 18-digit
 * snowflake-like fill ids that grow with time; 0.2% opening lots and 3% unmatched parts (no buy,
 * no cost, no PnL: nulls, as the mart has them); rows stored in a hashed order, so the report's
 * ORDER BY sorts for real, as after the mart's joins.
 *
 * Prints a row per run: detail rows (as the command reports them), what the workbook holds (its
 * table's ref and the sheet's <row> elements, counted while unzip streams them; rolled up: its
 * lines, and the rows of the Parquet and CSV files beside it), wall s, the command's own s, its
 * CPU s (user + system: less sensitive to other processes than wall time), peak RSS, the size of
 * the workbook (and of its files), load average at start, target, met.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { STREAMS } from '../pipelines/index.ts';
import { ensureRawTables } from '../src/extract/sync.ts';
import { Database } from '../src/store/database.ts';
import { DEFAULT_MODEL_SETTINGS, recordModelBuild, writeSettings } from '../src/models/settings.ts';
import { BENCH_DATA_DIR, copyBuildData } from './build-data.ts';
import { cachedDatabase } from './cached-database.ts';
import { measureCommand, type MeasuredRun } from './measure-command.ts';
import { MAX_DETAIL_ROW_LIMIT } from '../src/export/roll-up.ts';

/** What the export benchmark's database holds. */
export interface ExportDataSpec {
  /** Rows of marts.spot_lot_matches, all sold in `month`. */
  lotRows: number;
  /** The month every lot row is sold in, YYYY-MM (the reporting zone is UTC). */
  month: string;
  /** @default 1 */
  seed?: number;
}

/** One measured export. */
export interface ExportScenario {
  name: string;
  spec: ExportDataSpec;
  targetSeconds: number;
  targetPeakBytes: number;
  /** The command is stopped after this many seconds (a run that never ends still gets a row). */
  timeoutSeconds: number;
  /** reports.detailRowLimit of the run. @default the configuration's default */
  detailRowLimit?: number;
}

const MB = 1024 ** 2;
const GB = 1024 ** 3;
const SCENARIO: ExportScenario = { name: 'export-1m', spec: { lotRows: 1_000_000, month: '2025-06' }, targetSeconds: 60, targetPeakBytes: 1 * GB, timeoutSeconds: 600 };
/** The same with every row in the sheet, as before the roll-up: the limit at its largest. */
const FULL_SCENARIO: ExportScenario = { ...SCENARIO, name: 'export-1m-full', detailRowLimit: MAX_DETAIL_ROW_LIMIT };
/** The detail sheet the rows land in (reports/pnl.ts). */
const DETAIL_SHEET = 'Spot lot detail';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ACCOUNTS = ['main', 'sub'] as const;
const RUN_ID = 'bench-export';

/**
 * Spot pairs (as in bench/build-data.ts): price and quantity decimals, the price's centre and
 * swing in ticks, the quantity range in units, and the share of sells per mille.
 */
const SPOT = [
  { symbol: 'BTCUSDT_SPBL', base: 'BTC', quote: 'USDT', pd: 2, qd: 6, center: 8_000_000, swing: 2_000_000, qMin: 1_000, qMax: 200_000, share: 850 },
  { symbol: 'ETHUSDT_SPBL', base: 'ETH', quote: 'USDT', pd: 2, qd: 4, center: 300_000, swing: 80_000, qMin: 10, qMax: 50_000, share: 50 },
  { symbol: 'SOLUSDT_SPBL', base: 'SOL', quote: 'USDT', pd: 2, qd: 3, center: 15_000, swing: 5_000, qMin: 100, qMax: 500_000, share: 30 },
  { symbol: 'SHIBUSDT_SPBL', base: 'SHIB', quote: 'USDT', pd: 8, qd: 0, center: 2_000, swing: 800, qMin: 1_000_000, qMax: 5_000_000_000, share: 30 },
  { symbol: 'ETHBTC_SPBL', base: 'ETH', quote: 'BTC', pd: 5, qd: 18, center: 3_500, swing: 800, qMin: 1e15, qMax: 5e17, share: 40 },
] as const;
const FUTURES = ['cmt_btcusdt', 'cmt_ethusdt', 'cmt_solusdt'] as const;

/** The marts as `exledger build` makes them (sql/marts/*.sql): names and types, in order. */
export const EXPORT_MART_COLUMNS: Readonly<Record<string, string>> = {
  spot_lot_matches: `account VARCHAR, cost_method VARCHAR, symbol VARCHAR, base_coin VARCHAR, quote_coin VARCHAR, sell_fill_id VARCHAR, sell_at TIMESTAMPTZ, sell_date DATE, sell_month DATE,
    lot_source VARCHAR, match_rule VARCHAR, lot_account VARCHAR, buy_fill_id VARCHAR, buy_at TIMESTAMPTZ, quantity DECIMAL(38, 18), cost DECIMAL(38, 12), proceeds DECIMAL(38, 12), realized_pnl DECIMAL(38, 12)`,
  spot_realized_pnl_monthly: `account VARCHAR, cost_method VARCHAR, symbol VARCHAR, trade_month DATE, base_coin VARCHAR, quote_coin VARCHAR,
    opening_quantity DECIMAL(38, 18), opening_cost DECIMAL(38, 12), quantity_bought DECIMAL(38, 18), cost_bought DECIMAL(38, 12), quantity_sold DECIMAL(38, 18),
    proceeds DECIMAL(38, 12), cost DECIMAL(38, 12), realized_pnl DECIMAL(38, 12), unmatched_quantity DECIMAL(38, 18), unmatched_proceeds DECIMAL(38, 12),
    open_quantity DECIMAL(38, 18), open_cost DECIMAL(38, 12)`,
  futures_pnl_monthly: `account VARCHAR, margin_coin VARCHAR, symbol VARCHAR, pnl_month DATE, fill_count BIGINT, volume DECIMAL(38, 12), realized_pnl DECIMAL(38, 18),
    trading_fees DECIMAL(38, 18), liquidation_fees DECIMAL(38, 18), funding DECIMAL(38, 18), net_result DECIMAL(38, 18), funding_from_at TIMESTAMPTZ, funding_to_at TIMESTAMPTZ`,
  // Empty: the benchmark has no reporting currency, so nothing needs a price.
  needs_price: 'account VARCHAR, coin VARCHAR, needed_date DATE, needed_month DATE, mart VARCHAR, row_count BIGINT, reporting_currency VARCHAR',
};

/**
 * The reporting-currency columns the marts end with, added once the rows are in (the inserts
 * above them are positional): NULL, as a build without models.reportingCurrency leaves them, and
 * no unpriced days.
 */
const VALUATION_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  spot_realized_pnl_monthly: ['reporting_currency VARCHAR', 'realized_pnl_rc DECIMAL(38, 12)', 'unpriced_days BIGINT DEFAULT 0'],
  futures_pnl_monthly: [
    'reporting_currency VARCHAR',
    'realized_pnl_rc DECIMAL(38, 12)',
    'trading_fees_rc DECIMAL(38, 12)',
    'liquidation_fees_rc DECIMAL(38, 12)',
    'funding_rc DECIMAL(38, 12)',
    'net_result_rc DECIMAL(38, 12)',
    'unpriced_days BIGINT DEFAULT 0',
  ],
};

/** A key value in a mart row's reference, as sql/macros/references.sql's ref_part writes it (the benchmark's database has no macros). */
const part = (value: string) => `replace(replace(coalesce(cast(${value} as varchar), ''), '%', '%25'), '/', '%2F')`;

/** Each mart's reference (its last column, as a build makes it): `<mart>/<key values>`. */
const REFERENCES: Readonly<Record<string, string>> = {
  spot_lot_matches: `'spot_lot_matches/' || concat_ws('/', ${['account', 'cost_method', 'symbol', 'sell_fill_id', "case match_rule when 'unmatched' then 'unmatched' when 'pool' then 'pool' else lot_source end", 'lot_account', 'buy_fill_id'].map(part).join(', ')})`,
  spot_realized_pnl_monthly: `'spot_realized_pnl_monthly/' || concat_ws('/', ${['account', 'cost_method', 'symbol', "strftime(trade_month, '%Y-%m')"].map(part).join(', ')})`,
  futures_pnl_monthly: `'futures_pnl_monthly/' || concat_ws('/', ${['account', 'margin_coin', 'symbol', "strftime(pnl_month, '%Y-%m')"].map(part).join(', ')})`,
  needs_price: `'needs_price/' || concat_ws('/', ${['account', 'coin', 'needed_date', 'mart'].map(part).join(', ')})`,
};

/** The first day of `month` (YYYY-MM) and of the month after, as epoch ms (UTC). */
function monthSpan(month: string): { startMs: number; endMs: number } {
  const [year, number] = month.split('-').map(Number) as [number, number];
  return { startMs: Date.UTC(year, number - 1, 1), endMs: Date.UTC(year, number, 1) };
}

/** Cumulative `case` over per-mille shares of a hashed bucket, giving the index of the share. */
function pickIndex(bucket: string, shares: readonly number[]): string {
  let until = 0;
  const arms = shares.map((share, index) => {
    until += share;
    return index === shares.length - 1 ? `else ${index}` : `when ${bucket} < ${until} then ${index}`;
  });
  return `case ${arms.join(' ')} end`;
}

/**
 * Writes the export benchmark's tables into an open database (whose meta tables Database.open
 * made): the four marts the pnl report reads, the settings tables (each mart recorded in
 * settings.model_builds as a build records it), empty raw tables and the runs
 * and cursors of the report's streams.
 */
export async function writeExportData(db: Database, spec: ExportDataSpec): Promise<void> {
  const seed = spec.seed ?? 1;
  const { startMs, endMs } = monthSpan(spec.month);
  await ensureRawTables(db, STREAMS);
  // The settings tables as a build writes them, each mart recorded as built with them.
  await writeSettings(db, DEFAULT_MODEL_SETTINGS);
  for (const table of Object.keys(EXPORT_MART_COLUMNS)) await recordModelBuild(db, `marts.${table}`, DEFAULT_MODEL_SETTINGS);
  await db.run(`
    CREATE SCHEMA IF NOT EXISTS marts;
    ${Object.entries(EXPORT_MART_COLUMNS)
      .map(([table, columns]) => `CREATE OR REPLACE TABLE marts.${table} (${columns});`)
      .join('\n')}
    -- An integer in [lo, hi], drawn from (k, salt) and the seed; a per-mille bucket.
    CREATE OR REPLACE TEMP MACRO ex_draw(k, salt, lo, hi) AS
      CAST(lo AS HUGEINT) + CAST(hash(k, salt, ${seed}) % CAST(CAST(hi AS HUGEINT) - CAST(lo AS HUGEINT) + 1 AS UBIGINT) AS HUGEINT);
    CREATE OR REPLACE TEMP MACRO ex_bucket(k, salt) AS CAST(hash(k, salt, ${seed}) % 1000 AS INTEGER);
    CREATE OR REPLACE TEMP MACRO ex_pow10(s) AS CAST(pow(10, s) AS HUGEINT);
    -- n * 10^s, rounded half up when s < 0 (n >= 0).
    CREATE OR REPLACE TEMP MACRO ex_scale(n, s) AS
      CASE WHEN s >= 0 THEN CAST(n AS HUGEINT) * ex_pow10(s) ELSE (2 * CAST(n AS HUGEINT) + ex_pow10(-s)) // (2 * ex_pow10(-s)) END;
    -- Units of 10^-s as an exact decimal text (cast to DECIMAL, never through a double).
    CREATE OR REPLACE TEMP MACRO ex_fixed(u, s) AS
      CASE WHEN s = 0 THEN CAST(u AS VARCHAR)
      ELSE (CASE WHEN u < 0 THEN '-' ELSE '' END) || CAST(abs(u) // ex_pow10(s) AS VARCHAR) || '.' || lpad(CAST(abs(u) % ex_pow10(s) AS VARCHAR), CAST(s AS INTEGER), '0') END;
    -- An 18-digit id that grows with its instant, as the exchange's do.
    CREATE OR REPLACE TEMP MACRO ex_fill_id(ms, k, salt) AS CAST((CAST(ms AS HUGEINT) - 1600000000000) * 4194304 + ex_draw(k, salt, 0, 4194303) AS VARCHAR);
    -- An instant from epoch ms (the session zone is UTC: Database.open).
    CREATE OR REPLACE TEMP MACRO ex_at(ms) AS CAST(epoch_ms(CAST(ms AS BIGINT)) AS TIMESTAMPTZ);
  `);
  await writeLotMatches(db, spec.lotRows, startMs, endMs);
  await writeSpotMonthly(db, spec.month, seed);
  await writeFuturesMonthly(db, spec.month);
  for (const [table, columns] of Object.entries(VALUATION_COLUMNS)) for (const column of columns) await db.run(`ALTER TABLE marts.${table} ADD COLUMN ${column}`);
  for (const [table, reference] of Object.entries(REFERENCES)) {
    await db.run(`ALTER TABLE marts.${table} ADD COLUMN reference VARCHAR`);
    await db.run(`UPDATE marts.${table} SET reference = ${reference}`);
  }
  await writeStreamStatus(db, endMs);
}

async function writeLotMatches(db: Database, rows: number, startMs: number, endMs: number): Promise<void> {
  const symbols = `(VALUES ${SPOT.map((s, index) => `(${index}, '${s.symbol}', '${s.base}', '${s.quote}', ${s.pd}, ${s.qd}, ${s.center}, ${s.swing}, CAST('${BigInt(s.qMin)}' AS HUGEINT), CAST('${BigInt(s.qMax)}' AS HUGEINT))`).join(', ')}) s(idx, symbol, base_coin, quote_coin, pd, qd, center, swing, q_min, q_max)`;
  await db.run(`
    INSERT INTO marts.spot_lot_matches
    WITH numbered AS (
        SELECT i, i = 0 OR ex_bucket(i, 1) < 600 AS starts_sell FROM range(${rows}) t(i)
    ),

    sells AS (
        SELECT i, sum(CAST(starts_sell AS INTEGER)) OVER (ORDER BY i ROWS UNBOUNDED PRECEDING) - 1 AS sell_no FROM numbered
    ),

    lots AS (
        SELECT
            i,
            sell_no,
            row_number() OVER (PARTITION BY sell_no ORDER BY i) - 1 AS lot_no,
            count(*) OVER (PARTITION BY sell_no) AS lot_count,
            max(sell_no) OVER () + 1 AS sell_count
        FROM sells
    ),

    drawn AS (
        SELECT
            lots.*,
            ${pickIndex('ex_bucket(sell_no, 2)', SPOT.map((s) => s.share))} AS idx,
            CASE WHEN ex_bucket(sell_no, 3) < 900 THEN '${ACCOUNTS[0]}' ELSE '${ACCOUNTS[1]}' END AS account,
            -- The sells spread evenly over the month, each at a drawn millisecond of its slot.
            ${startMs} + (sell_no * ${endMs - startMs}) // sell_count + ex_draw(sell_no, 4, 0, ${endMs - startMs} // sell_count - 1) AS sell_ms,
            CASE WHEN lot_no = 0 AND ex_bucket(sell_no, 5) < 2 THEN 'opening' WHEN lot_no = lot_count - 1 AND lot_count > 1 AND ex_bucket(sell_no, 6) < 30 THEN 'unmatched' ELSE 'fill' END AS lot_source
        FROM lots
    ),

    priced AS (
        SELECT
            d.*,
            s.symbol, s.base_coin, s.quote_coin, s.pd, s.qd,
            -- FIFO: the older lots first, from a minute to 90 days before the sell.
            d.sell_ms - ex_draw(d.i, 7, 60000, 7776000000) // (d.lot_no + 1) AS buy_ms,
            s.center + ex_draw(d.sell_no, 8, -s.swing, s.swing) AS sell_ticks,
            ex_draw(d.i, 9, s.q_min, s.q_max) AS quantity_units
        FROM drawn d
        JOIN ${symbols} ON s.idx = d.idx
    ),

    amounts AS (
        SELECT
            *,
            -- Proceeds net of a 0.1% fee, cost of buys 0.85 to 1.15 times the sell price plus their fee, in units of 1e-12.
            ex_scale(quantity_units * sell_ticks, 12 - pd - qd) * 999 // 1000 AS proceeds_e12,
            ex_scale(quantity_units * (sell_ticks * ex_draw(i, 10, 850, 1150) // 1000), 12 - pd - qd) * 1001 // 1000 AS cost_e12
        FROM priced
    ),

    final AS (
        SELECT
            account,
            'fifo' AS cost_method,
            symbol,
            base_coin,
            quote_coin,
            ex_fill_id(sell_ms, sell_no, 11) AS sell_fill_id,
            ex_at(sell_ms) AS sell_at,
            CAST(ex_at(sell_ms) AS DATE) AS sell_date,
            CAST(date_trunc('month', CAST(ex_at(sell_ms) AS DATE)) AS DATE) AS sell_month,
            lot_source,
            CASE WHEN lot_source = 'unmatched' THEN 'unmatched' ELSE 'lot' END AS match_rule,
            CASE WHEN lot_source <> 'unmatched' THEN account END AS lot_account,
            CASE WHEN lot_source = 'fill' THEN ex_fill_id(buy_ms, i, 12) END AS buy_fill_id,
            CASE WHEN lot_source = 'fill' THEN ex_at(buy_ms) END AS buy_at,
            CAST(ex_fixed(quantity_units, qd) AS DECIMAL(38, 18)) AS quantity,
            CASE WHEN lot_source <> 'unmatched' THEN CAST(ex_fixed(cost_e12, 12) AS DECIMAL(38, 12)) END AS cost,
            CAST(ex_fixed(proceeds_e12, 12) AS DECIMAL(38, 12)) AS proceeds,
            CASE WHEN lot_source <> 'unmatched' THEN CAST(ex_fixed(proceeds_e12 - cost_e12, 12) AS DECIMAL(38, 12)) END AS realized_pnl,
            i
        FROM amounts
    )

    -- Stored in a hashed order: the report's ORDER BY has real sorting to do, as after the mart's joins.
    SELECT * EXCLUDE (i) FROM final ORDER BY hash(i)
  `);
}

/**
 * Spot monthly rows per account and symbol for the twelve months ending with the month (the
 * chart reads them): the month's own from the lot rows, the earlier ones scaled from it.
 */
async function writeSpotMonthly(db: Database, month: string, seed: number): Promise<void> {
  await db.run(`
    INSERT INTO marts.spot_realized_pnl_monthly
    WITH sold AS (
        SELECT
            account, symbol, any_value(base_coin) AS base_coin, any_value(quote_coin) AS quote_coin,
            sum(quantity) AS quantity_sold, sum(proceeds) AS proceeds, coalesce(sum(cost), 0) AS cost, coalesce(sum(realized_pnl), 0) AS realized_pnl,
            coalesce(sum(quantity) FILTER (WHERE lot_source = 'unmatched'), 0) AS unmatched_quantity,
            coalesce(sum(proceeds) FILTER (WHERE lot_source = 'unmatched'), 0) AS unmatched_proceeds
        FROM marts.spot_lot_matches
        GROUP BY account, symbol
    ),

    months AS (
        SELECT m, CAST(DATE '${month}-01' - to_months(CAST(m AS INTEGER)) AS DATE) AS trade_month,
               -- 0.500 to 1.499 of the month's figures, a quarter of the months with the opposite PnL.
               CASE WHEN m = 0 THEN 1.000 ELSE CAST((500 + hash(m, ${seed}) % 1000) / 1000 AS DECIMAL(5, 3)) END AS f,
               CASE WHEN m > 0 AND hash(m, 'sign', ${seed}) % 4 = 0 THEN -1 ELSE 1 END AS sign
        FROM range(12) t(m)
    )

    SELECT
        account, 'fifo', symbol, trade_month, base_coin, quote_coin,
        CAST(quantity_sold * f * 0.5 AS DECIMAL(38, 18)), CAST(cost * f * 0.5 AS DECIMAL(38, 12)),
        CAST(quantity_sold * f * 1.05 AS DECIMAL(38, 18)), CAST(cost * f * 1.05 AS DECIMAL(38, 12)),
        CAST(quantity_sold * f AS DECIMAL(38, 18)), CAST(proceeds * f AS DECIMAL(38, 12)), CAST(cost * f AS DECIMAL(38, 12)), CAST(realized_pnl * f * sign AS DECIMAL(38, 12)),
        CAST(unmatched_quantity * f AS DECIMAL(38, 18)), CAST(unmatched_proceeds * f AS DECIMAL(38, 12)),
        CAST(quantity_sold * f * 0.55 AS DECIMAL(38, 18)), CAST(cost * f * 0.55 AS DECIMAL(38, 12))
    FROM sold CROSS JOIN months
  `);
}

/** Futures monthly rows per account, contract and month, and a funding row (no contract) per account and month. */
async function writeFuturesMonthly(db: Database, month: string): Promise<void> {
  await db.run(`
    INSERT INTO marts.futures_pnl_monthly
    WITH months AS (
        SELECT m, CAST(DATE '${month}-01' - to_months(CAST(m AS INTEGER)) AS DATE) AS pnl_month FROM range(12) t(m)
    ),

    contracts AS (
        SELECT * FROM (VALUES ${FUTURES.map((symbol) => `('${symbol}')`).join(', ')}) c(symbol)
    ),

    fills AS (
        SELECT
            a.account, 'USDT' AS margin_coin, c.symbol, pnl_month,
            CAST(ex_draw(a.account || c.symbol, m, 50, 5000) AS BIGINT) AS fill_count,
            CAST(ex_fixed(ex_draw(a.account || c.symbol, m + 100, 1e16, 1e19), 12) AS DECIMAL(38, 12)) AS volume,
            ex_draw(a.account || c.symbol, m + 200, -5e13, 5e13) AS pnl_e10,
            ex_draw(a.account || c.symbol, m + 300, 1e11, 5e12) AS fee_e10,
            ex_draw(a.account || c.symbol, m + 400, 0, 1e12) * CAST(ex_bucket(a.account || c.symbol, m + 500) < 200 AS INTEGER) AS liquidation_e10
        FROM (VALUES ${ACCOUNTS.map((account) => `('${account}')`).join(', ')}) a(account) CROSS JOIN contracts c CROSS JOIN months
    ),

    funding AS (
        SELECT
            a.account, 'USDT' AS margin_coin, pnl_month,
            ex_draw(a.account, m + 600, -2e12, 1e12) AS funding_e10,
            -- From the last snapshot of the month before to the month's last.
            CAST(pnl_month - INTERVAL 1 DAY AS TIMESTAMPTZ) AS funding_from_at,
            CAST(pnl_month + INTERVAL 1 MONTH - INTERVAL 1 DAY AS TIMESTAMPTZ) AS funding_to_at
        FROM (VALUES ${ACCOUNTS.map((account) => `('${account}')`).join(', ')}) a(account) CROSS JOIN months
    )

    SELECT
        account, margin_coin, symbol, pnl_month, fill_count, volume,
        CAST(ex_fixed(pnl_e10, 10) AS DECIMAL(38, 18)),
        CAST(ex_fixed(fee_e10, 10) AS DECIMAL(38, 18)),
        CAST(ex_fixed(liquidation_e10, 10) AS DECIMAL(38, 18)),
        CAST(NULL AS DECIMAL(38, 18)),
        CAST(ex_fixed(pnl_e10 - fee_e10 - liquidation_e10, 10) AS DECIMAL(38, 18)),
        CAST(NULL AS TIMESTAMPTZ), CAST(NULL AS TIMESTAMPTZ)
    FROM fills
    UNION ALL
    SELECT
        account, margin_coin, NULL, pnl_month, NULL, NULL, NULL, NULL, NULL,
        CAST(ex_fixed(funding_e10, 10) AS DECIMAL(38, 18)), CAST(ex_fixed(funding_e10, 10) AS DECIMAL(38, 18)),
        funding_from_at, funding_to_at
    FROM funding
  `);
}

/**
 * A run and a cursor per account and stream: history covered from a year before the month to
 * its end, the last sync a day after it (so the Summary shows the streams as stale, which it
 * would also do for any fixed date; it changes nothing measurable).
 */
async function writeStreamStatus(db: Database, endMs: number): Promise<void> {
  const runAtMs = endMs + 86_400_000;
  const fromMs = endMs - 400 * 86_400_000;
  for (const account of ACCOUNTS) {
    for (const stream of STREAMS) {
      const untilMs = stream.kind === 'history' ? runAtMs - 60_000 : runAtMs;
      await db.run(`INSERT INTO meta.cursors VALUES ($1, $2, '', ${untilMs}, ${stream.kind === 'history' ? fromMs : untilMs}, '${RUN_ID}', ex_at(${runAtMs}))`, [account, stream.name]);
      await db.run(`INSERT INTO meta.runs VALUES ('${RUN_ID}', $1, $2, ex_at(${runAtMs}), ex_at(${runAtMs + 5_000}), 'ok', 1, 1, 0, 0, 1, 0, NULL, 5000)`, [account, stream.name]);
    }
  }
}

/**
 * The cached database file for a spec: its fields and a hash of the generator (its functions'
 * text and its constants), so a change to the generator makes new data and a change to the
 * runner below does not.
 */
export function exportDataPath(spec: ExportDataSpec): string {
  const generator = createHash('sha256')
    .update([monthSpan, pickIndex, writeExportData, writeLotMatches, writeSpotMonthly, writeFuturesMonthly, writeStreamStatus].map(String).join('\n'))
    .update(JSON.stringify([SPOT, FUTURES, ACCOUNTS, RUN_ID, EXPORT_MART_COLUMNS]))
    .digest('hex')
    .slice(0, 10);
  return path.join(BENCH_DATA_DIR, `export-l${spec.lotRows}-${spec.month}-seed${spec.seed ?? 1}-${generator}.duckdb`);
}

/** The path of a generated database for the spec, generating it first when no cached one exists. */
export function cachedExportData(spec: ExportDataSpec): Promise<{ path: string; seconds?: number }> {
  return cachedDatabase(exportDataPath(spec), (db) => writeExportData(db, spec));
}

/** What one child run of `exledger report` gave. */
export interface ExportRun extends MeasuredRun {
  /** The command's --json output: its own time and each sheet's rows (a rolled-up sheet's: its lines, its detail rows and files). */
  result?: { file: string; ms: number; sheets: { name: string; parts: string[]; rows: number; rolledUp?: { detailRows: number; files: { file: string; format: string; rows: number }[] } }[] };
}

/** One measured export: the run, the load it started under, and what the workbook holds. */
export interface MeasuredExport {
  scenario: ExportScenario;
  run: ExportRun;
  /** 1-minute load average when the command started. */
  load: number;
  /** The detail sheet's rows as the command reported them. */
  detailRows?: number;
  /** Rolled up: the lines the sheet shows instead. */
  lines?: number;
  check?: WorkbookCheck;
  /** Rolled up: the rows found in each file beside the workbook, and their bytes. */
  files?: { format: string; rows: number | undefined; bytes: number }[];
  /** The workbook holds the rows the command reported (in its sheet and its table). */
  found: boolean;
  met: boolean;
  database: string;
}

/** Runs the export benchmark and prints its table. */
export async function benchExport(): Promise<void> {
  console.log('\n== exledger report pnl: a 1M-row lot detail, rolled up (the default) and whole, wall time and peak memory of the command (child process)');
  const runs = [];
  for (const scenario of [SCENARIO, FULL_SCENARIO]) runs.push(await measureExport(scenario));
  console.table(
    runs.map(({ scenario, run, load, detailRows: rows, lines, check, files, met }) => ({
      scenario: scenario.name,
      'detail rows': rows?.toLocaleString('en-US') ?? '?',
      'in workbook': check === undefined ? '?' : `${check.dataRows?.toLocaleString('en-US') ?? '?'} ${lines === undefined ? 'rows' : 'lines'}, table ${check.tableRef ?? '?'}`,
      'beside it': files === undefined ? '' : files.map((file) => `${file.format} ${file.rows?.toLocaleString('en-US') ?? '?'} rows`).join(', '),
      'wall s': run.timedOut ? `>${scenario.timeoutSeconds} (stopped)` : run.wallSeconds.toFixed(1),
      'report s': run.result === undefined ? '' : (run.result.ms / 1000).toFixed(1),
      'CPU s': run.cpuSeconds === undefined ? '?' : run.cpuSeconds.toFixed(1),
      'peak RSS MB': run.peakBytes === undefined ? '?' : Math.round(run.peakBytes / MB),
      'files MB': check === undefined ? '?' : [check.bytes, ...(files ?? []).map((file) => file.bytes)].map((bytes) => (bytes / MB).toFixed(1)).join(' + '),
      'load at start': `${load.toFixed(1)} / ${cpus().length} cores`,
      target: `< ${scenario.targetSeconds} s, < ${scenario.targetPeakBytes / GB} GB`,
      result: met ? 'met' : 'NOT MET',
    })),
  );
  for (const { run, detailRows: rows, check, found, database } of runs) {
    console.log(`peak from ${run.peakSource}; database ${path.relative(REPO, database)}`);
    if (run.result === undefined) console.log(`no result (exit ${run.exitCode ?? 'killed'}):\n${run.stderrTail}`);
    else if (!found) console.log(`the workbook or its files do not hold the ${rows ?? '?'} rows the command reported (${check?.note ?? 'see above'})`);
  }
}

/**
 * Measures `exledger report pnl` over a fresh copy of the cached export database (generated
 * first when missing; generation is not measured) and checks the workbook it wrote, and the
 * files beside it when the sheet is rolled up.
 */
export async function measureExport(scenario: ExportScenario = SCENARIO): Promise<MeasuredExport> {
  const data = await cachedExportData(scenario.spec);
  if (data.seconds !== undefined) console.log(`${scenario.name}: generated ${path.relative(REPO, data.path)} in ${data.seconds.toFixed(1)} s (not measured)`);
  const work = path.join(BENCH_DATA_DIR, `run-${scenario.name}.duckdb`);
  copyBuildData(data.path, work);
  const outDir = mkdtempSync(path.join(tmpdir(), 'exledger-bench-export-'));
  try {
    const config = path.join(outDir, 'exledger.config.json');
    writeFileSync(config, JSON.stringify(scenario.detailRowLimit === undefined ? {} : { reports: { detailRowLimit: scenario.detailRowLimit } }));
    // Other processes on the machine slow the command down: the load it started under is shown beside it.
    const load = loadavg()[0] as number;
    const run = await runReport(['report', 'pnl', '--period', scenario.spec.month, '--db', work, '--out', path.join(outDir, 'out'), '--config', config, '--json'], scenario.timeoutSeconds);
    const detail = run.result?.sheets.find((sheet) => sheet.name === DETAIL_SHEET);
    const check = run.result === undefined ? undefined : await inspectWorkbook(run.result.file, detail?.parts[0] ?? DETAIL_SHEET);
    const rolledUp = detail?.rolledUp;
    const files = rolledUp === undefined ? undefined : await Promise.all(rolledUp.files.map(async (file) => ({ format: file.format, rows: await countFileRows(file.file, file.format), bytes: statSync(file.file).size })));
    const detailRows = rolledUp?.detailRows ?? detail?.rows;
    const timeMet = !run.timedOut && run.exitCode === 0 && run.wallSeconds < scenario.targetSeconds;
    const memoryMet = run.peakBytes !== undefined && run.peakBytes < scenario.targetPeakBytes;
    const found = detail !== undefined && check?.dataRows === detail.rows && check.tableRows === detail.rows && (files === undefined || files.every((file) => file.rows === detailRows));
    return { scenario, run, load, detailRows, ...(rolledUp === undefined ? {} : { lines: detail!.rows }), check, ...(files === undefined ? {} : { files }), found, met: timeMet && memoryMet && found, database: work };
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

/** The rows of a detail file: a Parquet file's by DuckDB (its metadata), a CSV's lines less its header. */
async function countFileRows(file: string, format: string): Promise<number | undefined> {
  if (format === 'parquet') {
    const db = await Database.open(':memory:');
    try {
      const [row] = await db.all<{ n: string }>('SELECT count(*) AS n FROM read_parquet($1)', [file]);
      return Number(row!.n);
    } finally {
      db.close();
    }
  }
  let lines = 0;
  for await (const chunk of createReadStream(file)) for (const byte of chunk as Buffer) if (byte === 10) lines++;
  return lines - 1;
}

async function runReport(cliArgs: readonly string[], timeoutSeconds: number): Promise<ExportRun> {
  const run = await measureCommand(cliArgs, timeoutSeconds);
  let result: ExportRun['result'];
  try {
    // `--json` prints { command, ok, reports: [one per workbook] }.
    result = (JSON.parse(run.stdout) as { reports?: NonNullable<ExportRun['result']>[] }).reports?.[0];
  } catch {
    result = undefined;
  }
  return { ...run, result };
}

/** What the workbook holds for a sheet, read from the zip without loading the workbook. */
export interface WorkbookCheck {
  bytes: number;
  /** The sheet's <row> elements less the header and the totals block below the table. */
  dataRows?: number;
  /** The ref of the sheet's table part, e.g. A1:M1000002. */
  tableRef?: string;
  /** Rows of the table less its header. */
  tableRows?: number;
  note?: string;
}

/**
 * Finds the sheet's part (xl/workbook.xml and its rels), its table's ref (the sheet's rels and
 * the table part), and counts its <row> elements while `unzip -p` streams the part: memory stays
 * flat whatever the size of the sheet.
 */
export async function inspectWorkbook(file: string, sheetName: string): Promise<WorkbookCheck> {
  const bytes = statSync(file).size;
  const unzip = (part: string): string | undefined => {
    const out = spawnSync('unzip', ['-p', file, part], { encoding: 'utf8', maxBuffer: 64 * MB });
    return out.status === 0 ? out.stdout : undefined;
  };
  if (spawnSync('unzip', ['-v'], { stdio: 'ignore' }).error !== undefined) return { bytes, note: 'unzip not found: not checked' };
  const escaped = sheetName.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');
  const relId = new RegExp(`<sheet [^>]*name="${escapeRegExp(escaped)}"[^>]*r:id="([^"]+)"`).exec(unzip('xl/workbook.xml') ?? '')?.[1];
  const target = relId === undefined ? undefined : new RegExp(`<Relationship [^>]*Id="${relId}"[^>]*Target="([^"]+)"|<Relationship [^>]*Target="([^"]+)"[^>]*Id="${relId}"`).exec(unzip('xl/_rels/workbook.xml.rels') ?? '');
  const sheetTarget = target?.[1] ?? target?.[2];
  if (sheetTarget === undefined) return { bytes, note: `no sheet "${sheetName}" in xl/workbook.xml` };
  const sheetPart = path.posix.join('xl', sheetTarget.replace(/^\/?xl\//, ''));
  const sheetRels = unzip(path.posix.join(path.posix.dirname(sheetPart), '_rels', `${path.posix.basename(sheetPart)}.rels`)) ?? '';
  const tableTarget = /Target="([^"]*tables\/[^"]+)"/.exec(sheetRels)?.[1];
  const tableXml = tableTarget === undefined ? undefined : unzip(path.posix.normalize(path.posix.join(path.posix.dirname(sheetPart), tableTarget)));
  const tableRef = tableXml === undefined ? undefined : /<table [^>]*\bref="([A-Z]+\d+:[A-Z]+\d+)"/.exec(tableXml)?.[1];
  const refRows = tableRef === undefined ? undefined : Number(/(\d+)$/.exec(tableRef)![1]) - Number(/^[A-Z]+(\d+)/.exec(tableRef)![1]) + 1;
  // Below the table (issue 13): a heading and one totals row per coin and cost method, labelled by the writer;
  // above a rolled-up sheet's table (issue 28), the line that says so.
  const counts = await countInZipPart(file, sheetPart, ['<row ', '<v>Totals of the rows shown', '<v>Total</v>', '<v>Rolled up: ']);
  return {
    bytes,
    dataRows: counts === undefined ? undefined : counts[0]! - 1 - counts[1]! - counts[2]! - counts[3]!,
    tableRef,
    // The table's ref spans its header and its rows (the totals are below it).
    tableRows: refRows === undefined ? undefined : refRows - 1,
    note: tableRef === undefined ? `no table part for ${sheetPart}` : undefined,
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Occurrences of each of `needles` in a zip part, counted as `unzip -p` streams it. */
async function countInZipPart(file: string, part: string, needles: readonly string[]): Promise<number[] | undefined> {
  const child = spawn('unzip', ['-p', file, part], { stdio: ['ignore', 'pipe', 'ignore'] });
  const counts = needles.map(() => 0);
  const longest = Math.max(...needles.map((needle) => needle.length));
  // The end of the previous chunk, so a needle split across two chunks is counted once.
  let tail = '';
  child.stdout.setEncoding('latin1');
  for await (const chunk of child.stdout as AsyncIterable<string>) {
    const text = tail + chunk;
    needles.forEach((needle, index) => {
      // Only occurrences ending in the new chunk: those wholly in the tail were counted with the previous one.
      for (let at = text.indexOf(needle, Math.max(0, tail.length - needle.length + 1)); at !== -1; at = text.indexOf(needle, at + needle.length)) counts[index]!++;
    });
    tail = text.slice(Math.max(0, text.length - longest + 1));
  }
  const code = await new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.on('close', resolve)));
  return code === 0 ? counts : undefined;
}

if (import.meta.url === `file://${process.argv[1]}`) await benchExport();
