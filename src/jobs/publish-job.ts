import { rm } from 'node:fs/promises';
import type { Config } from '../config/config.ts';
import { checkResultsPath, publishCheckResults } from '../models/check-results.ts';
import { loadProject } from '../models/project.ts';
import { whilePending } from '../pending-work.ts';
import { DatabaseLock } from '../store/lock.ts';
import { publishDatabase, type PublishResult } from '../store/publish.ts';
import type { RowPlacement } from '../store/publish-delta.ts';
import { requireDatabase } from './paths.ts';

/** What a publish did: the read-only copy, and the check results published beside it. */
export interface PublishJobResult extends PublishResult {
  /** The last check's results, copied beside the published copy (for `exledger docs` on it); null when the database has none (nor has the copy then), or they could not be copied. */
  checkResults: string | null;
  /** Why the check results could not be copied (a full disk): the copy is published all the same, without results beside it. */
  checkResultsError?: string;
}

/**
 * The publish job: the read-only copy for analysts, made under the sync lock (brought up to date
 * with what changed where it can be, each changed model by the partitions its declaration places), and the last check's
 * results beside it (checkResultsPath of the copy), so that the documentation of the published
 * copy shows them. Results that cannot be copied do not undo the publish (the copy is sound): the
 * copy's earlier results file is removed, if it can be, so that it never describes another
 * database, and the reason is returned.
 */
export async function publishJob(config: Readonly<Config>): Promise<PublishJobResult> {
  requireDatabase(config.db);
  const lock = DatabaseLock.acquire(config.db, 'publish');
  try {
    const published = await whilePending(`publish: publishing ${config.db}`, () => publishDatabase(config.db, { placements: modelPlacements() }));
    try {
      const checkResults = await whilePending(`publish: copying the check results beside ${published.path}`, () => publishCheckResults(config.db, published.path));
      return { ...published, checkResults };
    } catch (error) {
      await removeQuietly(checkResultsPath(published.path));
      return { ...published, checkResults: null, checkResultsError: (error as Error).message.split('\n')[0]! };
    }
  } finally {
    lock.release();
  }
}

/** Where each model's changed rows lie, from its declaration (src/models/declaration.ts `changes`). */
export function modelPlacements(): Map<string, RowPlacement> {
  return new Map(loadProject().models.flatMap((model) => (model.declaration?.changes === undefined ? [] : [[model.id, { changes: model.declaration.changes }] as const])));
}

async function removeQuietly(file: string): Promise<void> {
  try {
    await rm(file, { force: true });
  } catch {
    // The results beside the copy stay as they were; the error returned says why.
  }
}
