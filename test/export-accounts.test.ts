import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPORTS } from '../reports/index.ts';
import { defineReport, withoutValuation, type SheetSpec } from '../src/export/report-definition.ts';
import { readFigures } from '../src/export/summary-sheet.ts';
import { DataError } from '../src/errors.ts';
import { Database } from '../src/store/database.ts';
import { runCli, type CliResult } from './support/cli-process.ts';
import { startSandboxProcess, type SandboxProcess } from './support/sandbox-process.ts';

/**
 * Per-account and consolidated workbooks (issue 15): a sandbox exchange serving three accounts in a
 * process of its own, synced and built by the CLI as child processes; then `exledger report … --account
 * beta` and the consolidated report, also as child processes, read back with exceljs and compared with
 * queries of the test's own on the marts: the account's workbook holds its rows and figures only, the
 * consolidated one a line per account and their exact total; an unknown account writes nothing.
 */

const ACCOUNTS = ['alpha', 'beta', 'gamma'] as const;
const PERIOD = { from: '2026-10-01', to: '2026-10-31', label: '2026-10' };
const MONTH = `DATE '${PERIOD.from}'`;

async function readWorkbook(file: string): Promise<ExcelJS.Workbook> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.readFile(file);
  return workbook;
}

/** The Summary's rows of one section (below its heading and header row, to the blank row), as text cells. */
function sectionRows(workbook: ExcelJS.Workbook, heading: string): string[][] {
  const rows: string[][] = [];
  let state: 'before' | 'header' | 'in' | 'after' = 'before';
  workbook.getWorksheet('Summary')!.eachRow({ includeEmpty: true }, (row) => {
    const first = row.getCell(1).value;
    if (state === 'before' && first === heading) state = 'header';
    else if (state === 'header') state = 'in';
    else if (state === 'in') {
      if (first === null || first === undefined) state = 'after';
      else rows.push(Array.from({ length: 7 }, (_, index) => (row.getCell(index + 1).value === null ? '' : index === 0 ? row.getCell(1).text : String(row.getCell(index + 1).value))));
    }
  });
  return rows;
}

/** The key figures: `label | of` → the exact value as shown (text), and what is said of it. */
function keyFigures(workbook: ExcelJS.Workbook): Map<string, { exact: string; about: string }> {
  return new Map(sectionRows(workbook, 'Key figures').map((cells) => [`${cells[0]} | ${cells[1]}`, { exact: cells[3]!, about: cells[4]! }]));
}

/** A decimal as an integer of 10^-18 units, to add exact values in the test. */
function scaled(decimal: string): bigint {
  const [whole, fraction = ''] = decimal.replace(/^-/, '').split('.');
  const units = BigInt(whole!) * 10n ** 18n + BigInt(fraction.padEnd(18, '0').slice(0, 18));
  return decimal.startsWith('-') ? -units : units;
}

function trim(value: string): string {
  return value.includes('.') ? value.replace(/\.?0+$/, '') : value;
}

/** The rows of a detail sheet's table, as objects by header. */
function tableRows(sheet: ExcelJS.Worksheet): Record<string, ExcelJS.CellValue>[] {
  const tables = Object.values((sheet as unknown as { tables: Record<string, { table: { ref?: string; tableRef?: string } }> }).tables);
  const ref = tables[0]?.table.ref ?? tables[0]?.table.tableRef;
  if (ref === undefined) return [];
  const last = Number(/(\d+)$/.exec(ref)![1]);
  const headers = (sheet.getRow(1).values as ExcelJS.CellValue[]).slice(1).map(String);
  const rows: Record<string, ExcelJS.CellValue>[] = [];
  for (let number = 2; number <= last; number++) rows.push(Object.fromEntries(headers.map((header, index) => [header, sheet.getRow(number).getCell(index + 1).value])));
  return rows;
}

/** The period's rows of a sheet's mart, per account (the test's own WHERE, not the writer's). */
function periodWhere(sheet: SheetSpec): string {
  if (sheet.period === null) return 'true';
  if (sheet.period.grain === 'nearest') {
    // Per account, the snapshot nearest midnight UTC after the period's last day.
    return `(${sheet.period.column} IS NULL OR (account, ${sheet.period.column}) IN (SELECT account, arg_min(${sheet.period.column}, abs(epoch(${sheet.period.column}) - epoch(TIMESTAMPTZ '${PERIOD.to} 00:00:00+00' + INTERVAL 1 DAY))) FROM ${sheet.mart} WHERE ${sheet.period.column} IS NOT NULL GROUP BY account))`;
  }
  return sheet.period.grain === 'day' ? `${sheet.period.column} BETWEEN DATE '${PERIOD.from}' AND DATE '${PERIOD.to}'` : `${sheet.period.column} = ${MONTH}`;
}

/** Figures checked against the marts: per group and account, from the test's own queries. */
const FIGURES: { report: string; label: string; sql: string }[] = [
  { report: 'pnl', label: 'Spot realized PnL', sql: `SELECT cost_method || ' · ' || quote_coin AS g, account, sum(realized_pnl) AS v FROM marts.spot_realized_pnl_monthly WHERE trade_month = ${MONTH} GROUP BY ALL` },
  { report: 'pnl', label: 'Futures trading fees', sql: `SELECT margin_coin AS g, account, sum(trading_fees) AS v FROM marts.futures_pnl_monthly WHERE pnl_month = ${MONTH} GROUP BY ALL` },
  // The closing balance of a month is that month's own closing: one row per account and coin.
  { report: 'balances', label: 'Closing balance', sql: `SELECT coin_name AS g, account, closing_balance AS v FROM marts.balance_reconciliation WHERE balance_month = ${MONTH}` },
];

describe('per-account and consolidated workbooks of three sandbox accounts', () => {
  let exchange: SandboxProcess;
  let dir: string;
  let outDir: string;
  let instance: DuckDBInstance;
  let duck: DuckDBConnection;
  const workbooks = new Map<string, ExcelJS.Workbook>();

  const query = async (sql: string) => (await duck.runAndReadAll(sql)).getRowObjectsJson() as Record<string, string | null>[];
  /** The figure's rows from the marts: group, account, exact value. */
  const expectedRows = async (sql: string) =>
    (await query(`SELECT g, account, CAST(v AS VARCHAR) AS v FROM (${sql}) ORDER BY g, account`)) as { g: string; account: string; v: string | null }[];

  beforeAll(async () => {
    exchange = await startSandboxProcess(['--accounts', '3', '--scale', 'small', '--end', '2026-11-01', '--window-ms', '1000', '--spot-quota', '1000000', '--futures-quota', '1000000']);
    dir = mkdtempSync(path.join(os.tmpdir(), 'exledger-account-reports-'));
    outDir = path.join(dir, 'out');
    const config = {
      spotBaseUrl: exchange.url,
      contractBaseUrl: exchange.url,
      accounts: exchange.accounts.map((account, index) => ({ name: ACCOUNTS[index], apiKey: account.apiKey, secret: account.secret, passphrase: account.passphrase })),
      budget: { spot: { quota: 1_000_000, windowMs: 1000 }, contract: { quota: 1_000_000, windowMs: 1000 } },
      retry: { retries: 8, minTimeoutMs: 50, maxTimeoutMs: 500 },
      // The reported month, the last of the sandbox's history (it ends 2026-11-01): a short sync.
      sync: { startDate: PERIOD.from },
      db: './data/exledger.duckdb',
      reports: { outDir: './out' },
      logDir: './logs',
    };
    writeFileSync(path.join(dir, 'exledger.config.json'), JSON.stringify(config));
    for (const args of [['sync', '--quiet'], ['build', '--quiet']]) {
      const result = await runCli(args, { cwd: dir });
      expect(result.code, `${args[0]}: ${result.stderr}`).toBe(0);
    }
    // The account's workbooks and the consolidated ones, at the same time (both only read the database).
    const reports = await Promise.all([
      runCli(['report', 'pnl', 'balances', '--period', PERIOD.label, '--account', 'beta', '--json'], { cwd: dir }),
      runCli(['report', 'pnl', 'balances', '--period', PERIOD.label, '--json'], { cwd: dir }),
    ]);
    for (const result of reports) expect(result.code, result.stderr).toBe(0);
    const written = reports.flatMap((result) => (JSON.parse(result.stdout) as { reports: { report: string; account: string | null; file: string }[] }).reports);
    expect(written.map((entry) => [entry.report, entry.account, path.basename(entry.file)])).toEqual([
      ['pnl', 'beta', 'pnl-2026-10-beta.xlsx'],
      ['balances', 'beta', 'balances-2026-10-beta.xlsx'],
      ['pnl', null, 'pnl-2026-10.xlsx'],
      ['balances', null, 'balances-2026-10.xlsx'],
    ]);
    for (const entry of written) workbooks.set(path.basename(entry.file, '.xlsx'), await readWorkbook(entry.file));
    instance = await DuckDBInstance.create(':memory:');
    duck = await instance.connect();
    await duck.run(`ATTACH '${path.join(dir, 'data', 'exledger.duckdb')}' AS ledger (READ_ONLY)`);
    await duck.run('USE ledger');
  }, 120_000);

  afterAll(async () => {
    duck?.closeSync();
    instance?.closeSync();
    expect(await exchange?.stop()).toBe(0);
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('an account\'s workbook holds that account\'s rows only, and its figures are that account\'s sums', async () => {
    for (const name of ['pnl', 'balances']) {
      const report = REPORTS.find((candidate) => candidate.name === name)!;
      const workbook = workbooks.get(`${name}-${PERIOD.label}-beta`)!;
      const summary = workbook.getWorksheet('Summary')!;
      expect(String(summary.getCell('A1').value)).toBe(`${report.title}: ${PERIOD.label}, account beta`);
      // Freshness lines of beta only, every stream of the report.
      const freshness = sectionRows(workbook, 'Data freshness');
      expect(freshness.map((cells) => cells[1])).toEqual(report.streams.map(() => 'beta'));
      // Built without a reporting currency: the valuation sheets are left out.
      expect(workbook.worksheets.map((sheet) => sheet.name)).toEqual(['Summary', ...withoutValuation(report).sheets.map((sheet) => sheet.name)]);
      for (const sheet of withoutValuation(report).sheets) {
        const rows = tableRows(workbook.getWorksheet(sheet.name)!);
        const [counted] = await query(`SELECT CAST(count(*) AS VARCHAR) AS n FROM ${sheet.mart} WHERE ${periodWhere(sheet)} AND account = 'beta'`);
        expect(rows.length, `${name}: ${sheet.name}`).toBe(Number(counted!.n));
        expect(rows.every((row) => row.Account === 'beta'), `${name}: ${sheet.name} holds other accounts' rows`).toBe(true);
        // A printed page says whose it is.
        expect(workbook.getWorksheet(sheet.name)!.headerFooter.oddHeader).toContain(`${report.title} (${name}), account beta`);
      }
      // No line per account, no consolidated line: one account.
      expect([...keyFigures(workbook).keys()].filter((key) => /alpha|gamma|all accounts/.test(key))).toEqual([]);
    }
    // The other accounts have rows too: the filter did something.
    const [others] = await query(`SELECT CAST(count(*) AS VARCHAR) AS n FROM marts.spot_lot_matches WHERE account <> 'beta' AND sell_date BETWEEN DATE '${PERIOD.from}' AND DATE '${PERIOD.to}'`);
    expect(Number(others!.n)).toBeGreaterThan(0);
    expect(tableRows(workbooks.get(`pnl-${PERIOD.label}-beta`)!.getWorksheet('Spot lot detail')!).length).toBeGreaterThan(0);

    for (const { report, label, sql } of FIGURES) {
      const figures = keyFigures(workbooks.get(`${report}-${PERIOD.label}-beta`)!);
      const expected = (await expectedRows(sql)).filter((row) => row.account === 'beta');
      expect(expected.length, `${label} has rows of beta`).toBeGreaterThan(0);
      expect([...figures.keys()].filter((key) => key.startsWith(`${label} | `)).sort()).toEqual(expected.map((row) => `${label} | ${row.g}`).sort());
      for (const row of expected) expect(figures.get(`${label} | ${row.g}`)!.exact, `${label} ${row.g}`).toBe(trim(row.v!));
    }
  });

  it('the consolidated workbook gives each figure per account and their total, exact; its sheets hold every account', async () => {
    let split = 0;
    for (const { report, label, sql } of FIGURES) {
      const figures = keyFigures(workbooks.get(`${report}-${PERIOD.label}`)!);
      const expected = await expectedRows(sql);
      const groups = [...new Set(expected.map((row) => row.g))];
      const totals = await query(`SELECT g, CAST(sum(v) AS VARCHAR) AS v FROM (${sql}) GROUP BY g`);
      expect([...figures.keys()].filter((key) => key.startsWith(`${label} | `)).sort()).toEqual(
        [...expected.map((row) => `${label} | ${row.g} · ${row.account}`), ...groups.map((group) => `${label} | ${group} · all accounts`)].sort(),
      );
      for (const group of groups) {
        const lines = expected.filter((row) => row.g === group);
        for (const row of lines) expect(figures.get(`${label} | ${group} · ${row.account}`)!.exact, `${label} ${group} ${row.account}`).toBe(trim(row.v!));
        const total = figures.get(`${label} | ${group} · all accounts`)!.exact;
        // The total is the sum of the accounts' lines shown above it, and the marts' sum over every account.
        const shown = lines.reduce((sum, row) => sum + scaled(figures.get(`${label} | ${group} · ${row.account}`)!.exact), 0n);
        expect(scaled(total), `${label} ${group}`).toBe(shown);
        expect(total).toBe(trim(totals.find((row) => row.g === group)!.v!));
        if (lines.length > 1) split++;
      }
    }
    // Groups with several accounts' values: the totals above added something.
    expect(split).toBeGreaterThan(2);
    const pnl = workbooks.get(`pnl-${PERIOD.label}`)!;
    expect(sectionRows(pnl, 'Data freshness').map((cells) => cells[1])).toEqual(ACCOUNTS.flatMap((account) => REPORTS.find((report) => report.name === 'pnl')!.streams.map(() => account)));
    const accountsShown = new Set(tableRows(pnl.getWorksheet('Spot lot detail')!).map((row) => row.Account));
    expect([...accountsShown].sort()).toEqual([...ACCOUNTS]);
  });

  it('an account the database does not hold, or two in one --account, is exit 2 naming it, and no workbook is written or touched', async () => {
    const before = readdirSync(outDir).map((name) => `${name} ${statSync(path.join(outDir, name)).mtimeMs}`);
    const results: CliResult[] = await Promise.all([
      runCli(['report', 'pnl', '--period', PERIOD.label, '--account', 'zeta'], { cwd: dir }),
      runCli(['report', 'all', '--period', PERIOD.label, '--account', 'alpha,beta'], { cwd: dir }),
    ]);
    for (const result of results) expect(result.code, result.stderr).toBe(2);
    expect(results[0]!.stderr).toContain('--account: "zeta" is not an account of this database; its accounts are alpha, beta, gamma');
    expect(results[1]!.stderr).toContain('--account: "alpha,beta" names several accounts');
    expect(readdirSync(outDir).map((name) => `${name} ${statSync(path.join(outDir, name)).mtimeMs}`)).toEqual(before);
  });
});

describe('a total over accounts of which one is unknown', () => {
  // Funding of beta is unknown (no two collateral snapshots): the consolidated funding is alpha's
  // 1.5 and says it lacks beta; the net result of beta lacks its funding, so the consolidated net
  // result (10.25 + -3.5 = 6.75) lacks beta's funding too.
  const report = defineReport({
    name: 'futures-test',
    title: 'Futures',
    streams: ['futures_fills'],
    sheets: [
      {
        name: 'Futures',
        description: 'Futures per account and month',
        mart: 'marts.futures_test',
        period: { column: 'pnl_month', grain: 'month' },
        orderBy: ['margin_coin', 'account'],
        columns: [
          { column: 'account', header: 'Account', format: 'text' },
          { column: 'margin_coin', header: 'Margin coin', format: 'text' },
          { column: 'pnl_month', header: 'Month', format: 'month' },
          { column: 'funding', header: 'Funding', format: 'amount', coinColumn: 'margin_coin', total: true },
          { column: 'net_result', header: 'Net result', format: 'amount', coinColumn: 'margin_coin', total: true },
        ],
      },
    ],
    summary: [
      { label: 'Funding', sheet: 'Futures', sum: 'funding', by: ['margin_coin'], coinColumn: 'margin_coin', unknown: 'no two collateral snapshots' },
      { label: 'Net result', sheet: 'Futures', sum: 'net_result', by: ['margin_coin'], coinColumn: 'margin_coin', includes: ['Funding'] },
    ],
    chart: { title: 'Net', mart: 'marts.futures_test', monthColumn: 'pnl_month', valueColumn: 'net_result', seriesBy: ['margin_coin'], coinColumn: 'margin_coin' },
  });
  let db: Database;

  beforeAll(async () => {
    db = await Database.open(':memory:');
    await db.run('CREATE SCHEMA marts');
    await db.run(`CREATE TABLE marts.futures_test AS SELECT * FROM (VALUES
      ('alpha', 'USDT', DATE '2026-10-01', CAST('1.5' AS DECIMAL(38, 18)), CAST('10.25' AS DECIMAL(38, 18))),
      ('beta', 'USDT', DATE '2026-10-01', NULL, CAST('-3.5' AS DECIMAL(38, 18)))
    ) AS t(account, margin_coin, pnl_month, funding, net_result)`);
  });

  afterAll(() => db?.close());

  it('keeps the known accounts\' sum and says which account it lacks', async () => {
    const figures = await readFigures(db, report, PERIOD, { perAccount: true });
    expect(figures.map((figure) => [figure.label, figure.account, figure.value, figure.excludes])).toEqual([
      ['Funding', 'alpha', '1.500000000000000000', []],
      ['Funding', 'beta', null, []],
      ['Funding', null, '1.500000000000000000', ['account beta']],
      ['Net result', 'alpha', '10.250000000000000000', []],
      ['Net result', 'beta', '-3.500000000000000000', ['Funding']],
      ['Net result', null, '6.750000000000000000', ['Funding of account beta']],
    ]);
    // One account (--account beta): its funding is unknown, and no total says otherwise.
    const beta = await readFigures(db, report, PERIOD, { account: 'beta' });
    expect(beta.map((figure) => [figure.label, figure.account, figure.value, figure.excludes])).toEqual([
      ['Funding', null, null, []],
      ['Net result', null, '-3.500000000000000000', ['Funding']],
    ]);
  });

  it('a sum past what DuckDB adds exactly is an error naming the figure, never a rounded total', async () => {
    // Each account's net result fits a DECIMAL(38, 18) (9e19 coins: 9e37 units); their total does not (1.8e38 units > 1.7e38).
    const huge = await Database.open(':memory:');
    try {
      await huge.run('CREATE SCHEMA marts');
      await huge.run(`CREATE TABLE marts.futures_test AS SELECT * FROM (VALUES
        ('alpha', 'USDT', DATE '2026-10-01', CAST('1' AS DECIMAL(38, 18)), CAST('90000000000000000000' AS DECIMAL(38, 18))),
        ('beta', 'USDT', DATE '2026-10-01', CAST('1' AS DECIMAL(38, 18)), CAST('90000000000000000000' AS DECIMAL(38, 18)))
      ) AS t(account, margin_coin, pnl_month, funding, net_result)`);
      const one = await readFigures(huge, report, PERIOD, { account: 'alpha' });
      expect(one.map((figure) => [figure.label, figure.value])).toEqual([
        ['Funding', '1.000000000000000000'],
        ['Net result', '90000000000000000000.000000000000000000'],
      ]);
      const failure = await readFigures(huge, report, PERIOD).then(() => undefined, (error: unknown) => error);
      expect(failure).toBeInstanceOf(DataError);
      expect((failure as DataError).message).toMatch(/^report futures-test: the Summary's "Net result" \(net_result of "Futures", marts\.futures_test\): its rows sum past what DuckDB adds exactly/);
      expect((failure as DataError).hint).toMatch(/a price or a quantity in the raw data is wrong/);
    } finally {
      huge.close();
    }
  });
});
