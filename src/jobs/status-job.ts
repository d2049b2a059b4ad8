import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/config.ts';
import { DatabaseBusyError } from '../errors.ts';
import type { StreamDeclaration } from '../extract/stream.ts';
import { Database } from '../store/database.ts';
import { lockHolder, type LockHolder } from '../store/lock.ts';
import { publishedPath } from '../store/publish.ts';
import { readStatus, type StreamStatus } from '../store/stream-status.ts';
import { requireDatabase } from './paths.ts';
import { readSyncState, type SyncState } from './sync-state.ts';
import { readCloseStatus, type CloseStatus } from '../close/close-status.ts';

/** What `exledger status` shows. */
export interface StatusReport {
  /** Per account and stream (empty when neither the database nor a published copy could be read). */
  streams: StreamStatus[];
  /**
   * Where `streams` come from: the database, or, while another exledger holds it, the last
   * published copy (`asOf`: when it was published); null when there was none to read.
   */
  source: { kind: 'database' | 'published copy'; file: string; asOf: string | null } | null;
  /** The published copy beside the database (read when the database is held). */
  publishedFile: string;
  /** The exledger processes at work on the database now: a run (its run lock), and the one holding the database lock. */
  holders: (LockHolder & { lock: 'run' | 'database' })[];
  /** What a sync is doing (its state file), or left when it was killed (`alive` false). */
  sync: { state: SyncState; alive: boolean; file: string } | null;
  /** The closed periods and the adjustments pending in the first open period (from the same source as `streams`); null when none could be read. */
  closes: CloseStatus | null;
}

/**
 * The status job: per account and stream, what is stored and how far it is synced (read-only).
 * While another exledger holds the database (a sync writes it, and DuckDB lets no other process
 * open it meanwhile), it tells what that process is doing (the sync's state file) and reads the
 * table from the last published copy instead.
 * @throws DatabaseBusyError when the database is held by a process that is not an exledger.
 */
export async function statusJob(config: Readonly<Config>, streams: readonly StreamDeclaration[]): Promise<StatusReport> {
  requireDatabase(config.db);
  const holders = [
    { holder: lockHolder(`${config.db}.run`), lock: 'run' as const },
    { holder: lockHolder(config.db), lock: 'database' as const },
  ].flatMap(({ holder, lock }) => (holder === null ? [] : [{ ...holder, lock }]));
  const sync = readSyncState(config.db);
  const publishedFile = path.resolve(publishedPath(config.db));
  try {
    return { ...(await readFrom(config.db, streams)), source: { kind: 'database', file: path.resolve(config.db), asOf: null }, publishedFile, holders, sync };
  } catch (error) {
    if (!(error instanceof DatabaseBusyError) || holders.length === 0) throw error;
  }
  if (!existsSync(publishedFile)) return { streams: [], closes: null, source: null, publishedFile, holders, sync };
  try {
    const asOf = statSync(publishedFile).mtime.toISOString();
    return { ...(await readFrom(publishedFile, streams)), source: { kind: 'published copy', file: publishedFile, asOf }, publishedFile, holders, sync };
  } catch {
    // Being replaced by a publish this instant, or not a database: the activity is still told.
    return { streams: [], closes: null, source: null, publishedFile, holders, sync };
  }
}

async function readFrom(file: string, streams: readonly StreamDeclaration[]): Promise<{ streams: StreamStatus[]; closes: CloseStatus }> {
  const db = await Database.open(file, { readOnly: true });
  try {
    return { streams: await readStatus(db, streams), closes: await readCloseStatus(db) };
  } finally {
    db.close();
  }
}
