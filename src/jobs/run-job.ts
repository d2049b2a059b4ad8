import path from 'node:path';
import type { Config } from '../config/config.ts';
import { countOf, formatCount } from '../count-text.ts';
import type { CoinFormats } from '../export/cell-formats.ts';
import { AuthError, ConfigError, DatabaseBusyError, DiskFullError, ExledgerError, InterruptedError } from '../errors.ts';
import { lastClosedPeriod, type ReportPeriod } from '../export/period.ts';
import type { ReportSpec } from '../export/report-definition.ts';
import type { ReportResult } from '../export/write-report.ts';
import type { StreamDeclaration } from '../extract/stream.ts';
import type { ModelResult } from '../models/build.ts';
import type { CheckScope, TestResult } from '../models/check.ts';
import { DatabaseLock } from '../store/lock.ts';
import { describeCompaction } from '../store/compaction.ts';
import { readCloseStatus, type CloseStatus } from '../close/close-status.ts';
import type { PublishJobResult } from './publish-job.ts';
import type { SchemaDrift } from '../store/schema-drift.ts';
import { buildOn, describeBuild, openForBuild, type BuildDatabase, type BuildHooks } from './build-job.ts';
import { checkJob, describeChecks, describeCheckScope, type CheckHooks } from './check-job.ts';
import { requireDatabaseLocation, requireOutputFolder } from './paths.ts';
import { publishJob } from './publish-job.ts';
import { reportJob, type ReportHooks } from './report-job.ts';
import { STEP_ORDER, type StepName, type StepResult } from './step.ts';
import type { ArchiveHooks, ArchiveResult } from '../store/archive.ts';
import { archiveJob, describeArchive } from './archive-job.ts';
import { syncJob, type SyncHooks, type SyncOutcome } from './sync-job.ts';
import { requireWorkerDatabase } from './worker-accounts.ts';

/** What each step produced, as far as the run got. */
export interface RunOutputs {
  sync?: SyncOutcome;
  /** Null when archive.dir is not set (the step is skipped). */
  archive?: ArchiveResult | null;
  build?: ModelResult[];
  check?: TestResult[];
  /** What the check covered: what the builds changed since each test last passed, where known. */
  checkScope?: CheckScope;
  reports?: ReportResult[];
  publish?: PublishJobResult;
  /** The closed periods and pending adjustments after the build. */
  closes?: CloseStatus;
}

/**
 * What a run loaded (dlt's load info): rows new per account and stream, models rebuilt and the
 * ones that were not, the workbooks written, and the fields the exchange started sending in
 * this run that no declaration lists. Each part is null when its step did not run. The
 * published copy is the run's `published`.
 */
export interface LoadInfo {
  /** Every stream the sync ran, with the rows it added (0 included). */
  newRows: { account: string; stream: string; rows: number }[] | null;
  /** rebuilt: every model brought up to date (macro files are not models), of which whole, incremental (only what changed) and unchanged. */
  models: { rebuilt: number; whole: number; incremental: number; unchanged: number; failed: string[]; skipped: string[] } | null;
  /** The workbooks written, absolute paths. */
  reports: string[] | null;
  /** Undeclared fields first seen in this run's sync (earlier ones: the sync's `drift`, `exledger status`). */
  newFields: SchemaDrift[] | null;
  /**
   * The adjustments to closed periods pending after the build, booked in the first open period
   * (docs/workbooks.md "Closing a period"); null when the build did not run or no period is closed.
   */
  adjustments: { openPeriod: string; closed: string[]; figures: number; unknown: number; perMart: { mart: string; figures: number; unknown: number }[] } | null;
}

/** The load info of what the steps produced. */
export function loadInfoOf(outputs: Readonly<RunOutputs>): LoadInfo {
  const sync = outputs.sync;
  return {
    newRows: sync === undefined ? null : sync.results.map((result) => ({ account: result.account, stream: result.stream, rows: result.rowsInserted })),
    models:
      outputs.build === undefined
        ? null
        : {
            rebuilt: outputs.build.filter((result) => result.status === 'ok' && result.materialization !== 'macro').length,
            whole: outputs.build.filter((result) => result.how === 'whole').length,
            incremental: outputs.build.filter((result) => result.how === 'incremental').length,
            unchanged: outputs.build.filter((result) => result.how === 'unchanged').length,
            failed: outputs.build.filter((result) => result.status === 'failed').map((result) => result.id),
            skipped: outputs.build.filter((result) => result.status === 'skipped').map((result) => result.id),
          },
    reports: outputs.reports === undefined ? null : outputs.reports.map((result) => path.resolve(result.file)),
    newFields: sync === undefined ? null : sync.drift.filter((field) => field.firstSeenRunId === sync.runId),
    adjustments:
      outputs.closes === undefined || outputs.closes.openPeriod === null
        ? null
        : {
            openPeriod: outputs.closes.openPeriod,
            closed: outputs.closes.closed.map((close) => close.label),
            figures: outputs.closes.pending.reduce((sum, mart) => sum + mart.figures, 0),
            unknown: outputs.closes.pending.reduce((sum, mart) => sum + mart.unknown, 0),
            perMart: outputs.closes.pending,
          },
  };
}

/** The archive step's line when archive.dir is not set (said once per run, not an error). */
export const NO_ARCHIVE = 'archive.dir is not set: the raw history is not archived (docs/operating.md "Archive and restore")';

/** How a run ended: every step ok; some step partly done or failed; the sync failed whole; stopped by a signal. */
export type RunStatus = 'ok' | 'partial' | 'failed' | 'interrupted';

/** A finished run. */
export interface RunOutcome {
  status: RunStatus;
  steps: StepResult[];
  period: ReportPeriod;
  reports: ReportResult[];
  published: PublishJobResult | null;
  outputs: RunOutputs;
}

/** Options and callbacks of a run. */
export interface RunOptions {
  /** The period reported. @default the last closed period of `reports.period` */
  period?: ReportPeriod;
  /** The run's "now". @default now */
  now?: Date;
  /** Aborted (reason: an InterruptedError) to stop: the sync stops starting new work and no later step starts. */
  signal?: AbortSignal;
  onStepStart?: (step: StepName) => void;
  /** Told as each step ends, with what the steps produced so far. */
  onStepEnd?: (result: StepResult, outputs: Readonly<RunOutputs>) => void;
  sync?: Omit<SyncHooks, 'signal'>;
  /**
   * Steps not run, each skipped with its reason: the sync (the run goes on from what the database
   * holds) and the publish. Not flags of `exledger run`: a benchmark's night (bench/night-run.ts)
   * appends its day to the raw tables itself, then times the run's other steps as the run takes
   * them, without the publish where the disk cannot hold the copies.
   */
  skip?: { sync?: string; publish?: string };
  archive?: Omit<ArchiveHooks, 'signal'>;
  build?: BuildHooks;
  check?: CheckHooks;
  report?: Omit<ReportHooks, 'notes'>;
}

/** What the run reads and writes. */
export interface RunCatalog {
  streams: readonly StreamDeclaration[];
  /** The reports to write (already chosen from the configuration and validated). */
  reports: readonly ReportSpec[];
  coinFormats: CoinFormats;
}

/**
 * The paths a run will write, checked before it writes anything: the database's folder, the
 * workbooks' folder and the logs' folder. A bad one is a ConfigError naming it (exit 2).
 */
export function checkRunPaths(config: Readonly<Config>): void {
  requireDatabaseLocation(config.db);
  requireOutputFolder(config.reports.outDir, 'outDir');
  requireOutputFolder(config.logDir, 'logDir');
}

/**
 * The nightly job: sync, build, check, write the configured reports for the last closed period,
 * publish the read-only copy for analysts. A step that fails is reported and the ones after it
 * still run where they make sense (reports from the previous models carry a note); only a sync
 * that failed for every stream, or a signal, stops the run.
 *
 * Throws, before anything is written, for bad input found by the sync (ConfigError, AuthError),
 * for `--accounts` over a database that holds other accounts too (ConfigError), and for a
 * database held by another process (DatabaseBusyError); and at the first full disk
 * (DiskFullError: that step failed, the later ones are skipped, what was done before stays).
 * The caller picks the exit code.
 */
export async function runJob(config: Readonly<Config>, catalog: RunCatalog, options: RunOptions = {}): Promise<RunOutcome> {
  const period = options.period ?? lastClosedPeriod(config.reports.period, config.models.reportingTimeZone, options.now);
  checkRunPaths(config);
  // Steps take the database lock one by one; this one keeps a second run out meanwhile.
  const runLock = DatabaseLock.acquire(`${config.db}.run`, 'run');
  try {
    await requireWorkerDatabase(config);
  } catch (error) {
    runLock.release();
    throw error;
  }
  const steps: StepResult[] = [];
  const outputs: RunOutputs = {};
  const finish = (status: RunStatus): RunOutcome => ({ status, steps, period, reports: outputs.reports ?? [], published: outputs.publish ?? null, outputs });
  const record = (result: StepResult) => {
    steps.push(result);
    options.onStepEnd?.(result, outputs);
  };
  const skipRest = (from: StepName, detail: string) => {
    for (const step of STEP_ORDER.slice(STEP_ORDER.indexOf(from))) record({ step, status: 'skipped', detail, ms: 0 });
  };
  /** Runs one step; its result is judged from its output, or it failed with the error's message. */
  const step = async <K extends StepName>(
    name: K,
    work: () => Promise<NonNullable<RunOutputs[K]>>,
    judge: (output: NonNullable<RunOutputs[K]>) => Omit<StepResult, 'step' | 'ms'>,
  ): Promise<boolean> => {
    const started = performance.now();
    options.onStepStart?.(name);
    try {
      const output = await work();
      (outputs as Record<string, unknown>)[name] = output;
      record({ step: name, ...judge(output), ms: performance.now() - started });
      return true;
    } catch (error) {
      // Bad input and a busy database found by the sync, before anything was written, are the
      // caller's: no step after it can do better. Later, a database held by another process is
      // a failed step like any other.
      if (name === 'sync' && (error instanceof ConfigError || error instanceof AuthError || error instanceof DatabaseBusyError || error instanceof InterruptedError)) throw error;
      // Stopped by a signal: the step did not fail, it was stopped (between models, tests or
      // workbooks; what it finished stays), and whatever the stop made fail on its way is the stop.
      if (interrupted()) {
        record({ step: name, status: 'interrupted', detail: `${stopReason()}; what it finished stays`, ms: performance.now() - started });
        return false;
      }
      record({ step: name, status: 'failed', detail: error instanceof ExledgerError ? error.message : `unexpected: ${(error as Error)?.message ?? String(error)}`, ms: performance.now() - started });
      // A full disk stops the run: every later step writes too (the published copy sits beside
      // the database). It is the run's one error; what was done before it stays. The archive's
      // disk is another disk: a full one fails the archive step only.
      if (error instanceof DiskFullError && name !== 'archive') {
        const next = STEP_ORDER[STEP_ORDER.indexOf(name) + 1];
        if (next !== undefined) skipRest(next, 'the disk is full');
        throw error;
      }
      return false;
    }
  };
  const interrupted = () => options.signal?.aborted === true;
  const stopReason = () => (options.signal?.reason instanceof InterruptedError ? options.signal.reason.message : 'interrupted');

  try {
    if (options.skip?.sync !== undefined) record({ step: 'sync', status: 'skipped', detail: options.skip.sync, ms: 0 });
    else {
      await step(
        'sync',
        () => syncJob(config, catalog.streams, {}, { ...options.sync, signal: options.signal }),
        (outcome) => {
          const failed = outcome.results.filter((result) => result.status !== 'ok');
          const status = outcome.status === 'ok' ? 'ok' : outcome.status === 'partial' ? 'partial' : outcome.status === 'interrupted' ? 'interrupted' : 'failed';
          const detail =
            outcome.status === 'interrupted'
              ? `interrupted: ${failed.map((result) => `${result.account} ${result.stream}`).join(', ')} stopped; what they read is committed`
              : failed.length === 0
                ? `${countOf(outcome.results.length, 'stream')} synced`
                : `failed: ${failed.map((result) => `${result.account} ${result.stream}`).join(', ')}`;
          return { status, detail };
        },
      );
      const synced = outputs.sync;
      if (interrupted() || synced?.status === 'interrupted') {
        skipRest('archive', 'the run was interrupted');
        return finish('interrupted');
      }
      if (synced === undefined || synced.status === 'failed') {
        skipRest('archive', 'the sync failed for every stream');
        return finish('failed');
      }
    }

    // Right after the sync, before the build: the raw history is the one thing that cannot be
    // made again (the exchange refuses what is older than its horizon), so it is copied off
    // this disk as soon as the night's rows are committed, whatever the build, checks and
    // reports do after. A failed archive is a failed step (the run is partial), never silent.
    if (config.archive.dir === null) {
      outputs.archive = null;
      record({ step: 'archive', status: 'skipped', detail: NO_ARCHIVE, ms: 0 });
    } else {
      await step('archive', () => archiveJob(config, { ...options.archive, signal: options.signal }), (result) => ({ status: 'ok', detail: describeArchive(result) }));
    }
    if (interrupted()) {
      skipRest('build', 'the run was interrupted');
      return finish('interrupted');
    }

    const notes: string[] = [];
    // The build and the check share one opening of the database, under the build's lock: the
    // check reads the rows the build just wrote from DuckDB's cache (the 10M benchmark's night:
    // 3.9 s instead of 7.0 s, docs/benchmarks.md). It is closed before the reports, which other
    // readers may share the file with. A build that failed closes it: the check opens the
    // database afresh, as it stands after the failure.
    let shared: BuildDatabase | undefined;
    try {
      const built = await step(
        'build',
        async () => {
          shared = await openForBuild(config);
          let results: ModelResult[];
          try {
            results = await buildOn(shared.db, config, catalog.streams, { ...options.build, signal: options.signal });
          } catch (error) {
            shared.close();
            shared = undefined;
            throw error;
          }
          outputs.closes = await readCloseStatus(shared.db);
          return results;
        },
        (results) => {
          const failed = results.filter((result) => result.status !== 'ok');
          for (const result of failed) notes.push(`Model ${result.id} was ${result.status === 'failed' ? 'not rebuilt (it failed)' : 'skipped'} in this run: its figures are from the previous build.`);
          return { status: failed.length === 0 ? 'ok' : 'partial', detail: describeBuild(results) };
        },
      );
      if (!built) notes.push('The models could not be built in this run: every figure is from the previous build.');
      if (interrupted()) {
        skipRest('check', 'the run was interrupted');
        return finish('interrupted');
      }

      // The night's check reads what the builds changed since each test last passed (a test whose
      // last pass is unknown runs whole): `exledger check` by hand checks everything.
      await step(
        'check',
        () =>
          checkJob(config, {
            ...options.check,
            ...(shared === undefined ? {} : { db: shared.db }),
            changed: true,
            onScope: (scope) => {
              outputs.checkScope = scope;
              options.check?.onScope?.(scope);
            },
            signal: options.signal,
          }),
        (results) => {
          const failed = results.filter((result) => result.status !== 'pass');
          if (failed.length === 0) notes.push(`Checks: all ${results.length} SQL tests passed in this run.`);
          for (const result of failed) notes.push(`Check FAILED in this run: ${result.id} (${result.status === 'fail' ? countOf(result.offending, 'offending row') : result.message}); see exledger check.`);
          return { status: failed.length === 0 ? 'ok' : 'partial', detail: `${describeChecks(results)}${outputs.checkScope === undefined ? '' : `; ${describeCheckScope(outputs.checkScope)}`}` };
        },
      );
    } finally {
      (shared as BuildDatabase | undefined)?.close();
    }
    if (interrupted()) {
      skipRest('reports', 'the run was interrupted');
      return finish('interrupted');
    }

    await step(
      'reports',
      () => reportJob(config, catalog, period, { ...options.report, notes, signal: options.signal }),
      // Rows a CSV leaves out (the journal's amounts without a price) are said, not a failure of the
      // run: the workbook lists them and the prices file is the operator's to complete.
      (results) => ({
        status: 'ok',
        detail: `${countOf(results.length, 'workbook')} for ${period.label}${results[0]?.closed === undefined ? '' : ` as closed on ${results[0].closed.at} by ${results[0].closed.by}`} in ${path.resolve(config.reports.outDir)}${unchangedText(results)}${results
          .filter((result) => (result.csv?.omitted ?? 0) > 0)
          .map((result) => `; ${result.report}: ${countOf(result.csv!.omitted, 'source row')} not valued in full (no price)`)
          .join('')}`,
      }),
    );
    if (interrupted()) {
      skipRest('publish', 'the run was interrupted');
      return finish('interrupted');
    }

    if (options.skip?.publish !== undefined) record({ step: 'publish', status: 'skipped', detail: options.skip.publish, ms: 0 });
    else {
      await step(
        'publish',
        () => publishJob(config),
        (result) => ({
          status: 'ok',
          detail: `${result.path} (${(result.bytes / 1e6).toFixed(1)} MB): ${describePublish(result)}${result.checkResultsError === undefined ? '' : `; the check results could not be copied beside it (${result.checkResultsError}): exledger docs on it shows none`}`,
        }),
      );
    }
    // A stop asked for during the last step is still a stop (exit 130, as a scheduler expects
    // of `systemctl stop`), even though nothing was left undone.
    if (interrupted()) return finish('interrupted');
    // An archive skipped because none is configured is a choice, not a shortfall of this run.
    // (Nor is a step the caller skipped.)
    const skipped = (result: StepResult) => result.status === 'skipped' && ((result.step === 'archive' && outputs.archive === null) || (result.step in (options.skip ?? {})));
    return finish(steps.every((result) => result.status === 'ok' || skipped(result)) ? 'ok' : 'partial');
  } finally {
    runLock.release();
  }
}

/**
 * How the published copy was brought up to date: `incremental (12 of 77 tables, 3,456 rows)` or
 * `full copy (why)`.
 */
export function describePublish(result: Pick<PublishJobResult, 'how' | 'why' | 'tables' | 'compacted'>): string {
  if (result.how === 'full') return `full copy (${result.why ?? 'asked for'})`;
  const tables = result.tables;
  const compacted = result.compacted === undefined ? '' : `; ${describeCompaction(result.compacted)}`;
  return `${tables === undefined ? 'incremental' : `incremental (${tables.changed} of ${countOf(tables.of, 'table')} brought up to date, ${countOf(tables.rows, 'row')} copied)`}${compacted}`;
}

/** `; 4 unchanged since their last writing (not written again)`, when some were. */
function unchangedText(results: readonly ReportResult[]): string {
  const unchanged = results.filter((result) => result.unchanged !== undefined).length;
  return unchanged === 0 ? '' : `; ${formatCount(unchanged)} unchanged since ${unchanged === 1 ? 'it was' : 'they were'} written (not written again)`;
}
