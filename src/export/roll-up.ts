import type { Database } from '../store/database.ts';
import type { SheetSource } from './detail-sheet.ts';
import { rowFilter, type ReportPeriod } from './period.ts';
import { DETAIL_ROWS_COLUMN, rollUpKeys, type SheetSpec } from './report-definition.ts';
import { quoteIdentifier } from '../store/sql-text.ts';
import { CSV_INSTANT, quoteString } from './write-dataset.ts';

/**
 * Rolled-up sheets (docs/workbooks.md "Rolled-up sheets"): a sheet whose rows in the period are
 * more than `reports.detailRowLimit` shows one line per value of its `rollUp.by` columns, its
 * amounts summed exactly in DuckDB (DECIMAL), and the full detail is written beside the workbook
 * as Parquet and CSV by DuckDB's COPY (DECIMAL stays DECIMAL in Parquet, ids stay text).
 */

/**
 * Detail rows a sheet shows in full (`reports.detailRowLimit`): more than a controller reads
 * (100,000 lines are some 2,000 printed pages), and written by exceljs in about 5 s, where a
 * million rows take most of a minute and Excel stops at 1,048,576. A month's roll-up (per
 * account, cost method, symbol, day and rule) stays far below it.
 */
export const DEFAULT_DETAIL_ROW_LIMIT = 100_000;
/** The largest `reports.detailRowLimit`: a sheet's rows below it fit on one sheet (Excel's rows less the header and the totals kept below the table). */
export const MAX_DETAIL_ROW_LIMIT = 1_048_576 - 1 - 1_000;

/** The formats the full detail of a rolled-up sheet is written in, beside the workbook. */
export const DETAIL_FORMATS = ['parquet', 'csv'] as const;
export type DetailFormat = (typeof DETAIL_FORMATS)[number];

/**
 * The lines of a rolled-up sheet: per value of its keys, the count of detail rows and each summed
 * column. A sum over a row whose value is unknown (NULL where NULL means unknown) is unknown: the
 * line shows "unknown", never the sum of the others (DuckDB's sum would skip the NULL).
 */
export function rollUpSource(sheet: SheetSpec, period: ReportPeriod, account?: string): SheetSource {
  const filter = rowFilter(sheet, period, account);
  const keys = rollUpKeys(sheet).map((column) => column.column);
  const sums = sheet.rollUp!.sum.map((name) => {
    const column = sheet.columns.find((candidate) => candidate.column === name)!;
    return (column.nullMeans ?? 'unknown') === 'unknown' ? `CASE WHEN count(${name}) = count(*) THEN sum(${name}) END AS ${name}` : `sum(${name}) AS ${name}`;
  });
  return {
    relation: `(SELECT ${[...keys, `count(*) AS ${DETAIL_ROWS_COLUMN}`, ...sums].join(', ')} FROM ${sheet.mart} WHERE ${filter.where} GROUP BY ${keys.join(', ')}) AS rolled_up`,
    where: 'true',
    values: filter.values,
  };
}

/** How many lines the sheet's roll-up has in the period. */
export async function countRollUpLines(db: Database, sheet: SheetSpec, period: ReportPeriod, account?: string): Promise<number> {
  const source = rollUpSource(sheet, period, account);
  const [row] = await db.all<{ n: string }>(`SELECT count(*) AS n FROM ${source.relation}`, source.values);
  return Number(row!.n);
}

/** `Spot lot detail` → `spot-lot-detail`: the part of a detail file's name that says which sheet it holds. */
export function sheetSlug(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/** The full detail's file of a sheet, beside its workbook: `<report>-<period>[-<account>].<sheet>.<format>`. */
export function detailFileName(base: string, sheet: string, format: DetailFormat): string {
  return `${base}.${sheetSlug(sheet)}.${format}`;
}

/**
 * The columns of the full detail: the sheet's (by the mart's names: the files are for another
 * program, not a person), then the roll-up's keys that are not on the sheet (a day), so the
 * files regroup into the sheet's lines.
 */
export function detailColumns(sheet: SheetSpec): string[] {
  return [...new Set([...sheet.columns.map((column) => column.column), ...rollUpKeys(sheet).map((column) => column.column)])];
}

/**
 * Writes every detail row of a sheet (its mart's rows of the period and account, in no particular
 * order: DuckDB writes each file on every thread, as its threads finish, which halves the time of
 * keeping the mart's order, measured on the 10M benchmark's month of 3.3M lot matches (Parquet 5.3
 * s -> 2.5 s, CSV 11 s -> 7 s); sorting them as the sheet is would take longer still, and the
 * files are for programs, which sort as they need) into `files` (temporary names the caller renames
 * once every file of the workbook is complete), by DuckDB's COPY: Parquet keeps each column's
 * type (DECIMAL stays DECIMAL, instants TIMESTAMPTZ, ids VARCHAR) and names the report, sheet and
 * period in its key-value metadata; the CSV has a header line, DuckDB's exact text of each value
 * and instants in ISO 8601 UTC. Returns the rows written.
 */
export async function writeDetailFiles(
  db: Database,
  sheet: SheetSpec,
  options: { period: ReportPeriod; account?: string; report: string; files: Readonly<Record<DetailFormat, string>> },
): Promise<number> {
  const filter = rowFilter(sheet, options.period, options.account);
  const columns = detailColumns(sheet);
  // COPY takes no parameters: the filter's values (days, an account, the mart names of `only`) are written in as literals.
  const where = filter.where.replace(/\$(\d+)/g, (_, index: string) => quoteString(filter.values[Number(index) - 1]!));
  const select = `SELECT ${columns.map(quoteIdentifier).join(', ')} FROM ${sheet.mart} WHERE ${where}`;
  const about = JSON.stringify({ report: options.report, sheet: sheet.name, mart: sheet.mart, period: options.period.label, from: options.period.from, to: options.period.to, account: options.account ?? null });
  await db.withInsertionOrder(async () => {
    await db.run(`COPY (${select}) TO ${quoteString(options.files.parquet)} (FORMAT parquet, KV_METADATA {'exledger.detail': ${quoteString(about)}})`);
    // The CSV from the Parquet just written: the same rows (not necessarily in the same order).
    await db.run(`COPY (SELECT * FROM read_parquet(${quoteString(options.files.parquet)})) TO ${quoteString(options.files.csv)} (FORMAT csv, HEADER true, TIMESTAMPFORMAT '${CSV_INSTANT}')`);
  }, false);
  const [row] = await db.all<{ n: string }>(`SELECT count(*) AS n FROM read_parquet(${quoteString(options.files.parquet)})`);
  return Number(row!.n);
}
