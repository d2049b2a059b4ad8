import type { Config } from '../config/config.ts';
import { formatCount } from '../count-text.ts';
import { checkModels, type TestResult } from '../models/check.ts';
import { checkResultsPath, recordCheckResults } from '../models/check-results.ts';
import { loadProject } from '../models/project.ts';
import { selectModels, type ModelSelection } from '../models/select.ts';
import { whilePending } from '../pending-work.ts';
import { Database } from '../store/database.ts';
import { requireDatabase } from './paths.ts';

/** Where a check's results were recorded, or why they could not be. */
export interface CheckRecord {
  /** The results file (see checkResultsPath). */
  file: string;
  /** Why it could not be written (a read-only folder, a full disk); the check's own outcome stands. */
  error?: string;
}

/** Callbacks of a check. */
export interface CheckHooks {
  /** Told as each SQL test finishes. */
  onTest?: (result: TestResult, index: number, total: number) => void;
  /** Told once the results are recorded beside the database, or could not be. */
  onRecorded?: (record: CheckRecord) => void;
  /** Once aborted, no further test starts, and nothing is recorded (see CheckOptions.signal). */
  signal?: AbortSignal;
}

/** What a check runs: the tests of the selected models (src/models/select.ts), every test by default. */
export type CheckRequest = CheckHooks & ModelSelection;

/**
 * The check job: runs the SQL tests (or those of the selected models) over the built models of an
 * existing database, read-only. A bad selector is told before the database is opened. Then it
 * records their results beside the database (`<db stem>.check-results.json`, for `exledger
 * docs`; a selected check updates only its tests' entries). A results file that cannot be
 * written is told to `onRecorded`, not thrown: the check only reads, so it still works on a full
 * disk or a read-only folder.
 */
export async function checkJob(config: Readonly<Config>, request: CheckRequest = {}): Promise<TestResult[]> {
  const { select = [], exclude = [] } = request;
  if (select.length > 0 || exclude.length > 0) selectModels(loadProject(), select, exclude);
  requireDatabase(config.db);
  const startedAt = new Date();
  const db = await Database.open(config.db, { readOnly: true, memoryLimit: config.memoryLimit });
  let results: TestResult[];
  try {
    results = await whilePending(`check: the SQL tests on ${config.db}`, () => checkModels(db, { onResult: request.onTest, select, exclude, signal: request.signal }));
  } finally {
    db.close();
  }
  try {
    request.onRecorded?.({ file: await whilePending(`check: recording its results beside ${config.db}`, () => recordCheckResults(config.db, results, startedAt, { partial: select.length > 0 || exclude.length > 0 })) });
  } catch (error) {
    request.onRecorded?.({ file: checkResultsPath(config.db), error: (error as Error).message.split('\n')[0]! });
  }
  return results;
}

/**
 * What a check found, in one phrase: passed tests as a count, the others by name
 * (`151 passed`; `2 failed (marts/a, marts/b), 1 could not run (marts/c), 148 passed`).
 * Shared by `exledger check`'s last line and the run's summary.
 */
export function describeChecks(results: readonly TestResult[]): string {
  const named = (status: TestResult['status'], what: string) => {
    const ids = results.filter((result) => result.status === status).map((result) => result.id);
    return ids.length === 0 ? [] : [`${formatCount(ids.length)} ${what} (${ids.join(', ')})`];
  };
  const passed = results.filter((result) => result.status === 'pass').length;
  return [...named('fail', 'failed'), ...named('error', 'could not run'), `${formatCount(passed)} passed`].join(', ');
}
