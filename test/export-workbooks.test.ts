import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { STREAMS } from '../pipelines/index.ts';
import { COIN_FORMATS } from '../reports/coin-formats.ts';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPORTS } from '../reports/index.ts';
import { lastClosedPeriod, type ReportPeriod } from '../src/export/period.ts';
import { withoutValuation, type ColumnSpec, type ReportSpec, type SheetSpec } from '../src/export/report-definition.ts';
import { readChart } from '../src/export/summary-sheet.ts';
import { writeReport, type ReportResult } from '../src/export/write-report.ts';
import { buildModels } from '../src/models/build.ts';
import { DEFAULT_MODEL_SETTINGS } from '../src/models/settings.ts';
import type { RunningSandbox } from '../src/sandbox/server.ts';
import { Database } from '../src/store/database.ts';
import { buildAll, insertHistory, openModelDb } from './support/model-db.ts';
import { startTestSandbox } from './support/sandbox.ts';
import { createWorkspace, syncOnce, type SyncWorkspace } from './support/sync-harness.ts';

/**
 * The workbooks, read back with exceljs: every detail sheet holds its mart's rows of the period
 * (numbers as numbers, dates as dates, ids and symbols as text, unknowns as "unknown"), and the
 * Summary's figures equal the marts, computed here by queries of the test's own. The totals, the
 * decimals and the unknowns as a controller signs them: test/export-signoff.test.ts.
 */

const WARNING_FILL = 'FFFFC7CE';

async function readWorkbook(file: string): Promise<ExcelJS.Workbook> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.readFile(file);
  return workbook;
}

/** The data rows of a detail sheet (its table's rows below the header), as cell values. */
function dataRows(sheet: ExcelJS.Worksheet, columns: number): ExcelJS.CellValue[][] {
  const tables = Object.values((sheet as unknown as { tables: Record<string, { table: { ref?: string; tableRef?: string } }> }).tables);
  const ref = tables[0]?.table.ref ?? tables[0]?.table.tableRef;
  const last = ref === undefined ? 1 : Number(/(\d+)$/.exec(ref)![1]);
  const rows: ExcelJS.CellValue[][] = [];
  for (let number = 2; number <= last; number++) rows.push(Array.from({ length: columns }, (_, index) => sheet.getRow(number).getCell(index + 1).value));
  return rows;
}

/** What a mart's value must look like in its cell, by the column's format (NULL: blank, or "unknown" where it means unknown). */
function expectedCell(column: ColumnSpec, value: string | null): ExcelJS.CellValue {
  const format = column.format;
  if (value === null) return ['amount', 'integer', 'price', 'rate'].includes(format) && (column.nullMeans ?? 'unknown') === 'unknown' ? 'unknown' : null;
  if (format === 'text' || format === 'id') return value;
  if (format === 'date' || format === 'month') return new Date(`${value}T00:00:00Z`);
  if (format === 'datetime') return new Date(Number(value));
  return Number(value);
}

/** The mart's rows of the period, queried here (not by the writer), in the sheet's order. */
async function martRows(db: Database, sheet: SheetSpec, period: ReportPeriod): Promise<(string | null)[][]> {
  const select = sheet.columns.map((column) => (column.format === 'datetime' ? `CAST(epoch_ms(${column.column}) AS VARCHAR)` : `CAST(${column.column} AS VARCHAR)`));
  const where =
    sheet.period === null
      ? 'true'
      : sheet.period.grain === 'nearest'
        ? // Per account, the snapshot nearest midnight UTC after the period's last day (the test's own query).
          `(${sheet.period.column} IS NULL OR (account, ${sheet.period.column}) IN (SELECT account, arg_min(${sheet.period.column}, abs(epoch(${sheet.period.column}) - epoch(TIMESTAMPTZ '${period.to} 00:00:00+00' + INTERVAL 1 DAY))) FROM ${sheet.mart} WHERE ${sheet.period.column} IS NOT NULL GROUP BY account))`
        : sheet.period.grain === 'day'
        ? `${sheet.period.column} BETWEEN DATE '${period.from}' AND DATE '${period.to}'`
        : `${sheet.period.column} BETWEEN date_trunc('month', DATE '${period.from}') AND date_trunc('month', DATE '${period.to}')`;
  // The sheet's own subset of its mart (Needs a price: the report's marts; Not posted: status no_price).
  const only = sheet.only === undefined ? '' : ` AND CAST(${sheet.only.column} AS VARCHAR) IN (${sheet.only.values.map((value) => `'${value}'`).join(', ')})`;
  const rows = await db.all<Record<string, string | null>>(`SELECT ${select.map((expression, index) => `${expression} AS c${index}`).join(', ')} FROM ${sheet.mart} WHERE ${where}${only} ORDER BY ${sheet.orderBy.join(', ')}`);
  return rows.map((row) => sheet.columns.map((_, index) => row[`c${index}`] ?? null));
}

/** Checks every detail sheet of a workbook against its mart; returns the rows seen per sheet. */
async function expectSheetsMatchMarts(db: Database, declared: ReportSpec, result: ReportResult, workbook: ExcelJS.Workbook): Promise<Record<string, number>> {
  const seen: Record<string, number> = {};
  // Built without a reporting currency: the workbook leaves its valuation columns and sheets out.
  const valued = (await db.all<{ reporting_currency: string | null }>('SELECT reporting_currency FROM settings.reporting'))[0]?.reporting_currency ?? null;
  const report = valued === null ? withoutValuation(declared) : declared;
  for (const written of result.sheets) {
    const spec = report.sheets.find((sheet) => sheet.name === written.name)!;
    const expected = await martRows(db, spec, result.period);
    const rows: ExcelJS.CellValue[][] = [];
    for (const part of written.parts) {
      const sheet = workbook.getWorksheet(part)!;
      expect(sheet, part).toBeDefined();
      expect(sheet.getRow(1).values).toEqual([undefined, ...spec.columns.map((column) => column.header)]);
      expect(sheet.views[0]).toMatchObject({ state: 'frozen', ySplit: 1 });
      const partRows = dataRows(sheet, spec.columns.length);
      rows.push(...partRows);
      const tables = Object.values((sheet as unknown as { tables: Record<string, { table: { name: string } }> }).tables);
      if (partRows.length === 0) {
        expect(tables).toEqual([]);
        continue;
      }
      expect(tables).toHaveLength(1);
      // Totals (one row per coin and cost method, test/export-signoff.test.ts checks them) sit below a blank row, outside the table.
      expect(sheet.getRow(partRows.length + 2).getCell(1).value ?? null).toBe(null);
    }
    expect(rows.length, `${report.name} / ${spec.name}`).toBe(expected.length);
    expect(written.rows).toBe(expected.length);
    rows.forEach((row, rowIndex) => {
      spec.columns.forEach((column, index) => {
        const value = row[index] ?? null;
        const wanted = expectedCell(column, expected[rowIndex]![index]!);
        expect(value, `${spec.name} row ${rowIndex + 2} ${column.header}`).toEqual(wanted);
        if (['amount', 'integer', 'price', 'rate'].includes(column.format) && expected[rowIndex]![index] !== null) expect(typeof value).toBe('number');
      });
    });
    seen[spec.name] = rows.length;
  }
  return seen;
}

/** The Summary's key figures: label and group → [number cell, exact text cell]. */
function summaryFigures(workbook: ExcelJS.Workbook): Map<string, { value: ExcelJS.CellValue; exact: ExcelJS.CellValue }> {
  const sheet = workbook.getWorksheet('Summary')!;
  const figures = new Map<string, { value: ExcelJS.CellValue; exact: ExcelJS.CellValue }>();
  let inFigures = false;
  sheet.eachRow((row) => {
    const first = row.getCell(1).value;
    if (first === 'Key figures') inFigures = true;
    else if (first === 'Sheets') inFigures = false;
    else if (inFigures && first !== 'Figure' && first !== null) figures.set(`${row.getCell(1).text} | ${String(row.getCell(2).value)}`, { value: row.getCell(3).value, exact: row.getCell(4).value });
  });
  return figures;
}

function trim(value: string): string {
  return value.includes('.') ? value.replace(/\.?0+$/, '') : value;
}

describe('workbooks of a synced sandbox history', () => {
  let sandbox: RunningSandbox;
  let workspace: SyncWorkspace;
  let db: Database;
  let period: ReportPeriod;
  const results = new Map<string, ReportResult>();
  const workbooks = new Map<string, ExcelJS.Workbook>();

  beforeAll(async () => {
    sandbox = await startTestSandbox({ scale: 'small', seed: 5, spotQuota: 1_000_000, futuresQuota: 1_000_000 });
    workspace = createWorkspace(sandbox);
    await syncOnce(workspace, sandbox);
    db = await Database.open(workspace.db);
    // Valued in USDT (identity, other coins derived from their USDT fills), so the journal workbook is written too.
    await buildModels(db, { ...DEFAULT_MODEL_SETTINGS, costMethods: ['fifo', 'average'], reportingTimeZone: 'Europe/Berlin', reportingCurrency: 'USDT' });
    period = lastClosedPeriod('month', 'Europe/Berlin', new Date(sandbox.exchange.endMs));
    const outDir = path.join(workspace.dir, 'out');
    for (const report of REPORTS) {
      const result = await writeReport(db, report, { streams: STREAMS, coinFormats: COIN_FORMATS, period, outDir, now: new Date(sandbox.exchange.endMs) });
      results.set(report.name, result);
      workbooks.set(report.name, await readWorkbook(result.file));
    }
  }, 120_000);

  afterAll(async () => {
    db?.close();
    await sandbox?.close();
    if (workspace !== undefined) rmSync(workspace.dir, { recursive: true, force: true });
  });

  it('writes the six workbooks (and the journal\'s CSV), and nothing half-written beside them', () => {
    expect(readdirSync(path.join(workspace.dir, 'out')).sort()).toEqual(
      [...['balances', 'fees', 'holdings'].map((name) => `${name}-${period.label}.xlsx`), `journal-${period.label}.csv`, ...['journal', 'pnl', 'rebates'].map((name) => `${name}-${period.label}.xlsx`)],
    );
  });

  it('puts a Summary first with the period, the zone, fresh streams, and the chart as a picture', () => {
    for (const report of REPORTS) {
      const workbook = workbooks.get(report.name)!;
      expect(workbook.worksheets.map((sheet) => sheet.name)).toEqual(['Summary', ...results.get(report.name)!.sheets.flatMap((sheet) => sheet.parts)]);
      const summary = workbook.getWorksheet('Summary')!;
      const text = summary.getSheetValues().flat().map(String).join('\n');
      expect(text).toContain(`${period.from} to ${period.to}`);
      expect(text).toContain('Europe/Berlin');
      expect(text).toContain('Every stream of this report is synced through the end of the period.');
      expect(results.get(report.name)!.warnings).toEqual([]);
      expect(summary.getImages()).toHaveLength(1);
    }
  });

  it('every detail sheet holds exactly its mart\'s rows of the period, numbers as numbers', async () => {
    const counts: Record<string, Record<string, number>> = {};
    for (const report of REPORTS) counts[report.name] = await expectSheetsMatchMarts(db, report, results.get(report.name)!, workbooks.get(report.name)!);
    // The history has trading, fees, commissions and bills in that month: the comparisons above were not vacuous.
    expect(counts.pnl!['Spot lot detail']).toBeGreaterThan(0);
    expect(counts.fees!['Fees by day']).toBeGreaterThan(0);
    expect(counts.rebates!['Commission by month']).toBeGreaterThan(0);
    expect(counts.balances!['Roll-forward']).toBeGreaterThan(0);
  });

  it('the Summary\'s key figures equal the marts', async () => {
    const month = `DATE '${period.from}'`;
    const cases: { report: string; label: string; sql: string }[] = [
      { report: 'pnl', label: 'Spot realized PnL', sql: `SELECT cost_method || ' · ' || quote_coin AS g, sum(realized_pnl) AS v FROM marts.spot_realized_pnl_monthly WHERE trade_month = ${month} GROUP BY ALL` },
      { report: 'pnl', label: 'Futures net result', sql: `SELECT margin_coin AS g, sum(net_result) AS v FROM marts.futures_pnl_monthly WHERE pnl_month = ${month} GROUP BY ALL` },
      { report: 'fees', label: 'Fees paid', sql: `SELECT product || ' · ' || coin AS g, sum(fees_paid) AS v FROM marts.fees_monthly WHERE fee_month = ${month} GROUP BY ALL` },
      { report: 'rebates', label: 'Commission (records)', sql: `SELECT product_type || ' · ' || coin AS g, sum(commission) AS v FROM marts.affiliate_rebates_monthly WHERE commission_month = ${month} GROUP BY ALL` },
      // The closing balance of the period is the month's own closing, per coin (one account: no per-account lines).
      { report: 'balances', label: 'Closing balance', sql: `SELECT coin_name AS g, sum(closing_balance) AS v FROM marts.balance_reconciliation WHERE balance_month = ${month} GROUP BY ALL` },
    ];
    for (const { report, label, sql } of cases) {
      const figures = summaryFigures(workbooks.get(report)!);
      // One account in the database: no line per account, no "all accounts" line repeating it.
      expect([...figures.keys()].filter((key) => key.includes('all accounts'))).toEqual([]);
      const expected = await db.all<{ g: string; v: string }>(`SELECT g, CAST(v AS VARCHAR) AS v FROM (${sql}) ORDER BY g`);
      expect(expected.length, `${report}: ${label} has rows`).toBeGreaterThan(0);
      const shown = [...figures.entries()].filter(([key]) => key.startsWith(`${label} | `));
      expect(shown.map(([key]) => key.slice(label.length + 3)).sort()).toEqual(expected.map((row) => row.g).sort());
      for (const row of expected) {
        const figure = figures.get(`${label} | ${row.g}`)!;
        expect(figure.value, `${report} ${label} ${row.g}`).toBe(Number(row.v));
        expect(figure.exact).toBe(trim(row.v));
      }
    }
  });
});

describe('the Summary chart of a synced sandbox history', () => {
  let sandbox: RunningSandbox;
  let workspace: SyncWorkspace;
  let db: Database;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ scale: 'small', seed: 5, spotQuota: 1_000_000, futuresQuota: 1_000_000 });
    workspace = createWorkspace(sandbox);
    await syncOnce(workspace, sandbox);
    db = await Database.open(workspace.db);
    // average listed first: the chart follows the configured order, not the alphabet.
    await buildModels(db, { ...DEFAULT_MODEL_SETTINGS, costMethods: ['average', 'fifo'] });
  }, 120_000);

  afterAll(async () => {
    db?.close();
    await sandbox?.close();
    if (workspace !== undefined) rmSync(workspace.dir, { recursive: true, force: true });
  });

  it('draws the twelve months to the period for USDT (before other coins) and the first configured cost method', async () => {
    const period: ReportPeriod = { from: '2026-10-01', to: '2026-10-31', label: '2026-10' };
    const pnl = REPORTS.find((report) => report.name === 'pnl')!;
    const quotes = await db.all<{ quote_coin: string }>('SELECT DISTINCT quote_coin FROM marts.spot_realized_pnl_monthly ORDER BY 1');
    // The history trades against more than one quote coin, so the choice is a real one.
    expect(quotes.map((row) => row.quote_coin)).toEqual(expect.arrayContaining(['BTC', 'USDT']));
    const chart = await readChart(db, pnl, period, COIN_FORMATS.chartCoins);
    expect(chart.title).toBe('Spot realized PnL per month: average · USDT');
    expect(chart.unit).toBe('USDT');
    const months = await db.all<{ month: string; pnl: string }>(
      `SELECT strftime(m, '%Y-%m') AS month, CAST(coalesce((SELECT sum(realized_pnl) FROM marts.spot_realized_pnl_monthly
         WHERE cost_method = 'average' AND quote_coin = 'USDT' AND trade_month = m), 0) AS VARCHAR) AS pnl
       FROM (SELECT CAST(range AS DATE) AS m FROM range(DATE '2025-11-01', DATE '2026-11-01', INTERVAL 1 MONTH)) ORDER BY m`,
    );
    expect(chart.bars).toEqual(months.map((row) => ({ label: row.month, value: row.pnl })));
  });
});

describe('workbooks of a hand-built ledger', () => {
  let db: Database;
  let outDir: string;
  const period: ReportPeriod = { from: '2026-01-01', to: '2026-01-31', label: '2026-01' };

  /** A spot fill (exchange-api.md 2.5) of a symbol whose name a spreadsheet would take for a formula. */
  function fill(fillId: string, at: string, side: 'buy' | 'sell', quantity: string, price: string, fees: string): object {
    return {
      accountId: '1',
      symbol: '=HYPERLINK("http://example.invalid","x")',
      baseCoin: '=1+1',
      quoteCoin: 'USDT',
      orderId: `9${fillId}`,
      fillId,
      orderType: 'limit',
      side,
      fillPrice: price,
      fillQuantity: quantity,
      fillTotalAmount: String(Number(quantity) * Number(price)),
      fees,
      cTime: String(Date.parse(at)),
    };
  }

  function bill(billId: string, iso: string, coinName: string, bizType: string, deltaAmount: string, afterAmount: string) {
    return { billId, coinId: 2, coinName, bizType, deltaAmount, afterAmount, fees: '0', cTime: String(Date.parse(iso)) };
  }

  beforeAll(async () => {
    db = await openModelDb();
    await insertHistory(db, 'spot_fills', [
      fill('1', '2026-01-02T00:00:00Z', 'buy', '2', '100', '0'),
      fill('2', '2026-01-03T00:00:00Z', 'buy', '2', '110', '0'),
      fill('3', '2026-01-04T00:00:00Z', 'sell', '3', '120', '0'),
      fill('4', '2026-01-05T00:00:00Z', 'sell', '2', '130', '0'),
    ]);
    // Bill 3 does not continue the chain: 10 + 5 = 15 expected before it, 20 found (after 25 - delta 5).
    await insertHistory(db, 'funding_bills', [
      bill('1', '2026-01-02T00:00:00Z', 'USDT', 'deposit', '10', '10'),
      bill('3', '2026-01-04T00:00:00Z', 'USDT', 'deposit', '5', '25'),
    ]);
    await buildAll(db);
    outDir = mkdtempSync(path.join(tmpdir(), 'exledger-workbooks-'));
  });

  afterAll(() => {
    db?.close();
    rmSync(outDir, { recursive: true, force: true });
  });

  it('stores exchange text that begins with "=" as text, never as a formula', async () => {
    const result = await writeReport(db, REPORTS.find((report) => report.name === 'pnl')!, { streams: STREAMS, coinFormats: COIN_FORMATS, period, outDir });
    const sheet = (await readWorkbook(result.file)).getWorksheet('Spot lot detail')!;
    const symbol = sheet.getRow(2).getCell(3);
    expect(symbol.value).toBe('=HYPERLINK("http://example.invalid","x")');
    expect(symbol.type).toBe(ExcelJS.ValueType.String);
    expect(sheet.getRow(2).getCell(10).value).toBe('=1+1');
    expect(sheet.getRow(2).getCell(10).type).toBe(ExcelJS.ValueType.String);
  });

  it('continues a sheet past its row limit on a second sheet with its own table, rows in order', async () => {
    const report = REPORTS.find((candidate) => candidate.name === 'pnl')!;
    const result = await writeReport(db, report, { streams: STREAMS, coinFormats: COIN_FORMATS, period, outDir, maxRowsPerSheet: 2 });
    const lots = result.sheets.find((sheet) => sheet.name === 'Spot lot detail')!;
    // FIFO: sell 3 takes 2 of lot 1 and 1 of lot 2; sell 4 takes lot 2's last 1 and 1 unmatched: 4 rows, 2 per sheet.
    expect(lots).toEqual({ name: 'Spot lot detail', parts: ['Spot lot detail', 'Spot lot detail (2)'], rows: 4 });
    const workbook = await readWorkbook(result.file);
    const seen = await expectSheetsMatchMarts(db, report, result, workbook);
    expect(seen['Spot lot detail']).toBe(4);
    const tableNames = result.sheets.flatMap((sheet) => sheet.parts).flatMap((part) => Object.keys((workbook.getWorksheet(part) as unknown as { tables: object }).tables));
    expect(new Set(tableNames).size).toBe(tableNames.length);
  });

  it('highlights a chain break, warns of streams never synced, and writes an empty sheet without a table', async () => {
    const result = await writeReport(db, REPORTS.find((report) => report.name === 'balances')!, { streams: STREAMS, coinFormats: COIN_FORMATS, period, outDir });
    const workbook = await readWorkbook(result.file);
    const breaks = workbook.getWorksheet('Chain breaks')!;
    expect(breaks.getRow(2).getCell(4).value).toBe('3');
    expect((breaks.getRow(2).getCell(1).fill as ExcelJS.FillPattern).fgColor?.argb).toBe(WARNING_FILL);
    // This database was never synced (no meta.runs): each stream of the report is flagged.
    expect(result.warnings).toEqual(['funding_bills: never synced', 'spot_assets: never synced']);
    const summary = workbook.getWorksheet('Summary')!.getSheetValues().flat().map(String).join('\n');
    expect(summary).toContain('Warning: 2 stream(s) stale or incomplete');

    const rebates = await writeReport(db, REPORTS.find((report) => report.name === 'rebates')!, { streams: STREAMS, coinFormats: COIN_FORMATS, period, outDir });
    const commission = (await readWorkbook(rebates.file)).getWorksheet('Commission by month')!;
    // Never synced: the empty sheet says so instead of "No rows in this period." (test/export-readback.test.ts).
    expect(commission.getRow(2).getCell(1).value).toMatch(/^No rows: not synced: affiliate_commissions history never synced/);
    expect(Object.keys((commission as unknown as { tables: object }).tables)).toEqual([]);
  });
});
