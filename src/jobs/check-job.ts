import type { Config } from '../config/config.ts';
import path from 'node:path';
import { countOf, formatCount } from '../count-text.ts';
import { checkModels, type CheckScope, type TestResult } from '../models/check.ts';
import { checkResultsPath, readCheckResults, recordCheckResults, type RecordedTestResult } from '../models/check-results.ts';
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
  /** Told once, before the first test, what the check covers (see describeCheckScope). */
  onScope?: (scope: CheckScope) => void;
  /** Told once the results are recorded beside the database, or could not be. */
  onRecorded?: (record: CheckRecord) => void;
  /** Once aborted, no further test starts, and nothing is recorded (see CheckOptions.signal). */
  signal?: AbortSignal;
}

/** What a check runs: the tests of the selected models (src/models/select.ts), every test by default. */
export type CheckRequest = CheckHooks &
  ModelSelection & {
    /**
     * Check only what the builds changed since each test last passed (`exledger check --changed`,
     * the run's check), as recorded in settings.model_changes; a test whose last pass is unknown
     * (no results, a failure, another SQL or setting, a whole rebuild of a model it reads) is
     * checked whole. @default false: every test whole
     */
    changed?: boolean;
    /**
     * The database already open (the run's, right after its build: src/jobs/run-job.ts), checked
     * as it is and left open; the tests only read. @default the database opened read-only for the check
     */
    db?: Database;
  };

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
  const changedSince = request.changed === true ? lastResults(config.db) : undefined;
  const db = request.db ?? (await Database.open(config.db, { readOnly: true, memoryLimit: config.memoryLimit }));
  let results: TestResult[];
  let scope: CheckScope | undefined;
  try {
    results = await whilePending(`check: the SQL tests on ${config.db}`, () =>
      checkModels(db, {
        onResult: request.onTest,
        onScope: (told) => {
          scope = told;
          request.onScope?.(told);
        },
        select,
        exclude,
        signal: request.signal,
        ...(changedSince === undefined ? {} : { changedSince }),
      }),
    );
  } finally {
    if (request.db === undefined) db.close();
  }
  try {
    const through = scope?.through;
    // Recorded whether or not a caller listens (`hook?.(await …)` would skip the await with the call).
    const file = await whilePending(`check: recording its results beside ${config.db}`, () => recordCheckResults(config.db, results, startedAt, { partial: select.length > 0 || exclude.length > 0, ...(through === undefined ? {} : { through }) }));
    request.onRecorded?.({ file });
  } catch (error) {
    request.onRecorded?.({ file: checkResultsPath(config.db), error: (error as Error).message.split('\n')[0]! });
  }
  return results;
}

/** The last results recorded for this database, by test id (none: an empty map, so every test is checked whole). */
function lastResults(db: string): Map<string, RecordedTestResult> {
  const last = readCheckResults(db);
  if (last.kind !== 'recorded' || last.results.database !== path.resolve(db)) return new Map();
  return new Map(last.results.results.map((result) => [result.id, result]));
}

/**
 * What a check covered, in one phrase: `checked everything`, or `checked what changed since the
 * last check: 3 partitions from 2025-12-31T00:00:00Z (120 tests on those rows, 40 whole, 25
 * unchanged since their last pass)` (`nothing` where no partition changed).
 */
export function describeCheckScope(scope: CheckScope): string {
  if (scope.asked === 'everything') return 'checked everything';
  const { changed, whole, unchanged } = scope.tests;
  const parts = [`${formatCount(changed)} ${changed === 1 ? 'test' : 'tests'} on those rows`, `${formatCount(whole)} whole`, `${formatCount(unchanged)} unchanged since ${unchanged === 1 ? 'its' : 'their'} last pass`];
  if (changed === 0 && unchanged === 0) return 'checked everything (no earlier pass to build on)';
  const what = scope.partitions === 0 ? 'nothing' : `${countOf(scope.partitions, 'partition')} from ${scope.from ?? 'their start'}`;
  return `checked what changed since the last check: ${what} (${parts.join(', ')})`;
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
