import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Database } from '../src/store/database.ts';
import { publishedPath, publishedSlots } from '../src/store/publish.ts';
import { removeDatabaseFiles } from './build-data.ts';

/**
 * A benchmark's input database at `file`, written by `write` unless it is there already (under
 * a temporary name, renamed when complete, so a stopped generation is never taken for data).
 * `seconds` is the generation time, undefined when the cache was used.
 */
export async function cachedDatabase(file: string, write: (db: Database) => Promise<void>): Promise<{ path: string; seconds?: number }> {
  if (existsSync(file)) return { path: file };
  mkdirSync(path.dirname(file), { recursive: true });
  const partial = `${file}.partial`;
  rmSync(partial, { force: true });
  rmSync(`${partial}.wal`, { force: true });
  const started = performance.now();
  const db = await Database.open(partial);
  try {
    await write(db);
    await db.run('CHECKPOINT');
  } finally {
    db.close();
  }
  renameSync(partial, file);
  return { path: file, seconds: (performance.now() - started) / 1000 };
}

/** Runs `work` on the database at `file`, opened for it and closed after. */
export async function withDatabase<T>(file: string, work: (db: Database) => Promise<T>): Promise<T> {
  const db = await Database.open(file);
  try {
    return await work(db);
  } finally {
    db.close();
  }
}

/** Removes a database's published copy and the two copies behind it (src/store/publish.ts). */
export function removePublishedCopies(database: string): void {
  const published = publishedPath(database);
  for (const file of [published, ...publishedSlots(published)]) removeDatabaseFiles(file);
}
