import { readFileSync } from 'node:fs';
import path from 'node:path';
import ExcelJS from 'exceljs';
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAMS } from '../pipelines/index.ts';
import { COIN_FORMATS } from '../reports/coin-formats.ts';
import { REPORTS } from '../reports/index.ts';
import { parsePeriod, type ReportPeriod } from '../src/export/period.ts';
import type { ReportSpec, SheetSpec } from '../src/export/report-definition.ts';
import { writeReport } from '../src/export/write-report.ts';
import { buildModels } from '../src/models/build.ts';
import type { RunningSandbox } from '../src/sandbox/server.ts';
import { Database } from '../src/store/database.ts';
import type { SyncWorkspace } from './support/sync-harness.ts';
import { openDemoLikeDatabase, type DemoLikeDatabase } from './support/demo-like-db.ts';

/**
 * The workbooks as a controller opens them (issue 25, result 4), read back from a run like the
 * demo's (a synced sandbox history valued in USD with the demo's prices), with general checks over
 * every sheet of every workbook, not per-cell expectations:
 * - one typeface: every font of xl/styles.xml is named, all with the same name;
 * - prices and rates keep their decimals: a price or rate cell's format shows at least the
 *   decimals of its value (as far as the cell's 15 significant digits go);
 * - no text is cut or runs into the next column: each text is narrower than its column (or its
 *   merged columns), or its cell wraps; each number's formatted text fits its column;
 * - every sheet prints at 70% or more on A4 landscape (computed below from the page setup);
 * - codes are shown in words: no text column holds a bare number;
 * - "incomplete" on every figure that includes an unknown one;
 * - Bills vs assets names the snapshot it compares with, the one nearest the period's end;
 * and two more runs: a period before the synced history (no number, "not synced"), and a setup
 * without a reporting currency (no valuation column, sheet or figure at all).
 */

/** A4 landscape: 297 mm wide, in points. */
const A4_LANDSCAPE_WIDTH_PT = (297 / 25.4) * 72;
/**
 * A column width of w characters prints as Excel lays it out with the default font (Calibri 11:
 * a character is 7 px, plus 5 px of cell padding), at 96 px to the inch: (7w + 5) px × 0.75 pt/px.
 */
const columnPoints = (width: number) => (7 * width + 5) * 0.75;
/** exceljs's width of a column that sets none (Excel's default, 8.43 characters). */
const DEFAULT_WIDTH = 8.43;

interface Written {
  run: string;
  report: ReportSpec;
  file: string;
  workbook: ExcelJS.Workbook;
  period: ReportPeriod;
}

/** The declared sheet of a written sheet (`Lot detail (2)` → `Lot detail`). */
function specOf(report: ReportSpec, sheetName: string): SheetSpec | undefined {
  return report.sheets.find((sheet) => sheet.name === sheetName.replace(/ \(\d+\)$/, ''));
}

/** Decimals a format shows (its first section; a percentage's are of the percentage). */
function formatDecimals(numFmt: string): number {
  return /\.(0+)/.exec(numFmt.split(';')[0]!)?.[1]!.length ?? 0;
}

/** The decimals of a number as its cell holds it, at the 15 significant digits a cell keeps. */
function valueDecimals(value: number): number {
  if (value === 0) return 0;
  const [mantissa, exponent] = Math.abs(value).toExponential(14).split('e');
  const digits = mantissa!.replace('.', '').replace(/0+$/, '');
  return Math.max(0, digits.length - 1 - Number(exponent));
}

/** A number as its format shows it (for its width): separators, fixed decimals, a % sign. */
function shownNumber(value: number, numFmt: string | undefined): string {
  if (numFmt === undefined || numFmt === 'General') return String(value);
  if (/[ymdhs]/.test(numFmt.replace(/\[[^\]]*\]/g, ''))) return numFmt.replace(/"/g, '');
  const percent = numFmt.split(';')[0]!.includes('%');
  const fixed = Math.abs(percent ? value * 100 : value).toFixed(formatDecimals(numFmt));
  const [whole, fraction] = fixed.split('.');
  const grouped = numFmt.includes(',') ? whole!.replace(/\B(?=(\d{3})+(?!\d))/g, ',') : whole!;
  return `${value < 0 ? '-' : ''}${grouped}${fraction === undefined ? '' : `.${fraction}`}${percent ? '%' : ''}`;
}

/** A text's width in characters of the default font: bold ~10% wider, sizes scale (as src/export/summary-layout.ts measures). */
function textWidth(text: string, font: Partial<ExcelJS.Font> | undefined): number {
  const longest = Math.max(...text.split('\n').map((line) => line.length));
  return longest * (font?.bold === true ? 1.1 : 1) * ((font?.size ?? 11) / 11);
}

/** Per master cell address, the columns its merge covers. */
function mergedColumns(sheet: ExcelJS.Worksheet): Map<string, number[]> {
  const merges = (sheet as unknown as { _merges: Record<string, { model: { left: number; right: number } }> })._merges;
  return new Map(Object.entries(merges).map(([address, range]) => [address, Array.from({ length: range.model.right - range.model.left + 1 }, (_, index) => range.model.left + index)]));
}

function widthOf(sheet: ExcelJS.Worksheet, column: number): number {
  return sheet.getColumn(column).width ?? DEFAULT_WIDTH;
}

/** The scale a sheet prints at on A4 landscape: its own, or one page wide over its columns. */
function printScale(sheet: ExcelJS.Worksheet): number {
  const setup = sheet.pageSetup;
  expect(setup.orientation, sheet.name).toBe('landscape');
  expect(setup.paperSize, sheet.name).toBe(9);
  if (setup.fitToPage !== true || setup.fitToWidth !== 1) return (setup.scale ?? 100) / 100;
  const printable = A4_LANDSCAPE_WIDTH_PT - (setup.margins!.left + setup.margins!.right) * 72;
  let columns = 0;
  for (let column = 1; column <= sheet.columnCount; column++) columns += columnPoints(widthOf(sheet, column));
  return Math.min(1, printable / columns);
}

/** An exact decimal string as integer units of 10^-18 (a test's own, independent of the export). */
function units(text: string): bigint {
  const negative = text.startsWith('-');
  const [whole, fraction = ''] = text.replace('-', '').replace(/,/g, '').split('.');
  const value = BigInt(whole!) * 10n ** 18n + BigInt(fraction.padEnd(18, '0').slice(0, 18));
  return negative ? -value : value;
}

/** The Summary's key figure rows: label, of, the number cell, the exact text, what it says. */
function keyFigures(workbook: ExcelJS.Workbook): { label: string; of: string; value: ExcelJS.CellValue; exact: ExcelJS.CellValue; about: string; red: boolean }[] {
  const sheet = workbook.getWorksheet('Summary')!;
  const rows: ReturnType<typeof keyFigures> = [];
  let inFigures = false;
  sheet.eachRow((row) => {
    const first = row.getCell(1).value;
    if (first === 'Key figures') inFigures = true;
    else if (first === 'Sheets') inFigures = false;
    else if (inFigures && first !== 'Figure' && first !== null) {
      rows.push({
        // The label links to the rows the figure reads: its text is the label.
        label: row.getCell(1).text,
        of: String(row.getCell(2).value ?? ''),
        value: row.getCell(3).value,
        exact: row.getCell(4).value,
        about: String(row.getCell(5).value ?? ''),
        red: row.getCell(1).font?.color?.argb === 'FF9C0006',
      });
    }
  });
  return rows;
}

describe('workbooks a controller reads without doubting', () => {
  let fixture: DemoLikeDatabase | undefined;
  let sandbox: RunningSandbox;
  let workspace: SyncWorkspace;
  let db: Database;
  let period: ReportPeriod;
  const written: Written[] = [];

  const writeAll = async (run: string, reports: readonly ReportSpec[], at: ReportPeriod) => {
    for (const report of reports) {
      const result = await writeReport(db, report, { streams: STREAMS, coinFormats: COIN_FORMATS, period: at, outDir: path.join(workspace.dir, run), now: new Date(sandbox.exchange.endMs) });
      const workbook = new ExcelJS.Workbook();
      await workbook.xlsx.readFile(result.file);
      written.push({ run, report, file: result.file, workbook, period: at });
    }
  };

  beforeAll(async () => {
    // As the demo: valued in USD with its USDT closes (prices such as 0.9996).
    fixture = await openDemoLikeDatabase();
    ({ sandbox, workspace, db, period } = fixture);
    await writeAll('demo', REPORTS, period);
    // Wholly before the synced history (it starts a year before the sandbox's end).
    const before = parsePeriod(new Date(sandbox.exchange.endMs - 500 * 86_400_000).toISOString().slice(0, 7));
    await writeAll('before-history', REPORTS.filter((report) => report.name !== 'journal' && report.name !== 'holdings'), before);
    // No reporting currency: the journal is not written at all (it is refused), the others without valuation.
    await buildModels(db, { ...fixture.settings, reportingCurrency: null, prices: null });
    await writeAll('no-reporting-currency', REPORTS.filter((report) => report.requiresReportingCurrency !== true), period);
  }, 180_000);

  afterAll(async () => {
    await fixture?.close();
  });

  it('draws every workbook in one typeface: every font is named, with one name', async () => {
    expect(written.length).toBe(REPORTS.length + 4 + 4);
    for (const { file } of written) {
      const styles = await (await JSZip.loadAsync(readFileSync(file))).file('xl/styles.xml')!.async('string');
      const fonts = [...styles.matchAll(/<font>(.*?)<\/font>/gs)].map((match) => match[1]!);
      expect(fonts.length, file).toBeGreaterThan(1);
      const names = fonts.map((font) => /<name val="([^"]+)"\/>/.exec(font)?.[1] ?? '(no name)');
      expect(new Set(names), `${file}: ${fonts.join(' | ')}`).toEqual(new Set(['Calibri']));
      for (const font of fonts) expect(font, file).toMatch(/<sz val="\d+"\/>/);
    }
  });

  it('shows every price and rate with the decimals it has', () => {
    let longPrices = 0;
    let cells = 0;
    for (const { report, workbook, run } of written) {
      for (const sheet of workbook.worksheets) {
        const spec = specOf(report, sheet.name);
        if (spec === undefined) continue;
        spec.columns.forEach((column) => {
          if (column.format !== 'price' && column.format !== 'rate') return;
          const index = [...Array(sheet.columnCount).keys()].find((candidate) => sheet.getRow(1).getCell(candidate + 1).value === column.header);
          if (index === undefined) return;
          sheet.getColumn(index + 1).eachCell((cell, rowNumber) => {
            if (rowNumber === 1 || typeof cell.value !== 'number') return;
            const shown = formatDecimals(cell.numFmt) + (column.format === 'rate' ? 2 : 0);
            expect(shown, `${run} ${report.name} ${sheet.name} ${cell.address} ${cell.value} as ${cell.numFmt}`).toBeGreaterThanOrEqual(valueDecimals(cell.value));
            cells++;
            if (column.format === 'price' && valueDecimals(cell.value) > 2) longPrices++;
          });
        });
      }
    }
    // Not vacuous: prices such as 0.9996 were among them (shown to cents before).
    expect(cells).toBeGreaterThan(50);
    expect(longPrices).toBeGreaterThan(0);
  });

  it('cuts no text and runs none into the next column: it fits, or its cell wraps', () => {
    for (const { report, workbook, run } of written) {
      for (const sheet of workbook.worksheets) {
        const merges = mergedColumns(sheet);
        const inMerge = new Set<string>();
        for (const [address, columns] of merges) {
          const row = sheet.getCell(address).row;
          for (const column of columns.slice(1)) inMerge.add(`${row}:${column}`);
        }
        sheet.eachRow((row, rowNumber) => {
          row.eachCell((cell, column) => {
            if (inMerge.has(`${rowNumber}:${column}`) || cell.value === null) return;
            const width = (merges.get(cell.address) ?? [column]).reduce((sum, covered) => sum + widthOf(sheet, covered), 0);
            const where = `${run} ${report.name} / ${sheet.name} ${cell.address}`;
            if (typeof cell.value === 'string') {
              if (cell.alignment?.wrapText === true) return;
              expect(textWidth(cell.value, cell.font) + 1, `${where}: "${cell.value}" in ${width} characters`).toBeLessThanOrEqual(width);
            } else if (typeof cell.value === 'number') {
              const text = shownNumber(cell.value, cell.numFmt);
              expect(textWidth(text, cell.font) + 1, `${where}: ${text} in ${width} characters`).toBeLessThanOrEqual(width);
            }
          });
        });
      }
    }
  });

  it('prints every sheet of every workbook at 70% or more on A4 landscape', () => {
    const scales: string[] = [];
    for (const { report, workbook, run } of written) {
      for (const sheet of workbook.worksheets) {
        const scale = printScale(sheet);
        scales.push(`${run} ${report.name} / ${sheet.name}: ${Math.round(scale * 100)}%`);
        expect(scale, `${run} ${report.name} / ${sheet.name}`).toBeGreaterThanOrEqual(0.7);
      }
    }
    expect(scales.length).toBeGreaterThan(20);
  });

  it('shows codes in words: no text column holds a bare number', () => {
    for (const { report, workbook, run } of written) {
      for (const sheet of workbook.worksheets) {
        const spec = specOf(report, sheet.name);
        if (spec === undefined) continue;
        spec.columns.forEach((column, index) => {
          if (column.format !== 'text') return;
          sheet.getColumn(index + 1).eachCell((cell, rowNumber) => {
            if (rowNumber > 1 && sheet.getRow(rowNumber).getCell(1).value !== 'Total') expect(String(cell.value), `${run} ${report.name} / ${sheet.name} ${cell.address}`).not.toMatch(/^\d+$/);
          });
        });
      }
    }
  });

  it('marks "incomplete" on every figure that includes an unknown one, in red', () => {
    let checked = 0;
    for (const { report, workbook, run } of written) {
      const figures = keyFigures(workbook);
      for (const declared of report.summary) {
        const parts = [...(declared.includes ?? []), ...(declared.includesAnyGroup ?? [])];
        const unknownPart = figures.some((figure) => parts.includes(figure.label) && figure.value === null);
        if (!unknownPart) continue;
        for (const figure of figures.filter((candidate) => candidate.label === declared.label && candidate.value !== null)) {
          expect(figure.about, `${run} ${report.name}: ${figure.label} | ${figure.of}`).toMatch(/Incomplete: without /);
          expect(figure.red, `${run} ${report.name}: ${figure.label} | ${figure.of}`).toBe(true);
          checked++;
        }
      }
    }
    // The sandbox's futures have one collateral snapshot: funding is unknown, so both net results say so.
    expect(checked).toBeGreaterThanOrEqual(2);
    const pnl = written.find((entry) => entry.run === 'demo' && entry.report.name === 'pnl')!;
    expect(keyFigures(pnl.workbook).filter((figure) => figure.label === 'Futures net result in the reporting currency' && figure.value !== null).length).toBeGreaterThan(0);
  });

  it('links every Summary figure to the rows it reads, named in words; the linked rows sum exactly to the figure', async () => {
    let summed = 0;
    for (const { report, workbook, run } of written) {
      const summary = workbook.getWorksheet('Summary')!;
      let inFigures = false;
      const rows: ExcelJS.Row[] = [];
      summary.eachRow((row) => {
        const first = row.getCell(1).value;
        if (first === 'Key figures') inFigures = true;
        else if (first === 'Sheets') inFigures = false;
        else if (inFigures && first !== 'Figure' && first !== null) rows.push(row);
      });
      expect(rows.length, `${run} ${report.name}`).toBeGreaterThan(0);
      for (const row of rows) {
        const label = row.getCell(1).text;
        const where = `${run} ${report.name}: ${label} | ${row.getCell(2).text}`;
        const link = (row.getCell(1).value as ExcelJS.CellHyperlinkValue).hyperlink;
        const target = /^#'((?:[^']|'')+)'!A1(?::([A-Z]+)(\d+))?$/.exec(link ?? '');
        expect(target, `${where}: ${link}`).not.toBeNull();
        const sheet = workbook.getWorksheet(target![1]!.replace(/''/g, "'"));
        expect(sheet, `${where}: ${link}`).toBeDefined();
        const about = row.getCell(5).text;
        const words = new RegExp(`(?:summed over the rows|of the latest of the rows|The number of rows) of "${sheet!.name.replace(/ \(\d+\)$/, '')}"(?: where (.*?))? \\(the link on its name\\)\\.$|No rows of "`).exec(about);
        expect(words, `${where}: ${about}`).not.toBeNull();
        if (target![3] === undefined) continue;
        const lastRow = Number(target![3]);
        expect(lastRow, where).toBeLessThanOrEqual(sheet!.rowCount);
        // The exact sum: the linked rows the words name, by their references, summed in DuckDB (DECIMAL) and compared as integers.
        const declared = report.summary.find((figure) => figure.label === label)!;
        if (run !== 'no-reporting-currency' || declared.sum === undefined || declared.where !== undefined || row.getCell(4).text === 'unknown') continue;
        const headers = (sheet!.getRow(1).values as ExcelJS.CellValue[]).map((value) => String(value ?? ''));
        const referenceColumn = headers.indexOf('Reference (exledger explain)');
        if (referenceColumn < 0) continue;
        const conditions = (words![1] ?? '').split(' and ').filter((part) => part !== '').map((part) => part.split(' = ') as [string, string]);
        const references: string[] = [];
        for (let at = 2; at <= lastRow; at++) {
          const cells = sheet!.getRow(at);
          if (conditions.every(([header, value]) => cells.getCell(headers.indexOf(header)).text === value)) references.push(cells.getCell(referenceColumn).text);
        }
        const spec = specOf(report, sheet!.name)!;
        const [total] = await db.all<{ total: string | null }>(`SELECT CAST(sum(${declared.sum}) AS VARCHAR) AS total FROM ${spec.mart} WHERE list_contains(string_split($1, chr(10)), reference)`, [references.join('\n')]);
        expect(units(total?.total ?? '0'), `${where}: ${references.length} rows`).toBe(units(row.getCell(4).text));
        summed++;
      }
    }
    expect(summed).toBeGreaterThan(5);
  });

  it('a period before the synced history says so and shows no number, never 0', () => {
    const before = written.filter((entry) => entry.run === 'before-history');
    for (const { report, workbook } of before) {
      const figures = keyFigures(workbook);
      // Every figure over a history stream: no number, and why.
      for (const figure of figures.filter((candidate) => candidate.of === 'not synced')) {
        expect(figure.value, `${report.name}: ${figure.label}`).toBeNull();
        expect(figure.exact).toBe('unknown');
        expect(figure.about).toMatch(/not synced: \w+ history( of account \S+)? (starts \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC|never synced)/);
      }
      const declaredOnHistory = report.summary.filter((declared) => {
        const sheet = report.sheets.find((candidate) => candidate.name === declared.sheet)!;
        return (sheet.streams ?? report.streams).some((stream) => STREAMS.find((candidate) => candidate.name === stream)?.kind !== 'snapshot');
      });
      expect(new Set(figures.filter((figure) => figure.of === 'not synced').map((figure) => figure.label)), report.name).toEqual(new Set(declaredOnHistory.map((declared) => declared.label)));
      for (const figure of figures.filter((candidate) => declaredOnHistory.some((declared) => declared.label === candidate.label))) expect(figure.value, `${report.name}: ${figure.label}`).toBeNull();
      // Its detail sheets say why they are empty.
      for (const sheet of workbook.worksheets.slice(1)) {
        const spec = specOf(report, sheet.name)!;
        if ((spec.streams ?? report.streams).every((stream) => STREAMS.find((candidate) => candidate.name === stream)?.kind === 'snapshot')) continue;
        expect(String(sheet.getRow(2).getCell(1).value), `${report.name} / ${sheet.name}`).toMatch(/^No rows: not synced: /);
      }
    }
  });

  it('leaves out what is not configured: no reporting-currency column, sheet or figure without one', () => {
    const plain = written.filter((entry) => entry.run === 'no-reporting-currency');
    expect(plain.map((entry) => entry.report.name).sort()).toEqual(['balances', 'fees', 'pnl', 'rebates']);
    for (const { report, workbook } of plain) {
      expect(workbook.worksheets.map((sheet) => sheet.name), report.name).not.toContain('Needs a price');
      for (const sheet of workbook.worksheets.slice(1)) {
        const headers = (sheet.getRow(1).values as ExcelJS.CellValue[]).map(String);
        expect(headers.filter((header) => /reporting currency|without a price|^Price/.test(header)), `${report.name} / ${sheet.name}`).toEqual([]);
      }
      for (const figure of keyFigures(workbook)) expect(figure.label, report.name).not.toMatch(/reporting currency/);
      expect(keyFigures(workbook).filter((figure) => /reporting currency/.test(figure.about))).toEqual([]);
    }
  });

  it('compares Bills vs assets with the snapshot nearest the end of the period, and names its time', async () => {
    const snapshots = await db.all<{ snapshot_ms: string }>('SELECT DISTINCT CAST(epoch_ms(snapshot_at) AS VARCHAR) AS snapshot_ms FROM marts.balance_vs_assets WHERE snapshot_at IS NOT NULL');
    expect(snapshots.length).toBeGreaterThan(0);
    for (const { workbook, period: at, run } of written.filter((entry) => entry.report.name === 'balances')) {
      const end = Date.parse(`${at.to}T00:00:00Z`) + 86_400_000;
      const nearest = snapshots.map((row) => Number(row.snapshot_ms)).sort((a, b) => Math.abs(a - end) - Math.abs(b - end) || a - b)[0]!;
      const sheet = workbook.getWorksheet('Bills vs assets')!;
      const shown = new Set<number>();
      let note = '';
      sheet.eachRow((row, rowNumber) => {
        const value = row.getCell(4).value;
        if (rowNumber > 1 && value instanceof Date) shown.add(value.getTime());
        if (typeof row.getCell(1).value === 'string' && String(row.getCell(1).value).startsWith('Compared at the snapshot nearest')) note = String(row.getCell(1).value);
      });
      expect([...shown], run).toEqual([nearest]);
      const time = new Date(nearest).toISOString().slice(0, 19).replace('T', ' ');
      expect(note, run).toContain(`${time} UTC`);
      expect(note, run).toMatch(nearest > end ? /after the end of the period/ : /before the end of the period|at the end of the period/);
    }
  });
});
