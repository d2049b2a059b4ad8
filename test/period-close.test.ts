import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { REPORTS } from '../reports/index.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeDemoPrices } from '../src/sandbox/demo-prices.ts';
import { Database } from '../src/store/database.ts';
import { runCli, startCli, type CliResult } from './support/cli-process.ts';
import { startSandboxProcess, type SandboxProcess } from './support/sandbox-process.ts';

/**
 * Closing a month (issue 26), in the deployed shape: `exledger sandbox` in a process of its own
 * (one spot fill in ten published LATE_MS after its time), each command a child process without a
 * terminal, as cron runs it. October is closed; then late October fills arrive (a backfill reads
 * them) and a corrected price; the next nights' October workbooks keep their checksums, and
 * November's show the adjustments: (October rebuilt from scratch, in a database synced afresh) −
 * (October as closed), per key, to the last digit. Then a reopen, and a close again.
 */

/** Late fills appear this long after their time: past the lookback, so only a backfill reads them. */
const LATE_MS = 6 * 86_400_000;
const SETTINGS = {
  budget: { spot: { quota: 500, windowMs: 1000 }, contract: { quota: 1000, windowMs: 1000 } },
  retry: { retries: 8, minTimeoutMs: 50, maxTimeoutMs: 500 },
  timeoutMs: 10_000,
  sync: { startDate: '2026-09-01', lookbackDays: 1 },
  models: { costMethods: ['fifo', 'average'], reportingCurrency: 'USD', pricesFile: './prices.csv' },
  reports: { outDir: './out' },
  logDir: './logs',
};
/** Every report: the demo-like config values in USD, so the journal and holdings are written too. */
const WORKBOOKS = REPORTS.map((report) => report.name);
/** The day whose USDT price is corrected after the close. */
const CORRECTED_DAY = '2026-10-14';

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

describe('closing a month: figures that stay as signed, late changes booked as adjustments', () => {
  let exchange: SandboxProcess;
  let dir: string;
  const cli = (args: string[], env: Record<string, string> = {}) => runCli(args, { cwd: dir, env: { ...exchange.settings, ...env } });
  const db = () => path.join(dir, 'data', 'ledger.duckdb');
  const out = (name: string) => path.join(dir, 'out', name);
  const october = () => Object.fromEntries(readdirSync(path.join(dir, 'out')).filter((name) => name.includes('-2026-10.')).map((name) => [name, sha256(out(name))]));
  const ok = (result: CliResult, what: string) => expect(result.code, `${what}\n${result.stdout}${result.stderr}`).toBe(0);

  async function query<T = Record<string, unknown>>(file: string, sql: string): Promise<T[]> {
    const database = await Database.open(file, { readOnly: true });
    try {
      return await database.all<T>(sql);
    } finally {
      database.close();
    }
  }
  /** The exchange's clock: what it has published by this day. */
  async function exchangeDay(day: string): Promise<void> {
    const moved = await fetch(`${exchange.url}/__sandbox/visible-until`, { method: 'POST', body: JSON.stringify({ ms: Date.parse(`${day}T00:00:00Z`) }) });
    expect(moved.status).toBe(200);
  }

  beforeAll(async () => {
    exchange = await startSandboxProcess(['--end', '2026-12-01', '--window-ms', '1000', '--late-spot-fills-ms', String(LATE_MS)]);
    dir = mkdtempSync(path.join(os.tmpdir(), 'exledger-close-'));
    writeFileSync(path.join(dir, 'exledger.config.json'), JSON.stringify({ ...SETTINGS, db: './data/ledger.duckdb' }, null, 2));
    writeDemoPrices(path.join(dir, 'prices.csv'), '2026-09-01', '2026-11-30');
    // BTC and ETH on the days no fill derives their price from (a fee or a day without a USDT pair): a close refuses a row without one.
    const days = Array.from({ length: 91 }, (_, index) => new Date(Date.parse('2026-09-01T00:00:00Z') + index * 86_400_000).toISOString().slice(0, 10));
    writeFileSync(path.join(dir, 'prices.csv'), `${readFileSync(path.join(dir, 'prices.csv'), 'utf8')}${days.map((day) => `${day},BTC,USD,61234.5\n${day},ETH,USD,2345.67\n`).join('')}`);
  }, 120_000);
  afterAll(async () => {
    expect(await exchange?.stop()).toBe(0);
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('close October as signed; late fills and a corrected price keep its workbooks byte for byte and become adjustments in November equal to a rebuild from scratch; reopen and close again', async () => {
    // Night of 3 November: the nightly run writes October's workbooks, drafts.
    await exchangeDay('2026-11-03');
    ok(await cli(['run', '--period', '2026-10']), 'the night of 3 November');
    const draft = new ExcelJS.Workbook();
    await draft.xlsx.readFile(out('pnl-2026-10.xlsx'));
    expect(draft.getWorksheet('Summary')!.getCell('A2').text).toBe('Draft: not closed');
    expect(draft.getWorksheet('Summary')!.headerFooter.oddHeader).toContain('&CDraft: not closed');

    // The controller closes October, named by the environment.
    const close = await cli(['close', '--period', '2026-10', '--note', 'signed 2026-11-03, ticket FIN-7'], { EXLEDGER_USER: 'Controller A' });
    ok(close, 'close');
    expect(close.stdout).toMatch(/^closed 2026-10 \(2026-10-01 to 2026-10-31\) on \S+ by Controller A: signed 2026-11-03, ticket FIN-7$/m);
    const signed = october();
    expect(Object.keys(signed).sort()).toEqual([...WORKBOOKS.map((name) => `${name}-2026-10.xlsx`), 'journal-2026-10.csv'].sort());
    for (const [name, hash] of Object.entries(signed)) expect(close.stdout).toContain(`out/${name}  SHA-256 ${hash}`);
    const closed = new ExcelJS.Workbook();
    await closed.xlsx.readFile(out('pnl-2026-10.xlsx'));
    for (const sheet of closed.worksheets) expect(sheet.headerFooter.oddHeader, sheet.name).toMatch(/&CClosed on \d{4}-\d\d-\d\d \d\d:\d\d UTC by Controller A&R/);
    expect(closed.getWorksheet('Summary')!.getCell('A2').text).toMatch(/^Closed on \d{4}-\d\d-\d\d \d\d:\d\d UTC by Controller A$/);
    const [record] = await query<{ checksums: string; acted_by: string; build_settings: string }>(db(), "SELECT checksums, acted_by, build_settings FROM meta.period_closes WHERE action = 'close'");
    expect(JSON.parse(record!.checksums)).toEqual(signed);
    expect(record!.build_settings).toContain('cost methods fifo, average');
    // A reporting zone that would move October's boundaries is refused while it is closed.
    const moved = await cli(['build', '--time-zone', 'Europe/London']);
    expect(moved.code).toBe(2);
    expect(moved.stderr).toMatch(/^error: models\.reportingTimeZone: is Europe\/London, but the closed period 2026-10 was cut in UTC: another zone would move its boundaries\n {2}fix: set models\.reportingTimeZone back to UTC, or reopen 2026-10 first/);
    // Who closes must be known: without --by and with no login in the environment, the close is refused naming --by.
    const nobody = await cli(['close', '--period', '2026-11']);
    expect(nobody.code).toBe(2);
    expect(nobody.stderr).toMatch(/^error: --by: say who closes or reopens/);
    // Closing it (or an earlier month) again is refused, and changes nothing.
    const again = await cli(['close', '--period', '2026-09', '--by', 'x']);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/^error: --period: 2026-09 is at or before 2026-10, the latest closed period/);

    // Later nights: late October fills are published, a backfill reads them, and a price is corrected.
    await exchangeDay('2026-11-10');
    const lateBefore = await query<{ n: string }>(db(), "SELECT count(*) AS n FROM staging.spot_fills WHERE c_time_at < TIMESTAMPTZ '2026-11-01 00:00:00+00'");
    ok(await cli(['sync', '--since', '2026-10-20']), 'the backfill');
    const lateAfter = await query<{ n: string }>(db(), "SELECT count(*) AS n FROM staging.spot_fills WHERE c_time_at < TIMESTAMPTZ '2026-11-01 00:00:00+00'");
    expect(Number(lateAfter[0]!.n)).toBeGreaterThan(Number(lateBefore[0]!.n));
    const prices = readFileSync(path.join(dir, 'prices.csv'), 'utf8');
    expect(prices).toContain(`${CORRECTED_DAY},USDT,USD,`);
    writeFileSync(path.join(dir, 'prices.csv'), prices.replace(new RegExp(`^${CORRECTED_DAY},USDT,USD,.*$`, 'm'), `${CORRECTED_DAY},USDT,USD,0.9871`));
    const night = await cli(['run', '--period', '2026-10', '--json']);
    ok(night, 'the night of 10 November');
    const loadInfo = (JSON.parse(night.stdout) as { loadInfo: { adjustments: { openPeriod: string; closed: string[]; figures: number; unknown: number; perMart: { mart: string; figures: number }[] } } }).loadInfo;
    expect(loadInfo.adjustments).toMatchObject({ openPeriod: '2026-11', closed: ['2026-10'], unknown: 0 });
    expect(loadInfo.adjustments.perMart.find((mart) => mart.mart === 'marts.spot_realized_pnl_monthly')?.figures).toBeGreaterThan(0);
    // The published copy shows the figures as closed beside the live ones, every column commented.
    const published = path.join(dir, 'data', 'ledger.published.duckdb');
    expect((await query<{ n: string }>(published, "SELECT count(*) AS n FROM closed.spot_realized_pnl_monthly"))[0]!.n).not.toBe('0');
    expect(await query(published, "SELECT table_name, column_name FROM duckdb_columns() WHERE schema_name = 'closed' AND (comment IS NULL OR comment = '')")).toEqual([]);
    expect((await query<{ n: string }>(published, "SELECT count(*) AS n FROM duckdb_columns() WHERE schema_name = 'closed'"))[0]!.n).not.toBe('0');
    expect(october()).toEqual(signed);
    ok(await cli(['report', 'all', '--period', '2026-10']), 'report October again');
    expect(october()).toEqual(signed);

    // November's adjustments equal a rebuild from scratch (a database synced afresh) less October as closed.
    const fresh = path.join(dir, 'fresh.duckdb');
    ok(await cli(['sync', '--db', fresh]), 'a fresh sync');
    ok(await cli(['build', '--db', fresh]), 'a fresh build');
    /** The marts and measures compared: each mart's key besides the account, its period column and some measures. */
    const COMPARED = [
      { mart: 'spot_realized_pnl_monthly', key: ['cost_method', 'symbol'], period: 'trade_month', measures: ['realized_pnl', 'proceeds', 'cost', 'quantity_sold', 'realized_pnl_rc'] },
      { mart: 'spot_realized_pnl_daily', key: ['cost_method', 'symbol'], period: 'trade_date', measures: ['realized_pnl', 'proceeds', 'cost', 'quantity_sold', 'realized_pnl_rc'] },
      { mart: 'fees_monthly', key: ['product', 'coin'], period: 'fee_month', measures: ['fees_paid', 'fee_count', 'fees_paid_rc'] },
      { mart: 'futures_pnl_monthly', key: ['margin_coin', 'symbol'], period: 'pnl_month', measures: ['realized_pnl', 'trading_fees', 'net_result_rc'] },
    ];
    const compared = new Set(COMPARED.flatMap(({ mart, measures }) => measures.map((measure) => `marts.${mart}|${measure}`)));
    const adjustments = await query<{ mart: string; figure_key: string; adjusted_date: string; measure: string; adjustment: string | null }>(
      db(),
      "SELECT mart, figure_key, CAST(adjusted_date AS VARCHAR) AS adjusted_date, measure, CAST(adjustment AS VARCHAR) AS adjustment FROM marts.period_adjustments WHERE status = 'pending' AND booked_period = '2026-11' ORDER BY ALL",
    );
    expect(adjustments.length).toBeGreaterThan(0);
    expect(adjustments.filter((row) => row.adjustment === null)).toEqual([]);
    const expected: typeof adjustments = [];
    const database = await Database.open(db(), { readOnly: true });
    try {
      await database.run(`ATTACH '${fresh}' AS fresh (READ_ONLY)`);
      for (const { mart, key, period, measures } of COMPARED) {
        for (const measure of measures) {
          // Per key: the figure a fresh rebuild gives less the figure frozen at the close (a key absent on one side: 0).
          const rows = await database.all<{ figure_key: string; adjusted_date: string; adjustment: string }>(`
            WITH now AS (SELECT ${key.join(', ')}, ${period} AS d, ${measure} AS v FROM fresh.marts.${mart} WHERE ${period} <= DATE '2026-10-31'),
                 signed AS (SELECT ${key.join(', ')}, ${period} AS d, ${measure} AS v FROM closed.${mart})
            SELECT concat_ws('; ', ${key.map((column) => `'${column}=' || coalesce(CAST(coalesce(now.${column}, signed.${column}) AS VARCHAR), 'NULL')`).join(', ')}) AS figure_key,
                   CAST(coalesce(now.d, signed.d) AS VARCHAR) AS adjusted_date,
                   CAST(CAST(coalesce(now.v, 0) - coalesce(signed.v, 0) AS DECIMAL(38, 18)) AS VARCHAR) AS adjustment
            FROM now FULL JOIN signed ON ${[...key, 'd'].map((column) => `now.${column} IS NOT DISTINCT FROM signed.${column}`).join(' AND ')}
            WHERE coalesce(now.v, 0) <> coalesce(signed.v, 0)`);
          expected.push(...rows.map((row) => ({ mart: `marts.${mart}`, figure_key: row.figure_key, adjusted_date: row.adjusted_date, measure, adjustment: row.adjustment })));
        }
      }
    } finally {
      database.close();
    }
    const ours = adjustments.filter((row) => compared.has(`${row.mart}|${row.measure}`));
    const order = (rows: typeof adjustments) => [...rows].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    expect(expected.some((row) => row.measure === 'realized_pnl_rc' && row.adjusted_date.startsWith(CORRECTED_DAY))).toBe(true);
    expect(order(ours)).toEqual(order(expected));

    // November's pnl workbook shows them: a sheet and a Summary line; its journal posts them as adjusting entries that balance.
    ok(await cli(['report', 'pnl', 'journal', '--period', '2026-11']), 'November');
    const november = new ExcelJS.Workbook();
    await november.xlsx.readFile(out('pnl-2026-11.xlsx'));
    const sheet = november.getWorksheet('Adjustments to closed periods')!;
    const pnlRows = adjustments.filter((row) => ['marts.spot_realized_pnl_monthly', 'marts.futures_pnl_monthly', 'marts.spot_lot_matches'].includes(row.mart));
    expect(sheet.rowCount).toBe(pnlRows.length + 1);
    const summary = november.getWorksheet('Summary')!;
    const line = summary.getRows(1, summary.rowCount)!.find((row) => row.getCell(1).text === 'Adjustments to closed periods');
    expect(line?.getCell(3).value).toBe(pnlRows.length);
    const entries = await query<{ entry_id: string; debits: string; credits: string; lines: string }>(
      db(),
      "SELECT entry_id, CAST(sum(debit) AS VARCHAR) AS debits, CAST(sum(credit) AS VARCHAR) AS credits, count(*) AS lines FROM marts.journal_entries WHERE kind = 'adjustment' GROUP BY entry_id",
    );
    expect(entries.length).toBeGreaterThan(0);
    for (const entry of entries) expect(entry.debits, entry.entry_id).toBe(entry.credits);
    expect(entries.every((entry) => entry.entry_id.startsWith('adjustment/2026-11-01/'))).toBe(true);
    const csv = readFileSync(out('journal-2026-11.csv'), 'utf8');
    expect(csv).toContain('adjustment/2026-11-01/');
    // The journal as posted: closed lines + adjusting entries + open lines = the lines the data gives now, per ledger account, exactly.
    const [tie] = await query<{ n: string }>(
      db(),
      `SELECT count(*) AS n FROM (
         (SELECT ledger_account, sum(net_amount) AS net FROM marts.journal_entries GROUP BY ALL EXCEPT SELECT ledger_account, sum(net_amount) FROM marts.journal_lines_live GROUP BY ALL)
         UNION ALL
         (SELECT ledger_account, sum(net_amount) FROM marts.journal_lines_live GROUP BY ALL EXCEPT SELECT ledger_account, sum(net_amount) AS net FROM marts.journal_entries GROUP BY ALL))`,
    );
    expect(tie!.n).toBe('0');
    const status = await cli(['status']);
    expect(status.stdout).toMatch(/^ {2}2026-10 {2}2026-10-01 to 2026-10-31 {2}closed on \S+ by Controller A \(close 1\): signed 2026-11-03, ticket FIN-7$/m);
    expect(status.stdout).toMatch(/^adjustments to closed periods pending in 2026-11: \d+ figures changed since their close/m);

    // Reopen, on the record: October's figures are live again and its adjustments leave November.
    const reopen = await cli(['reopen', '--period', '2026-10', '--reason', 'late fills of 28-31 October', '--by', 'Controller B']);
    ok(reopen, 'reopen');
    expect(await query(db(), "SELECT * FROM marts.period_adjustments")).toEqual([]);
    expect(await query(db(), 'SELECT * FROM settings.closed_periods')).toEqual([]);
    ok(await cli(['report', 'pnl', '--period', '2026-10']), 'October as a draft');
    expect(sha256(out('pnl-2026-10.xlsx'))).not.toBe(signed['pnl-2026-10.xlsx']);
    // And closed again: a new version, the audit trail whole.
    ok(await cli(['close', '--period', '2026-10', '--by', 'Controller A']), 'close again');
    const trail = await query<{ version: number; action: string; acted_by: string; note: string | null; reopened_version: number | null }>(db(), 'SELECT version, action, acted_by, note, reopened_version FROM meta.period_closes ORDER BY version');
    expect(trail).toEqual([
      { version: 1, action: 'close', acted_by: 'Controller A', note: 'signed 2026-11-03, ticket FIN-7', reopened_version: null },
      { version: 2, action: 'reopen', acted_by: 'Controller B', note: 'late fills of 28-31 October', reopened_version: 1 },
      { version: 3, action: 'close', acted_by: 'Controller A', note: null, reopened_version: null },
    ]);
    expect(await query(db(), "SELECT * FROM marts.period_adjustments WHERE status = 'pending'")).toEqual([]);
  }, 900_000);

  it('a close or reopen while a run is under way is refused with exit 4, and changes nothing', async () => {
    const trail = async () => (await query<{ n: string }>(db(), 'SELECT count(*) AS n FROM meta.period_closes'))[0]!.n;
    const before = await trail();
    const run = startCli(['run', '--period', '2026-11'], { cwd: dir, env: exchange.settings });
    // The run takes its lock first: wait for it.
    for (let waited = 0; !existsSync(`${db()}.run.lock`); waited += 50) {
      expect(waited, 'the run never took its lock').toBeLessThan(60_000);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const [close, reopen] = await Promise.all([cli(['close', '--period', '2026-11', '--by', 'x']), cli(['reopen', '--period', '2026-10', '--reason', 'y', '--by', 'x'])]);
    expect(close.code, close.stderr).toBe(4);
    expect(close.stderr).toMatch(/^error: .*ledger\.duckdb\.run: is in use by another exledger run \(pid \d+/);
    expect(reopen.code, reopen.stderr).toBe(4);
    const ran = await run.done;
    ok(ran, 'the run');
    expect(ran.stdout).toMatch(/^ {2}adjustments {2}none to closed periods pending in 2026-11$/m);
    expect(await trail()).toBe(before);
    expect(await query(db(), "SELECT period_label FROM settings.closed_periods")).toEqual([{ period_label: '2026-10' }]);
  }, 300_000);
});
