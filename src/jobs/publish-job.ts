import type { Config } from '../config/config.ts';
import { whilePending } from '../pending-work.ts';
import { DatabaseLock } from '../store/lock.ts';
import { publishDatabase, type PublishResult } from '../store/publish.ts';
import { requireDatabase } from './paths.ts';

/** The publish job: the read-only copy for analysts, made under the sync lock. */
export async function publishJob(config: Readonly<Config>): Promise<PublishResult> {
  requireDatabase(config.db);
  const lock = DatabaseLock.acquire(config.db, 'publish');
  try {
    return await whilePending(`publish: copying ${config.db}`, () => publishDatabase(config.db));
  } finally {
    lock.release();
  }
}
