import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import ExcelJS from 'exceljs';
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAMS } from '../pipelines/index.ts';
import { COIN_FORMATS } from '../reports/coin-formats.ts';
import { REPORTS } from '../reports/index.ts';
import { lastClosedPeriod, type ReportPeriod } from '../src/export/period.ts';
import { writeReport, type ReportResult } from '../src/export/write-report.ts';
import { buildModels } from '../src/models/build.ts';
import { DEFAULT_MODEL_SETTINGS } from '../src/models/settings.ts';
import type { RunningSandbox } from '../src/sandbox/server.ts';
import { Database } from '../src/store/database.ts';
import { startTestSandbox } from './support/sandbox.ts';
import { createWorkspace, syncOnce, type SyncWorkspace } from './support/sync-harness.ts';

/**
 * The Summary and the print setup of the four workbooks of a synced sandbox history, read back
 * as a reader's program would (exceljs) and as raw XML (what Excel and LibreOffice print from):
 * every sheet prints landscape, one page wide, with the report and period in its header and the
 * sheet and "page n of m" in its footer; detail sheets repeat their header row; a Summary shows
 * unknown as unknown (one sync is one collateral snapshot: funding is unknown), cost methods only
 * where spot PnL is, texts that fit their columns or wrap, and says what each commission is.
 */

interface Written {
  result: ReportResult;
  workbook: ExcelJS.Workbook;
  /** Raw parts of the file: `xl/workbook.xml`, `xl/worksheets/sheetN.xml`… */
  parts: Map<string, string>;
}

async function readParts(file: string): Promise<Map<string, string>> {
  const zip = await JSZip.loadAsync(readFileSync(file));
  const parts = new Map<string, string>();
  for (const name of Object.keys(zip.files).filter((name) => name.endsWith('.xml') || name.endsWith('.rels'))) parts.set(name, await zip.file(name)!.async('string'));
  return parts;
}

/** The sheet parts in the workbook's order, with their names (workbook.xml and its relationships). */
function sheetsInOrder(parts: Map<string, string>): { name: string; xml: string }[] {
  const rels = parts.get('xl/_rels/workbook.xml.rels')!;
  return [...parts.get('xl/workbook.xml')!.matchAll(/<sheet [^>]*name="([^"]+)"[^>]*r:id="([^"]+)"/g)].map(([, name, rId]) => {
    const target = new RegExp(`Id="${rId}"[^>]*Target="([^"]+)"|Target="([^"]+)"[^>]*Id="${rId}"`).exec(rels)!;
    return { name: name!.replace(/&apos;/g, "'").replace(/&amp;/g, '&'), xml: parts.get(`xl/${(target[1] ?? target[2])!.replace(/^\/?xl\//, '')}`)! };
  });
}

/** Every non-empty row of the Summary as text, for searching. */
function summaryText(workbook: ExcelJS.Workbook): string[] {
  const lines: string[] = [];
  workbook.getWorksheet('Summary')!.eachRow((row) => {
    const cells: string[] = [];
    row.eachCell((cell) => {
      if (!cell.isMerged || cell.master === cell) cells.push(cell.value instanceof Date ? cell.value.toISOString() : String(cell.value));
    });
    lines.push(cells.join(' | '));
  });
  return lines;
}

/** The Summary's key figure rows: label | group → the row. */
function figureRows(workbook: ExcelJS.Workbook): Map<string, ExcelJS.Row> {
  const rows = new Map<string, ExcelJS.Row>();
  let inFigures = false;
  workbook.getWorksheet('Summary')!.eachRow((row) => {
    const first = row.getCell(1).value;
    if (first === 'Key figures') inFigures = true;
    else if (first === 'Sheets') inFigures = false;
    else if (inFigures && first !== 'Figure') rows.set(`${row.getCell(1).text} | ${String(row.getCell(2).value ?? '')}`, row);
  });
  return rows;
}

/** Exact decimal strings to BigInt units at 18 decimals (a test's own, independent of the export). */
function units(text: string): bigint {
  const negative = text.startsWith('-');
  const [whole, fraction = ''] = text.replace('-', '').split('.');
  const value = BigInt(whole!) * 10n ** 18n + BigInt(fraction.padEnd(18, '0').slice(0, 18));
  return negative ? -value : value;
}

/** The characters a number shows under an amount or count format: digits, separators, decimals. */
function shownLength(exact: string, numFmt: string): number {
  const decimals = /\.(0*)(#*)/.exec(numFmt.split(';')[0]!);
  const [fixed, optional] = decimals === null ? [0, 0] : [decimals[1]!.length, decimals[2]!.length];
  const [whole, fraction = ''] = exact.replace('-', '').split('.');
  const shownDecimals = Math.min(fixed + optional, Math.max(fixed, fraction.replace(/0+$/, '').length));
  return (exact.startsWith('-') ? 1 : 0) + whole!.length + Math.floor((whole!.length - 1) / 3) + (shownDecimals > 0 ? shownDecimals + 1 : 0);
}

describe('Summary and print setup of the workbooks of a synced sandbox history', () => {
  let sandbox: RunningSandbox;
  let workspace: SyncWorkspace;
  let db: Database;
  let period: ReportPeriod;
  const written = new Map<string, Written>();

  beforeAll(async () => {
    sandbox = await startTestSandbox({ scale: 'small', seed: 5, spotQuota: 1_000_000, futuresQuota: 1_000_000 });
    workspace = createWorkspace(sandbox);
    // One sync: one snapshot of the futures collateral, so funding (a change between two) is unknown.
    await syncOnce(workspace, sandbox);
    db = await Database.open(workspace.db);
    // Valued in USDT (identity, other coins derived from their USDT fills), so the journal workbook is written too.
    await buildModels(db, { ...DEFAULT_MODEL_SETTINGS, costMethods: ['fifo', 'average'], reportingCurrency: 'USDT' });
    period = lastClosedPeriod('month', 'UTC', new Date(sandbox.exchange.endMs));
    for (const report of REPORTS) {
      const result = await writeReport(db, report, { streams: STREAMS, coinFormats: COIN_FORMATS, period, outDir: path.join(workspace.dir, 'out'), now: new Date(sandbox.exchange.endMs) });
      const workbook = new ExcelJS.Workbook();
      await workbook.xlsx.readFile(result.file);
      written.set(report.name, { result, workbook, parts: await readParts(result.file) });
    }
  }, 120_000);

  afterAll(async () => {
    db?.close();
    await sandbox?.close();
    if (workspace !== undefined) rmSync(workspace.dir, { recursive: true, force: true });
  });

  it('prints every sheet landscape, one page wide, with the report, draft and period in the header and the sheet and page n of m in the footer', () => {
    for (const report of REPORTS) {
      const { workbook, parts, result } = written.get(report.name)!;
      const sheets = sheetsInOrder(parts);
      expect(sheets.map((sheet) => sheet.name)).toEqual(['Summary', ...result.sheets.flatMap((sheet) => sheet.parts)]);
      for (const { name, xml } of sheets) {
        const where = `${report.name} / ${name}`;
        expect(xml, where).toMatch(/<sheetPr>.*<pageSetUpPr fitToPage="1"\/>.*<\/sheetPr>/);
        const pageSetup = /<pageSetup [^>]*\/>/.exec(xml)?.[0];
        expect(pageSetup, where).toBeDefined();
        expect(pageSetup).toContain('orientation="landscape"');
        expect(pageSetup).toContain('paperSize="9"');
        expect(pageSetup).toContain('fitToWidth="1"');
        expect(pageSetup).toContain('fitToHeight="0"');
        // Excel's codes, XML-escaped: &L left, &C centre (the period is a draft: not closed), &R right, &A the sheet, &P the page, &N the pages.
        const header = /<oddHeader>(.*?)<\/oddHeader>/.exec(xml)?.[1];
        const footer = /<oddFooter>(.*?)<\/oddFooter>/.exec(xml)?.[1];
        expect(header, where).toBe(`&amp;L${report.title} (${report.name})&amp;CDraft: not closed&amp;RPeriod ${period.label}: ${period.from} to ${period.to}`);
        expect(footer, where).toBe('&amp;L&amp;A&amp;RPage &amp;P of &amp;N');
        // And as exceljs reads it back.
        const sheet = workbook.getWorksheet(name)!;
        expect(sheet.pageSetup).toMatchObject({ orientation: 'landscape', fitToPage: true, fitToWidth: 1, fitToHeight: 0 });
        expect(sheet.headerFooter.oddFooter).toBe('&L&A&RPage &P of &N');
      }
    }
  });

  it('repeats the header row of every detail sheet on each printed page (print titles)', () => {
    for (const report of REPORTS) {
      const { parts, result } = written.get(report.name)!;
      const workbookXml = parts.get('xl/workbook.xml')!;
      const titles = [...workbookXml.matchAll(/<definedName name="_xlnm.Print_Titles" localSheetId="(\d+)">([^<]*)<\/definedName>/g)].map(([, id, range]) => ({ id: Number(id), range }));
      const detail = result.sheets.flatMap((sheet) => sheet.parts);
      // localSheetId is the sheet's 0-based position: the Summary is 0.
      expect(titles, report.name).toEqual(detail.map((name, index) => ({ id: index + 1, range: `&apos;${name}&apos;!$1:$1` })));
    }
  });

  it('names the spot cost methods only on the Summary of the report that shows spot PnL', () => {
    expect(summaryText(written.get('pnl')!.workbook)).toContain('Spot cost methods | fifo, average');
    for (const name of ['fees', 'rebates', 'balances']) {
      expect(summaryText(written.get(name)!.workbook).join('\n'), name).not.toMatch(/cost method/i);
    }
  });

  it('shows unknown funding as unknown, never 0, and the net result that lacks it as incomplete', async () => {
    // The mart: the period's futures rows have funding NULL throughout (no pair of snapshots).
    const marts = await db.all<{ coin: string; funding: string | null; net: string }>(
      'SELECT margin_coin AS coin, CAST(sum(funding) AS VARCHAR) AS funding, CAST(sum(net_result) AS VARCHAR) AS net FROM marts.futures_pnl_monthly WHERE pnl_month = CAST($1 AS DATE) GROUP BY ALL',
      [period.from],
    );
    expect(marts.length).toBeGreaterThan(0);
    const figures = figureRows(written.get('pnl')!.workbook);
    for (const mart of marts) {
      expect(mart.funding).toBeNull();
      const funding = figures.get(`Futures funding | ${mart.coin}`)!;
      expect(funding, mart.coin).toBeDefined();
      expect(funding.getCell(3).value).toBeNull();
      expect(funding.getCell(4).value).toBe('unknown');
      expect(String(funding.getCell(5).value)).toMatch(/^Unknown: funding is the change .* two snapshots/);
      const net = figures.get(`Futures net result | ${mart.coin}`)!;
      expect(net.getCell(4).value).toBe(mart.net.replace(/\.?0+$/, ''));
      expect(String(net.getCell(5).value)).toContain('Incomplete: without Futures funding, which is unknown.');
    }
    // No Summary figure anywhere is a 0 standing for a NULL: every empty value cell says unknown.
    for (const report of REPORTS) {
      for (const [key, row] of figureRows(written.get(report.name)!.workbook)) {
        if (row.getCell(3).value === null) expect(row.getCell(4).value, `${report.name}: ${key}`).toBe('unknown');
        if (row.getCell(4).value === 'unknown') expect(row.getCell(3).value, `${report.name}: ${key}`).toBeNull();
      }
    }
  });

  it('fits every Summary text in its column (or its merged columns) or wraps it, and indents text that follows a right-aligned number', () => {
    for (const report of REPORTS) {
      const sheet = written.get(report.name)!.workbook.getWorksheet('Summary')!;
      const widths = sheet.columns.map((column) => column.width ?? 9);
      // Merged ranges (A1:G1…) as their first cell → the columns they span.
      const spans = new Map<string, number>();
      for (const range of (sheet.model as unknown as { merges: string[] }).merges) {
        const [from, to] = range.split(':') as [string, string];
        spans.set(from, to.charCodeAt(0) - from.charCodeAt(0) + 1);
      }
      let checked = 0;
      sheet.eachRow((row, rowNumber) => {
        row.eachCell((cell, column) => {
          if (cell.isMerged && cell.master !== cell) return;
          const span = spans.get(cell.address) ?? 1;
          const available = widths.slice(column - 1, column - 1 + span).reduce((sum, width) => sum + width, 0);
          const font = cell.font ?? {};
          const factor = (font.bold === true ? 1.1 : 1) * ((font.size ?? 11) / 11);
          const where = `${report.name} Summary ${cell.address}`;
          if (typeof cell.value === 'string') {
            checked++;
            if (cell.alignment?.wrapText !== true) expect(cell.value.length * factor, `${where}: "${cell.value}" in ${available} characters`).toBeLessThanOrEqual(available);
            else expect(row.height, `${where} wraps: its row is made taller`).toBeGreaterThan(15);
          } else if (typeof cell.value === 'number' && cell.numFmt !== undefined && !/y/.test(cell.numFmt)) {
            // A number wider than its column shows as ####: the exact text beside a figure gives its digits.
            const exact = column === 3 && typeof row.getCell(4).value === 'string' ? String(row.getCell(4).value) : String(cell.value);
            expect(shownLength(exact, cell.numFmt), `${where}: ${exact}`).toBeLessThanOrEqual(available);
          } else if (cell.value instanceof Date) {
            expect((cell.numFmt ?? '').length, where).toBeLessThanOrEqual(available);
          }
          // A right-aligned cell ends at its border: a left-aligned text right after it must not touch it.
          const before = column > 1 ? row.getCell(column - 1) : undefined;
          const rightAligned = (candidate: ExcelJS.Cell) =>
            candidate.alignment?.horizontal === 'right' || (candidate.alignment?.horizontal === undefined && (typeof candidate.value === 'number' || candidate.value instanceof Date));
          if (before !== undefined && before.value !== null && !before.isMerged && rightAligned(before) && typeof cell.value === 'string' && (cell.alignment?.horizontal ?? 'left') === 'left') {
            expect(cell.alignment?.indent ?? 0, `${where} after ${before.address} (row ${rowNumber})`).toBeGreaterThanOrEqual(1);
          }
        });
      });
      expect(checked, report.name).toBeGreaterThan(20);
    }
  });

  it('says on the rebates Summary what each commission figure measures, and why they differ', () => {
    const { workbook } = written.get('rebates')!;
    const figures = figureRows(workbook);
    const records = [...figures.entries()].filter(([key]) => key.startsWith('Commission (records) | '));
    const statistics = figures.get('Commission (referral statistics) | ')!;
    expect(records.length).toBeGreaterThan(0);
    expect(statistics).toBeDefined();
    expect(String(records[0]![1].getCell(5).value)).toMatch(/commission records.*deal time in the reporting time zone/);
    expect(String(statistics.getCell(5).value)).toMatch(/per invited user and UTC day.*Not expected to equal the records/);
    const text = summaryText(workbook).join('\n');
    expect(text).toMatch(/Commission \(records\) and Commission \(referral statistics\) measure different things and are not expected to be equal/);
    expect(text).toMatch(/date basis .* by coin .* twin records/s);
  });

  it('reconciles the key figures that must agree: net result = realized - fees + funding; futures fees = the fees report\'s', () => {
    const pnl = figureRows(written.get('pnl')!.workbook);
    const fees = figureRows(written.get('fees')!.workbook);
    const exact = (rows: Map<string, ExcelJS.Row>, key: string) => {
      const row = rows.get(key);
      expect(row, key).toBeDefined();
      const value = String(row!.getCell(4).value);
      return value === 'unknown' ? null : units(value);
    };
    const coins = [...pnl.keys()].filter((key) => key.startsWith('Futures net result | ')).map((key) => key.slice('Futures net result | '.length));
    expect(coins.length).toBeGreaterThan(0);
    for (const coin of coins) {
      const realized = exact(pnl, `Futures realized PnL | ${coin}`)!;
      const trading = exact(pnl, `Futures trading fees | ${coin}`)!;
      const liquidation = exact(pnl, `Futures liquidation fees | ${coin}`)!;
      const funding = exact(pnl, `Futures funding | ${coin}`);
      expect(exact(pnl, `Futures net result | ${coin}`), coin).toBe(realized - trading - liquidation + (funding ?? 0n));
      expect(exact(fees, `Fees paid | futures · ${coin}`), coin).toBe(trading + liquidation);
    }
  });
});
