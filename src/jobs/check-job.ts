import type { Config } from '../config/config.ts';
import { checkModels, type TestResult } from '../models/check.ts';
import { whilePending } from '../pending-work.ts';
import { Database } from '../store/database.ts';
import { requireDatabase } from './paths.ts';

/** Callbacks of a check. */
export interface CheckHooks {
  /** Told as each SQL test finishes. */
  onTest?: (result: TestResult, index: number, total: number) => void;
}

/** The check job: runs the SQL tests over the built models of an existing database, read-only. */
export async function checkJob(config: Readonly<Config>, hooks: CheckHooks = {}): Promise<TestResult[]> {
  requireDatabase(config.db);
  const db = await Database.open(config.db, { readOnly: true });
  try {
    return await whilePending(`check: the SQL tests on ${config.db}`, () => checkModels(db, { onResult: hooks.onTest }));
  } finally {
    db.close();
  }
}
