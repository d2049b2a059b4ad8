import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { open, readdir, rename, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { ArchiveError } from '../errors.ts';
import { syncDirectory } from './publish.ts';

/**
 * The archive's manifest (`<archive.dir>/manifest.json`): every file of the archive with its
 * SHA-256 and row count, and how far the raw tables are archived. It is the archive: a file it
 * does not list is ignored (what a killed night left), and it is replaced with one `rename`,
 * only after every file it lists is written and fsynced, so the archive is all of a night or
 * none of it.
 */

/** The manifest's name in the archive folder. */
export const MANIFEST = 'manifest.json';

/** A column of an archived table, with its DuckDB type (restore creates the table with it). */
const columnSchema = z.strictObject({ name: z.string(), type: z.string() });

/** One Parquet file of the archive. */
const fileSchema = z.strictObject({
  /** Relative to the archive folder, with `/`: raw/stream=spot_fills/account=main/month=2026-10/part-1.parquet. */
  path: z.string().regex(/^(raw|tables)\/[^\\]+\.parquet$/),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  rows: z.number().int().min(0),
  bytes: z.number().int().min(0),
  /** The table it holds rows of: raw.spot_fills, meta.cursors. */
  table: z.string(),
  /** For raw tables: the stream, the account and the month (YYYY-MM) of its rows. */
  stream: z.string().optional(),
  account: z.string().optional(),
  month: z.string().optional(),
  /** The archive run that wrote it. */
  archiveId: z.string(),
});

/** One archived table: its columns, rows and high-water mark. */
const tableSchema = z.strictObject({
  /** history (one row per record, raw.<stream>), snapshot (raw.<stream> of a snapshot stream), whole (archived whole when it changes: meta, settings, closed). */
  kind: z.enum(['history', 'snapshot', 'whole']),
  columns: z.array(columnSchema),
  rows: z.number().int().min(0),
  /**
   * Raw tables: the last change of meta.raw_changes archived (change_seq, as text: a BIGINT),
   * the high-water mark the next archive reads the changes after. Whole tables: null.
   */
  changeSeq: z.string().regex(/^\d+$/).nullable(),
  /** Whole tables: a digest of their rows when archived (md5 of the ordered rows), to archive them again only when they changed. */
  digest: z.string().nullable(),
});

const manifestSchema = z.strictObject({
  format: z.literal('exledger-archive'),
  version: z.literal(1),
  /** The last archive run: its id and when it finished (ISO 8601 UTC). */
  archiveId: z.string(),
  archivedAt: z.string(),
  /** How far meta.raw_changes was archived, over every raw table (the largest change_seq; "0" for none). */
  rawChangeSeq: z.string().regex(/^\d+$/),
  tables: z.record(z.string(), tableSchema),
  files: z.array(fileSchema),
});

export type ArchiveManifest = z.infer<typeof manifestSchema>;
export type ArchiveFile = z.infer<typeof fileSchema>;
export type ArchivedTable = z.infer<typeof tableSchema>;

/** The manifest of an archive that has none yet. */
export function emptyManifest(): ArchiveManifest {
  return { format: 'exledger-archive', version: 1, archiveId: '', archivedAt: '', rawChangeSeq: '0', tables: {}, files: [] };
}

/**
 * Reads `<dir>/manifest.json`; null when the folder holds no archive yet (no manifest and no
 * archive file).
 * @throws ArchiveError when the manifest does not read, or archive files are there without it
 *   (a manifest deleted by hand: the files are never taken for a killed night's and removed).
 */
export function readManifest(dir: string): ArchiveManifest | null {
  const file = path.join(dir, MANIFEST);
  if (!existsSync(file)) {
    const orphans = ['raw', 'tables'].filter((folder) => existsSync(path.join(dir, folder)));
    if (orphans.length > 0) {
      throw new ArchiveError(file, `is missing, but ${orphans.map((folder) => path.join(dir, folder)).join(' and ')} hold archive files: without the manifest nothing says which are whole`, {
        hint: 'put the manifest.json back (from a backup of the archive disk), or move the archive folder away and start a new archive in an empty folder',
      });
    }
    return null;
  }
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ArchiveError(file, `is not valid JSON (${(error as Error).message}): the archive cannot be read`, { hint: 'put the manifest.json back from a backup of the archive disk; nothing was written' });
  }
  const parsed = manifestSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ArchiveError(file, `is not an exledger archive manifest (${issue.path.join('.') || 'top level'}: ${issue.message})`, { hint: 'point archive.dir (or --from) at the folder exledger archive wrote; nothing was written' });
  }
  return parsed.data;
}

/**
 * Writes the manifest atomically: a temporary file in the same folder, fsynced, renamed over
 * manifest.json, the folder fsynced. A process killed at any instant leaves the old manifest or
 * the new one.
 */
export async function writeManifest(dir: string, manifest: ArchiveManifest): Promise<void> {
  const temporary = path.join(dir, `.${MANIFEST}.tmp-${process.pid}`);
  const handle = await open(temporary, 'w');
  try {
    await handle.writeFile(`${JSON.stringify(manifest, null, 2)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, path.join(dir, MANIFEST));
  await syncDirectory(dir);
}

/** The SHA-256 of a file, hex. */
export async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Fsyncs a file just written (DuckDB's COPY does not), so the manifest never lists a file a power cut could lose. */
export async function syncFile(file: string): Promise<void> {
  const handle = await open(file, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Checks every file the manifest lists: there, and its SHA-256 as recorded.
 * @throws ArchiveError naming the first file missing or altered, with the SHA-256 expected and found.
 */
export async function verifyArchive(dir: string, files: readonly ArchiveFile[], onFile?: (file: ArchiveFile, index: number) => void): Promise<void> {
  for (const [index, entry] of files.entries()) {
    await verifyFile(dir, entry);
    onFile?.(entry, index);
  }
}

/** Checks one file of the manifest (see verifyArchive). */
export async function verifyFile(dir: string, entry: ArchiveFile): Promise<void> {
  const file = path.join(dir, ...entry.path.split('/'));
  if (!existsSync(file)) {
    throw new ArchiveError(file, `is missing: the manifest lists it (${entry.table}, ${entry.rows} rows, SHA-256 ${entry.sha256})`, {
      hint: 'put the file back from a copy of the archive disk; nothing was written',
    });
  }
  const found = await sha256Of(file);
  if (found !== entry.sha256) {
    throw new ArchiveError(file, `is corrupted: its SHA-256 is ${found}, the manifest says ${entry.sha256} (${entry.table}, ${entry.rows} rows)`, {
      hint: 'put the file back from a copy of the archive disk (or archive again from the database, which rewrites what differs); nothing was written',
    });
  }
}

/**
 * Removes what a killed archive left: Parquet files under raw/ and tables/ that the manifest does
 * not list, temporary manifests, and the folders that leaves empty. Nothing else is touched.
 * Returns how many files it removed.
 */
export async function removeUnlisted(dir: string, manifest: ArchiveManifest): Promise<number> {
  const listed = new Set(manifest.files.map((file) => path.join(dir, ...file.path.split('/'))));
  let removed = 0;
  const walk = async (folder: string): Promise<boolean> => {
    let empty = true;
    for (const entry of await readdir(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name);
      if (entry.isDirectory()) {
        if (await walk(full)) await rmdir(full);
        else empty = false;
      } else if (entry.name.endsWith('.parquet') && !listed.has(full)) {
        await rm(full, { force: true });
        removed += 1;
      } else {
        empty = false;
      }
    }
    return empty;
  };
  for (const folder of ['raw', 'tables']) {
    if (existsSync(path.join(dir, folder))) await walk(path.join(dir, folder));
  }
  for (const name of await readdir(dir)) {
    if (name.startsWith(`.${MANIFEST}.tmp-`)) {
      await rm(path.join(dir, name), { force: true });
      removed += 1;
    }
  }
  return removed;
}
