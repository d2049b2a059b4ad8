import { mkdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import type ExcelJS from 'exceljs';
import { STREAMS } from '../../pipelines/index.ts';
import { ConfigError, DataError } from '../errors.ts';
import type { Database } from '../store/database.ts';
import { readStatus } from '../store/stream-status.ts';
import { renderBarChartPng, type ChartBar } from './chart.ts';
import { DecimalSum, DEFAULT_WIDTHS, cellValue, isZeroDecimal, numberFormat } from './cell-formats.ts';
import { monthOf, type ReportPeriod } from './period.ts';
import type { ColumnSpec, ReportSpec, SheetSpec } from './report-definition.ts';
import { XlsxWriter } from './xlsx-writer.ts';

/** Excel's last row (1,048,576) less the header and totals rows. */
export const EXCEL_MAX_DATA_ROWS = 1_048_576 - 2;

/** Options of writeReport. */
export interface WriteReportOptions {
  period: ReportPeriod;
  /** Folder of the workbook (created if needed). */
  outDir: string;
  /** Data rows per detail sheet before it continues on another. @default EXCEL_MAX_DATA_ROWS */
  maxRowsPerSheet?: number;
  /** The time the report is generated at. @default now */
  now?: Date;
  /** Hours after which a stream's last sync counts as stale. @default 36 */
  staleAfterHours?: number;
  /** Extra lines for the Summary's notes (e.g. the checks of the run that wrote it). */
  notes?: readonly string[];
  /** Called with each detail sheet's progress (rows written so far, rows in all). */
  onProgress?: (sheet: string, written: number, total: number) => void;
}

/** One detail sheet as written. */
export interface WrittenSheet {
  name: string;
  /** The sheet names it was written to (more than one past Excel's row limit). */
  parts: string[];
  rows: number;
}

/** What writeReport wrote. */
export interface ReportResult {
  report: string;
  file: string;
  period: ReportPeriod;
  sheets: WrittenSheet[];
  /** Stale or incomplete streams, as shown on the Summary. */
  warnings: string[];
  ms: number;
}

/** A stream's freshness line on the Summary. */
interface Freshness {
  account: string;
  stream: string;
  coveredFrom: string | null;
  coveredUntil: string | null;
  lastRunAt: string | null;
  state: 'ok' | 'stale' | 'incomplete' | 'failed';
  note: string;
}

interface Figure {
  label: string;
  group: string;
  coin: string | undefined;
  value: string;
}

const TITLE_FONT: Partial<ExcelJS.Font> = { bold: true, size: 16 };
const SECTION_FONT: Partial<ExcelJS.Font> = { bold: true, size: 12 };
const BOLD: Partial<ExcelJS.Style> = { font: { bold: true } };
const WARNING_FILL: ExcelJS.Fill = { type: 'pattern', pattern: 'solid', fgColor: { argb: 'FFFFC7CE' } };
const WARNING_FONT: Partial<ExcelJS.Font> = { color: { argb: 'FF9C0006' } };
const OK_FONT: Partial<ExcelJS.Font> = { color: { argb: 'FF006100' } };
/** Printed (and converted to PDF) landscape, as wide as the page, as many pages down as needed. */
const PAGE_SETUP: Partial<ExcelJS.PageSetup> = { orientation: 'landscape', paperSize: 9, fitToPage: true, fitToWidth: 1, fitToHeight: 0 };

/**
 * Writes one report's workbook: a Summary sheet (period, zone, freshness of its streams, key
 * figures, the monthly chart), then each detail sheet as an Excel table of its mart's rows in
 * the period, streamed row by row (memory stays flat whatever the size). The file is written
 * under a temporary name and renamed when complete, so nobody opens half a workbook.
 */
export async function writeReport(db: Database, report: ReportSpec, options: WriteReportOptions): Promise<ReportResult> {
  const started = performance.now();
  const now = options.now ?? new Date();
  const reporting = await readReporting(db);
  await checkMarts(db, report);
  const counts = await Promise.all(report.sheets.map(async (sheet) => countRows(db, sheet, options.period)));
  const freshness = await readFreshness(db, report, options.period, reporting.timeZone, now, options.staleAfterHours ?? 36);
  const figures = await readFigures(db, report, options.period);
  const chart = await readChart(db, report, options.period);

  mkdirSync(options.outDir, { recursive: true });
  const file = path.join(options.outDir, `${report.name}-${options.period.label}.xlsx`);
  const temporary = path.join(options.outDir, `.${report.name}-${options.period.label}.xlsx.tmp-${process.pid}`);
  const maxRows = options.maxRowsPerSheet ?? EXCEL_MAX_DATA_ROWS;
  try {
    const workbook = new XlsxWriter({ filename: temporary });
    workbook.creator = 'exledger';
    workbook.created = now;
    const warnings = freshness.filter((line) => line.state !== 'ok').map((line) => `${line.account} ${line.stream}: ${line.note}`);
    const planned = report.sheets.map((sheet, index) => ({ sheet, rows: counts[index]!, parts: sheetParts(sheet.name, counts[index]!, maxRows) }));
    writeSummary(workbook, report, { ...options, now, timeZone: reporting.timeZone, costMethods: reporting.costMethods, freshness, figures, chart, planned });
    const tableNames = new Set<string>();
    const sheets: WrittenSheet[] = [];
    for (const { sheet, rows, parts } of planned) {
      await writeDetailSheet(db, workbook, report, sheet, { period: options.period, rows, parts, maxRows, tableNames, onProgress: options.onProgress });
      sheets.push({ name: sheet.name, parts, rows });
    }
    await workbook.commit();
    renameSync(temporary, file);
    return { report: report.name, file, period: options.period, sheets, warnings, ms: performance.now() - started };
  } finally {
    rmSync(temporary, { force: true });
  }
}

/** The continuation sheets' names: `Lot detail`, `Lot detail (2)`, … */
function sheetParts(name: string, rows: number, maxRows: number): string[] {
  const count = Math.max(1, Math.ceil(rows / maxRows));
  return Array.from({ length: count }, (_, index) => (index === 0 ? name : `${name} (${index + 1})`));
}

async function readReporting(db: Database): Promise<{ timeZone: string; costMethods: string[] }> {
  const exists = await db.all("SELECT 1 FROM information_schema.tables WHERE table_schema = 'settings' AND table_name = 'reporting'");
  if (exists.length === 0) throw new DataError('the models have not been built in this database', { hint: 'run exledger build first (exledger run does it)' });
  const row = (await db.all<{ time_zone: string; cost_methods: string }>("SELECT time_zone, array_to_string(cost_methods, ', ') AS cost_methods FROM settings.reporting"))[0];
  if (row === undefined) throw new DataError('settings.reporting is empty', { hint: 'run exledger build again' });
  return { timeZone: row.time_zone, costMethods: row.cost_methods.split(', ') };
}

/** Every mart and column the report names must exist: one clear error instead of a SQL one halfway. */
async function checkMarts(db: Database, report: ReportSpec): Promise<void> {
  const rows = await db.all<{ name: string; column_name: string }>("SELECT 'marts.' || table_name AS name, column_name FROM information_schema.columns WHERE table_schema = 'marts'");
  const columns = new Map<string, Set<string>>();
  for (const row of rows) columns.set(row.name, (columns.get(row.name) ?? new Set()).add(row.column_name));
  const needed: { mart: string; names: string[] }[] = [
    ...report.sheets.map((sheet) => ({ mart: sheet.mart, names: [...sheet.columns.map((column) => column.column), ...sheet.orderBy, ...(sheet.period === null ? [] : [sheet.period.column])] })),
    { mart: report.chart.mart, names: [report.chart.monthColumn, report.chart.valueColumn, ...report.chart.seriesBy] },
  ];
  for (const { mart, names } of needed) {
    const known = columns.get(mart);
    if (known === undefined) throw new DataError(`${mart} does not exist (report ${report.name})`, { hint: 'run exledger build first (exledger run does it)' });
    const missing = names.find((name) => !known.has(name));
    if (missing !== undefined) throw new ConfigError(`reports/${report.name}.ts`, `"${missing}" is not a column of ${mart}`);
  }
}

/** The WHERE clause that keeps a sheet's rows of the period, and its parameters. */
function periodFilter(sheet: Pick<SheetSpec, 'period'>, period: ReportPeriod): { where: string; values: string[] } {
  if (sheet.period === null) return { where: 'true', values: [] };
  const [from, to] = sheet.period.grain === 'day' ? [period.from, period.to] : [monthOf(period.from), monthOf(period.to)];
  return { where: `${sheet.period.column} BETWEEN CAST($1 AS DATE) AND CAST($2 AS DATE)`, values: [from, to] };
}

async function countRows(db: Database, sheet: SheetSpec, period: ReportPeriod): Promise<number> {
  const filter = periodFilter(sheet, period);
  return Number((await db.all<{ n: string }>(`SELECT count(*) AS n FROM ${sheet.mart} WHERE ${filter.where}`, filter.values))[0]!.n);
}

async function readFreshness(db: Database, report: ReportSpec, period: ReportPeriod, timeZone: string, now: Date, staleAfterHours: number): Promise<Freshness[]> {
  const statuses = (await readStatus(db)).filter((status) => report.streams.includes(status.stream));
  // The period's edges as instants: local midnights of its first day and of the day after its last.
  const edges = (await db.all<{ start_ms: string; end_ms: string }>(
    "SELECT epoch_ms(timezone($1, CAST($2 AS DATE)::TIMESTAMP)) AS start_ms, epoch_ms(timezone($1, (CAST($3 AS DATE) + 1)::TIMESTAMP)) AS end_ms",
    [timeZone, period.from, period.to],
  ))[0]!;
  const [startMs, endMs] = [Number(edges.start_ms), Number(edges.end_ms)];
  const snapshotStreams = new Set(STREAMS.filter((stream) => stream.kind === 'snapshot').map((stream) => stream.name));
  const lines: Freshness[] = [];
  if (statuses.length === 0) {
    for (const stream of report.streams) lines.push({ account: '', stream, coveredFrom: null, coveredUntil: null, lastRunAt: null, state: 'incomplete', note: 'never synced' });
  }
  for (const status of statuses) {
    const base = { account: status.account, stream: status.stream, coveredFrom: status.coveredFrom, coveredUntil: status.coveredUntil, lastRunAt: status.lastRunAt };
    const lastRunMs = status.lastRunAt === null ? null : parseInstant(status.lastRunAt).getTime();
    const hoursAgo = lastRunMs === null ? null : (now.getTime() - lastRunMs) / 3_600_000;
    let state: Freshness['state'] = 'ok';
    let note = snapshotStreams.has(status.stream) ? 'latest snapshot read' : 'the period is covered';
    if (status.lastRunAt === null) [state, note] = ['incomplete', 'never synced'];
    else if (status.lastStatus !== 'ok') [state, note] = ['failed', `last sync ${status.lastStatus ?? 'unknown'}${status.lastError === null ? '' : `: ${status.lastError}`}`];
    else if (!snapshotStreams.has(status.stream) && (status.coveredUntil === null || Date.parse(status.coveredUntil) < endMs)) {
      [state, note] = ['incomplete', `synced only until ${status.coveredUntil ?? 'never'}: the end of the period is not covered`];
    } else if (!snapshotStreams.has(status.stream) && status.coveredFrom !== null && Date.parse(status.coveredFrom) > startMs) {
      [state, note] = ['incomplete', `history starts ${status.coveredFrom}, after the start of the period`];
    } else if (hoursAgo !== null && hoursAgo > staleAfterHours) [state, note] = ['stale', `last synced ${Math.round(hoursAgo)} hours ago`];
    lines.push({ ...base, state, note });
  }
  return lines;
}

/** The Summary's key figures, computed in DuckDB over the same rows as their sheets. */
async function readFigures(db: Database, report: ReportSpec, period: ReportPeriod): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const figure of report.summary) {
    const sheet = report.sheets.find((candidate) => candidate.name === figure.sheet)!;
    const filter = periodFilter(sheet, period);
    const by = figure.by ?? [];
    const value =
      figure.sum !== undefined ? `CAST(sum(${figure.sum}) AS VARCHAR)` : figure.last !== undefined ? `CAST(arg_max(${figure.last}, ${sheet.period!.column}) AS VARCHAR)` : 'CAST(count(*) AS VARCHAR)';
    const groups = by.length === 0 ? '' : `GROUP BY ${by.join(', ')} ORDER BY ${by.join(', ')}`;
    const select = [...by.map((column, index) => `CAST(${column} AS VARCHAR) AS g${index}`), `${value} AS value`].join(', ');
    const rows = await db.all<Record<string, string | null>>(`SELECT ${select} FROM ${sheet.mart} WHERE ${filter.where} ${groups}`, filter.values);
    for (const row of rows) {
      figures.push({
        label: figure.label,
        group: by.map((_, index) => row[`g${index}`] ?? '(none)').join(' · '),
        coin: figure.coinColumn === undefined ? undefined : (row[`g${by.indexOf(figure.coinColumn)}`] ?? undefined),
        value: row.value ?? '0',
      });
    }
    if (rows.length === 0) figures.push({ label: figure.label, group: 'no rows in the period', coin: undefined, value: '0' });
  }
  return figures;
}

/** The chart's twelve monthly values ending with the period's last month, for the series with the largest total. */
async function readChart(db: Database, report: ReportSpec, period: ReportPeriod): Promise<{ title: string; unit: string; bars: ChartBar[] }> {
  const chart = report.chart;
  const series = chart.seriesBy.join(', ');
  const rows = await db.all<{ month: string; value: string; series: string; coin: string | null }>(
    `WITH months AS (
       SELECT CAST(range AS DATE) AS month FROM range(CAST($1 AS DATE) - INTERVAL 11 MONTH, CAST($1 AS DATE) + INTERVAL 1 DAY, INTERVAL 1 MONTH)
     ),
     monthly AS (
       SELECT ${series}, ${chart.monthColumn} AS month, sum(${chart.valueColumn}) AS value
       FROM ${chart.mart}
       WHERE ${chart.monthColumn} BETWEEN (SELECT min(month) FROM months) AND CAST($1 AS DATE)
       GROUP BY ALL
     ),
     picked AS (
       SELECT ${series} FROM monthly GROUP BY ALL ORDER BY abs(sum(value)) DESC, ${series} LIMIT 1
     )
     SELECT CAST(months.month AS VARCHAR) AS month, CAST(coalesce(sum(monthly.value), 0) AS VARCHAR) AS value,
            (SELECT concat_ws(' · ', ${chart.seriesBy.map((column) => `CAST(${column} AS VARCHAR)`).join(', ')}) FROM picked) AS series,
            (SELECT CAST(${chart.coinColumn} AS VARCHAR) FROM picked) AS coin
     FROM months
     LEFT JOIN monthly ON monthly.month = months.month
       AND (${chart.seriesBy.map((column) => `monthly.${column} IS NOT DISTINCT FROM (SELECT ${column} FROM picked)`).join(' AND ')})
     GROUP BY months.month ORDER BY months.month`,
    [monthOf(period.to)],
  );
  const picked = rows[0]?.series ?? null;
  return {
    title: picked === null ? chart.title : `${chart.title}: ${picked}`,
    unit: rows[0]?.coin ?? '',
    bars: picked === null ? [] : rows.map((row) => ({ label: row.month.slice(0, 7), value: row.value })),
  };
}

interface SummaryInput extends WriteReportOptions {
  now: Date;
  timeZone: string;
  costMethods: string[];
  freshness: Freshness[];
  figures: Figure[];
  chart: { title: string; unit: string; bars: ChartBar[] };
  planned: { sheet: SheetSpec; rows: number; parts: string[] }[];
}

function writeSummary(workbook: XlsxWriter, report: ReportSpec, input: SummaryInput): void {
  const sheet = workbook.addWorksheet('Summary', { views: [{ showGridLines: false }], pageSetup: PAGE_SETUP });
  sheet.columns = [{ width: 46 }, { width: 24 }, { width: 22 }, { width: 26 }, { width: 20 }, { width: 12 }, { width: 60 }];
  let rows = 0;
  const add = (values: ExcelJS.CellValue[], style?: (row: ExcelJS.Row) => void) => {
    const row = sheet.addRow(values);
    rows++;
    style?.(row);
    row.commit();
    return row;
  };
  const blank = () => add([]);
  const monthly = report.sheets.some((candidate) => candidate.period?.grain === 'month');
  const wholeMonths = input.period.from.endsWith('-01') && input.period.to === lastDayOfMonth(input.period.to);

  add([`${report.title}: ${input.period.label}`], (row) => (row.getCell(1).font = TITLE_FONT));
  blank();
  add(['Period', `${input.period.from} to ${input.period.to} (both included)`]);
  if (monthly && !wholeMonths) add(['Monthly sheets cover', `whole months: ${monthOf(input.period.from).slice(0, 7)} to ${input.period.to.slice(0, 7)}`]);
  add(['Reporting time zone', input.timeZone]);
  add(['Generated at (UTC)', input.now], (row) => Object.assign(row.getCell(2), { numFmt: 'yyyy-mm-dd hh:mm:ss', alignment: { horizontal: 'left' } }));
  add(['Spot cost methods', input.costMethods.join(', ')]);
  const stale = input.freshness.filter((line) => line.state !== 'ok');
  add(
    [stale.length === 0 ? 'Every stream of this report is synced through the end of the period.' : `Warning: ${stale.length} stream(s) stale or incomplete: these figures may be missing data (see below).`],
    (row) => (row.getCell(1).font = stale.length === 0 ? { ...OK_FONT, bold: true } : { ...WARNING_FONT, bold: true }),
  );
  blank();

  add(['Data freshness'], (row) => (row.getCell(1).font = SECTION_FONT));
  add(['Stream', 'Account', 'Synced from (UTC)', 'Synced until (UTC)', 'Last sync (UTC)', 'State', 'Note'], (row) => (row.font = BOLD.font!));
  for (const line of input.freshness) {
    const toDate = (text: string | null) => (text === null ? null : parseInstant(text));
    add([line.stream, line.account, toDate(line.coveredFrom), toDate(line.coveredUntil), toDate(line.lastRunAt), line.state.toUpperCase(), line.note], (row) => {
      for (const column of [3, 4, 5]) row.getCell(column).numFmt = 'yyyy-mm-dd hh:mm';
      if (line.state !== 'ok') for (let column = 1; column <= 7; column++) Object.assign(row.getCell(column), { fill: WARNING_FILL, font: WARNING_FONT });
    });
  }
  blank();

  add(['Key figures'], (row) => (row.getCell(1).font = SECTION_FONT));
  add(['Figure', 'Of', 'Value', 'Exact value (text)'], (row) => (row.font = BOLD.font!));
  for (const figure of input.figures) {
    add([figure.label, figure.group, Number(figure.value), trimDecimal(figure.value)], (row) => {
      row.getCell(3).numFmt = figure.coin === undefined && /^\d+$/.test(figure.value) ? '#,##0' : numberFormat('amount', figure.coin)!;
      row.getCell(4).alignment = { horizontal: 'right' };
    });
  }
  blank();

  add(['Sheets'], (row) => (row.getCell(1).font = SECTION_FONT));
  add(['Sheet', 'Rows', 'What it shows'], (row) => (row.font = BOLD.font!));
  for (const { sheet: detail, rows, parts } of input.planned) {
    add([parts.length === 1 ? detail.name : `${detail.name} (${parts.length} sheets)`, rows, detail.description], (row) => (row.getCell(2).numFmt = '#,##0'));
  }
  blank();

  add(['Notes'], (row) => (row.getCell(1).font = SECTION_FONT));
  const notes = [
    'Amounts are exact in the database (DuckDB DECIMAL); an Excel cell holds 15 significant digits. The exact sums are in the "Exact value" column above.',
    'A totals row sums the rows shown (it follows the filters). Where the rows mix coins or cost methods, its label says so: filter to one before reading it.',
    'Times are UTC; days and months are cut in the reporting time zone.',
    ...(input.notes ?? []),
  ];
  for (const note of notes) add([note]);
  blank();

  add([`Trend: the twelve months to ${input.period.to.slice(0, 7)}`], (row) => (row.getCell(1).font = SECTION_FONT));
  // The picture's top-left corner is the (0-based) row after the caption.
  const chartRow = rows;
  const png = renderBarChartPng({ title: input.chart.title, unit: input.chart.unit, bars: input.chart.bars });
  workbook.addPicture(sheet, { png, col: 0, row: chartRow, widthPx: 900, heightPx: 420, description: `${input.chart.title} (${input.chart.unit}), per month` });
  sheet.commit();
}

/** An instant as ISO (`…Z`) or as DuckDB renders a TIMESTAMPTZ (`2026-11-22 15:49:12.123+00`). */
function parseInstant(text: string): Date {
  const iso = text.replace(' ', 'T').replace(/([+-]\d{2})$/, '$1:00');
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) throw new DataError(`"${text}" is not an instant`);
  return date;
}

/** `4.109222450000000000` → `4.10922245` (the same number, without DECIMAL's padding). */
function trimDecimal(text: string): string {
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}

function lastDayOfMonth(day: string): string {
  const [year, month] = day.split('-').map(Number) as [number, number];
  return new Date(Date.UTC(year, month, 0)).toISOString().slice(0, 10);
}

/** Excel table names: letters, digits and `_`, unique in the workbook. */
function tableName(report: string, sheet: string, part: number, taken: Set<string>): string {
  const base = `${report}_${sheet}`.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_+|_+$/g, '');
  let name = `T_${base}${part > 1 ? `_${part}` : ''}`;
  for (let suffix = 2; taken.has(name.toLowerCase()); suffix++) name = `T_${base}_${part}_${suffix}`;
  taken.add(name.toLowerCase());
  return name;
}

/** The SELECT expression of a column: datetimes as epoch milliseconds (exact, zone-free). */
function selectExpression(column: ColumnSpec): string {
  return column.format === 'datetime' ? `epoch_ms(${column.column})` : column.column;
}

async function writeDetailSheet(
  db: Database,
  workbook: XlsxWriter,
  report: ReportSpec,
  spec: SheetSpec,
  plan: { period: ReportPeriod; rows: number; parts: string[]; maxRows: number; tableNames: Set<string>; onProgress?: WriteReportOptions['onProgress'] },
): Promise<void> {
  const columns = spec.columns;
  const coinIndex = columns.map((column) => (column.coinColumn === undefined ? -1 : columns.findIndex((candidate) => candidate.column === column.coinColumn)));
  const highlightIndex = spec.highlight === undefined ? -1 : columns.findIndex((column) => column.column === spec.highlight!.column);
  const styles = new StyleCache();
  const filter = periodFilter(spec, plan.period);
  const sql = `SELECT ${columns.map(selectExpression).join(', ')} FROM ${spec.mart} WHERE ${filter.where} ORDER BY ${spec.orderBy.join(', ')}`;

  let part = -1;
  let sheet: ExcelJS.Worksheet | undefined;
  let partRows = 0;
  let written = 0;
  let totals: { sum: DecimalSum; coins: Set<string> }[] = [];
  const totalsPerIndex = (spec.totalsPer ?? []).map((name) => columns.findIndex((column) => column.column === name));
  let totalsPerValues: Set<string>[] = [];

  const openPart = () => {
    part++;
    sheet = workbook.addWorksheet(plan.parts[part]!, { views: [{ state: 'frozen', ySplit: 1 }], pageSetup: { ...PAGE_SETUP, printTitlesRow: '1:1' } });
    sheet.columns = columns.map((column) => ({ width: column.width ?? Math.max(DEFAULT_WIDTHS[column.format], Math.min(40, column.header.length + 3)) }));
    const header = sheet.addRow(columns.map((column) => column.header));
    header.font = { bold: true };
    columns.forEach((column, index) => {
      if (!['text', 'id'].includes(column.format)) header.getCell(index + 1).alignment = { horizontal: 'right' };
    });
    header.commit();
    partRows = 0;
    totals = columns.map(() => ({ sum: new DecimalSum(), coins: new Set<string>() }));
    totalsPerValues = totalsPerIndex.map(() => new Set<string>());
  };
  const closePart = () => {
    if (sheet === undefined) return;
    if (partRows === 0) {
      sheet.addRow(['No rows in this period.']).commit();
    } else {
      const name = tableName(report.name, spec.name, part + 1, plan.tableNames);
      // A total over two coins (or two cost methods) is no figure: the label says to filter first.
      const mixed = totals.some((total) => total.coins.size > 1) || totalsPerValues.some((values) => values.size > 1);
      const label = mixed ? 'Total of the rows shown: mixes coins or methods, filter to one first' : 'Total';
      const values = columns.map((column, index): ExcelJS.CellValue => {
        if (column.total !== true) return index === 0 ? label : null;
        return { formula: `SUBTOTAL(109,${name}[[${column.header}]])`, result: Number(totals[index]!.sum.toString()) };
      });
      const row = sheet.addRow(values);
      row.font = { bold: true };
      columns.forEach((column, index) => {
        if (column.total !== true) return;
        const coins = [...totals[index]!.coins];
        row.getCell(index + 1).numFmt = numberFormat(column.format, coins.length === 1 ? coins[0] : undefined)!;
      });
      row.commit();
      workbook.addTable(sheet, { name, headerRow: 1, dataRows: partRows, columns: columns.map((column) => ({ name: column.header, total: column.total === true })), totalsRow: true, totalsLabel: label });
    }
    sheet.commit();
  };

  openPart();
  await db.exclusive(async () => {
    const result = await db.connection.stream(sql, filter.values);
    for await (const chunk of result.yieldRowsJson()) {
      for (const values of chunk) {
        if (partRows === plan.maxRows) {
          closePart();
          openPart();
        }
        const highlighted = highlightIndex >= 0 && (spec.highlight!.when === 'always' || (values[highlightIndex] !== null && !isZeroDecimal(String(values[highlightIndex]))));
        const cells = values.map((value, index) => cellValue(columns[index]!.format, value, () => `${spec.mart}.${columns[index]!.column}`));
        const row = sheet!.addRow(cells);
        totalsPerIndex.forEach((index, position) => totalsPerValues[position]!.add(String(values[index])));
        columns.forEach((column, index) => {
          const coin = coinIndex[index]! >= 0 ? ((values[coinIndex[index]!] as string | null) ?? undefined) : undefined;
          // Always one shared object, even an empty one: exceljs caches styles by identity, and
          // a cell left without one gets a new empty style to process (a fifth of the time).
          row.getCell(index + 1).style = styles.get(column.format, coin, highlighted);
          if (column.total === true && values[index] !== null) {
            totals[index]!.sum.add(String(values[index]));
            if (coin !== undefined) totals[index]!.coins.add(coin);
          }
        });
        row.commit();
        partRows++;
        written++;
        if (written % 50_000 === 0) plan.onProgress?.(spec.name, written, plan.rows);
      }
      await workbook.drain(sheet!);
    }
  });
  closePart();
  if (written % 50_000 !== 0) plan.onProgress?.(spec.name, written, plan.rows);
}

/** One style object per (format, coin, highlight): exceljs caches styles by object identity. */
class StyleCache {
  private readonly styles = new Map<string, Partial<ExcelJS.Style>>();

  get(format: ColumnSpec['format'], coin: string | undefined, highlighted: boolean): Partial<ExcelJS.Style> {
    const key = `${format}|${coin ?? ''}|${highlighted ? 1 : 0}`;
    let style = this.styles.get(key);
    if (style === undefined) {
      const numFmt = numberFormat(format, coin);
      style = { ...(numFmt === undefined ? {} : { numFmt }), ...(highlighted ? { fill: WARNING_FILL, font: WARNING_FONT } : {}) };
      this.styles.set(key, style);
    }
    return style;
  }
}
