import type { Database } from '../store/database.ts';
import type { LayerDeclaration } from './declaration.ts';
import { loadProject, SQL_DIR } from './project.ts';
import { selectModels, selectTests } from './select.ts';

/** What one SQL test found. */
export interface TestResult {
  /** `<layer>/<name>`. */
  id: string;
  /** pass: no offending rows; fail: some; error: the query could not run (e.g. models not built). */
  status: 'pass' | 'fail' | 'error';
  /** How many rows it returned. */
  offending: number;
  /** The first offending rows, exact (DECIMAL and ids as strings). */
  sample: Record<string, unknown>[];
  message?: string;
  ms: number;
}

/** Options of checkModels. */
export interface CheckOptions {
  /** @default the repository's sql/ */
  sqlDir?: string;
  /** The models' declarations, whose generic tests run beside the SQL files'. @default the repository's for its sql/, none for another folder */
  declarations?: readonly LayerDeclaration[];
  /**
   * Selectors of the models whose tests run (src/models/select.ts): the generic tests of their
   * declarations and the singular tests that read one of them. @default every test
   */
  select?: readonly string[];
  /** Selectors of models whose tests do not run (unless another selected model's do). @default none */
  exclude?: readonly string[];
  /** Offending rows shown per failing test. @default 5 */
  sampleSize?: number;
  onResult?: (result: TestResult, index: number, total: number) => void;
  /** Once aborted, no further test starts: the check throws the signal's reason (an InterruptedError). @default none */
  signal?: AbortSignal;
}

/**
 * Runs every SQL test (a query returning the offending rows) against the built models: the
 * singular ones of sql/<layer>/tests/ and the generic ones of the models' declarations; with a
 * selection, those of the selected models.
 * @throws ConfigError for a selector that is malformed or matches nothing, before any test runs.
 */
export async function checkModels(db: Database, options: CheckOptions = {}): Promise<TestResult[]> {
  const project = loadProject(options.sqlDir ?? SQL_DIR, ...(options.declarations === undefined ? [] : [options.declarations]));
  const selecting = (options.select ?? []).length > 0 || (options.exclude ?? []).length > 0;
  const tests = selecting ? selectTests(project, new Set(selectModels(project, options.select ?? [], options.exclude ?? []).map((model) => model.id))) : project.tests;
  const sampleSize = options.sampleSize ?? 5;
  const results: TestResult[] = [];
  for (const test of tests) {
    options.signal?.throwIfAborted();
    const started = performance.now();
    const query = test.sql.trim().replace(/;\s*$/, '');
    let result: TestResult;
    try {
      const offending = Number((await db.all<{ n: string }>(`SELECT count(*) AS n FROM (\n${query}\n)`))[0]!.n);
      const sample = offending === 0 ? [] : await db.all(`SELECT * FROM (\n${query}\n) LIMIT ${sampleSize}`);
      result = { id: test.id, status: offending === 0 ? 'pass' : 'fail', offending, sample, ms: performance.now() - started };
    } catch (error) {
      const message = (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
      result = { id: test.id, status: 'error', offending: 0, sample: [], message: /does not exist/i.test(message) ? `${message} (run exledger build first)` : message, ms: performance.now() - started };
    }
    results.push(result);
    options.onResult?.(result, results.length, tests.length);
  }
  return results;
}
