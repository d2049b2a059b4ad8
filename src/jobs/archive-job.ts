import { accessSync, constants, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/config.ts';
import { countOf } from '../count-text.ts';
import { ConfigError, DiskFullError } from '../errors.ts';
import { whilePending } from '../pending-work.ts';
import { archiveDatabase, type ArchiveHooks, type ArchiveResult } from '../store/archive.ts';
import { Database } from '../store/database.ts';
import { DatabaseLock } from '../store/lock.ts';
import { requireDatabase } from './paths.ts';

/** Where archive.dir comes from, for the fix line. */
const ARCHIVE_SETTING = 'EXLEDGER_ARCHIVE_DIR or "archive": { "dir": … } in the config file';

/**
 * The archive folder: set, an existing folder, writable. It is never created: on a server it is
 * a mounted disk, and a disk that is not mounted must be an error, not a folder on the local disk.
 * @throws ConfigError naming archive.dir and the fix.
 */
export function requireArchiveFolder(dir: string | null): string {
  if (dir === null) throw new ConfigError('archive.dir', 'is not set: there is no archive folder to write', { hint: `set ${ARCHIVE_SETTING} to an existing folder on a disk of its own, e.g. /mnt/exledger-archive` });
  const folder = path.resolve(dir);
  if (!existsSync(folder)) {
    throw new ConfigError(`archive.dir ${folder}`, 'does not exist (exledger never creates it: on a server it is a mounted disk, which may not be mounted)', {
      hint: `mount the archive disk there or create the folder, or point ${ARCHIVE_SETTING} at the right one`,
    });
  }
  if (!statSync(folder).isDirectory()) throw new ConfigError(`archive.dir ${folder}`, 'is a file, not a folder', { hint: `point ${ARCHIVE_SETTING} at a folder` });
  try {
    accessSync(folder, constants.W_OK | constants.X_OK);
  } catch {
    throw new ConfigError(`archive.dir ${folder}`, 'is not writable (read-only)', { hint: `make it writable for this user (a read-only mount?), or point ${ARCHIVE_SETTING} at another folder` });
  }
  return folder;
}

/**
 * The archive job: under the database's lock (no sync writes meanwhile) and the archive folder's
 * own lock (two databases never write one archive at once), appends what changed since the last
 * archive (src/store/archive.ts). A full archive disk is told as such; the database is untouched.
 */
export async function archiveJob(config: Readonly<Config>, hooks: ArchiveHooks = {}): Promise<ArchiveResult> {
  const dir = requireArchiveFolder(config.archive.dir);
  requireDatabase(config.db);
  const lock = DatabaseLock.acquire(config.db, 'archive');
  try {
    const archiveLock = DatabaseLock.acquire(path.join(dir, 'archive'), 'archive');
    try {
      const db = await Database.open(config.db, { memoryLimit: config.memoryLimit });
      try {
        return await whilePending(`archive: writing what changed into ${dir}`, () => archiveDatabase(db, dir, hooks));
      } catch (error) {
        if (error instanceof DiskFullError && !error.file.startsWith(dir)) throw error.during('archiving (reading the database)', 'the archive is as it was (its manifest is unchanged)');
        throw error;
      } finally {
        db.close();
      }
    } finally {
      archiveLock.release();
    }
  } finally {
    lock.release();
  }
}

/**
 * One line: what an archive run wrote and what the archive now holds, e.g.
 * `12 files written (3,456 rows; 1 partition rewritten) into /mnt/archive; it holds 45,678 raw rows of 9 streams in 40 files`.
 */
export function describeArchive(result: ArchiveResult): string {
  const rows = result.written.filter((file) => file.table.startsWith('raw.')).reduce((sum, file) => sum + file.rows, 0);
  const wholeTables = new Set(result.written.filter((file) => !file.table.startsWith('raw.')).map((file) => file.table)).size;
  const rewritten = result.parts.filter((part) => part.how === 'rewritten' && part.account !== undefined).length;
  const raw = result.tables.filter((table) => table.table.startsWith('raw.'));
  const notes = [`${countOf(rows, 'raw row')}${wholeTables === 0 ? '' : `, ${countOf(wholeTables, 'bookkeeping table')}`}`, ...(rewritten === 0 ? [] : [`${countOf(rewritten, 'partition')} rewritten`]), ...(result.leftovers === 0 ? [] : [`${countOf(result.leftovers, 'file')} a killed archive left removed`])];
  const written = result.written.length === 0 ? 'nothing new to write' : `${countOf(result.written.length, 'file')} written (${notes.join('; ')})`;
  const total = raw.reduce((sum, table) => sum + table.rows, 0);
  return `${result.first ? 'first archive: ' : ''}${written} into ${result.dir}; it holds ${countOf(total, 'raw row')} of ${countOf(raw.filter((table) => table.rows > 0).length, 'stream')} in ${countOf(result.written.length + result.keptFiles, 'file')}`;
}
