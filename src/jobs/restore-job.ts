import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/config.ts';
import { ConfigError } from '../errors.ts';
import { ensureRawTables } from '../extract/sync.ts';
import type { StreamDeclaration } from '../extract/stream.ts';
import { whilePending } from '../pending-work.ts';
import { databaseExists, restoreArchive, type RestoreHooks, type RestoreResult } from '../store/archive-restore.ts';
import { DatabaseLock } from '../store/lock.ts';
import { requireDatabaseLocation } from './paths.ts';

/**
 * The restore job: a new database (config.db, i.e. --db) from the archive in `from`. Refuses an
 * existing database (restore never overwrites one), checks every archive file's checksum before
 * writing anything, and writes the database atomically (src/store/archive-restore.ts).
 * @throws ConfigError (exit 2) for a database already there or a folder without an archive;
 *   ArchiveError (exit 1) naming a missing or corrupted file.
 */
export async function restoreJob(config: Readonly<Config>, streams: readonly StreamDeclaration[], from: string, hooks: RestoreHooks = {}): Promise<RestoreResult> {
  const dir = path.resolve(from);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new ConfigError('--from', `${dir} is not a folder`, { hint: 'give the archive folder (archive.dir of the database it was made from)' });
  const target = path.resolve(config.db);
  const refuseExisting = () => {
    if (databaseExists(target)) {
      throw new ConfigError(target, 'already exists: restore never overwrites a database', { hint: 'give --db a new file name (then point EXLEDGER_DB or "db" at it), or move the old database away first' });
    }
  };
  refuseExisting();
  requireDatabaseLocation(target);
  const lock = DatabaseLock.acquire(target, 'restore');
  try {
    refuseExisting();
    return await whilePending(`restore: checking and reading the archive in ${dir}`, () => restoreArchive(dir, target, (db) => ensureRawTables(db, streams), { memoryLimit: config.memoryLimit, ...hooks }));
  } finally {
    lock.release();
  }
}
