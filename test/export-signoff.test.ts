import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAMS } from '../pipelines/index.ts';
import { COIN_FORMATS } from '../reports/coin-formats.ts';
import { REPORTS } from '../reports/index.ts';
import type { ReportPeriod } from '../src/export/period.ts';
import type { ColumnSpec, ReportSpec, SheetSpec } from '../src/export/report-definition.ts';
import { writeReport, type ReportResult } from '../src/export/write-report.ts';
import { Database } from '../src/store/database.ts';
import type { SyncWorkspace } from './support/sync-harness.ts';
import { openDemoLikeDatabase, type DemoLikeDatabase } from './support/demo-like-db.ts';

/**
 * What a controller signs (issue 13), read back with exceljs from the real reports of a synced
 * sandbox history, every property checked against the marts queried here:
 * - every amount cell shows exactly the decimals of its row's coin (stablecoins and fiat 2, others 8;
 *   reports/coin-formats.ts), fixed (no optional `#`), in the cells and in the totals;
 * - a NULL of the mart is never a number in its cell (blank or "unknown");
 * - every totals row sums one coin and one cost method, SUBTOTAL(109, …) over the rows of that key
 *   (so it follows the filters), every data row in exactly one of them, and its cached result is an
 *   independent BigInt sum of those rows, or "unknown" where one of them is unknown;
 * - a sheet that totals nothing has no totals row.
 * The same with a small row limit, so each continued part carries its own totals.
 */

const UNKNOWN = 'unknown';

/** Decimals shown for `coin`, as reports/coin-formats.ts declares them. */
function decimalsFor(coin: string | null | undefined): number {
  return coin === null || coin === undefined ? COIN_FORMATS.defaultDecimals : (COIN_FORMATS.fixedDecimals[coin] ?? COIN_FORMATS.defaultDecimals);
}

/** The decimals a number format shows, in its positive and negative sections alike; throws on optional digits. */
function formatDecimals(numFmt: string | undefined, where: string): number {
  expect(numFmt, `${where}: number format`).toBeDefined();
  const sections = numFmt!.split(';').map((section) => section.replace(/\[[^\]]*\]/g, ''));
  const decimals = sections.map((section) => {
    const fraction = /\.([0#]+)/.exec(section)?.[1] ?? '';
    expect(fraction, `${where}: "${numFmt}" has fixed decimals only`).not.toContain('#');
    return fraction.length;
  });
  expect(new Set(decimals).size, `${where}: "${numFmt}" shows the same decimals for negatives`).toBe(1);
  return decimals[0]!;
}

/** Exact sum of decimal strings (BigInt at 18 decimals), independent of the writer's. */
function sumExact(values: readonly string[]): string {
  let units = 0n;
  for (const value of values) {
    const negative = value.startsWith('-');
    const [whole, fraction = ''] = value.replace('-', '').split('.');
    expect(fraction.length, `${value} fits 18 decimals`).toBeLessThanOrEqual(18);
    const scaled = BigInt(whole!) * 10n ** 18n + BigInt(fraction.padEnd(18, '0'));
    units += negative ? -scaled : scaled;
  }
  const negative = units < 0n;
  const magnitude = negative ? -units : units;
  return `${negative ? '-' : ''}${magnitude / 10n ** 18n}.${(magnitude % 10n ** 18n).toString().padStart(18, '0')}`;
}

/** The mart's rows of the period as exact text, in the sheet's order (the test's own query). */
async function martRows(db: Database, sheet: SheetSpec, period: ReportPeriod): Promise<(string | null)[][]> {
  const where =
    sheet.period === null
      ? 'true'
      : sheet.period.grain === 'nearest'
        ? // Per account, the snapshot nearest midnight UTC after the period's last day (the test's own query).
          `(${sheet.period.column} IS NULL OR (account, ${sheet.period.column}) IN (SELECT account, arg_min(${sheet.period.column}, abs(epoch(${sheet.period.column}) - epoch(TIMESTAMPTZ '${period.to} 00:00:00+00' + INTERVAL 1 DAY))) FROM ${sheet.mart} WHERE ${sheet.period.column} IS NOT NULL GROUP BY account))`
        : sheet.period.grain === 'day'
        ? `${sheet.period.column} BETWEEN DATE '${period.from}' AND DATE '${period.to}'`
        : `${sheet.period.column} BETWEEN date_trunc('month', DATE '${period.from}') AND date_trunc('month', DATE '${period.to}')`;
  const only = sheet.only === undefined ? '' : ` AND CAST(${sheet.only.column} AS VARCHAR) IN (${sheet.only.values.map((value) => `'${value}'`).join(', ')})`;
  const rows = await db.all<Record<string, string | null>>(
    `SELECT ${sheet.columns.map((column, index) => `CAST(${column.column} AS VARCHAR) AS c${index}`).join(', ')} FROM ${sheet.mart} WHERE ${where}${only} ORDER BY ${sheet.orderBy.join(', ')}`,
  );
  return rows.map((row) => sheet.columns.map((_, index) => row[`c${index}`] ?? null));
}

interface Ranges {
  column: string;
  rows: number[];
}

/** The rows a totals formula reads: each `SUBTOTAL(109,X2:X40)` of it (one column), expanded. */
function subtotalRanges(formula: string, where: string): Ranges {
  const ranges = [...formula.matchAll(/SUBTOTAL\(109,([A-Z]+)(\d+):([A-Z]+)(\d+)\)/g)];
  expect(ranges.length, `${where}: "${formula}" sums with SUBTOTAL(109, …)`).toBeGreaterThan(0);
  const columns = new Set(ranges.flatMap((match) => [match[1], match[3]]));
  expect(columns.size, `${where}: one column`).toBe(1);
  const rows = ranges.flatMap((match) => Array.from({ length: Number(match[4]) - Number(match[2]) + 1 }, (_, index) => Number(match[2]) + index));
  return { column: [...columns][0]!, rows };
}

/** Column letters of a 1-based column number. */
function letters(column: number): string {
  let text = '';
  for (let rest = column; rest > 0; rest = Math.floor((rest - 1) / 26)) text = String.fromCharCode(65 + ((rest - 1) % 26)) + text;
  return text;
}

/** What a NULL of a column means for its totals (the declaration's default: unknown). */
function nullMeans(column: ColumnSpec): string {
  return column.nullMeans ?? 'unknown';
}

interface Checked {
  amountCells: number;
  nullCells: number;
  totalRows: number;
  unknownTotals: number;
  keysPerSheet: Record<string, string[]>;
}

/** Checks every part of every detail sheet of one workbook against its mart; returns what it saw. */
async function expectSignable(db: Database, report: ReportSpec, result: ReportResult, workbook: ExcelJS.Workbook, checked: Checked): Promise<void> {
  for (const written of result.sheets) {
    const spec = report.sheets.find((sheet) => sheet.name === written.name)!;
    const expected = await martRows(db, spec, result.period);
    const index = (name: string) => spec.columns.findIndex((column) => column.column === name);
    const totalled = spec.columns.map((column, columnIndex) => ({ column, columnIndex })).filter(({ column }) => column.total === true);
    // What a total must hold one value of: the coins of the totalled amounts, and the declared totalsPer (cost method).
    const keyColumns = [...new Set([...(spec.totalsPer ?? []), ...totalled.flatMap(({ column }) => (column.coinColumn === undefined ? [] : [column.coinColumn]))])].map(index);
    let first = 0;
    for (const partName of written.parts) {
      const sheet = workbook.getWorksheet(partName)!;
      const tables = Object.values((sheet as unknown as { tables: Record<string, { table: { ref?: string; tableRef?: string } }> }).tables);
      const ref = tables[0]?.table.ref ?? tables[0]?.table.tableRef;
      const dataCount = ref === undefined ? 0 : Number(/(\d+)$/.exec(ref)![1]) - 1;
      const rows = expected.slice(first, first + dataCount);
      first += dataCount;
      const where = (row: number, column: number) => `${report.name} '${partName}'!${letters(column + 1)}${row}`;

      // Cells: decimals of the row's coin; NULL never a number.
      rows.forEach((mart, offset) => {
        const rowNumber = offset + 2;
        const row = sheet.getRow(rowNumber);
        spec.columns.forEach((column, columnIndex) => {
          const cell = row.getCell(columnIndex + 1);
          if (column.format === 'amount') {
            const coin = column.coinColumn === undefined ? undefined : mart[index(column.coinColumn)];
            expect(formatDecimals(cell.numFmt, where(rowNumber, columnIndex)), `${where(rowNumber, columnIndex)} in ${coin ?? 'no coin'}`).toBe(decimalsFor(coin));
            checked.amountCells++;
            // The column is wide enough to show it (no ### in Excel, no cut in print): sign, digits with separators, decimals.
            if (mart[columnIndex] !== null) {
              const text = String(mart[columnIndex]);
              const digits = text.replace('-', '').split('.')[0]!.replace(/^0+(?=\d)/, '');
              const decimals = decimalsFor(coin);
              const shown = (text.startsWith('-') ? 1 : 0) + digits.length + Math.floor((digits.length - 1) / 3) + (decimals > 0 ? 1 + decimals : 0);
              expect(shown, `${where(rowNumber, columnIndex)}: ${text} shown in a column of width ${sheet.getColumn(columnIndex + 1).width}`).toBeLessThanOrEqual((sheet.getColumn(columnIndex + 1).width ?? 9) - 1);
            }
          }
          if (mart[columnIndex] === null) {
            checked.nullCells++;
            expect([null, UNKNOWN], `${where(rowNumber, columnIndex)}: NULL in ${spec.mart}.${column.column}`).toContain(cell.value);
            if (['amount', 'integer', 'price', 'rate'].includes(column.format) && nullMeans(column) === 'unknown') expect(cell.value, where(rowNumber, columnIndex)).toBe(UNKNOWN);
          }
        });
      });

      // Below the table: nothing on a sheet that totals nothing, else one totals row per key.
      const below: ExcelJS.Row[] = [];
      for (let number = dataCount + 2; number <= sheet.rowCount; number++) below.push(sheet.getRow(number));
      const totalRows = below.filter((row) => row.getCell(1).value === 'Total');
      if (totalled.length === 0 || dataCount === 0) {
        expect(totalRows, `${report.name} '${partName}' has no totals row`).toEqual([]);
        // A sheet of the snapshot nearest the period's end names it below its table.
        const note = (value: ExcelJS.CellValue) => spec.period?.grain === 'nearest' && String(value).startsWith('Compared at the snapshot nearest the end of the period');
        expect(below.map((row) => row.getCell(1).value).filter((value) => value !== null && value !== (spec.emptyText ?? 'No rows in this period.') && !note(value)), `${report.name} '${partName}' below its table`).toEqual([]);
        continue;
      }
      const covered = new Map<number, number>();
      for (const total of totalRows) {
        let coveredRows: number[] | undefined;
        for (const { column, columnIndex } of totalled) {
          const at = where(total.number, columnIndex);
          const cell = total.getCell(columnIndex + 1);
          const value = cell.value as ExcelJS.CellFormulaValue;
          expect(typeof value === 'object' && value !== null && 'formula' in value, `${at} is a formula`).toBe(true);
          const ranges = subtotalRanges(value.formula, at);
          expect(ranges.column, at).toBe(letters(columnIndex + 1));
          coveredRows ??= ranges.rows;
          expect(ranges.rows, `${at}: every column of a totals row reads the same rows`).toEqual(coveredRows);
          const martOf = ranges.rows.map((rowNumber) => rows[rowNumber - 2]!);
          expect(martOf.every((mart) => mart !== undefined), `${at} reads data rows only`).toBe(true);
          // One coin, one cost method: every row read holds the totals row's key values.
          for (const key of keyColumns) {
            const values = new Set(martOf.map((mart) => mart[key]));
            expect(values.size, `${at} adds one ${spec.columns[key]!.header}`).toBe(1);
            expect(total.getCell(key + 1).value ?? null, `${at}: its ${spec.columns[key]!.header}`).toBe([...values][0]);
          }
          // The shown decimals are those of the key's coin (a count: a whole number).
          const coin = column.format === 'amount' && column.coinColumn !== undefined ? martOf[0]![index(column.coinColumn)] : undefined;
          expect(formatDecimals(cell.numFmt, at), at).toBe(column.format === 'integer' ? 0 : decimalsFor(coin));
          // The cached result: "unknown" when a row read is unknown (or none holds a value kept elsewhere), else the exact sum.
          const values = martOf.map((mart) => mart[columnIndex]!);
          const known = values.filter((text) => text !== null);
          const unknown = nullMeans(column) === 'unknown' ? known.length < values.length : nullMeans(column) === 'elsewhere' ? known.length === 0 : false;
          if (unknown) {
            expect(value.result, `${at}: cached "unknown"`).toBe(UNKNOWN);
            expect(value.formula, `${at} says unknown while such a row is shown`).toMatch(/^IF\(.*SUBTOTAL\(10[23],.*"unknown",SUBTOTAL\(109,/);
            checked.unknownTotals++;
          } else {
            // exceljs's reader drops a cached 0 (it tests the text for truth); the file holds <v>0</v>.
            expect(value.result ?? 0, `${at}: cached exact sum`).toBe(Number(sumExact(known)));
          }
        }
        for (const rowNumber of coveredRows ?? []) covered.set(rowNumber, (covered.get(rowNumber) ?? 0) + 1);
        checked.totalRows++;
      }
      // Every data row is in exactly one totals row: the totals per key add up to the whole sheet.
      expect([...covered.keys()].sort((a, b) => a - b), `${report.name} '${partName}': rows totalled`).toEqual(rows.map((_, offset) => offset + 2));
      expect([...covered.values()].every((count) => count === 1), `${report.name} '${partName}': each row in one total`).toBe(true);
      (checked.keysPerSheet[`${report.name} / ${partName}`] ??= []).push(...totalRows.map((row) => keyColumns.map((key) => String(row.getCell(key + 1).value)).join(' · ')));
    }
    expect(first, `${report.name} / ${spec.name} rows`).toBe(expected.length);
  }
}

describe('workbooks a controller can sign off (a synced sandbox history)', () => {
  let fixture: DemoLikeDatabase | undefined;
  let workspace: SyncWorkspace;
  let db: Database;
  let period: ReportPeriod;
  const written: { limit: string; report: ReportSpec; result: ReportResult; workbook: ExcelJS.Workbook }[] = [];

  beforeAll(async () => {
    // Valued in USD with the demo's USDT closes: the reporting-currency columns and "Needs a price" are signed off too.
    fixture = await openDemoLikeDatabase();
    ({ workspace, db, period } = fixture);
    // Whole sheets, and sheets continued every 7 rows (each part has its own table and totals).
    for (const [limit, maxRowsPerSheet] of [['whole', undefined], ['7 rows a sheet', 7]] as const) {
      for (const report of REPORTS) {
        const outDir = path.join(workspace.dir, limit === 'whole' ? 'out' : 'out-parts');
        const result = await writeReport(db, report, { streams: STREAMS, coinFormats: COIN_FORMATS, period, outDir, now: new Date(fixture.sandbox.exchange.endMs), maxRowsPerSheet });
        const workbook = new ExcelJS.Workbook();
        await workbook.xlsx.readFile(result.file);
        written.push({ limit, report, result, workbook });
      }
    }
  }, 120_000);

  afterAll(async () => {
    await fixture?.close();
  });

  it('fixed decimals per row coin, NULL never 0, one coin and method per total with exact cached sums, no totals where nothing is totalled', async () => {
    for (const limit of ['whole', '7 rows a sheet']) {
      const checked: Checked = { amountCells: 0, nullCells: 0, totalRows: 0, unknownTotals: 0, keysPerSheet: {} };
      for (const { report, result, workbook } of written.filter((entry) => entry.limit === limit)) await expectSignable(db, report, result, workbook, checked);
      // Not vacuous: the history has amounts in several coins, NULLs (unmatched lots, funding) and totals.
      expect(checked.amountCells, limit).toBeGreaterThan(500);
      expect(checked.nullCells, limit).toBeGreaterThan(0);
      expect(checked.unknownTotals, limit).toBeGreaterThan(0);
      expect(checked.totalRows, limit).toBeGreaterThan(10);
      if (limit === 'whole') {
        // The sheets that mixed coins and cost methods in one total (issue 13) now total each apart.
        expect(checked.keysPerSheet['pnl / Spot PnL by month']).toEqual(['average · BTC', 'average · USDT', 'fifo · BTC', 'fifo · USDT']);
        expect(checked.keysPerSheet['pnl / Futures PnL by month']).toEqual(['USDT']);
        expect(checked.keysPerSheet['balances / Bills vs assets']).toBeUndefined();
      }
    }
  });

  it('shows funding as unknown, not 0, where no collateral snapshots make it known', async () => {
    const futures = written.find((entry) => entry.limit === 'whole' && entry.report.name === 'pnl')!.workbook.getWorksheet('Futures PnL by month')!;
    const funding = await db.all<{ n: string }>(`SELECT CAST(count(funding) AS VARCHAR) AS n FROM marts.futures_pnl_monthly WHERE pnl_month = DATE '${period.from}'`);
    // The sandbox's history has no two collateral snapshots in the month: every funding is NULL.
    expect(funding[0]!.n).toBe('0');
    const total = futures.getRow(futures.rowCount);
    expect(total.getCell(1).value).toBe('Total');
    expect((total.getCell(10).value as ExcelJS.CellFormulaValue).result).toBe(UNKNOWN);
  });

  it('shows a stablecoin to the cent and a coin to eight decimals, while the cell keeps the whole value', async () => {
    const movements = written.find((entry) => entry.limit === 'whole' && entry.report.name === 'balances')!.workbook.getWorksheet('Movements')!;
    const rows = await martRows(db, REPORTS.find((report) => report.name === 'balances')!.sheets[1]!, period);
    const coins = new Set<string>();
    rows.forEach((mart, offset) => {
      const cell = movements.getRow(offset + 2).getCell(5);
      expect(cell.value).toBe(Number(mart[4]));
      expect(cell.numFmt).toBe(mart[1] === 'USDT' ? '#,##0.00;[Red]-#,##0.00' : '#,##0.00000000;[Red]-#,##0.00000000');
      coins.add(mart[1]!);
    });
    expect(coins.has('USDT') && coins.size > 1).toBe(true);
  });
});
