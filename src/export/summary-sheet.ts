import path from 'node:path';
import type ExcelJS from 'exceljs';
import { formatCount } from '../count-text.ts';
import { DataError } from '../errors.ts';
import type { Database } from '../store/database.ts';
import { readDrift } from '../store/schema-drift.ts';
import { readStatus } from '../store/stream-status.ts';
import { renderBarChartPng, type ChartBar } from './chart.ts';
import { numberFormat, WARNING_FILL, WARNING_FONT, type CoinFormats } from './cell-formats.ts';
import type { StreamDeclaration } from '../extract/stream.ts';
import { monthOf, periodEdgesMs, rowFilter, type ReportPeriod } from './period.ts';
import { beyondExactSum } from './exact-sum.ts';
import type { ReportSpec, SheetSpec } from './report-definition.ts';
import { columnWidths, formattedNumberText, writeLayout, type ColumnLimits, type LayoutCell, type LayoutRow } from './summary-layout.ts';
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
  /**
   * Fields the exchange sends for this stream and account that no declaration lists, so no figure
   * reads them (schema drift, meta.schema_drift): what a reader signing the figures should know.
   */
  newFields: string[];
  /**
   * Where the synced history leaves the period out (a history stream only): `before` its start
   * (the history starts after the period's first day, or was never synced: no figure can be
   * given), `beyond` all of it (the history ends before the period starts: none either), `after`
   * its end (synced only until before the period's last day: figures lack the rest). `at`: where
   * the history starts (`before`) or ends (UTC), null when never synced.
   */
  gap?: { side: 'before' | 'beyond' | 'after'; at: string | null };
}

/** The stream declarations the Summary reads: their kind, and their fields where drift is reported. */
export type SummaryStream = Pick<StreamDeclaration, 'name' | 'kind'> & Partial<Pick<StreamDeclaration, 'fields' | 'knownFields'>>;

/** A key figure: a sum, last value or count for one group (a coin, a method). */
export interface Figure {
  label: string;
  group: string;
  /**
   * The account of a per-account line; null for the line of every account the workbook covers
   * (the consolidated total, or the one account of a `--account` workbook or of the database).
   */
  account: string | null;
  coin: string | undefined;
  /** The exact decimal; null: unknown (NULL in the mart), shown as unknown, never as 0. */
  value: string | null;
  /** What it measures (the declaration's `note`). */
  note?: string;
  /** Why it is unknown, when it is. */
  unknownReason?: string;
  /**
   * Figures it includes that are unknown for its group (and account), and accounts whose value is
   * unknown in a total: it is shown without them, and says so.
   */
  excludes: string[];
  /** A reporting-currency sum that leaves out rows without a price: says how many, and where they are listed. */
  incomplete?: string;
  /** On a total over accounts: the accounts whose value is unknown (it is the sum of the others'). */
  unknownAccounts?: string[];
  /** Its streams were synced only until before the period's end: what it lacks. */
  partial?: string;
  /** The detail sheet whose rows it reads (its name links to them). */
  sheet: string;
  /** Which of those rows, in words: `Fees paid summed over the rows of "Fees by month" where Product = spot and Coin = USDT`. */
  rows: string;
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
  streams: readonly SummaryStream[],
  period: ReportPeriod,
  timeZone: string,
  now: Date,
  staleAfterHours: number,
  account?: string,
): Promise<Freshness[]> {
  // A workbook of one account (--account) shows that account's streams only.
  const statuses = (await readStatus(db, streams)).filter((status) => report.streams.includes(status.stream) && (account === undefined || status.account === account));
  const { startMs, endMs } = await periodEdgesMs(db, period, timeZone);
  const snapshotStreams = new Set(streams.filter((stream) => stream.kind === 'snapshot').map((stream) => stream.name));
  const declared = streams.filter((stream): stream is SummaryStream & Pick<StreamDeclaration, 'fields'> => stream.fields !== undefined && report.streams.includes(stream.name));
  const drift = await readDrift(db, declared);
  const newFields = (of: string, stream: string) => drift.filter((field) => field.account === of && field.stream === stream).map((field) => field.field);
  const lines: Freshness[] = [];
  if (statuses.length === 0) {
    for (const stream of report.streams) {
      const history = !snapshotStreams.has(stream);
      lines.push({ account: account ?? '', stream, coveredFrom: null, coveredUntil: null, lastRunAt: null, state: 'incomplete', note: 'never synced', newFields: [], ...(history ? { gap: { side: 'before' as const, at: null } } : {}) });
    }
  }
  for (const status of statuses) {
    const base = { account: status.account, stream: status.stream, coveredFrom: status.coveredFrom, coveredUntil: status.coveredUntil, lastRunAt: status.lastRunAt };
    const lastRunMs = status.lastRunAt === null ? null : parseInstant(status.lastRunAt).getTime();
    const hoursAgo = lastRunMs === null ? null : (now.getTime() - lastRunMs) / 3_600_000;
    let state: Freshness['state'] = 'ok';
    let note = snapshotStreams.has(status.stream) ? 'latest snapshot read' : 'the period is covered';
    let gap: Freshness['gap'];
    const history = !snapshotStreams.has(status.stream);
    // Where the history leaves the period out, whatever the last sync's state (a failed sync still covered what it covered).
    if (history && (status.coveredFrom === null || status.coveredUntil === null)) gap = { side: 'before', at: null };
    else if (history && Date.parse(status.coveredUntil!) <= startMs) gap = { side: 'beyond', at: status.coveredUntil };
    else if (history && Date.parse(status.coveredFrom!) > startMs) gap = { side: 'before', at: status.coveredFrom };
    else if (history && Date.parse(status.coveredUntil!) < endMs) gap = { side: 'after', at: status.coveredUntil };
    if (status.lastRunAt === null) [state, note] = ['incomplete', 'never synced'];
    else if (status.lastStatus !== 'ok') [state, note] = ['failed', `last sync ${status.lastStatus ?? 'unknown'}${status.lastError === null ? '' : `: ${status.lastError}`}`];
    else if (!snapshotStreams.has(status.stream) && (status.coveredUntil === null || Date.parse(status.coveredUntil) < endMs)) {
      [state, note] = ['incomplete', `synced only until ${status.coveredUntil ?? 'never'}: the end of the period is not covered`];
    } else if (!snapshotStreams.has(status.stream) && status.coveredFrom !== null && Date.parse(status.coveredFrom) > startMs) {
      [state, note] = ['incomplete', `history starts ${status.coveredFrom}, after the start of the period`];
    } else if (hoursAgo !== null && hoursAgo > staleAfterHours) [state, note] = ['stale', `last synced ${Math.round(hoursAgo)} hours ago`];
    const fields = newFields(status.account, status.stream);
    if (fields.length > 0) note += `; the exchange also sends ${fields.join(', ')}, which no figure reads yet (exledger status)`;
    lines.push({ ...base, state, note, newFields: fields, ...(gap === undefined ? {} : { gap }) });
  }
  return lines;
}

/** `2025-11-26T08:00:00.000Z` (or DuckDB's text of an instant) → `2025-11-26 08:00 UTC`. */
function instantText(instant: string): string {
  return `${parseInstant(instant).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** Why a sheet's rows (of one account, or of all: null) cannot be given for the period: its streams' history does not reach back to its start. */
export function notSyncedReason(report: ReportSpec, sheet: SheetSpec, freshness: readonly Freshness[], account: string | null): string | undefined {
  const streams = sheet.streams ?? report.streams;
  const gaps = freshness.filter((line) => streams.includes(line.stream) && (account === null || line.account === account || line.account === '') && (line.gap?.side === 'before' || line.gap?.side === 'beyond'));
  if (gaps.length === 0) return undefined;
  // The account is named where the workbook covers more than one.
  const named = account === null && new Set(freshness.map((line) => line.account)).size > 1;
  const why = (gap: NonNullable<Freshness['gap']>) =>
    gap.at === null ? 'never synced' : gap.side === 'before' ? `starts ${instantText(gap.at)}, after the start of the period` : `ends ${instantText(gap.at)}, before the period`;
  return `not synced: ${gaps.map((line) => `${line.stream} history${named ? ` of account ${line.account}` : ''} ${why(line.gap!)}`).join('; ')}`;
}

/** What a sheet's rows lack at the end of the period: its streams synced only until before it ends. */
function syncedUntilReason(report: ReportSpec, sheet: SheetSpec, freshness: readonly Freshness[], account: string | null): string | undefined {
  const streams = sheet.streams ?? report.streams;
  const gaps = freshness.filter((line) => streams.includes(line.stream) && (account === null || line.account === account || line.account === '') && line.gap?.side === 'after');
  if (gaps.length === 0) return undefined;
  const named = account === null && new Set(freshness.map((line) => line.account)).size > 1;
  return `${gaps.map((line) => `${line.stream}${named ? ` of account ${line.account}` : ''} synced only until ${instantText(line.gap!.at!)}`).join('; ')}: the rest of the period is missing`;
}

/**
 * Figures over a period the synced history does not cover: where it starts after the period's
 * first day (or was never synced), the figure has no number (unknown, saying "not synced: history
 * starts …"), never the 0 of no rows; where it ends before the period's last day, the figure is
 * marked incomplete. Per account line, and the consolidated line from every account's.
 */
export function applyCoverage(figures: Figure[], report: ReportSpec, freshness: readonly Freshness[]): Figure[] {
  const result: Figure[] = [];
  const seen = new Set<string>();
  for (const figure of figures) {
    const sheet = report.sheets.find((candidate) => candidate.name === report.summary.find((declared) => declared.label === figure.label)!.sheet)!;
    const notSynced = notSyncedReason(report, sheet, freshness, figure.account);
    if (notSynced !== undefined) {
      // One line per figure and account: its groups (coins, methods) cannot be known either.
      const key = `${figure.label}\n${figure.account ?? ''}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const { incomplete: _incomplete, unknownAccounts: _unknownAccounts, ...rest } = figure;
      result.push({ ...rest, group: 'not synced', coin: undefined, value: null, unknownReason: notSynced, excludes: [] });
      continue;
    }
    const until = syncedUntilReason(report, sheet, freshness, figure.account);
    result.push(until === undefined ? figure : { ...figure, partial: until });
  }
  return result;
}

/** Which accounts the key figures cover, and how. */
export interface FigureScope {
  /** `exledger report --account`: that account's rows only. @default every account */
  account?: string;
  /**
   * Without `account`: a line per account before each consolidated line. A database of one
   * account has only its total (the same value): no line would add anything. @default false
   */
  perAccount?: boolean;
  /** The sheets rolled up (their lines count detail rows): a count over one is their Detail rows summed. @default none */
  rolledUp?: ReadonlySet<string>;
}

/**
 * The Summary's key figures, computed in DuckDB over the same rows as their sheets. Each is
 * computed per account first (a sum, the account's latest value, a count), and the line of a
 * group is the sum of its accounts' values (a DECIMAL sum: exact), so a balance is each account's
 * latest, added up, never one account's. A sum of NULLs is NULL (DuckDB), kept as unknown; a total
 * over accounts of which one is unknown keeps the others' sum and says it lacks that account, as a
 * figure that includes an unknown one says so.
 */
export async function readFigures(db: Database, report: ReportSpec, period: ReportPeriod, scope: FigureScope = {}): Promise<Figure[]> {
  const figures: Figure[] = [];
  const split = scope.account === undefined && scope.perAccount === true;
  for (const figure of report.summary) {
    const sheet = report.sheets.find((candidate) => candidate.name === figure.sheet)!;
    const filter = rowFilter(sheet, period, scope.account);
    const by = figure.by ?? [];
    const value = figure.sum !== undefined ? `sum(${figure.sum})` : figure.last !== undefined ? `arg_max(${figure.last}, ${sheet.period!.column})` : 'count(*)';
    const where = figure.where === undefined ? filter.where : `(${filter.where}) AND ${figure.where}`;
    const groups = by.map((column, index) => `CAST(${column} AS VARCHAR) AS g${index}`);
    const keys = by.map((_, index) => `g${index}`);
    // A count over no rows at all is 0 (one line, as count(*) gives), a sum over none NULL.
    const totalValue = figure.sum === undefined && figure.last === undefined ? 'coalesce(sum(value), 0)' : 'sum(value)';
    // A reporting-currency sum counts the rows it leaves out for lack of a price.
    // (Rows without a reporting currency are not valued at all: they need no price.)
    const unpriced = figure.unpriced !== undefined && figure.sum !== undefined ? `count(*) FILTER (WHERE ${figure.sum} IS NULL AND reporting_currency IS NOT NULL)` : '0';
    const total = `SELECT ${[...keys, 'NULL AS account', `CAST(${totalValue} AS VARCHAR) AS value`, 'list(account ORDER BY account) FILTER (WHERE value IS NULL) AS unknown_accounts', 'CAST(sum(unpriced) AS VARCHAR) AS unpriced', '1 AS line'].join(', ')}
       FROM per_account ${keys.length === 0 ? '' : `GROUP BY ${keys.join(', ')}`}`;
    const lines = split ? `SELECT ${[...keys, 'account', 'CAST(value AS VARCHAR) AS value', 'NULL AS unknown_accounts', 'CAST(unpriced AS VARCHAR) AS unpriced', '0 AS line'].join(', ')} FROM per_account UNION ALL ${total}` : total;
    const rows = await db.all<Record<string, string | null> & { unknown_accounts: string[] | null }>(
      `WITH per_account AS (
         SELECT ${[...groups, 'CAST(account AS VARCHAR) AS account', `${value} AS value`, `${unpriced} AS unpriced`].join(', ')}
         FROM ${sheet.mart} WHERE ${where} GROUP BY ALL
       )
       SELECT * FROM (${lines}) ORDER BY ${[...keys, 'line', 'account'].join(', ')}`,
      filter.values,
    ).catch((error: unknown) => {
      throw beyondExactSum(error, `report ${report.name}: the Summary's "${figure.label}" (${figure.sum ?? figure.last ?? 'rows'} of "${sheet.name}", ${sheet.mart})`) ?? error;
    });
    const described = { label: figure.label, ...(figure.note === undefined ? {} : { note: figure.note }) };
    const unknownReason = figure.unknown ?? 'not in the data (NULL), which is not zero';
    // A sum over a column whose NULL means "not applicable" (the funding account's traded volume:
    // it does not trade) has no line for the groups where it does not apply, as the sheet leaves them blank.
    const notApplicable = figure.sum !== undefined && sheet.columns.find((column) => column.column === figure.sum)?.nullMeans === 'not-applicable';
    // Which rows it reads, named by the sheet's headers (the link on its name opens them).
    const header = (column: string) => sheet.columns.find((candidate) => candidate.column === column)?.header ?? column;
    // A rolled-up sheet's lines each stand for rows: what counts them is their Detail rows, summed.
    const counted = scope.rolledUp?.has(sheet.name) === true ? 'Detail rows summed over the rows' : 'The number of rows';
    const how = figure.sum !== undefined ? `${header(figure.sum)} summed over the rows` : figure.last !== undefined ? `${header(figure.last)} of the latest of the rows` : counted;
    const rowsOf = (row: Record<string, string | null> | undefined, account: string | null | undefined) => {
      const conditions = [
        ...by.map((column, index) => `${header(column)} = ${row?.[`g${index}`] ?? '(empty)'}`),
        ...(account === null || account === undefined ? [] : [`Account = ${account}`]),
        ...(figure.where === undefined ? [] : [`${figure.where} is true`]),
      ];
      return `${how} of "${sheet.name}"${conditions.length === 0 ? '' : ` where ${conditions.join(' and ')}`}`;
    };
    for (const row of rows) {
      if (notApplicable && row.value === null) continue;
      const unknownAccounts = notApplicable || row.value === null ? [] : (row.unknown_accounts ?? []);
      const unpricedRows = Number(row.unpriced ?? '0');
      const needPrice = `${unpricedRows} ${unpricedRows === 1 ? 'row' : 'rows'} of "${sheet.name}" ${unpricedRows === 1 ? 'needs' : 'need'} a price (${figure.unpriced ?? ''})`;
      figures.push({
        ...described,
        group: by.map((_, index) => row[`g${index}`] ?? '(none)').join(' · '),
        account: row.account ?? null,
        coin: figure.coinColumn === undefined ? undefined : (row[`g${by.indexOf(figure.coinColumn)}`] ?? undefined),
        value: row.value ?? null,
        ...(row.value === null ? { unknownReason: unpricedRows > 0 ? needPrice : figure.unpriced !== undefined ? 'no reporting currency is set (models.reportingCurrency)' : unknownReason } : {}),
        excludes: unknownAccounts.map((account) => `account ${account}`),
        ...(unknownAccounts.length === 0 ? {} : { unknownAccounts }),
        ...(unpricedRows > 0 && row.value !== null ? { incomplete: needPrice } : {}),
        sheet: sheet.name,
        rows: rowsOf(row, row.account),
      });
    }
    if (rows.length === 0) {
      // No rows: a count is 0, a sum of nothing is 0, unless the figure can be unknown (then it is).
      const counted = figure.sum === undefined && figure.last === undefined;
      const unknown = !counted && (figure.unknown !== undefined || figure.last !== undefined);
      figures.push({ ...described, group: 'no rows in the period', account: null, coin: undefined, value: unknown ? null : '0', ...(unknown ? { unknownReason } : {}), excludes: [], sheet: sheet.name, rows: `No rows of "${sheet.name}" in the period` });
    }
  }
  for (const figure of figures) {
    // A value in the reporting currency of figures in coins (the futures net result and its funding
    // in each margin coin): it lacks every coin's part that is unknown, whatever its group.
    for (const part of report.summary.find((candidate) => candidate.label === figure.label)?.includesAnyGroup ?? []) {
      const lines = figures.filter((candidate) => candidate.label === part && candidate.account === figure.account);
      const unknown = lines.filter((line) => line.value === null);
      if (lines.length === 0) figure.excludes.push(part);
      for (const line of unknown) figure.excludes.push(`${part} (${line.group})`);
    }
    for (const part of report.summary.find((candidate) => candidate.label === figure.label)?.includes ?? []) {
      const same = figures.find((candidate) => candidate.label === part && candidate.group === figure.group && candidate.account === figure.account);
      if (same === undefined || same.value === null) figure.excludes.push(part);
      else {
        // A total whose part lacks an unknown account's value (funding) lacks it too: that account's line excludes it.
        const lacking = same.unknownAccounts ?? [];
        if (lacking.length > 0) figure.excludes.push(`${part} of ${lacking.length === 1 ? 'account' : 'accounts'} ${lacking.join(', ')}`);
      }
    }
  }
  return figures;
}

/**
 * The chart's twelve monthly values ending with the period's last month, for one series: the
 * first coin of reports/coin-formats.ts's `chartCoins` that has rows (amounts in different
 * coins cannot share an axis, and a meme coin's unit counts would dwarf the rest), the first
 * configured cost method, then the series with the most months and the largest total.
 */
export async function readChart(db: Database, report: ReportSpec, period: ReportPeriod, chartCoins: readonly string[], account?: string): Promise<{ title: string; unit: string; bars: ChartBar[] }> {
  const chart = report.chart;
  // With --account, that account's rows only; else every account's, added up (the consolidated figure).
  const ofAccount = account === undefined ? '' : 'AND account = $3';
  const series = chart.seriesBy.join(', ');
  const rows = await db.all<{ month: string; value: string; series: string; coin: string | null }>(
    `WITH months AS (
       SELECT CAST(range AS DATE) AS month FROM range(CAST($1 AS DATE) - INTERVAL 11 MONTH, CAST($1 AS DATE) + INTERVAL 1 DAY, INTERVAL 1 MONTH)
     ),
     monthly AS (
       SELECT ${series}, ${chart.monthColumn} AS month, sum(${chart.valueColumn}) AS value
       FROM ${chart.mart}
       WHERE ${chart.monthColumn} BETWEEN (SELECT min(month) FROM months) AND CAST($1 AS DATE) ${ofAccount}
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
    [monthOf(period.to), `[${chartCoins.map((coin) => `'${coin}'`).join(', ')}]`, ...(account === undefined ? [] : [account])],
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
  /** The one account of a `--account` workbook. @default every account (consolidated) */
  account?: string;
  /** The accounts in the database (named on a consolidated Summary). */
  accounts: readonly string[];
  /** Extra lines for its notes. */
  notes?: readonly string[];
  now: Date;
  timeZone: string;
  costMethods: string[];
  /** The currency the marts were valued in (settings.model_builds); null: none. @default null */
  reportingCurrency?: string | null;
  /** The journal's cost method and chart of accounts (settings.model_builds.journal of marts.journal_entries); null or absent: not a journal. */
  journal?: string | null;
  /** The report's valuation columns, sheets and figures were left out: no reporting currency is set. @default false */
  valuationLeftOut?: boolean;
  /** The prices file they were valued with (its name and hash); null: none. @default null */
  prices?: string | null;
  freshness: Freshness[];
  figures: Figure[];
  chart: { title: string; unit: string; bars: ChartBar[] };
  /**
   * The detail sheets as written: the sheet (rolled up: its lines' columns), its rows, its parts;
   * a rolled-up sheet's detail rows, the columns its lines are per (headers) and its full detail's files.
   */
  planned: { sheet: SheetSpec; rows: number; parts: string[]; rolledUp?: { detailRows: number; by: readonly string[]; files: readonly { file: string; rows: number }[] } }[];
  coinFormats: CoinFormats;
  /**
   * Whether the period is closed: "Closed on … by …", or "Draft: not closed" (write-report.ts
   * closureText), shown under the title and in every page's header. @default none shown
   */
  closure?: { text: string; closed: boolean };
}

/** The Summary's columns: A labels, B groups and accounts (a consolidated figure's "average · USDT · all accounts" fits), C–E values and dates, F state, G notes. */
const SUMMARY_LIMITS: ColumnLimits = {
  min: [16, 10, 12, 14, 12, 8, 16],
  max: [50, 36, 24, 40, 22, 12, 48],
  // The chart picture (900 px) sits under the columns: they are at least as wide, so it prints whole.
  totalMin: 128,
};
const COLUMNS = SUMMARY_LIMITS.min.length;
const DATE_TIME = 'yyyy-mm-dd hh:mm';
const DATE_TIME_SECONDS = 'yyyy-mm-dd hh:mm:ss';

/** Whether the report shows spot PnL by cost method (a sheet or its chart splits by `cost_method`). */
export function showsCostMethods(report: ReportSpec): boolean {
  return report.sheets.some((sheet) => sheet.columns.some((column) => column.column === 'cost_method')) || report.chart.seriesBy.includes('cost_method');
}

/** Whether the report has values in the reporting currency (a figure marked `unpriced`). */
export function showsReportingCurrency(report: ReportSpec): boolean {
  return report.summary.some((figure) => figure.unpriced !== undefined);
}

export function writeSummary(workbook: XlsxWriter, report: ReportSpec, input: SummaryInput): void {
  const sheet = workbook.addWorksheet('Summary', { views: [{ showGridLines: false }] });
  const rows: LayoutRow[] = [];
  const text = (value: string, style: Omit<LayoutCell, 'value' | 'text'> = {}): LayoutCell => ({ value, text: value, ...style });
  const wide = (value: string, style: Omit<LayoutCell, 'value' | 'text'> = {}): LayoutCell => text(value, { span: COLUMNS, ...style });
  const date = (value: Date | null, numFmt: string, style: Omit<LayoutCell, 'value' | 'text'> = {}): LayoutCell | null =>
    value === null ? null : { value, text: numFmt, numFmt, ...style };
  const count = (value: number): LayoutCell => ({ value, text: formattedNumberText(String(value), '#,##0'), numFmt: '#,##0' });
  const add = (...cells: (LayoutCell | null)[]) => rows.push(cells);
  /** A table's header cells: bold, aligned like the column below them. */
  const header = (...labels: (string | [string, 'right' | 'center'])[]): LayoutCell[] =>
    labels.map((label) => (typeof label === 'string' ? text(label, { font: BOLD_FONT }) : text(label[0], { font: BOLD_FONT, align: label[1] })));
  const section = (title: string) => add(text(title, { font: SECTION_FONT, span: COLUMNS }));
  const blank = () => add();
  const monthly = report.sheets.some((candidate) => candidate.period?.grain === 'month');
  const wholeMonths = input.period.from.endsWith('-01') && input.period.to === lastDayOfMonth(input.period.to);
  const info = (label: string, value: LayoutCell) => add(text(label), { ...value, span: COLUMNS - 1, align: 'left' });

  // Split: each figure has a line per account before its consolidated line (readFigures).
  const split = input.figures.some((figure) => figure.account !== null);
  add(wide(`${report.title}: ${input.period.label}${input.account === undefined ? '' : `, account ${input.account}`}`, { font: TITLE_FONT }));
  if (input.closure !== undefined) add(wide(input.closure.text, { font: input.closure.closed ? { ...OK_FONT, bold: true } : { ...WARNING_FONT, bold: true } }));
  blank();
  if (input.account !== undefined) info('Account', text(`${input.account} only: every sheet, figure and freshness line is this account's`));
  else if (split) info('Accounts', text(`${input.accounts.join(', ')}, consolidated: each key figure per account, then for all accounts`));
  else if (input.accounts.length === 1) info('Account', text(input.accounts[0]!));
  info('Period', text(`${input.period.from} to ${input.period.to} (both included)`));
  if (monthly && !wholeMonths) info('Monthly sheets cover', text(`whole months: ${monthOf(input.period.from).slice(0, 7)} to ${input.period.to.slice(0, 7)}`));
  info('Reporting time zone', text(input.timeZone));
  info('Generated at (UTC)', date(input.now, DATE_TIME_SECONDS)!);
  // Only a report with spot PnL depends on the cost methods; elsewhere the line would mean nothing.
  if (showsCostMethods(report)) info('Spot cost methods', text(input.costMethods.join(', ')));
  if (showsReportingCurrency(report)) {
    info('Reporting currency', text(input.reportingCurrency ?? 'none (models.reportingCurrency is not set: no row is valued)'));
    if (input.reportingCurrency !== null && input.reportingCurrency !== undefined) info('Prices', text(`${input.prices ?? 'no prices file: only the currency itself and prices derived from it'} (docs/workbooks.md "Reporting currency")`));
  }
  if (input.valuationLeftOut === true) info('Reporting currency', text('none set (models.reportingCurrency): every amount is shown in its own coin, none is valued'));
  if (input.journal !== null && input.journal !== undefined) {
    if (!showsReportingCurrency(report)) info('Reporting currency', text(input.reportingCurrency ?? 'none'));
    info('Journal', text(`${input.journal} (models.journal; docs/workbooks.md "Journal entries")`));
  }
  const stale = input.freshness.filter((line) => line.state !== 'ok');
  add(
    wide(stale.length === 0 ? 'Every stream of this report is synced through the end of the period.' : `Warning: ${stale.length} stream(s) stale or incomplete: these figures may be missing data (see below).`, {
      font: stale.length === 0 ? { ...OK_FONT, bold: true } : { ...WARNING_FONT, bold: true },
    }),
  );
  const rolledUp = input.planned.filter((planned) => planned.rolledUp !== undefined);
  if (rolledUp.length > 0) {
    const which = rolledUp.map((planned) => `"${planned.sheet.name}" (${formatCount(planned.rolledUp!.detailRows)} rows)`);
    add(wide(`Rolled up: ${which.join(', ')} ${rolledUp.length === 1 ? 'shows' : 'show'} lines that each sum many detail rows; every detail row is in the files listed under "Full detail beside this workbook".`, { font: BOLD_FONT }));
  }
  const drifted = [...new Set(input.freshness.flatMap((line) => line.newFields.map((field) => `${line.stream}.${field}`)))];
  if (drifted.length > 0) {
    add(wide(`Note: the exchange sends ${drifted.length} field(s) that no figure reads yet: ${drifted.join(', ')} (see Data freshness).`, { font: { ...WARNING_FONT, bold: true } }));
  }
  blank();

  section('Data freshness');
  add(...header('Stream', 'Account', 'Synced from (UTC)', 'Synced until (UTC)', 'Last sync (UTC)', ['State', 'center'], 'Note'));
  for (const line of input.freshness) {
    const warn = line.state === 'ok' ? {} : { fill: WARNING_FILL, font: WARNING_FONT };
    const toDate = (instant: string | null) => (instant === null ? null : parseInstant(instant));
    // Instants left-aligned like the text around them; the state centred: nothing touches its neighbour.
    const instant = (value: string | null) => date(toDate(value), DATE_TIME, { align: 'left', ...warn }) ?? text('never', warn);
    // New fields do not make the figures stale, but their note is marked: a signer should read it.
    const noteStyle = line.state === 'ok' && line.newFields.length > 0 ? { font: WARNING_FONT } : warn;
    add(text(line.stream, warn), text(line.account, warn), instant(line.coveredFrom), instant(line.coveredUntil), instant(line.lastRunAt), text(line.state.toUpperCase(), { align: 'center', ...warn }), text(line.note, noteStyle));
  }
  blank();

  section('Key figures');
  add(...header('Figure', 'Of', ['Value', 'right'], ['Exact value (text)', 'right']), text('What it is', { font: BOLD_FONT, span: 3 }));
  // Why a figure is unknown is said on its first unknown line; its other lines (accounts, groups) refer to it.
  const reasonGiven = new Set<string>();
  input.figures.forEach((figure, index) => {
    // What a figure is, said once on its first line; unknown and incomplete on every line they concern.
    const first = index === 0 || input.figures[index - 1]!.label !== figure.label;
    const numFmt = figure.coin === undefined && figure.value !== null && /^\d+$/.test(figure.value) ? '#,##0' : numberFormat('amount', input.coinFormats, figure.coin)!;
    const known = figure.value !== null;
    const warn = !known || figure.excludes.length > 0 || figure.incomplete !== undefined || figure.partial !== undefined ? { font: WARNING_FONT } : {};
    // The consolidated line of a split figure: its group and values bold, as a totals row's are.
    const consolidated = split && figure.account === null;
    const strong = consolidated ? { font: { ...warn.font, bold: true } } : warn;
    const of = [figure.group, figure.account ?? (consolidated ? 'all accounts' : '')].filter((part) => part !== '').join(' · ');
    const reason = `${figure.unknownReason ?? 'not in the data'}`;
    const about = [
      ...(known ? [] : [reasonGiven.has(`${figure.label}\n${reason}`) ? 'Unknown, as above.' : `Unknown: ${reason}.`]),
      ...(figure.excludes.length === 0 ? [] : [`Incomplete: without ${figure.excludes.join(', ')}, which ${figure.excludes.length === 1 ? 'is' : 'are'} unknown.`]),
      ...(figure.incomplete === undefined ? [] : [`Incomplete: ${figure.incomplete}; the value is the sum of the others.`]),
      ...(figure.partial === undefined || !known ? [] : [`Incomplete: ${figure.partial}.`]),
      ...(figure.note === undefined || !first ? [] : [figure.note]),
      `${figure.rows} (the link on its name).`,
    ].join(' ');
    if (!known) reasonGiven.add(`${figure.label}\n${reason}`);
    // The figure's name links to the rows it reads: the sheet's table, header included (its first sheet when split).
    // A rolled-up sheet's lines, which sum to the figure as its rows do, are below its note.
    const planned = input.planned.find((candidate) => candidate.sheet.name === figure.sheet);
    const headerRow = planned?.rolledUp === undefined ? 1 : 2;
    const range = planned === undefined || planned.parts.length !== 1 || planned.rows === 0 ? 'A1' : `A1:${columnLetters(planned.sheet.columns.length)}${planned.rows + headerRow}`;
    const target = `#'${(planned?.parts[0] ?? figure.sheet).replace(/'/g, "''")}'!${range}`;
    add(
      { ...text(figure.label, warn), value: { text: figure.label, hyperlink: target } },
      text(of, strong),
      // Unknown is an empty number cell (a reader or a formula never takes it for 0) and the word beside it.
      known ? { value: Number(figure.value), text: formattedNumberText(figure.value!, numFmt), numFmt, ...strong } : null,
      text(known ? trimDecimal(figure.value!) : 'unknown', { align: 'right', ...strong }),
      about === '' ? null : text(about, { span: 3, ...warn }),
    );
  });
  blank();

  section('Sheets');
  add(...header('Sheet', ['Rows', 'right']), text('What it shows', { font: BOLD_FONT, span: COLUMNS - 2 }));
  for (const { sheet: detail, rows: rowCount, parts, rolledUp: lines } of input.planned) {
    const rolled = lines === undefined ? '' : `. Rolled up: ${formatCount(lines.detailRows)} detail rows in ${formatCount(rowCount)} lines, one per ${lines.by.join(', ')}; every row in the files below.`;
    add(text(parts.length === 1 ? detail.name : `${detail.name} (${parts.length} sheets)`), count(rowCount), text(`${detail.description}${rolled}`, { span: COLUMNS - 2 }));
  }
  blank();

  if (rolledUp.length > 0) {
    // The files are written with the workbook and renamed with it: they are its rows, in full.
    section('Full detail beside this workbook');
    add(...header('File', ['Rows', 'right']), text('What it holds', { font: BOLD_FONT, span: COLUMNS - 2 }));
    for (const planned of rolledUp) {
      for (const written of planned.rolledUp!.files) {
        const kind = written.file.endsWith('.parquet') ? 'Parquet: amounts as DECIMAL, ids as text, instants in UTC' : 'CSV: DuckDB\'s exact text of each value, instants in ISO 8601 UTC';
        add(text(path.basename(written.file)), count(written.rows), text(`Every detail row of "${planned.sheet.name}" in the period, with the mart's column names (${kind})`, { span: COLUMNS - 2 }));
      }
    }
    blank();
  }

  section('Notes');
  const notes = [
    'Amounts are exact in the database (DuckDB DECIMAL); an Excel cell holds 15 significant digits. The exact sums are in the "Exact value" column above.',
    'Unknown is not zero: a figure the data cannot give (e.g. funding without two collateral snapshots) is left empty and marked unknown, and a figure that includes it says it is incomplete.',
    `A totals row sums the rows shown (it follows the filters). Where the rows mix coins${showsCostMethods(report) ? ' or cost methods' : ''}, its label says so: filter to one before reading it.`,
    'Times are UTC; days and months are cut in the reporting time zone.',
    ...(split
      ? ['A key figure for all accounts is the sum of its accounts\' lines above it (a closing balance: each account\'s latest, added up); where an account\'s value is unknown, the total of the others says it lacks that account.']
      : []),
    ...(input.account === undefined ? [] : [`This workbook holds the rows of account ${input.account} only; ${report.name}-${input.period.label}.xlsx (without --account) holds every account, consolidated.`]),
    ...(report.notes ?? []),
    ...(input.notes ?? []),
  ];
  for (const note of notes) add(wide(note));
  blank();

  section(`Trend: the twelve months to ${input.period.to.slice(0, 7)}`);
  const widths = columnWidths(rows, SUMMARY_LIMITS);
  // The picture's top-left corner is the (0-based) row after the caption.
  const chartRow = writeLayout(sheet, rows, widths);
  const png = renderBarChartPng({ title: input.chart.title, unit: input.chart.unit, bars: input.chart.bars });
  workbook.addPicture(sheet, { png, col: 0, row: chartRow, widthPx: 900, heightPx: 420, description: `${input.chart.title} (${input.chart.unit}), per month` });
  sheet.commit();
}

/** A column's letters (1 → A, 27 → AA). */
function columnLetters(column: number): string {
  let letters = '';
  for (let rest = column; rest > 0; rest = Math.floor((rest - 1) / 26)) letters = String.fromCharCode(65 + ((rest - 1) % 26)) + letters;
  return letters;
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
