import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Database } from '../store/database.ts';
import { rowFilter, type ReportPeriod } from './period.ts';
import type { SheetSpec } from './report-definition.ts';
import { quoteIdentifier } from './write-dataset.ts';

/**
 * A report is not written again when nothing it would show has changed since it was written
 * (docs/workbooks.md "Unchanged reports are not written again"): its fingerprint, a SHA-256 over
 * the rows every sheet would show (digested in DuckDB) and everything else the workbook and the
 * files beside it are made from (the declaration, the build settings, the key figures, the
 * streams' states, the notes, the settings of the files), is kept beside the workbook with what
 * identifies every file written (its SHA-256; past 32 MiB, its size and modification time: a
 * month's full detail can be gigabytes), in `.<report>-<period>[-<account>].report.json`. The
 * same fingerprint, and every file still there as written, is "unchanged".
 */

/**
 * Bumped when the writer lays out the same figures differently (a new column, a new section):
 * every workbook written before is then written again once.
 */
const FINGERPRINT_VERSION = 1;

/** The rows of a sheet, digested: how many, and two sums of 64-bit row hashes (in 128-bit integers, any order). */
export interface SheetDigest {
  sheet: string;
  rows: string;
  hashes: [string, string];
}

/**
 * Digests the rows a sheet shows (all of them: a rolled-up sheet's detail rows, from which its
 * lines and files follow), over `columns` of its mart: the count, and the sums of two hashes of
 * each row, so a change to any value of any row changes it; the order of the rows follows from
 * their values (the sheet's ORDER BY).
 */
export async function digestSheet(db: Database, sheet: SheetSpec, columns: readonly string[], period: ReportPeriod, account?: string): Promise<SheetDigest> {
  const filter = rowFilter(sheet, period, account);
  const values = columns.map(quoteIdentifier).join(', ');
  const [row] = await db.all<{ n: string; h1: string | null; h2: string | null }>(
    `SELECT count(*) AS n, CAST(sum(CAST(hash(${values}) AS HUGEINT)) AS VARCHAR) AS h1, CAST(sum(CAST(hash(${values}, 'exledger') AS HUGEINT)) AS VARCHAR) AS h2
     FROM ${sheet.mart} WHERE ${filter.where}`,
    filter.values,
  );
  return { sheet: sheet.name, rows: row!.n, hashes: [row!.h1 ?? '0', row!.h2 ?? '0'] };
}

/** The fingerprint of what a workbook is made from: a SHA-256 of it as JSON (its parts in a fixed order). */
export function fingerprintOf(parts: unknown): string {
  return createHash('sha256').update(JSON.stringify({ version: FINGERPRINT_VERSION, parts })).digest('hex');
}

/** What was written, as kept beside the workbook. */
export interface WrittenRecord<T> {
  fingerprint: string;
  /** When (ISO 8601 UTC). */
  writtenAt: string;
  /** Every file written (names in the workbook's folder) and what identifies it. */
  files: ({ name: string } & FileIdentity)[];
  /** What the writer returned, for a report that is not written again. */
  result: T;
}

/** The record of a workbook's writing: `.<base>.report.json` in its folder. */
export function recordFile(folder: string, base: string): string {
  return path.join(folder, `.${base}.report.json`);
}

/**
 * The record of the workbook, when it was written from this fingerprint and every file it lists is
 * still there as written (not removed, not altered); else undefined (write it).
 */
export async function unchangedRecord<T>(file: string, fingerprint: string): Promise<WrittenRecord<T> | undefined> {
  if (!existsSync(file)) return undefined;
  let record: WrittenRecord<T>;
  try {
    record = JSON.parse(readFileSync(file, 'utf8')) as WrittenRecord<T>;
  } catch {
    return undefined;
  }
  if (record.fingerprint !== fingerprint || !Array.isArray(record.files) || record.files.length === 0) return undefined;
  const folder = path.dirname(file);
  for (const { name, ...identity } of record.files) {
    const at = path.join(folder, path.basename(name));
    if (!existsSync(at) || JSON.stringify(await identify(at)) !== JSON.stringify(identity)) return undefined;
  }
  return record;
}

/** A file as written: its size, and its SHA-256 or (past HASHED_BYTES) its modification time. */
type FileIdentity = { size: number; sha256: string } | { size: number; modifiedMs: number };

/** Files up to this size are identified by their SHA-256 (a workbook, a CSV); larger ones by size and modification time. */
const HASHED_BYTES = 32 * 1024 ** 2;

async function identify(file: string): Promise<FileIdentity> {
  const stat = statSync(file);
  return stat.size <= HASHED_BYTES ? { size: stat.size, sha256: await fileSha256(file) } : { size: stat.size, modifiedMs: stat.mtimeMs };
}

/**
 * Keeps the record beside the workbook, once every file is in place (under a temporary name,
 * renamed: a reader sees the old record or the new one). Returns why it could not be kept, if so:
 * then no record is left, and the next report writes the workbook again.
 */
export async function keepRecord<T>(file: string, record: Omit<WrittenRecord<T>, 'files'> & { files: readonly string[] }): Promise<string | undefined> {
  const temporary = `${path.join(path.dirname(file), path.basename(file))}.tmp-${process.pid}`;
  try {
    const files = await Promise.all(record.files.map(async (written) => ({ name: path.basename(written), ...(await identify(written)) })));
    writeFileSync(temporary, `${JSON.stringify({ ...record, files }, null, 2)}\n`, { flag: 'w' });
    renameSync(temporary, file);
    return undefined;
  } catch (error) {
    rmSync(temporary, { force: true });
    rmSync(file, { force: true });
    return (error as Error).message;
  }
}

/** A file's SHA-256, read as a stream (a workbook or its detail can be hundreds of MB). */
async function fileSha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
