import path from 'node:path';
import { STREAMS } from '../../pipelines/index.ts';
import { COIN_FORMATS } from '../../reports/coin-formats.ts';
import { REPORTS } from '../../reports/index.ts';
import type { Config } from '../config/config.ts';
import { ExledgerError } from '../errors.ts';
import type { ReportPeriod } from '../export/period.ts';
import { selectReports } from '../jobs/report-job.ts';
import { describeChecks, describeCheckScope } from '../jobs/check-job.ts';
import { checkRunPaths, runJob, type RunOutcome } from '../jobs/run-job.ts';
import { requireWorkerDatabase } from '../jobs/worker-accounts.ts';
import type { CommandOutcome } from './command.ts';
import type { Output } from './output.ts';
import { formatArchivedPart, formatModelResult, formatReportResult, formatRunSummary, formatSyncSummary, formatTestResult, reportRowsProgress, runExitCode, runJson, summarizeBuild } from './result-text.ts';
import { startRunLog } from './run-log.ts';
import { describeCompaction } from '../store/compaction.ts';

/**
 * Runs the nightly job with its log file and its output, shared by `exledger run` and `exledger
 * demo`. The output is short: the sync table, the models that failed or were skipped, the checks
 * that did not pass (in full, with their rows), the workbooks, then the summary (a line per step,
 * what passed as a count). A step's heading is printed only when something is printed under it.
 * The log keeps the detail as well: every heading, a line per model and per check, and the
 * progress (bars on a terminal, lines in the log file).
 */
export async function runWithLog(config: Readonly<Config>, commandOutput: Output, signal: AbortSignal, options: { period?: ReportPeriod; now?: Date; banner?: readonly string[] }): Promise<CommandOutcome> {
  const reports = selectReports(REPORTS, STREAMS.map((stream) => stream.name), config.reports.names ?? ['all'], config.models.reportingCurrency);
  // Before the log file is made: a bad folder is one error line, with nothing created.
  checkRunPaths(config);
  // `--accounts` over a database that holds other accounts too: refused before the log is made.
  await requireWorkerDatabase(config);
  const log = startRunLog(config.logDir);
  // Without a terminal, progress goes to the log file only: stderr (cron's mail, or the
  // cron-errors.log of the README's line) gets errors alone, and the log shows a long backfill moving.
  const output = commandOutput.withProgressTo((line) => log.write(line));
  try {
    for (const line of options.banner ?? []) output.summary(line);
    output.summary(`exledger run: database ${path.resolve(config.db)}, log ${log.file}`);
    const progress = output.syncProgress();
    // The step whose heading stdout has not shown yet (the log has it from the step's start).
    let heading: string | undefined;
    /** A line for the reader (and the log), under its step's heading. */
    const show = (text: string) => {
      if (heading !== undefined) {
        const pending = heading;
        log.uncopied(() => output.detail(`\n== ${pending}`));
        heading = undefined;
      }
      output.detail(text);
    };
    /** Lines for the log only (each stamped: a model's message is a line of its own). */
    const logOnly = (text: string) => text.split('\n').forEach((line) => log.write(line));
    let outcome: RunOutcome;
    try {
      outcome = await runJob(
        config,
        { streams: STREAMS, reports, coinFormats: COIN_FORMATS },
        {
          period: options.period,
          now: options.now,
          signal,
          onStepStart: (step) => {
            log.write('');
            log.write(`== ${step}`);
            heading = step;
            if (step !== 'sync') progress.stop();
          },
          onStepEnd: (result, outputs) => {
            if (result.step === 'sync' && outputs.sync !== undefined) {
              progress.stop();
              show(formatSyncSummary(outputs.sync));
            }
            if (result.step === 'build' && outputs.build !== undefined) logOnly(summarizeBuild(outputs.build, result.ms));
            if (result.step === 'check' && outputs.check !== undefined) logOnly(`check: ${describeChecks(outputs.check)}`);
            if (result.status === 'failed') show(`${result.step} failed: ${result.detail}`);
          },
          sync: { progress },
          // A line per partition written goes to the log; the archive step's line says the rest.
          archive: { onPart: (part, index, total) => part.how !== 'unchanged' && logOnly(formatArchivedPart(part, index, total)) },
          // A model that failed or was skipped is shown; the others are counted on the build line.
          build: { onModel: (result, index, total) => (result.status === 'ok' ? logOnly : show)(formatModelResult(result, index, total)), onCompaction: (tables) => logOnly(describeCompaction(tables)) },
          check: {
            // Which rows the check reads (what changed since each test last passed, or everything), before its tests.
            onScope: (scope) => logOnly(`check: ${describeCheckScope(scope)}`),
            // A check that did not pass is shown whole (its offending rows); the passed ones are counted.
            onTest: (result) => (result.status === 'pass' ? logOnly : show)(formatTestResult(result)),
            onRecorded: (record) => record.error !== undefined && output.error(`warning: the check results could not be recorded in ${record.file}: ${record.error}`),
          },
          report: { onWorkbook: (result) => show(formatReportResult(result)), onRows: reportRowsProgress(output) },
        },
      );
    } finally {
      progress.stop();
    }
    // A log that stopped part-way (a full disk, said on stderr when it happened) makes a good run partial.
    if (log.failure !== undefined && outcome.status === 'ok') outcome = { ...outcome, status: 'partial' };
    output.summary(formatRunSummary(outcome, log.failure === undefined ? [] : [`${'log'.padEnd(8)} ${'failed'.padEnd(8)} ${''.padStart(8)}  ${log.failure.message}`]));
    // On stderr too, so cron's mail (or a wrapper that watches stderr) says the run did not finish.
    if (outcome.status === 'failed') output.error(`error: the run failed: ${outcome.steps.find((step) => step.status === 'failed')?.detail ?? 'see the summary'}`);
    if (outcome.status === 'interrupted') {
      output.error(`error: ${signal.aborted ? (signal.reason as Error).message : 'interrupted'}: the run stopped; what was committed stays\n  fix: run the same command again: it continues from there`);
    }
    return { exitCode: runExitCode(outcome.status), details: { log: log.file, ...(log.failure === undefined ? {} : { logError: log.failure.message }), ...runJson(outcome) } };
  } catch (error) {
    // main prints the error after the log is closed: put it in the log as well.
    log.write(`error: ${error instanceof Error ? error.message : String(error)}`);
    if (error instanceof ExledgerError && error.hint !== undefined) log.write(`  fix: ${error.hint}`);
    throw error;
  } finally {
    log.close();
  }
}

