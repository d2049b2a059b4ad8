import path from 'node:path';
import { STREAMS } from '../../pipelines/index.ts';
import { COIN_FORMATS } from '../../reports/coin-formats.ts';
import { REPORTS } from '../../reports/index.ts';
import type { Config } from '../config/config.ts';
import { ExledgerError } from '../errors.ts';
import type { ReportPeriod } from '../export/period.ts';
import { selectReports } from '../jobs/report-job.ts';
import { checkRunPaths, runJob, type RunOutcome } from '../jobs/run-job.ts';
import { requireWorkerDatabase } from '../jobs/worker-accounts.ts';
import type { CommandOutcome } from './command.ts';
import type { Output } from './output.ts';
import { formatModelResult, formatReportResult, formatRunSummary, formatSyncSummary, formatTestResult, reportRowsProgress, runExitCode, runJson, summarizeBuild } from './result-text.ts';
import { startRunLog } from './run-log.ts';

/**
 * Runs the nightly job with its log file and its output: a heading per step, the lines of
 * each (sync table, models, tests, workbooks), progress (bars on a terminal, lines in the log
 * file), then the summary. Shared by `exledger run` and `exledger demo`.
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
            output.detail(`\n== ${step}`);
            if (step !== 'sync') progress.stop();
          },
          onStepEnd: (result, outputs) => {
            if (result.step === 'sync' && outputs.sync !== undefined) {
              progress.stop();
              output.detail(formatSyncSummary(outputs.sync));
            }
            if (result.step === 'build' && outputs.build !== undefined) output.detail(summarizeBuild(outputs.build, result.ms));
            if (result.status === 'failed') output.detail(`${result.step} failed: ${result.detail}`);
          },
          sync: { progress },
          build: { onModel: (result, index, total) => output.detail(formatModelResult(result, index, total)) },
          check: {
            onTest: (result) => output.detail(formatTestResult(result)),
            onRecorded: (record) => record.error !== undefined && output.error(`warning: the check results could not be recorded in ${record.file}: ${record.error}`),
          },
          report: { onWorkbook: (result) => output.detail(formatReportResult(result)), onRows: reportRowsProgress(output) },
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

