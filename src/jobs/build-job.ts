import type { Config } from '../config/config.ts';
import type { StreamDeclaration } from '../extract/stream.ts';
import { ensureRawTables } from '../extract/sync.ts';
import { buildModels, type ModelResult } from '../models/build.ts';
import { whilePending } from '../pending-work.ts';
import { Database } from '../store/database.ts';
import { DatabaseLock } from '../store/lock.ts';
import { requireDatabase } from './paths.ts';

/** Callbacks of a build. */
export interface BuildHooks {
  /** Told as each model finishes (ok, failed or skipped). */
  onModel?: (result: ModelResult, index: number, total: number) => void;
}

/**
 * The build job: builds the models of an existing database in dependency order, under the
 * sync lock (a build never reads a half-written sync). A model that fails keeps its previous
 * table and the models that depend on it are skipped; each has its result.
 */
export async function buildJob(config: Readonly<Config>, streams: readonly StreamDeclaration[], hooks: BuildHooks = {}): Promise<ModelResult[]> {
  requireDatabase(config.db);
  const lock = DatabaseLock.acquire(config.db, 'build');
  try {
    const db = await Database.open(config.db, { memoryLimit: config.memoryLimit });
    try {
      // Tables are built with CREATE TABLE AS: their row order means nothing, and not keeping it
      // lets DuckDB write them in parallel with far less memory.
      await db.run('SET preserve_insertion_order = false');
      await ensureRawTables(db, streams);
      return await whilePending(`build: the models of ${config.db}`, () => buildModels(db, config.models, { onResult: hooks.onModel }));
    } finally {
      db.close();
    }
  } finally {
    lock.release();
  }
}
