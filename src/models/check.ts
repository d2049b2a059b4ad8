import type { Database } from '../store/database.ts';
import { splitStatements } from '../store/sql-text.ts';
import type { RecordedTestResult } from './check-results.ts';
import { earliestPartition, expandChanged, isoOfInstant, mergePartitions, planTest, readChangeLog, testFingerprint, type ChangeMark, type TestScope } from './check-scope.ts';
import type { LayerDeclaration } from './declaration.ts';
import { settingsDigests } from './incremental.ts';
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
  /**
   * What it read: every row (whole); the rows of what the builds changed since it last passed
   * (changed); nothing, as nothing it reads changed since it last passed, so that pass stands
   * (unchanged). @default whole
   */
  scope?: TestScope['scope'];
  /** Why a test of a check of what changed was checked whole, or not at all. */
  why?: string;
  /** Hash of its SQL, the macros and the settings it reads (see testFingerprint), for the next check of what changed. */
  fingerprint?: string;
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
  /**
   * Check only what the builds changed since each test last passed (the incremental check,
   * src/models/check-scope.ts), given the last results recorded for this database (by test id).
   * A test without a usable last pass is checked whole. @default undefined: check everything
   */
  changedSince?: ReadonlyMap<string, RecordedTestResult>;
  /** Offending rows shown per failing test. @default 5 */
  sampleSize?: number;
  /** Told once, before the first test runs, what the check covers. */
  onScope?: (scope: CheckScope) => void;
  onResult?: (result: TestResult, index: number, total: number) => void;
  /** Once aborted, no further test starts: the check throws the signal's reason (an InterruptedError). @default none */
  signal?: AbortSignal;
}

/** What a check covers. */
export interface CheckScope {
  /** What was asked: everything, or what the builds changed since each test last passed. */
  asked: 'everything' | 'changed';
  /** The last change record the check covers (settings.model_changes); undefined when the database has none. */
  through?: ChangeMark;
  /** The tests checked on the changed rows, whole, and not at all (unchanged since their last pass). */
  tests: { changed: number; whole: number; unchanged: number };
  /** The partitions (account or pool, and symbol) those tests read the changed rows of. */
  partitions: number;
  /** The earliest instant they read from (ISO 8601, UTC); null: some partition from its start. */
  from: string | null;
}

/**
 * Runs every SQL test (a query returning the offending rows) against the built models: the
 * singular ones of sql/<layer>/tests/ and the generic ones of the models' declarations; with a
 * selection, those of the selected models. Each test is checked whole, or with `changedSince`
 * on what changed since it last passed (src/models/check-scope.ts).
 * @throws ConfigError for a selector that is malformed or matches nothing, before any test runs.
 */
export async function checkModels(db: Database, options: CheckOptions = {}): Promise<TestResult[]> {
  const project = loadProject(options.sqlDir ?? SQL_DIR, ...(options.declarations === undefined ? [] : [options.declarations]));
  const selecting = (options.select ?? []).length > 0 || (options.exclude ?? []).length > 0;
  const tests = selecting ? selectTests(project, new Set(selectModels(project, options.select ?? [], options.exclude ?? []).map((model) => model.id))) : project.tests;
  const sampleSize = options.sampleSize ?? 5;

  // What each test is checked on, decided before any runs.
  const previous = options.changedSince;
  const log = await readChangeLog(db, previous === undefined ? [] : [...previous.values()].flatMap((result) => (result.through === undefined ? [] : [result.through])));
  const macros = project.macros.map((macro) => macro.sql).join('\n');
  const settings = await settingsDigests(db);
  const plans = tests.map((test) => {
    const fingerprint = testFingerprint(test.sql, macros, settings);
    const plan: TestScope = previous === undefined ? { scope: 'whole', why: 'checking everything' } : planTest(test, fingerprint, previous.get(test.id), log);
    return { test, fingerprint, plan };
  });
  const restricted = mergePartitions(plans.flatMap(({ plan }) => (plan.scope === 'changed' ? plan.partitions : [])));
  const first = earliestPartition(restricted);
  const count = (scope: TestScope['scope']) => plans.filter(({ plan }) => plan.scope === scope).length;
  options.onScope?.({
    asked: previous === undefined ? 'everything' : 'changed',
    ...(log.head === undefined ? {} : { through: log.head }),
    tests: { changed: count('changed'), whole: count('whole'), unchanged: count('unchanged') },
    partitions: new Set(restricted.map((partition) => `${partition.account}\u0000${partition.symbol ?? ''}`)).size,
    from: first?.fromAt === undefined || first.fromAt === null ? null : isoOfInstant(first.fromAt),
  });

  const results: TestResult[] = [];
  for (const { test, fingerprint, plan } of plans) {
    options.signal?.throwIfAborted();
    const started = performance.now();
    const scoped = { scope: plan.scope, ...(plan.scope === 'changed' || previous === undefined ? {} : { why: plan.why }), fingerprint };
    let result: TestResult;
    if (plan.scope === 'unchanged') {
      result = { id: test.id, status: 'pass', offending: 0, sample: [], ms: 0, ...scoped };
    } else {
      // A test is a query, after the statements that may precede it (`set variable`: a constant
      // its query reads, e.g. the earliest instant of the rows it needs; see docs/architecture.md
      // "The incremental check"), run first on the same connection.
      const statements = splitStatements(expandChanged(test.sql, plan.scope === 'changed' ? plan.byModel : 'everything'));
      const query = statements.pop() ?? '';
      try {
        for (const statement of statements) await db.run(statement);
        const offending = Number((await db.all<{ n: string }>(`SELECT count(*) AS n FROM (\n${query}\n)`))[0]!.n);
        const sample = offending === 0 ? [] : await db.all(`SELECT * FROM (\n${query}\n) LIMIT ${sampleSize}`);
        result = { id: test.id, status: offending === 0 ? 'pass' : 'fail', offending, sample, ms: performance.now() - started, ...scoped };
      } catch (error) {
        const message = (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
        result = { id: test.id, status: 'error', offending: 0, sample: [], message: /does not exist/i.test(message) ? `${message} (run exledger build first)` : message, ms: performance.now() - started, ...scoped };
      }
    }
    results.push(result);
    options.onResult?.(result, results.length, tests.length);
  }
  return results;
}
