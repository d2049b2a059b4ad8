import type { Config } from '../config/config.ts';
import { publishCheckResults } from '../models/check-results.ts';
import { whilePending } from '../pending-work.ts';
import { DatabaseLock } from '../store/lock.ts';
import { publishDatabase, type PublishResult } from '../store/publish.ts';
import { requireDatabase } from './paths.ts';

/** What a publish did: the read-only copy, and the check results published beside it. */
export interface PublishJobResult extends PublishResult {
  /** The last check's results, copied beside the published copy (for `exledger docs` on it); null when the database has none (nor has the copy then). */
  checkResults: string | null;
}

/**
 * The publish job: the read-only copy for analysts, made under the sync lock, and the last check's
 * results beside it (checkResultsPath of the copy), so that the documentation of the published
 * copy shows them.
 */
export async function publishJob(config: Readonly<Config>): Promise<PublishJobResult> {
  requireDatabase(config.db);
  const lock = DatabaseLock.acquire(config.db, 'publish');
  try {
    const published = await whilePending(`publish: copying ${config.db}`, () => publishDatabase(config.db));
    const checkResults = await whilePending(`publish: copying the check results beside ${published.path}`, () => publishCheckResults(config.db, published.path));
    return { ...published, checkResults };
  } finally {
    lock.release();
  }
}
