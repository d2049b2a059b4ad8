import type { Config } from '../config/config.ts';
import { checkModels, type TestResult } from '../models/check.ts';
import { loadProject } from '../models/project.ts';
import { selectModels, type ModelSelection } from '../models/select.ts';
import { whilePending } from '../pending-work.ts';
import { Database } from '../store/database.ts';
import { requireDatabase } from './paths.ts';

/** Callbacks of a check. */
export interface CheckHooks {
  /** Told as each SQL test finishes. */
  onTest?: (result: TestResult, index: number, total: number) => void;
}

/** What a check runs: the tests of the selected models (src/models/select.ts), every test by default. */
export type CheckRequest = CheckHooks & ModelSelection;

/**
 * The check job: runs the SQL tests (or those of the selected models) over the built models of an
 * existing database, read-only. A bad selector is told before the database is opened.
 */
export async function checkJob(config: Readonly<Config>, request: CheckRequest = {}): Promise<TestResult[]> {
  const { select = [], exclude = [] } = request;
  if (select.length > 0 || exclude.length > 0) selectModels(loadProject(), select, exclude);
  requireDatabase(config.db);
  const db = await Database.open(config.db, { readOnly: true });
  try {
    return await whilePending(`check: the SQL tests on ${config.db}`, () => checkModels(db, { onResult: request.onTest, select, exclude }));
  } finally {
    db.close();
  }
}
