import path from 'node:path';
import type { Config } from '../config/config.ts';
import { ExledgerError } from '../errors.ts';
import { lastClosedPeriod, type ReportPeriod } from '../export/period.ts';
import type { ReportResult } from '../export/write-report.ts';
import { DatabaseLock } from '../store/lock.ts';
import { publishDatabase, type PublishResult } from '../store/publish.ts';
import { buildWithConfig, modelConfigFromArgs, summarizeBuild, withModelOptions } from './build-command.ts';
import { checkWithConfig } from './check-command.ts';
import { defineCommand } from './command.ts';
import { EXIT } from './exit-codes.ts';
import { periodFromArgs, selectReports, writeReportsWithConfig } from './report-command.ts';
import { startRunLog } from './run-log.ts';
import { formatSyncSummary, syncWithConfig } from './sync-command.ts';

/** One step of a run and how it ended. */
export interface RunStep {
  step: 'sync' | 'build' | 'check' | 'reports' | 'publish';
  status: 'ok' | 'partial' | 'failed' | 'skipped';
  /** One line: what it did, or why it failed or was skipped. */
  detail: string;
  ms: number;
}

/** A finished run. */
export interface RunOutcome {
  steps: RunStep[];
  period: ReportPeriod;
  reports: ReportResult[];
  published: PublishResult | null;
  /** 0 every step ok, 3 some step partly done or failed after the sync, 1 the sync failed whole. */
  exitCode: number;
}

/** Options of runNightly. */
export interface RunOptions {
  /** The period reported. @default the last closed period of `reports.period` */
  period?: ReportPeriod;
  /** Show progress bars. */
  progress: boolean;
  /** The run's "now". @default now */
  now?: Date;
}

/**
 * The nightly job: sync, build, check, write the configured reports for the last closed period,
 * publish the read-only copy for analysts. A step that fails is reported and the ones after it
 * still run where they make sense (reports from the previous models carry a note); only a sync
 * that failed for every stream stops the run, since nothing new came in to report.
 */
export async function runNightly(config: Readonly<Config>, options: RunOptions): Promise<RunOutcome> {
  const reports = selectReports(config.reports.names ?? ['all']);
  const period = options.period ?? lastClosedPeriod(config.reports.period, config.models.reportingTimeZone, options.now);
  // Steps take the database lock one by one; this one keeps a second run out meanwhile.
  const runLock = DatabaseLock.acquire(`${config.db}.run`, 'run');
  const steps: RunStep[] = [];
  const timed = async <T>(step: RunStep['step'], work: () => Promise<T>, judge: (result: T) => Omit<RunStep, 'step' | 'ms'>): Promise<T | undefined> => {
    const started = performance.now();
    console.log(`\n== ${step}`);
    try {
      const result = await work();
      steps.push({ step, ...judge(result), ms: performance.now() - started });
      return result;
    } catch (error) {
      // Bad input (configuration, credentials) found by the sync, before anything was written, is
      // the caller's to fix: no step after it can do better. Later, a database held by another
      // process (a ConfigError too) is a failed step like any other.
      if (step === 'sync' && error instanceof ExledgerError && (error.name === 'ConfigError' || error.name === 'AuthError')) throw error;
      steps.push({ step, status: 'failed', detail: error instanceof Error ? error.message : String(error), ms: performance.now() - started });
      return undefined;
    }
  };
  const skip = (step: RunStep['step'], detail: string) => steps.push({ step, status: 'skipped', detail, ms: 0 });

  try {
    const synced = await timed(
      'sync',
      async () => {
        const outcome = await syncWithConfig(config, { progress: options.progress });
        console.log(formatSyncSummary(outcome));
        return outcome;
      },
      (outcome) => {
        const failed = outcome.results.filter((result) => result.status !== 'ok');
        const status = outcome.exitCode === EXIT.ok ? 'ok' : outcome.exitCode === EXIT.partial ? 'partial' : 'failed';
        return { status, detail: failed.length === 0 ? `${outcome.results.length} streams synced` : `failed: ${failed.map((result) => `${result.account} ${result.stream}`).join(', ')}` };
      },
    );
    if (synced === undefined || synced.exitCode === EXIT.failure) {
      for (const step of ['build', 'check', 'reports', 'publish'] as const) skip(step, 'the sync failed for every stream');
      return { steps, period, reports: [], published: null, exitCode: EXIT.failure };
    }

    const notes: string[] = [];
    const built = await timed(
      'build',
      async () => {
        const started = performance.now();
        const results = await buildWithConfig(config, { print: true });
        console.log(summarizeBuild(results, performance.now() - started));
        return results;
      },
      (results) => {
        const failed = results.filter((result) => result.status !== 'ok');
        for (const result of failed) notes.push(`Model ${result.id} was ${result.status === 'failed' ? 'not rebuilt (it failed)' : 'skipped'} in this run: its figures are from the previous build.`);
        return { status: failed.length === 0 ? 'ok' : 'partial', detail: failed.length === 0 ? `${results.length} models built` : `not built: ${failed.map((result) => result.id).join(', ')}` };
      },
    );
    if (built === undefined) notes.push('The models could not be built in this run: every figure is from the previous build.');

    await timed(
      'check',
      () => checkWithConfig(config, { print: true }),
      (results) => {
        const failed = results.filter((result) => result.status !== 'pass');
        if (failed.length === 0) notes.push(`Checks: all ${results.length} SQL tests passed in this run.`);
        for (const result of failed) notes.push(`Check FAILED in this run: ${result.id} (${result.status === 'fail' ? `${result.offending} offending rows` : result.message}); see exledger check.`);
        return { status: failed.length === 0 ? 'ok' : 'partial', detail: failed.length === 0 ? `${results.length} tests passed` : `failed: ${failed.map((result) => result.id).join(', ')}` };
      },
    );

    const written = await timed(
      'reports',
      async () => writeReportsWithConfig(config, reports, period, { print: true, notes }),
      (results) => ({ status: 'ok', detail: `${results.length} workbooks for ${period.label} in ${path.resolve(config.reports.outDir)}` }),
    );

    const published = await timed(
      'publish',
      async () => {
        const lock = DatabaseLock.acquire(config.db, 'publish');
        try {
          return await publishDatabase(config.db);
        } finally {
          lock.release();
        }
      },
      (result) => ({ status: 'ok', detail: `${result.path} (${(result.bytes / 1e6).toFixed(1)} MB)` }),
    );

    const exitCode = steps.every((step) => step.status === 'ok') ? EXIT.ok : EXIT.partial;
    return { steps, period, reports: written ?? [], published: published ?? null, exitCode };
  } finally {
    runLock.release();
  }
}

/** The run's closing table: a line per step. */
export function formatRunSummary(outcome: RunOutcome): string {
  const lines = outcome.steps.map((step) => `${step.step.padEnd(8)} ${step.status.padEnd(8)} ${(step.ms / 1000).toFixed(1).padStart(6)} s  ${step.detail}`);
  const verdict = outcome.exitCode === EXIT.ok ? 'run: ok' : outcome.exitCode === EXIT.partial ? 'run: partly done (exit 3): see the steps above' : 'run: FAILED (exit 1): see the steps above';
  return ['', '== summary', ...lines, verdict].join('\n');
}

/** `exledger run`. */
export const runCommand = defineCommand({
  command: 'run',
  describe: 'The nightly job: sync, build, check, write the reports for the last closed period, publish the read-only copy for analysts',
  builder: (yargs) =>
    withModelOptions(yargs)
      .option('period', { type: 'string', describe: 'Report this period instead (2026-10, 2026-Q3, 2026) [default: the last closed reports.period, else month]' })
      .option('from', { type: 'string', describe: 'Report from this day (with --to)' })
      .option('to', { type: 'string', describe: 'Report to this day, included (with --from)' })
      .option('out', { type: 'string', describe: 'Folder of the workbooks [default: reports.outDir, else ./out]' })
      .option('json', { type: 'boolean', default: false, describe: 'Print the outcome as JSON at the end' }),
  handler: async (args) => {
    const base = modelConfigFromArgs(args);
    const config: Readonly<Config> = args.out === undefined ? base : { ...base, reports: { ...base.reports, outDir: args.out } };
    const period = args.period === undefined && args.from === undefined && args.to === undefined ? undefined : periodFromArgs(args);
    const log = startRunLog(config.logDir);
    console.log(`exledger run: database ${path.resolve(config.db)}, log ${log.file}`);
    try {
      const outcome = await runNightly(config, { period, progress: process.stdout.isTTY === true && !args.json });
      console.log(formatRunSummary(outcome));
      // On stderr too, so cron's mail (or a wrapper that watches stderr) says the run failed.
      if (outcome.exitCode === EXIT.failure) console.error(`error: the run failed: ${outcome.steps.find((step) => step.status === 'failed')?.detail ?? 'see the summary'}`);
      if (args.json) console.log(JSON.stringify({ ...outcome, steps: outcome.steps.map((step) => ({ ...step, ms: Math.round(step.ms) })), reports: outcome.reports.map((report) => ({ ...report, ms: Math.round(report.ms) })) }, null, 2));
      return outcome.exitCode;
    } catch (error) {
      log.write(`error: ${error instanceof Error ? error.message : String(error)}`);
      if (error instanceof ExledgerError && error.hint !== undefined) log.write(`  fix: ${error.hint}`);
      throw error;
    } finally {
      log.close();
    }
  },
});
