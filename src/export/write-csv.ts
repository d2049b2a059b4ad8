import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import type { Database } from '../store/database.ts';
import { rowFilter, type ReportPeriod } from './period.ts';
import type { CsvSpec, SheetSpec } from './report-definition.ts';

/**
 * Writes a report's CSV (report-definition.ts `CsvSpec`) into `file`, which the caller has chosen
 * as a temporary name and renames when the workbook is complete too (write-report.ts), so an
 * earlier CSV is only ever replaced by a complete one. Rows are streamed from DuckDB: memory stays
 * flat. Values are DuckDB's exact text, never through a JS number. Returns the rows written.
 */
export async function writeCsv(db: Database, spec: CsvSpec, sheet: SheetSpec, options: { period: ReportPeriod; account?: string; file: string; onError: (error: NodeJS.ErrnoException) => Error }): Promise<number> {
  const stream = createWriteStream(options.file, { flags: 'wx' });
  const failed = new Promise<never>((_, reject) => stream.once('error', (error: NodeJS.ErrnoException) => reject(options.onError(error))));
  failed.catch(() => undefined);
  try {
    return await Promise.race([failed, writeRows(stream)]);
  } finally {
    stream.destroy();
  }

  async function writeRows(output: WriteStream): Promise<number> {
    await once(output, 'open');
    const write = async (line: string) => {
      if (!output.write(`${line}\r\n`)) await once(output, 'drain');
    };
    await write(spec.columns.map((column) => csvField(column.header)).join(','));
    const filter = rowFilter(sheet, options.period, options.account);
    const sql = `SELECT ${spec.columns.map((column) => `CAST(${column.column} AS VARCHAR)`).join(', ')} FROM ${sheet.mart} WHERE ${filter.where} ORDER BY ${sheet.orderBy.join(', ')}`;
    let rows = 0;
    await db.exclusive(async () => {
      const result = await db.connection.stream(sql, filter.values);
      for await (const chunk of result.yieldRowsJson()) {
        for (const values of chunk) {
          await write(values.map((value, index) => csvValue(value === null ? null : String(value), spec.columns[index]!.emptyWhenZero === true)).join(','));
          rows++;
        }
      }
    });
    output.end();
    await once(output, 'finish');
    return rows;
  }
}

/** A decimal's text without trailing zeros after the point (`4980.040000000000` → `4980.04`, `0.000` → `0`). */
export function plainDecimal(text: string): string {
  if (!/^-?\d+\.\d+$/.test(text)) return text;
  const trimmed = text.replace(/0+$/, '').replace(/\.$/, '');
  return trimmed === '-0' ? '0' : trimmed;
}

function csvValue(value: string | null, emptyWhenZero: boolean): string {
  if (value === null) return '';
  const text = plainDecimal(value);
  if (emptyWhenZero && text === '0') return '';
  return csvField(text);
}

/** RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. */
export function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
