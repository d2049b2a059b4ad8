import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAMS } from '../pipelines/index.ts';
import { COIN_FORMATS } from '../reports/coin-formats.ts';
import { REPORTS } from '../reports/index.ts';
import { DETAIL_ROWS_COLUMN, rolledUpSheet, rollUpKeys, type ColumnSpec, type ReportSpec, type SheetSpec } from '../src/export/report-definition.ts';
import { readRecord } from '../src/export/report-fingerprint.ts';
import { detailFileName } from '../src/export/roll-up.ts';
import { writeReport, workbookBase, type ReportResult, type WriteReportOptions } from '../src/export/write-report.ts';
import type { ReportPeriod } from '../src/export/period.ts';
import { Database } from '../src/store/database.ts';
import { runCli } from './support/cli-process.ts';
import { openDemoLikeDatabase, type DemoLikeDatabase } from './support/demo-like-db.ts';

/**
 * Workbooks at volume (issue 28, items 2 and 1), on a synced sandbox history built as the demo
 * builds it, with a limit low enough that its record-per-row sheets are rolled up:
 * - a rolled-up sheet, read back as a person sees it: the note above it names its rows and
 *   files, each line its keys, the rows it stands for and their exact sums; "unknown" where a row
 *   summed is unknown; the Summary names the files and links its figures to lines that sum to them;
 * - the files beside the workbook hold every detail row: read back through DuckDB, the Parquet
 *   (DECIMAL still DECIMAL) and the CSV equal the mart's rows;
 * - below the limit, every sheet is as it was without one, and no file is written beside it;
 * - a report whose figures did not change is not written again and says so, the exledger
 *   executable as cron runs it; a changed figure, a file removed, the workbook saved again or
 *   removed, or --force writes it again;
 * - a bad reports.detailRowLimit is one error naming it (also test/config.test.ts).
 */

/** Low enough that the journal's lines, the lot matches and the referrals of the sandbox's month are rolled up. */
const LIMIT = 20;

/** An exact decimal string as integer units of 10^-18 (the test's own arithmetic, independent of the writer's). */
function units(text: string): bigint {
  const negative = text.startsWith('-');
  const [whole, fraction = ''] = text.replace('-', '').split('.');
  const value = BigInt(whole!) * 10n ** 18n + BigInt(fraction.padEnd(18, '0').slice(0, 18));
  return negative ? -value : value;
}

async function readWorkbook(file: string): Promise<ExcelJS.Workbook> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.readFile(file);
  return workbook;
}

/** A key cell as DuckDB's text of its value (dates as YYYY-MM-DD), null when empty. */
function keyText(cell: ExcelJS.Cell, column: ColumnSpec): string | null {
  const value = cell.value;
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return column.format === 'datetime' ? value.toISOString() : value.toISOString().slice(0, 10);
  return String(value);
}

/** The SQL text of a mart's key column, as keyText reads it from a cell. */
function keySql(column: ColumnSpec): string {
  return ['date', 'month'].includes(column.format) ? `strftime(${column.column}, '%Y-%m-%d')` : `CAST(${column.column} AS VARCHAR)`;
}

/** The Summary's rows between a section's title and the next blank row. */
function sectionRows(summary: ExcelJS.Worksheet, title: string): ExcelJS.Row[] {
  const rows: ExcelJS.Row[] = [];
  let inside = false;
  summary.eachRow({ includeEmpty: true }, (row) => {
    const first = row.getCell(1).text;
    if (first === title) inside = true;
    else if (inside && first === '') inside = false;
    else if (inside) rows.push(row);
  });
  return rows.slice(1);
}

interface Written {
  report: ReportSpec;
  result: ReportResult;
  workbook: ExcelJS.Workbook;
}

describe('workbooks at volume: rolled-up sheets and their full detail', () => {
  let fixture: DemoLikeDatabase | undefined;
  let db: Database;
  let period: ReportPeriod;
  let now: Date;
  const written = new Map<string, Written[]>();

  const writeAll = async (run: string, options: Partial<WriteReportOptions>) => {
    const list: Written[] = [];
    for (const report of REPORTS) {
      const result = await writeReport(db, report, { streams: STREAMS, coinFormats: COIN_FORMATS, period, outDir: path.join(fixture!.workspace.dir, run), now, ...options });
      list.push({ report, result, workbook: await readWorkbook(result.file) });
    }
    written.set(run, list);
  };
  const rolledUp = (run: string) => written.get(run)!.flatMap(({ report, result, workbook }) => result.sheets.filter((sheet) => sheet.rolledUp !== undefined).map((sheet) => ({ report, result, workbook, written: sheet, spec: report.sheets.find((candidate) => candidate.name === sheet.name)! })));

  beforeAll(async () => {
    fixture = await openDemoLikeDatabase();
    ({ db, period } = fixture);
    now = new Date(fixture.sandbox.exchange.endMs);
    await writeAll('low', { detailRowLimit: LIMIT });
    await writeAll('high', { detailRowLimit: 1_000_000 });
    await writeAll('none', {});
  }, 300_000);

  afterAll(async () => {
    await fixture?.close();
  });

  it('rolls up each sheet past the limit: a note naming its rows and files, a line per key with the rows it stands for', async () => {
    const sheets = rolledUp('low');
    // Not vacuous: the lot matches, the journal's lines and their sources are among them.
    expect(sheets.map(({ report, spec }) => `${report.name}/${spec.name}`)).toEqual(expect.arrayContaining(['pnl/Spot lot detail', 'journal/Journal lines', 'journal/Journal line sources']));
    for (const { report, result, workbook, written: sheet, spec } of sheets) {
      const where = `${report.name} / ${spec.name}`;
      const shown = workbook.getWorksheet(sheet.parts[0]!)!;
      const files = DETAIL_FORMATS_OF(result, spec);
      const [count] = await db.all<{ n: string }>(`SELECT count(*) AS n FROM ${spec.mart} WHERE ${filterOf(spec)}`, valuesOf(spec, period));
      expect(sheet.rolledUp!.detailRows, where).toBe(Number(count!.n));
      expect(sheet.rolledUp!.detailRows, where).toBeGreaterThan(LIMIT);
      const note = shown.getCell('A1').text;
      expect(note, where).toMatch(new RegExp(`^Rolled up: ${sheet.rolledUp!.detailRows.toLocaleString('en-US')} detail rows in this period, more than the ${LIMIT} shown in full \\(reports\\.detailRowLimit\\)`));
      for (const file of files) expect(note, where).toContain(path.basename(file));
      // The table below the note: the keys, the count of detail rows, the sums.
      const rolled = rolledUpSheet(spec);
      expect((shown.getRow(2).values as ExcelJS.CellValue[]).slice(1), where).toEqual(rolled.columns.map((column) => column.header));
      const countColumn = rolled.columns.findIndex((column) => column.column === DETAIL_ROWS_COLUMN) + 1;
      let rows = 0;
      for (let at = 3; at < 3 + sheet.rows; at++) rows += shown.getRow(at).getCell(countColumn).value as number;
      expect(rows, where).toBe(sheet.rolledUp!.detailRows);
      // Its lines are as many as the mart's distinct keys.
      const keys = rollUpKeys(spec).map((column) => column.column);
      const [lines] = await db.all<{ n: string }>(`SELECT count(*) AS n FROM (SELECT DISTINCT ${keys.join(', ')} FROM ${spec.mart} WHERE ${filterOf(spec)})`, valuesOf(spec, period));
      expect(sheet.rows, where).toBe(Number(lines!.n));
      expect(shown.getRow(3 + sheet.rows).getCell(1).text, where).toBe('');
      // The Summary says it, and lists the files with their rows.
      const summary = workbook.getWorksheet('Summary')!;
      const listed = sectionRows(summary, 'Full detail beside this workbook');
      for (const file of files) {
        const line = listed.find((row) => row.getCell(1).text === path.basename(file));
        expect(line, `${where}: ${path.basename(file)} on the Summary`).toBeDefined();
        expect(line!.getCell(2).value, where).toBe(sheet.rolledUp!.detailRows);
      }
      const sheetLine = sectionRows(summary, 'Sheets').find((row) => row.getCell(1).text === spec.name)!;
      expect(sheetLine.getCell(2).value, where).toBe(sheet.rows);
      expect(sheetLine.getCell(3).text, where).toContain(`Rolled up: ${sheet.rolledUp!.detailRows.toLocaleString('en-US')} detail rows in ${sheet.rows.toLocaleString('en-US')} lines`);
    }
  });

  it('shows each line\'s exact sums, and the totals rows the sums of every detail row', async () => {
    let lines = 0;
    for (const { report, workbook, written: sheet, spec } of rolledUp('low')) {
      const shown = workbook.getWorksheet(sheet.parts[0]!)!;
      const rolled = rolledUpSheet(spec);
      const keys = rollUpKeys(spec);
      const sums = spec.rollUp!.sum.map((name) => spec.columns.find((column) => column.column === name)!);
      // Per group, each sum as DuckDB gives it (DECIMAL), unknown when a row of it is unknown.
      const groups = await db.all<Record<string, string | null>>(
        `SELECT ${keys.map((column, index) => `${keySql(column)} AS k${index}`).join(', ')}, ${sums
          .map((column, index) => `CAST(sum(${column.column}) AS VARCHAR) AS s${index}, count(*) - count(${column.column}) AS n${index}`)
          .join(', ')} FROM ${spec.mart} WHERE ${filterOf(spec)} GROUP BY ALL`,
        valuesOf(spec, period),
      );
      for (let at = 3; at < 3 + sheet.rows; at++) {
        const row = shown.getRow(at);
        const key = keys.map((column, index) => keyText(row.getCell(index + 1), column));
        const group = groups.find((candidate) => key.every((value, index) => value === candidate[`k${index}`]));
        expect(group, `${report.name} / ${spec.name} row ${at}: ${key.join(' · ')}`).toBeDefined();
        sums.forEach((column, index) => {
          const cell = row.getCell(rolled.columns.findIndex((candidate) => candidate.column === column.column) + 1).value;
          const unknown = Number(group![`n${index}`]) > 0 && (column.nullMeans ?? 'unknown') === 'unknown';
          const expected = unknown ? 'unknown' : group![`s${index}`] === null ? null : Number(group![`s${index}`]);
          expect(cell, `${report.name} / ${spec.name} row ${at} ${column.header}`).toEqual(expected);
        });
        lines++;
      }
      // The totals rows: cached results equal to every detail row's sum, per the totals' keys.
      const totals: ExcelJS.Row[] = [];
      shown.eachRow((row) => {
        if (row.getCell(1).value === 'Total') totals.push(row);
      });
      expect(totals.length, `${report.name} / ${spec.name}`).toBeGreaterThan(0);
      const detail = totals.reduce((sum, row) => sum + ((row.getCell(rolled.columns.findIndex((column) => column.column === DETAIL_ROWS_COLUMN) + 1).value as { result: number }).result ?? 0), 0);
      expect(detail, `${report.name} / ${spec.name}: the totals of Detail rows`).toBe(sheet.rolledUp!.detailRows);
    }
    expect(lines).toBeGreaterThan(50);
  });

  it('links each Summary figure to lines that sum to it exactly', async () => {
    let checked = 0;
    for (const { report, workbook, written: sheet, spec } of rolledUp('low')) {
      const summary = workbook.getWorksheet('Summary')!;
      const shown = workbook.getWorksheet(sheet.parts[0]!)!;
      const headers = (shown.getRow(2).values as ExcelJS.CellValue[]).map((value) => String(value ?? ''));
      const rolled = rolledUpSheet(spec);
      for (const row of sectionRows(summary, 'Key figures')) {
        const declared = report.summary.find((figure) => figure.label === row.getCell(1).text);
        if (declared?.sheet !== spec.name || row.getCell(4).text === 'unknown') continue;
        const link = (row.getCell(1).value as ExcelJS.CellHyperlinkValue).hyperlink;
        const target = /^#'((?:[^']|'')+)'!A1:([A-Z]+)(\d+)$/.exec(link);
        expect(target, `${report.name}: ${declared.label}: ${link}`).not.toBeNull();
        expect(Number(target![3]), `${report.name}: ${declared.label}`).toBe(2 + sheet.rows);
        // The rows the words name (e.g. "where Currency = USD and Account = main"), among the linked lines.
        const words = /(?: where (.*?))? \(the link on its name\)\.$/.exec(row.getCell(5).text)![1] ?? '';
        // Split where a header follows (a value may say "and": "Realized gains and losses").
        const named = [...headers.filter((header) => header !== ''), 'Account'].map((header) => header.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
        const conditions = words
          .split(new RegExp(` and (?=(?:${named.join('|')}) = )`))
          .filter((part) => part !== '')
          .map((part) => [part.slice(0, part.indexOf(' = ')), part.slice(part.indexOf(' = ') + 3)] as [string, string]);
        const column = declared.sum === undefined ? DETAIL_ROWS_COLUMN : declared.sum;
        // "Account = main" names the account column, whatever its header.
        const headerOf = (header: string) => (header === 'Account' && !headers.includes(header) ? rolled.columns.find((candidate) => candidate.column === 'account')!.header : header);
        const at = rolled.columns.findIndex((candidate) => candidate.column === column) + 1;
        // Each matching line's exact sum (its group's, in DuckDB), added up as integers.
        let total = 0n;
        for (let line = 3; line <= Number(target![3]); line++) {
          const cells = shown.getRow(line);
          if (!conditions.every(([header, value]) => cells.getCell(headers.indexOf(headerOf(header))).text === value)) continue;
          const keys = rollUpKeys(spec);
          const [group] = await db.all<{ total: string }>(
            `SELECT CAST(${column === DETAIL_ROWS_COLUMN ? 'count(*)' : `sum(${column})`} AS VARCHAR) AS total FROM ${spec.mart} WHERE (${filterOf(spec)}) AND ${keys
              .map((key, index) => `${keySql(key)} IS NOT DISTINCT FROM $${valuesOf(spec, period).length + index + 1}`)
              .join(' AND ')}`,
            [...valuesOf(spec, period), ...keys.map((key, index) => keyText(cells.getCell(index + 1), key)!)],
          );
          expect(cells.getCell(at).value, `${report.name}: ${declared.label} line ${line}`).toBe(Number(group!.total));
          total += units(group!.total);
        }
        expect(total, `${report.name}: ${declared.label} | ${row.getCell(2).text}`).toBe(units(row.getCell(4).text));
        checked++;
      }
    }
    // The journal's debits, credits and balances per ledger account, the referrals' figures.
    expect(checked).toBeGreaterThan(5);
  });

  it('writes every detail row beside the workbook: the Parquet and the CSV, read back through DuckDB, hold the mart\'s rows (in no particular order)', async () => {
    for (const { report, result, written: sheet, spec } of rolledUp('low')) {
      const where = `${report.name} / ${spec.name}`;
      const [parquet, csv] = DETAIL_FORMATS_OF(result, spec);
      const columns = [...new Set([...spec.columns.map((column) => column.column), ...rollUpKeys(spec).map((column) => column.column)])];
      const types = await db.all<{ column_name: string; column_type: string }>(`DESCRIBE SELECT * FROM read_parquet('${parquet}')`);
      expect(types.map((type) => type.column_name), where).toEqual(columns);
      // Amounts stay DECIMAL, ids text: never DOUBLE.
      const mart = await db.all<{ column_name: string; column_type: string }>(`DESCRIBE SELECT ${columns.join(', ')} FROM ${spec.mart}`);
      expect(types, where).toEqual(mart.map(({ column_name, column_type }) => ({ column_name, column_type })).map((type) => expect.objectContaining(type)));
      const select = `SELECT ${columns.join(', ')} FROM ${spec.mart} WHERE ${filterOf(spec)}`;
      const values = valuesOf(spec, period);
      const differ = async (file: string) =>
        db.all<{ n: string }>(
          `SELECT (SELECT count(*) FROM ((${select}) EXCEPT ALL (SELECT * FROM ${file}))) + (SELECT count(*) FROM ((SELECT * FROM ${file}) EXCEPT ALL (${select}))) AS n`,
          values,
        );
      expect(Number((await differ(`read_parquet('${parquet}')`))[0]!.n), `${where}: Parquet`).toBe(0);
      // The CSV read with the Parquet's types: each value's text is exact.
      const csvTypes = `{${types.map((type) => `'${type.column_name}': '${type.column_type}'`).join(', ')}}`;
      expect(Number((await differ(`read_csv('${csv}', header = true, columns = ${csvTypes})`))[0]!.n), `${where}: CSV`).toBe(0);
      const [rows] = await db.all<{ n: string }>(`SELECT count(*) AS n FROM read_csv('${csv}', header = true, columns = ${csvTypes})`);
      expect(Number(rows!.n), where).toBe(sheet.rolledUp!.detailRows);
    }
  });

  it('below the limit, every sheet is as it was without one, and nothing is written beside the workbook', async () => {
    const high = written.get('high')!;
    const none = written.get('none')!;
    for (const [index, { report, workbook, result }] of high.entries()) {
      expect(result.sheets.some((sheet) => sheet.rolledUp !== undefined), report.name).toBe(false);
      const other = none[index]!.workbook;
      expect(workbook.worksheets.map((sheet) => sheet.name), report.name).toEqual(other.worksheets.map((sheet) => sheet.name));
      for (const sheet of workbook.worksheets) {
        const values = (book: ExcelJS.Workbook) => {
          const rows: unknown[] = [];
          book.getWorksheet(sheet.name)!.eachRow({ includeEmpty: true }, (row) => rows.push(row.values));
          return rows;
        };
        expect(values(workbook), `${report.name} / ${sheet.name}`).toEqual(values(other));
      }
    }
    const files = readdirSync(path.join(fixture!.workspace.dir, 'high'));
    expect(files.filter((file) => file.endsWith('.parquet') || (file.endsWith('.csv') && !file.startsWith('journal-')))).toEqual([]);
    // The same sheets past the limit were rolled up (the comparison is not vacuous).
    expect(rolledUp('low').length).toBeGreaterThan(2);
  });

  it('shows "unknown" on a line over a row whose amount is unknown, never the sum of the others', async () => {
    // A lot match sold beyond the inventory has no cost: give one of the month's matches none.
    const [row] = await db.all<{ sell_fill_id: string; cost_method: string; lot_source: string; buy_fill_id: string | null }>(
      `SELECT sell_fill_id, cost_method, lot_source, buy_fill_id FROM marts.spot_lot_matches WHERE sell_date BETWEEN CAST($1 AS DATE) AND CAST($2 AS DATE) AND cost IS NOT NULL ORDER BY sell_at LIMIT 1`,
      [period.from, period.to],
    );
    const pnl = REPORTS.find((report) => report.name === 'pnl')!;
    const spec = pnl.sheets.find((sheet) => sheet.name === 'Spot lot detail')!;
    const match = 'sell_fill_id = $1 AND cost_method = $2 AND lot_source = $3 AND buy_fill_id IS NOT DISTINCT FROM $4';
    const saved = await db.all<{ cost: string }>(`SELECT CAST(cost AS VARCHAR) AS cost FROM marts.spot_lot_matches WHERE ${match}`, [row!.sell_fill_id, row!.cost_method, row!.lot_source, row!.buy_fill_id]);
    expect(saved.length).toBe(1);
    await db.run(`UPDATE marts.spot_lot_matches SET cost = NULL WHERE ${match}`, [row!.sell_fill_id, row!.cost_method, row!.lot_source, row!.buy_fill_id]);
    try {
      const result = await writeReport(db, pnl, { streams: STREAMS, coinFormats: COIN_FORMATS, period, outDir: path.join(fixture!.workspace.dir, 'unknown'), now, detailRowLimit: LIMIT });
      const shown = (await readWorkbook(result.file)).getWorksheet('Spot lot detail')!;
      const rolled = rolledUpSheet(spec);
      const cost = rolled.columns.findIndex((column) => column.column === 'cost') + 1;
      const proceeds = rolled.columns.findIndex((column) => column.column === 'proceeds') + 1;
      const [day] = await db.all<{ day: string; symbol: string }>(`SELECT strftime(sell_date, '%Y-%m-%d') AS day, symbol FROM marts.spot_lot_matches WHERE ${match}`, [row!.sell_fill_id, row!.cost_method, row!.lot_source, row!.buy_fill_id]);
      const unknownLines: number[] = [];
      shown.eachRow((line, at) => {
        if (at > 2 && line.getCell(cost).value === 'unknown') unknownLines.push(at);
      });
      // The line of that day, symbol and method: its cost unknown, its proceeds still known.
      const line = unknownLines.map((at) => shown.getRow(at)).find((candidate) => keyText(candidate.getCell(4), { column: 'sell_date', header: 'Sold on', format: 'date' }) === day!.day && candidate.getCell(3).text === day!.symbol && candidate.getCell(2).text === row!.cost_method);
      expect(line, `${day!.day} ${day!.symbol} ${row!.cost_method}`).toBeDefined();
      expect(typeof line!.getCell(proceeds).value).toBe('number');
      // Its method and coin's total is unknown too.
      const total: ExcelJS.Row[] = [];
      shown.eachRow((candidate) => {
        if (candidate.getCell(1).value === 'Total' && candidate.getCell(2).text === row!.cost_method && candidate.getCell(7).text === line!.getCell(7).text) total.push(candidate);
      });
      expect((total[0]!.getCell(cost).value as { result: unknown }).result).toBe('unknown');
    } finally {
      await db.run(`UPDATE marts.spot_lot_matches SET cost = CAST($5 AS DECIMAL(38, 12)) WHERE ${match}`, [row!.sell_fill_id, row!.cost_method, row!.lot_source, row!.buy_fill_id, saved[0]!.cost]);
    }
  });

  it('does not write a report whose figures did not change, and says so; a changed figure, a removed file, a workbook saved again or --force writes it again', async () => {
    const folder = path.join(fixture!.workspace.dir, 'cli');
    const database = path.join(folder, 'copy.duckdb');
    await db.run('CHECKPOINT');
    rmSync(folder, { recursive: true, force: true });
    mkdirSync(folder);
    copyFileSync(fixture!.workspace.db, database);
    writeFileSync(path.join(folder, 'exledger.config.json'), JSON.stringify({ db: './copy.duckdb', reports: { outDir: './out', detailRowLimit: LIMIT } }));
    const report = (...flags: string[]) => runCli(['report', 'pnl', 'fees', '--period', period.label, ...flags], { cwd: folder });
    const lineOf = (stdout: string, name: string) => stdout.split('\n').find((line) => line.startsWith(`${name} `)) ?? '';

    const first = await report();
    expect(first.code, first.stderr).toBe(0);
    expect(lineOf(first.stdout, 'pnl')).toMatch(/out\/pnl-\S+\.xlsx {2}\d+ sheets, [\d,]+ rows, 1 sheet rolled up {2}[\d.]+ s$/);
    expect(first.stdout).toMatch(/out\/pnl-\S+\.spot-lot-detail\.parquet and \.csv {2}[\d,]+ rows: the full detail of "Spot lot detail" \(rolled up to [\d,]+ lines\)/);
    const workbook = path.join(folder, 'out', `${workbookBase('pnl', period)}.xlsx`);
    const bytes = readFileSync(workbook);
    // What it was written from is inside it (its custom document properties): the folder holds the workbooks and their files only.
    expect(readRecord(workbook)?.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(readdirSync(path.join(folder, 'out')).sort()).toEqual(
      [`${workbookBase('fees', period)}.xlsx`, `${workbookBase('pnl', period)}.xlsx`, detailFileName(workbookBase('pnl', period), 'Spot lot detail', 'csv'), detailFileName(workbookBase('pnl', period), 'Spot lot detail', 'parquet')].sort(),
    );

    // Nothing changed: neither is written again, and each line says since when.
    const second = await report();
    expect(second.code, second.stderr).toBe(0);
    expect(lineOf(second.stdout, 'pnl')).toMatch(/^pnl +\S+ +out\/pnl-\S+\.xlsx {2}unchanged since \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z: not written again \(and the 2 files beside it\)$/);
    expect(lineOf(second.stdout, 'fees')).toMatch(/unchanged since .*: not written again$/);
    expect(readFileSync(workbook).equals(bytes)).toBe(true);

    // One figure changes (a late fill, as a build would bring it): that report is written again, the other not.
    const copy = await Database.open(database);
    try {
      await copy.run(`UPDATE marts.spot_realized_pnl_monthly SET realized_pnl = realized_pnl + 0.000000000001 WHERE trade_month = CAST($1 AS DATE) AND reference = (SELECT min(reference) FROM marts.spot_realized_pnl_monthly WHERE trade_month = CAST($1 AS DATE))`, [`${period.label}-01`]);
    } finally {
      copy.close();
    }
    const third = await report();
    expect(third.code, third.stderr).toBe(0);
    expect(lineOf(third.stdout, 'pnl')).toMatch(/\d+ sheets, [\d,]+ rows, 1 sheet rolled up/);
    expect(lineOf(third.stdout, 'fees')).toMatch(/unchanged since/);

    // A file beside it removed: written again.
    rmSync(path.join(folder, 'out', detailFileName(workbookBase('pnl', period), 'Spot lot detail', 'csv')));
    const fourth = await report();
    expect(lineOf(fourth.stdout, 'pnl')).toMatch(/rolled up/);
    expect(existsSync(path.join(folder, 'out', detailFileName(workbookBase('pnl', period), 'Spot lot detail', 'csv')))).toBe(true);

    // The workbook saved again (by Excel, by anyone: its modification time moves), or removed: written again.
    utimesSync(workbook, new Date(), new Date());
    expect(lineOf((await report()).stdout, 'pnl')).toMatch(/rolled up/);
    rmSync(workbook);
    expect(lineOf((await report()).stdout, 'pnl')).toMatch(/rolled up/);
    expect(lineOf((await report()).stdout, 'pnl')).toMatch(/unchanged since/);

    // --force: both written, changed or not.
    const forced = await report('--force');
    expect(forced.code, forced.stderr).toBe(0);
    expect(lineOf(forced.stdout, 'pnl')).toMatch(/rolled up {2}[\d.]+ s$/);
    expect(lineOf(forced.stdout, 'fees')).toMatch(/\d+ sheets, [\d,]+ rows {2}[\d.]+ s$/);

    // A bad limit: one error naming the setting, exit 2, nothing written.
    writeFileSync(path.join(folder, 'bad.json'), JSON.stringify({ db: './copy.duckdb', reports: { outDir: './out', detailRowLimit: 0 } }));
    const bad = await runCli(['report', 'pnl', '--period', period.label, '--config', 'bad.json'], { cwd: folder });
    expect(bad.code).toBe(2);
    expect(bad.stderr.split('\n')[0]).toMatch(/^error: bad\.json: reports\.detailRowLimit: at least 1 row$/);
    expect(bad.stderr).toMatch(/e\.g\. reports\.detailRowLimit: 100000/);
    expect(readdirSync(path.join(folder, 'out')).filter((file) => file.includes('.tmp-'))).toEqual([]);
  }, 120_000);
});

/** The full detail's files of a written sheet, Parquet first. */
function DETAIL_FORMATS_OF(result: ReportResult, spec: SheetSpec): string[] {
  const sheet = result.sheets.find((candidate) => candidate.name === spec.name)!;
  return ['parquet', 'csv'].map((format) => sheet.rolledUp!.files.find((file) => file.format === format)!.file);
}

/** The WHERE clause of a sheet's rows of the period, the test's own (every sheet rolled up here is by day or month, or booked). */
function filterOf(spec: SheetSpec): string {
  const only = spec.only === undefined ? '' : ` AND CAST(${spec.only.column} AS VARCHAR) IN (${spec.only.values.map((value) => `'${value}'`).join(', ')})`;
  if (spec.period === null) return `true${only}`;
  if (spec.period.grain === 'month') return `${spec.period.column} BETWEEN date_trunc('month', CAST($1 AS DATE)) AND date_trunc('month', CAST($2 AS DATE))${only}`;
  return `${spec.period.column} BETWEEN CAST($1 AS DATE) AND CAST($2 AS DATE)${only}`;
}

function valuesOf(spec: SheetSpec, period: ReportPeriod): string[] {
  return spec.period === null ? [] : [period.from, period.to];
}
