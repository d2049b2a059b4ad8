import { createHash } from 'node:crypto';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DataError, OutputError } from '../errors.ts';
import { diskFullOf } from '../disk-full.ts';
import { workbookBase, type ReportResult } from '../export/write-report.ts';
import type { Database } from '../store/database.ts';
import type { ClosedPeriod } from '../store/period-closes.ts';

/** SHA-256 of bytes, hex. */
export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Writes a closed period's workbook (and CSV) again, byte for byte, from meta.closed_workbooks:
 * the files its close wrote and the controller signed, whatever the database has learned since.
 * Each is checked against its recorded SHA-256 and written under a temporary name, then renamed.
 */
export async function restoreClosedWorkbook(db: Database, close: ClosedPeriod, report: string, outDir: string, account?: string): Promise<ReportResult> {
  const started = performance.now();
  const base = workbookBase(report, close, account);
  const rows = await db.all<{ file_name: string; sha256: string; bytes: string }>(
    "SELECT file_name, sha256, CAST(to_base64(bytes) AS VARCHAR) AS bytes FROM meta.closed_workbooks WHERE version = $1 AND (file_name = $2 OR file_name = $3) ORDER BY file_name DESC",
    [close.version, `${base}.xlsx`, `${base}.csv`],
  );
  if (!rows.some((row) => row.file_name === `${base}.xlsx`)) {
    throw new DataError(`${close.label} is closed (on ${close.closedAt} by ${close.closedBy}) and its close wrote no ${base}.xlsx: a closed period's workbooks are the ones written when it was closed`, {
      hint: `write the workbooks of ${close.label} its close wrote (exledger status lists them), or reopen it (exledger reopen --period ${close.label} --reason …) to write others`,
    });
  }
  const written: Record<string, { file: string; sha256: string }> = {};
  for (const row of rows) {
    const bytes = Buffer.from(row.bytes, 'base64');
    if (sha256(bytes) !== row.sha256) throw new DataError(`meta.closed_workbooks: ${row.file_name} of the close of ${close.label} does not match its recorded SHA-256 ${row.sha256}: the stored copy was altered`, { hint: 'restore the database from a backup; nothing was written' });
    const file = path.join(outDir, row.file_name);
    const temporary = path.join(outDir, `.${row.file_name}.tmp-${process.pid}`);
    try {
      mkdirSync(outDir, { recursive: true });
      writeFileSync(temporary, bytes, { flag: 'w' });
      renameSync(temporary, file);
    } catch (error) {
      rmSync(temporary, { force: true });
      const failure = error as NodeJS.ErrnoException;
      throw diskFullOf(failure, { file, doing: 'writing this closed workbook', kept: `the previous ${row.file_name}, if any, is unchanged and no half-written file is left` }) ??
        new OutputError(file, `could not be written: ${failure.message}`, { hint: 'fix the folder, then write the reports again', cause: failure });
    }
    written[row.file_name.endsWith('.csv') ? 'csv' : 'xlsx'] = { file, sha256: row.sha256 };
  }
  const workbook = written.xlsx!;
  return {
    report,
    account: account ?? null,
    file: workbook.file,
    period: { label: close.label, from: close.from, to: close.to },
    sheets: [],
    warnings: [],
    ...(written.csv === undefined ? {} : { csv: { file: written.csv.file, rows: 0, omitted: 0, note: '' } }),
    closed: { at: close.closedAt, by: close.closedBy, version: close.version, sha256: workbook.sha256 },
    ms: performance.now() - started,
  };
}
