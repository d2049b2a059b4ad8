import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { diskFullOf } from '../disk-full.ts';
import { DatabaseBusyError } from '../errors.ts';

/**
 * A lock file beside the database, so two syncs never write one database at once. It holds the
 * owner's pid; a lock whose process is gone (a killed sync) is taken over.
 */
export class DatabaseLock {
  private constructor(private readonly file: string) {}

  /** Takes the lock for `database` or throws a DatabaseBusyError naming the process that holds it. */
  static acquire(database: string, purpose: string): DatabaseLock {
    const file = `${path.resolve(database)}.lock`;
    mkdirSync(path.dirname(file), { recursive: true });
    for (let attempt = 0; attempt < 2; attempt += 1) {
      try {
        writeFileSync(file, JSON.stringify({ pid: process.pid, purpose, since: new Date().toISOString() }), { flag: 'wx' });
        return new DatabaseLock(file);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
          rmSync(file, { force: true });
          throw diskFullOf(error, { file, doing: `taking the lock for a ${purpose}`, kept: 'nothing was changed' }) ?? error;
        }
        const holder = readHolder(file);
        if (holder !== null && isProcessAlive(holder.pid)) {
          throw new DatabaseBusyError(database, `is in use by another exledger ${holder.purpose} (pid ${holder.pid}, since ${holder.since})`, {
            hint: 'wait for it to finish; if no exledger is running, delete the .lock file beside the database',
          });
        }
        rmSync(file, { force: true });
      }
    }
    throw new DatabaseBusyError(database, 'could not take the lock file: another process keeps taking it', { hint: 'wait for the other exledger to finish, then try again' });
  }

  release(): void {
    rmSync(this.file, { force: true });
  }
}

/** An exledger process holding a lock. */
export interface LockHolder {
  pid: number;
  /** What it is doing: sync, build, publish, run. */
  purpose: string;
  /** When it took the lock (ISO 8601 UTC). */
  since: string;
}

/** The running process that holds the lock of `database` (`<database>.lock`), or null (none, or a stale lock of a killed one). */
export function lockHolder(database: string): LockHolder | null {
  const holder = readHolder(`${path.resolve(database)}.lock`);
  return holder !== null && isProcessAlive(holder.pid) ? holder : null;
}

function readHolder(file: string): { pid: number; purpose: string; since: string } | null {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { pid?: unknown; purpose?: unknown; since?: unknown };
    return typeof parsed.pid === 'number' ? { pid: parsed.pid, purpose: String(parsed.purpose), since: String(parsed.since) } : null;
  } catch {
    return null;
  }
}

/** Whether a process with this pid is running (EPERM: it is, as another user's). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
