import { constants, existsSync } from 'node:fs';
import { chmod, copyFile, open, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { diskFullOf } from '../disk-full.ts';
import { ConfigError, DiskFullError, PublishError } from '../errors.ts';
import { Database } from './database.ts';

/**
 * Publishing makes a read-only copy of the database for analysts, beside it, swapped in with
 * one `rename`: an analyst who has the published copy open keeps reading the old file (the old
 * inode) and never blocks the nightly run, and nobody ever opens a half-written copy.
 */

/** What a publish did. */
export interface PublishResult {
  /** The published copy. */
  path: string;
  /** Its size. */
  bytes: number;
  /** Time taken, checkpoint and verification included. */
  ms: number;
}

const EXTENSION = '.duckdb';

/**
 * The published copy of `db`, in the same folder: `./data/exledger.duckdb` →
 * `./data/exledger.published.duckdb`; a name without `.duckdb` gets `.published.duckdb` appended.
 */
export function publishedPath(db: string): string {
  const stem = db.endsWith(EXTENSION) && path.basename(db) !== EXTENSION ? db.slice(0, -EXTENSION.length) : db;
  return `${stem}.published${EXTENSION}`;
}

/** Whether `file` is named as a published copy (`<stem>.published.duckdb`), not as a database. */
export function isPublishedPath(file: string): boolean {
  return path.basename(file).endsWith(`.published${EXTENSION}`) && path.basename(file) !== `.published${EXTENSION}`;
}

/**
 * Publishes `db` as {@link publishedPath}: checkpoints it, copies it to a temporary file beside
 * the published one, fsyncs it, makes it read-only (the database's read permissions, no write:
 * 0444 beside a 0644 database, 0400 beside a 0600 one, so the copy is never readable by more
 * people than the database the umask made), checks that DuckDB opens it, and
 * renames it over the published copy.
 *
 * Preconditions:
 * - The caller holds the sync lock ({@link DatabaseLock}), so no exledger process writes `db`
 *   meanwhile. Under that lock, a leftover temporary file beside the published copy can only be
 *   from a publish that was killed, and is removed.
 * - The caller has no `Database` of its own open on `db`. DuckDB's file lock is a POSIX record
 *   lock, which never conflicts within one process: a second instance here would open the file
 *   beside the caller's instead of failing, and closing the copy's file descriptor on the source
 *   would silently drop the caller's lock. Close it, publish, reopen if needed.
 *
 * @throws ConfigError when `db` does not exist or another process has it open.
 * @throws PublishError when the checkpoint left a WAL, or the copy does not open.
 */
export async function publishDatabase(db: string): Promise<PublishResult> {
  const started = performance.now();
  if (!existsSync(db)) throw new ConfigError(db, 'no database here to publish', { hint: 'run exledger sync first, or point --db / EXLEDGER_DB at the database' });
  await checkpoint(db);

  const target = publishedPath(db);
  const directory = path.dirname(target);
  const prefix = `.${path.basename(target)}.tmp-`;
  await removeLeftovers(directory, prefix);
  const temporary = path.join(directory, `${prefix}${process.pid}-${Date.now()}`);
  try {
    // A plain file copy is the fastest sound way: after the checkpoint the file is the whole
    // database, and nothing writes it under the lock. COPY FROM DATABASE would decompress and
    // re-encode every table (minutes on a big database, and its memory); copyFile is one
    // copy_file_range in the kernel, and FICLONE makes it a constant-time reflink on
    // copy-on-write filesystems (btrfs, XFS, APFS) and falls back to copying elsewhere.
    // COPYFILE_EXCL: never write through a file some other process made under this name.
    await copyFile(db, temporary, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
    const handle = await open(temporary, 'r+');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    await chmod(temporary, (await stat(db)).mode & 0o444);
    await verify(temporary);
    const { size } = await stat(temporary);
    // A WAL beside the published copy means someone opened it for writing (root ignores the
    // 0444). DuckDB would replay it over the new file on the next open; remove it before the
    // swap, so that no instant has the new file next to the old WAL.
    await rm(`${target}.wal`, { force: true });
    await rename(temporary, target);
    await syncDirectory(directory);
    return { path: target, bytes: size, ms: performance.now() - started };
  } catch (error) {
    await rm(temporary, { force: true });
    // A full disk names the published copy (the temporary file is gone): the one an analyst knows.
    throw diskFullOf(error, { file: target, doing: 'publishing the read-only copy', kept: PUBLISH_KEPT }) ?? error;
  }
}

const PUBLISH_KEPT = 'the previous published copy is unchanged and no partial copy is left';

/** Opens the database, checkpoints it, closes it: afterwards the single file holds everything. */
async function checkpoint(db: string): Promise<void> {
  const database = await Database.open(db);
  try {
    await database.checkpoint();
  } catch (error) {
    throw error instanceof DiskFullError ? error.during('checkpointing the database to publish it', `what was committed is kept in its write-ahead log; ${PUBLISH_KEPT}`) : error;
  } finally {
    database.close();
  }
  const wal = `${db}.wal`;
  if (existsSync(wal)) {
    throw new PublishError(wal, 'is still there after a checkpoint: the database may be open in another process, so a copy would miss its last changes', {
      hint: 'close whatever has the database open, then publish again',
    });
  }
}

/** Opens the copy read-only and runs a query, so that a broken copy is never published. */
async function verify(file: string): Promise<void> {
  let database: Database;
  try {
    database = await Database.open(file, { readOnly: true });
  } catch (error) {
    throw new PublishError(file, `the copy does not open in DuckDB (${(error as Error).message.split('\n')[0]})`, { cause: error });
  }
  try {
    await database.all('SELECT 1');
  } catch (error) {
    throw new PublishError(file, `the copy does not answer a query (${(error as Error).message.split('\n')[0]})`, { cause: error });
  } finally {
    database.close();
  }
}

async function removeLeftovers(directory: string, prefix: string): Promise<void> {
  for (const name of await readdir(directory)) {
    if (name.startsWith(prefix)) await rm(path.join(directory, name), { force: true });
  }
}

/** Makes a rename durable: the new directory entry survives a power cut (also used by the dataset export). */
export async function syncDirectory(directory: string): Promise<void> {
  let handle;
  try {
    handle = await open(directory, 'r');
    await handle.sync();
  } catch (error) {
    // Some platforms cannot fsync a directory (Windows); the rename itself is still atomic.
    if (!['EISDIR', 'EINVAL', 'EPERM', 'EACCES'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
  } finally {
    await handle?.close();
  }
}
