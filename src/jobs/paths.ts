import { accessSync, constants, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../errors.ts';
import { isPublishedPath } from '../store/publish.ts';

/**
 * Checks of the paths a command will read or write, made before it reads or writes anything,
 * so a wrong path is one `error:` line naming it and the fix (exit 2), with nothing created and
 * no earlier output overwritten: a typo in `--db` must not create an empty database, and a
 * report must not replace good workbooks with empty ones.
 */

/** Where each setting comes from, for the fix line. */
const WHERE = {
  db: '--db, EXLEDGER_DB or "db" in the config file',
  outDir: '--out or "reports.outDir" in the config file',
  logDir: '"logDir" in the config file',
} as const;

/**
 * The database must already exist: build, check, report, status and sql only read or extend
 * an existing database; only sync and run create one.
 */
export function requireDatabase(db: string): void {
  const file = path.resolve(db);
  if (!existsSync(file)) {
    throw new ConfigError(file, 'no database here', {
      hint: `check the path (${WHERE.db}); only exledger sync and exledger run create a database`,
    });
  }
  if (!statSync(file).isFile()) throw new ConfigError(file, 'is not a database file (it is a folder)', { hint: `point ${WHERE.db} at the database file` });
}

/**
 * The database is not a published copy: that file is read-only and replaced by every run, so
 * writing it (sync, build, run) would write into what analysts read, or fail on its permissions.
 */
export function refusePublishedCopy(db: string): void {
  if (!isPublishedPath(db)) return;
  const database = `${path.resolve(db).slice(0, -'.published.duckdb'.length)}.duckdb`;
  throw new ConfigError(path.resolve(db), 'is the published (read-only) copy of a database, which only exledger sql reads', {
    hint: `point ${WHERE.db} at the database itself (${database})`,
  });
}

/** The database may be created here: its folder exists and is writable, or can be created; it is not a published copy. */
export function requireDatabaseLocation(db: string): void {
  refusePublishedCopy(db);
  const file = path.resolve(db);
  if (existsSync(file)) {
    if (!statSync(file).isFile()) throw new ConfigError(file, 'is a folder, not a database file', { hint: `point ${WHERE.db} at a file` });
    return;
  }
  requireCreatableFolder(path.dirname(file), `the database ${file}`, WHERE.db);
}

/** An output folder (workbooks, logs) exists and is writable, or can be created. */
export function requireOutputFolder(dir: string, setting: 'outDir' | 'logDir'): void {
  requireCreatableFolder(path.resolve(dir), null, WHERE[setting]);
}

function requireCreatableFolder(folder: string, forWhat: string | null, setting: string): void {
  // The folder, or the nearest existing folder above it, which it would be created in.
  let existing = folder;
  while (!existsSync(existing)) existing = path.dirname(existing);
  const label = forWhat === null ? folder : `${folder} (for ${forWhat})`;
  if (!statSync(existing).isDirectory()) {
    const message = existing === folder ? 'is a file, not a folder' : `cannot be created: ${existing} is a file, not a folder`;
    throw new ConfigError(label, message, { hint: `choose another folder (${setting}), or move the file away` });
  }
  try {
    accessSync(existing, constants.W_OK | constants.X_OK);
  } catch {
    const message = existing === folder ? 'is not writable (read-only)' : `cannot be created: ${existing} is not writable (read-only)`;
    throw new ConfigError(label, message, { hint: `make it writable for this user, or choose another folder (${setting})` });
  }
}
