import { createHash } from 'node:crypto';
import { createReadStream, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Database } from '../store/database.ts';
import { rowFilter, type ReportPeriod } from './period.ts';
import type { SheetSpec } from './report-definition.ts';
import { quoteIdentifier } from '../store/sql-text.ts';
import { readZipEntry } from './zip-entry.ts';

/**
 * A report is not written again when nothing it would show has changed since it was written
 * (docs/workbooks.md "Unchanged reports are not written again"). Its fingerprint, a SHA-256 over
 * the rows every sheet would show (digested in DuckDB) and everything else the workbook and the
 * files beside it are made from (the declaration, the build settings, the key figures, the
 * streams' states, the notes, the settings of the files), is kept inside the workbook, in its
 * custom document properties (Excel: File > Info > Properties), with the workbook's modification
 * time and what identifies each file written beside it. The output folder holds the workbooks and
 * their files, nothing else. The same fingerprint, the workbook not saved since (by anyone) and
 * every file beside it as written, is "unchanged".
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

/** A file as written: its size, and its SHA-256 or (past HASHED_BYTES) its modification time. */
export type FileIdentity = { size: number; sha256: string } | { size: number; modifiedMs: number };

/** What a workbook was written from, kept inside it. */
export interface WrittenRecord {
  fingerprint: string;
  /** When (ISO 8601 UTC): the Summary's "Generated at". */
  writtenAt: string;
  /**
   * The workbook's modification time, set when it takes its name (modifiedStamp): any program that
   * saves it again changes it.
   */
  stampMs: number;
  /** Every file written beside the workbook (names in its folder) and what identifies it. */
  files: ({ name: string } & FileIdentity)[];
}

/** Files up to this size are identified by their SHA-256 (a CSV); larger ones (a month's full detail) by size and modification time. */
const HASHED_BYTES = 32 * 1024 ** 2;

/** What identifies a file (a rename keeps it: the identity of a temporary file is that of the file it becomes). */
export async function identify(file: string): Promise<FileIdentity> {
  const stat = statSync(file);
  return stat.size <= HASHED_BYTES ? { size: stat.size, sha256: await fileSha256(file) } : { size: stat.size, modifiedMs: stat.mtimeMs };
}

/** Now, to the even second before: what every file system stores exactly as a modification time (FAT counts 2 s). */
export function modifiedStamp(): number {
  return Math.floor(Date.now() / 2000) * 2000;
}

/** The custom document properties a record is kept in: `exledger.record.1`, `.2`, … (Excel shows 255 characters of a value). */
const PROPERTY = 'exledger.record.';
const PROPERTY_CHARS = 255;

/** A record as the workbook's custom document properties (docProps/custom.xml: XlsxWriter.customProperties). */
export function recordProperties(record: WrittenRecord): Record<string, string> {
  const text = JSON.stringify(record);
  const properties: Record<string, string> = {};
  for (let at = 0, part = 1; at < text.length; at += PROPERTY_CHARS, part++) properties[`${PROPERTY}${part}`] = text.slice(at, at + PROPERTY_CHARS);
  return properties;
}

/**
 * The record of the workbook at `file`, when it was written from this fingerprint, has not been
 * saved since (its modification time is the one recorded) and every file it lists beside it is
 * still there as written (not removed, not altered); else undefined (write it): no workbook there,
 * one without a record (an earlier exledger's), saved again, or of another fingerprint.
 */
export async function unchangedRecord(file: string, fingerprint: string): Promise<WrittenRecord | undefined> {
  const record = readRecord(file);
  if (record?.fingerprint !== fingerprint || !Array.isArray(record.files) || Math.round(statSync(file).mtimeMs) !== record.stampMs) return undefined;
  for (const { name, ...identity } of record.files) {
    const at = path.join(path.dirname(file), path.basename(name));
    if (!existsSync(at) || JSON.stringify(await identify(at)) !== JSON.stringify(identity)) return undefined;
  }
  return record;
}

/** The record in a workbook's custom document properties; undefined when it has none (or is no workbook). */
export function readRecord(file: string): WrittenRecord | undefined {
  if (!existsSync(file)) return undefined;
  let xml: string | undefined;
  try {
    xml = readZipEntry(file, 'docProps/custom.xml')?.toString('utf8');
  } catch {
    return undefined;
  }
  if (xml === undefined) return undefined;
  const parts = [...xml.matchAll(/<property [^>]*name="exledger\.record\.(\d+)"[^>]*><vt:lpwstr>([^<]*)<\/vt:lpwstr><\/property>/g)]
    .sort((a, b) => Number(a[1]) - Number(b[1]))
    .map((match) => match[2]!.replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&'));
  try {
    return parts.length === 0 ? undefined : (JSON.parse(parts.join('')) as WrittenRecord);
  } catch {
    return undefined;
  }
}

/** A file's SHA-256, read as a stream. */
async function fileSha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
