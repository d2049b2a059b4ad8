import type { Database } from '../store/database.ts';
import { rowFilter, type ReportPeriod } from './period.ts';
import type { CsvSpec, SheetSpec } from './report-definition.ts';
import { quoteIdentifier } from '../store/sql-text.ts';
import { quoteString } from './write-dataset.ts';

/**
 * Writes a report's CSV (report-definition.ts `CsvSpec`) into `file`, which the caller has chosen
 * as a temporary name and renames when the workbook is complete too (write-report.ts), so an
 * earlier CSV is only ever replaced by a complete one. DuckDB writes it (COPY: a month of a busy
 * account's journal is millions of lines, which a loop in JavaScript took ~10 µs each to write),
 * from each value's exact text, never a JS number: decimals without trailing zeros
 * ({@link plainDecimal}), an empty field for NULL (and for a zero `emptyWhenZero`), RFC 4180
 * quoting, CRLF line ends. Returns the rows written.
 */
export async function writeCsv(db: Database, spec: CsvSpec, sheet: SheetSpec, options: { period: ReportPeriod; account?: string; file: string; onError: (error: NodeJS.ErrnoException) => Error }): Promise<number> {
  const filter = rowFilter(sheet, options.period, options.account);
  // COPY takes no parameters: the filter's values (days, an account) are written in as literals.
  const where = filter.where.replace(/\$(\d+)/g, (_, index: string) => quoteString(filter.values[Number(index) - 1]!));
  const fields = spec.columns.map((column) => `${csvText(column.column, column.emptyWhenZero === true)} AS ${quoteIdentifier(column.header)}`);
  const select = `SELECT ${fields.join(', ')} FROM ${sheet.mart} WHERE ${where} ORDER BY ${sheet.orderBy.join(', ')}`;
  try {
    const [row] = await db.all<{ Count: string }>(`COPY (${select}) TO ${quoteString(options.file)} (FORMAT csv, HEADER true, NEW_LINE '\\r\\n')`);
    return Number(row!.Count);
  } catch (error) {
    throw options.onError(error as NodeJS.ErrnoException);
  }
}

/**
 * A value as the CSV holds it, in SQL: DuckDB's text of it, a decimal without its trailing zeros
 * (as plainDecimal), and NULL (an empty field, unquoted) for NULL, an empty text (which DuckDB
 * would quote) and, with `emptyWhenZero`, a zero.
 */
function csvText(column: string, emptyWhenZero: boolean): string {
  const text = `CAST(${column} AS VARCHAR)`;
  const trimmed = `rtrim(rtrim(${text}, '0'), '.')`;
  const plain = `CASE WHEN regexp_full_match(${text}, '-?[0-9]+\\.[0-9]+') THEN (CASE WHEN ${trimmed} = '-0' THEN '0' ELSE ${trimmed} END) ELSE ${text} END`;
  return emptyWhenZero ? `nullif(nullif(${plain}, ''), '0')` : `nullif(${plain}, '')`;
}

/** A decimal's text without trailing zeros after the point (`4980.040000000000` → `4980.04`, `0.000` → `0`). */
export function plainDecimal(text: string): string {
  if (!/^-?\d+\.\d+$/.test(text)) return text;
  const trimmed = text.replace(/0+$/, '').replace(/\.$/, '');
  return trimmed === '-0' ? '0' : trimmed;
}

/** RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. */
export function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
