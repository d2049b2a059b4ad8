import { constants, existsSync, statSync, type Stats } from 'node:fs';
import { chmod, copyFile, link, open, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { diskFullOf } from '../disk-full.ts';
import { ConfigError, DiskFullError, PublishError } from '../errors.ts';
import type { ThinnedTable } from './compaction.ts';
import { Database } from './database.ts';
import { updateStandby, type RowPlacement, type StandbyOutcome } from './publish-delta.ts';

/**
 * Publishing makes a read-only copy of the database for analysts, beside it, swapped in with
 * one `rename`: an analyst who has the published copy open keeps reading the old file (the old
 * inode) and never blocks the nightly run, and nobody ever opens a half-written copy.
 *
 * Two copies are kept (docs/plans/incremental-publish.md): the published name is a hard link to
 * one of two hidden slots beside it, and each night the other one, the standby (published two
 * nights ago), is brought up to date with what changed since (src/store/publish-delta.ts), or
 * replaced by a whole copy where that cannot be done, then published.
 */

/** What a publish did. */
export interface PublishResult {
  /** The published copy. */
  path: string;
  /** Its size. */
  bytes: number;
  /** Time taken, checkpoint and verification included. */
  ms: number;
  /** How the copy was brought up to date: the changes since the standby's state, or a copy of the whole file. */
  how: 'incremental' | 'full';
  /** Why the whole file was copied (how: full). */
  why?: string;
  /** How: incremental: the tables changed, of how many, and the rows copied into them. */
  tables?: { changed: number; of: number; rows: number };
  /** How: incremental: the copy's tables its checkpoint compacted (src/store/compaction.ts), if any. */
  compacted?: ThinnedTable[];
  /** Where the time went, ms per step (for benchmarks). */
  phases: Record<string, number>;
}

/** Options of a publish. */
export interface PublishOptions {
  /**
   * Where each model's changed rows lie (its declaration's `changes`), by model id: the rows of a
   * changed model are copied by partition where it has one, its whole table where it has none.
   * @default none: every changed model is copied whole
   */
  placements?: ReadonlyMap<string, RowPlacement>;
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
 * The two copies behind a published copy, beside it and hidden: `.exledger.published.duckdb.a`
 * and `.b`. The published copy is a hard link to one of them.
 */
export function publishedSlots(published: string): [string, string] {
  const directory = path.dirname(published);
  const name = path.basename(published);
  return [path.join(directory, `.${name}.a`), path.join(directory, `.${name}.b`)];
}

/**
 * Publishes `db` as {@link publishedPath}: checkpoints it, brings the standby copy (the one of the
 * two slots that is not published) up to date with what changed since its state, or, where that
 * cannot be done (the first publishes, an analyst holding that copy open, a schema change, most
 * of the database rebuilt, …: `why`), replaces it with a whole copy written under a temporary
 * name, fsynced, and renamed over it; makes it read-only (the database's read permissions, no
 * write: 0444 beside a 0644 database, 0400 beside a 0600 one, so the copy is never readable by
 * more people than the database the umask made), checks that DuckDB opens it, and renames a new
 * hard link to it over the published copy.
 *
 * Preconditions:
 * - The caller holds the sync lock ({@link DatabaseLock}), so no exledger process writes `db`
 *   meanwhile. Under that lock, a leftover temporary file beside the published copy can only be
 *   from a publish that was killed, and is removed.
 * - The caller has no `Database` of its own open on `db`, nor on a copy. DuckDB's file lock is a
 *   POSIX record lock, which never conflicts within one process: a second instance here would
 *   open the file beside the caller's instead of failing, and closing the copy's file descriptor
 *   on the source would silently drop the caller's lock. Close it, publish, reopen if needed.
 *   For the same reason an analyst is told apart from nobody only in another process: a copy
 *   this process holds open would be written under it two nights later.
 *
 * @throws ConfigError when `db` does not exist or another process has it open.
 * @throws PublishError when the checkpoint left a WAL, or the copy does not open.
 */
export async function publishDatabase(db: string, options: PublishOptions = {}): Promise<PublishResult> {
  const started = performance.now();
  if (!existsSync(db)) throw new ConfigError(db, 'no database here to publish', { hint: 'run exledger sync first, or point --db / EXLEDGER_DB at the database' });
  // Without a WAL the file holds everything committed; the incremental way then only reads it
  // (under a read lock, which a writer in another process refuses), and a whole copy checkpoints
  // first, which refuses such a writer too.
  let checkpointed = false;
  if (existsSync(`${db}.wal`)) {
    await checkpoint(db);
    checkpointed = true;
  }
  const phases: Record<string, number> = { 'checkpoint the database': performance.now() - started };

  const target = publishedPath(db);
  const directory = path.dirname(target);
  const prefix = `.${path.basename(target)}.tmp-`;
  await removeLeftovers(directory, prefix);
  const standby = standbyOf(target);
  const mode = (await stat(db)).mode & 0o444;
  try {
    let result: Pick<PublishResult, 'how' | 'why' | 'tables' | 'compacted'>;
    const updated = existsSync(standby) ? await bringUpToDate(db, standby, mode, options) : { updated: false as const, why: firstPublishWhy(target) };
    if (updated.updated) {
      result = { how: 'incremental', tables: { changed: updated.tables.length, of: updated.of, rows: updated.rows }, ...(updated.compacted.length === 0 ? {} : { compacted: updated.compacted }) };
      Object.assign(phases, updated.phases);
    } else {
      const copying = performance.now();
      if (!checkpointed) await checkpoint(db);
      await copyWhole(db, standby, path.join(directory, `${prefix}${process.pid}-${Date.now()}`));
      result = { how: 'full', why: updated.why };
      phases['copy the file'] = performance.now() - copying;
    }
    const verifying = performance.now();
    await chmod(standby, mode);
    // A copy of the file's bytes is opened once before it is published; an updated standby was
    // just written and checkpointed by DuckDB itself, which read it.
    if (result.how === 'full') await verify(standby);
    phases.verify = performance.now() - verifying;
    const { size } = await stat(standby);
    // A new name for the standby, renamed over the published one: one atomic step.
    const name = path.join(directory, `${prefix}${process.pid}-${Date.now()}-link`);
    await link(standby, name);
    // A WAL beside the published copy means someone opened it for writing (root ignores the
    // 0444). DuckDB would replay it over the new file on the next open; remove it before the
    // swap, so that no instant has the new file next to the old WAL.
    await rm(`${target}.wal`, { force: true });
    await rename(name, target);
    await syncDirectory(directory);
    return { path: target, bytes: size, ms: performance.now() - started, ...result, phases };
  } catch (error) {
    await removeLeftovers(directory, prefix);
    // A full disk names the published copy (the temporary file is gone): the one an analyst knows.
    if (error instanceof DiskFullError) throw new DiskFullError(target, { code: error.code, doing: 'publishing the read-only copy', kept: PUBLISH_KEPT, cause: error.cause ?? error });
    throw diskFullOf(error, { file: target, doing: 'publishing the read-only copy', kept: PUBLISH_KEPT }) ?? error;
  }
}

/**
 * The slot to bring up to date tonight: the one the published copy is not (another inode). When
 * neither is (the first publish with two copies, or a published file put there by hand), the one
 * written last, or the first.
 */
function standbyOf(target: string): string {
  const [a, b] = publishedSlots(target);
  const published = statOrUndefined(target);
  const first = statOrUndefined(a);
  const second = statOrUndefined(b);
  if (published !== undefined && first !== undefined && sameFile(published, first)) return b;
  if (published !== undefined && second !== undefined && sameFile(published, second)) return a;
  if (second !== undefined && (first === undefined || second.mtimeMs > first.mtimeMs)) return b;
  return a;
}

function firstPublishWhy(target: string): string {
  const copies = publishedSlots(target).filter((slot) => existsSync(slot)).length;
  return copies === 0 ? 'the first publish: no copy to bring up to date yet' : 'the second copy is made (the first publishes make both)';
}

/**
 * A standby this many times the database's size, and larger by GROWN_BYTES, is copied anew: DuckDB
 * reuses the blocks an update frees in later ones, so a copy grows by little, but a night that
 * changed much (a backfill of months) leaves free blocks that a whole copy gives back. The bytes
 * keep a small database, whose blocks are mostly shared ones, from being copied for a few MB.
 */
const GROWN = 1.5;
const GROWN_BYTES = 256 * 1024 * 1024;

/**
 * Brings the standby up to date in place, or says why not (the caller then copies the whole
 * file). A standby much larger than the database (free blocks left by nights of updates) is
 * copied anew, which compacts it.
 */
async function bringUpToDate(db: string, standby: string, mode: number, options: PublishOptions): Promise<StandbyOutcome> {
  const [standbySize, dbSize] = [statSync(standby).size, statSync(db).size];
  if (standbySize > GROWN * dbSize && standbySize - dbSize > GROWN_BYTES) {
    return { updated: false, why: `the other copy has grown to ${(standbySize / 1e6).toFixed(1)} MB, the database is ${(dbSize / 1e6).toFixed(1)} MB: a whole copy compacts it` };
  }
  // Writable by its owner while DuckDB writes it (made read-only again before it is published).
  await chmod(standby, mode | 0o200);
  const outcome = await updateStandby(db, standby, options.placements ?? new Map());
  // Whoever opens the published name reads that name's WAL, never the slot's: what the slot's WAL
  // held would be invisible to them. DuckDB removes it at the checkpoint; one left means it did not.
  if (outcome.updated && existsSync(`${standby}.wal`)) return { updated: false, why: 'the update of the other copy left a write-ahead log beside it' };
  return outcome;
}

/**
 * Replaces `standby` with a whole copy of `db`, written as `temporary` and renamed over it: an
 * analyst who still has the standby open keeps reading the file they opened.
 */
async function copyWhole(db: string, standby: string, temporary: string): Promise<void> {
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
  // The WAL of the copy being replaced, left by an update that was killed: DuckDB would replay it
  // over the new file.
  await rm(`${standby}.wal`, { force: true });
  await rename(temporary, standby);
}

function statOrUndefined(file: string): Stats | undefined {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
}

function sameFile(a: Stats, b: Stats): boolean {
  return a.dev === b.dev && a.ino === b.ino;
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
