import type ExcelJS from 'exceljs';
import { DataError } from '../errors.ts';
import type { Database } from '../store/database.ts';
import { readStatus } from '../store/stream-status.ts';
import { renderBarChartPng, type ChartBar } from './chart.ts';
import { numberFormat, PAGE_SETUP, WARNING_FILL, WARNING_FONT, type CoinFormats } from './cell-formats.ts';
import type { StreamDeclaration } from '../extract/stream.ts';
import { monthOf, periodFilter, type ReportPeriod } from './period.ts';
import type { ReportSpec, SheetSpec } from './report-definition.ts';
import type { XlsxWriter } from './xlsx-writer.ts';

/**
 * The Summary sheet, first in every workbook: the period and zone, the freshness of the streams
 * the report reads, its key figures, its sheets, notes, and the chart of its main monthly figure.
 * Everything on it is read from the database before any sheet is written.
 */

/** A stream's freshness line on the Summary. */
export interface Freshness {
  account: string;
  stream: string;
  coveredFrom: string | null;
  coveredUntil: string | null;
  lastRunAt: string | null;
  state: 'ok' | 'stale' | 'incomplete' | 'failed';
  note: string;
}

/** A key figure: a sum, last value or count for one group (a coin, a method). */
export interface Figure {
  label: string;
  group: string;
  coin: string | undefined;
  value: string;
}

const TITLE_FONT: Partial<ExcelJS.Font> = { bold: true, size: 16 };
const SECTION_FONT: Partial<ExcelJS.Font> = { bold: true, size: 12 };
const BOLD_FONT: Partial<ExcelJS.Font> = { bold: true };
const OK_FONT: Partial<ExcelJS.Font> = { color: { argb: 'FF006100' } };

/**
 * Each stream of the report, per account: ok, or stale (last synced more than `staleAfterHours`
 * ago), incomplete (the period is not covered, or never synced) or failed (its last sync).
 */
export async function readFreshness(
  db: Database,
  report: ReportSpec,
  streams: readonly Pick<StreamDeclaration, 'name' | 'kind'>[],
  period: ReportPeriod,
  timeZone: string,
  now: Date,
  staleAfterHours: number,
): Promise<Freshness[]> {
  const statuses = (await readStatus(db, streams)).filter((status) => report.streams.includes(status.stream));
  // The period's edges as instants: local midnights of its first day and of the day after its last.
  const edges = (await db.all<{ start_ms: string; end_ms: string }>(
    "SELECT epoch_ms(timezone($1, CAST($2 AS DATE)::TIMESTAMP)) AS start_ms, epoch_ms(timezone($1, (CAST($3 AS DATE) + 1)::TIMESTAMP)) AS end_ms",
    [timeZone, period.from, period.to],
  ))[0]!;
  const [startMs, endMs] = [Number(edges.start_ms), Number(edges.end_ms)];
  const snapshotStreams = new Set(streams.filter((stream) => stream.kind === 'snapshot').map((stream) => stream.name));
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
export async function readFigures(db: Database, report: ReportSpec, period: ReportPeriod): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const figure of report.summary) {
    const sheet = report.sheets.find((candidate) => candidate.name === figure.sheet)!;
    const filter = periodFilter(sheet, period);
    const by = figure.by ?? [];
    const value =
      figure.sum !== undefined ? `CAST(sum(${figure.sum}) AS VARCHAR)` : figure.last !== undefined ? `CAST(arg_max(${figure.last}, ${sheet.period!.column}) AS VARCHAR)` : 'CAST(count(*) AS VARCHAR)';
    const groups = by.length === 0 ? '' : `GROUP BY ${by.join(', ')} ORDER BY ${by.join(', ')}`;
    const select = [...by.map((column, index) => `CAST(${column} AS VARCHAR) AS g${index}`), `${value} AS value`].join(', ');
    const where = figure.where === undefined ? filter.where : `(${filter.where}) AND ${figure.where}`;
    const rows = await db.all<Record<string, string | null>>(`SELECT ${select} FROM ${sheet.mart} WHERE ${where} ${groups}`, filter.values);
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

/**
 * The chart's twelve monthly values ending with the period's last month, for one series: the
 * first coin of reports/coin-formats.ts's `chartCoins` that has rows (amounts in different
 * coins cannot share an axis, and a meme coin's unit counts would dwarf the rest), the first
 * configured cost method, then the series with the most months and the largest total.
 */
export async function readChart(db: Database, report: ReportSpec, period: ReportPeriod, chartCoins: readonly string[]): Promise<{ title: string; unit: string; bars: ChartBar[] }> {
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
       SELECT ${series} FROM monthly GROUP BY ${series}
       ORDER BY coalesce(list_position(CAST($2 AS VARCHAR[]), CAST(${chart.coinColumn} AS VARCHAR)), 1000),
         ${chart.seriesBy.includes('cost_method') ? 'coalesce(list_position((SELECT cost_methods FROM settings.reporting), cost_method), 1000),' : ''}
         count(*) DESC, abs(sum(value)) DESC, ${series}
       LIMIT 1
     )
     SELECT CAST(months.month AS VARCHAR) AS month, CAST(coalesce(sum(monthly.value), 0) AS VARCHAR) AS value,
            (SELECT concat_ws(' · ', ${chart.seriesBy.map((column) => `CAST(${column} AS VARCHAR)`).join(', ')}) FROM picked) AS series,
            (SELECT CAST(${chart.coinColumn} AS VARCHAR) FROM picked) AS coin
     FROM months
     LEFT JOIN monthly ON monthly.month = months.month
       AND (${chart.seriesBy.map((column) => `monthly.${column} IS NOT DISTINCT FROM (SELECT ${column} FROM picked)`).join(' AND ')})
     GROUP BY months.month ORDER BY months.month`,
    [monthOf(period.to), `[${chartCoins.map((coin) => `'${coin}'`).join(', ')}]`],
  );
  const picked = rows[0]?.series ?? null;
  return {
    title: picked === null ? chart.title : `${chart.title}: ${picked}`,
    unit: rows[0]?.coin ?? '',
    bars: picked === null ? [] : rows.map((row) => ({ label: row.month.slice(0, 7), value: row.value })),
  };
}

/** What the Summary shows. */
export interface SummaryInput {
  period: ReportPeriod;
  /** Extra lines for its notes. */
  notes?: readonly string[];
  now: Date;
  timeZone: string;
  costMethods: string[];
  freshness: Freshness[];
  figures: Figure[];
  chart: { title: string; unit: string; bars: ChartBar[] };
  planned: { sheet: SheetSpec; rows: number; parts: string[] }[];
  coinFormats: CoinFormats;
}

export function writeSummary(workbook: XlsxWriter, report: ReportSpec, input: SummaryInput): void {
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
  add(['Stream', 'Account', 'Synced from (UTC)', 'Synced until (UTC)', 'Last sync (UTC)', 'State', 'Note'], (row) => (row.font = BOLD_FONT));
  for (const line of input.freshness) {
    const toDate = (text: string | null) => (text === null ? null : parseInstant(text));
    add([line.stream, line.account, toDate(line.coveredFrom), toDate(line.coveredUntil), toDate(line.lastRunAt), line.state.toUpperCase(), line.note], (row) => {
      for (const column of [3, 4, 5]) row.getCell(column).numFmt = 'yyyy-mm-dd hh:mm';
      if (line.state !== 'ok') for (let column = 1; column <= 7; column++) Object.assign(row.getCell(column), { fill: WARNING_FILL, font: WARNING_FONT });
    });
  }
  blank();

  add(['Key figures'], (row) => (row.getCell(1).font = SECTION_FONT));
  add(['Figure', 'Of', 'Value', 'Exact value (text)'], (row) => (row.font = BOLD_FONT));
  for (const figure of input.figures) {
    add([figure.label, figure.group, Number(figure.value), trimDecimal(figure.value)], (row) => {
      row.getCell(3).numFmt = figure.coin === undefined && /^\d+$/.test(figure.value) ? '#,##0' : numberFormat('amount', input.coinFormats, figure.coin)!;
      row.getCell(4).alignment = { horizontal: 'right' };
    });
  }
  blank();

  add(['Sheets'], (row) => (row.getCell(1).font = SECTION_FONT));
  add(['Sheet', 'Rows', 'What it shows'], (row) => (row.font = BOLD_FONT));
  for (const { sheet: detail, rows, parts } of input.planned) {
    add([parts.length === 1 ? detail.name : `${detail.name} (${parts.length} sheets)`, rows, detail.description], (row) => (row.getCell(2).numFmt = '#,##0'));
  }
  blank();

  add(['Notes'], (row) => (row.getCell(1).font = SECTION_FONT));
  const notes = [
    'Amounts are exact in the database (DuckDB DECIMAL); an Excel cell holds 15 significant digits. The exact sums are in the "Exact value" column above.',
    'A totals row sums the rows shown (it follows the filters). Where the rows mix coins or cost methods, its label says so: filter to one before reading it.',
    'Times are UTC; days and months are cut in the reporting time zone.',
    ...(report.notes ?? []),
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
