import { STREAMS } from '../../pipelines/index.ts';
import { COIN_FORMATS } from '../../reports/coin-formats.ts';
import { REPORTS } from '../../reports/index.ts';
import { closeJob, reopenJob } from '../close/close-job.ts';
import { countOf, formatCount } from '../count-text.ts';
import { selectReports } from '../jobs/report-job.ts';
import { defineCommand } from './command.ts';
import { configOverrides, withConfigOptions } from './config-options.ts';
import { EXIT } from './exit-codes.ts';
import { displayPath, formatModelResult, formatReportResult } from './result-text.ts';

/** An instant to the second, as status and the workbooks show closes: 2026-11-02T09:14:05Z. */
function secondsOf(iso: string): string {
  return iso.replace(/\.\d+Z$/, 'Z');
}

/** `exledger close`. */
export const closeCommand = defineCommand({
  command: 'close',
  describe: 'Close a period (a month, quarter or year, as reports.period) for every account: its figures are frozen as its workbooks show them, and later changes become adjustments in the first open period',
  builder: (yargs) =>
    withConfigOptions(yargs)
      .option('period', { type: 'string', describe: 'The period to close, in the reporting time zone: 2026-10 (reports.period month), 2026-Q3 (quarter) or 2026 (year)' })
      .option('note', { type: 'string', describe: 'A note kept with the close (meta.period_closes.note), e.g. "signed by the CFO, ticket FIN-123"' })
      .option('by', { type: 'string', describe: 'Who closes [default: EXLEDGER_USER, else USER or LOGNAME]' })
      .option('out', { type: 'string', describe: 'Folder of the workbooks [default: reports.outDir, else ./out]' }),
  config: (args) => ({ ...configOverrides(args), outDir: args.out }),
  handler: async (args, { config, output }) => {
    const reports = selectReports(REPORTS, STREAMS.map((stream) => stream.name), ['all'], config.models.reportingCurrency);
    const result = await closeJob(
      config,
      STREAMS,
      { reports, streams: STREAMS, coinFormats: COIN_FORMATS },
      {
        period: args.period,
        ...(args.note === undefined ? {} : { note: String(args.note) }),
        ...(args.by === undefined ? {} : { by: String(args.by) }),
        build: { onModel: (model, index, total) => (model.status === 'ok' ? output.detail(formatModelResult(model, index, total)) : output.summary(formatModelResult(model, index, total))) },
        onWorkbook: (workbook) => output.detail(formatReportResult(workbook)),
      },
    );
    const frozen = Object.values(result.frozen).reduce((sum, rows) => sum + rows, 0);
    output.summary(`closed ${result.period.label} (${result.period.from} to ${result.period.to}) on ${secondsOf(result.closedAt)} by ${result.closedBy}${result.note === null ? '' : `: ${result.note}`}`);
    output.summary(`  build: ${result.build}; checks: ${formatCount(result.checks)} passed; ${countOf(frozen, 'row')} frozen in schema closed (close ${result.version})`);
    for (const file of result.files) output.summary(`  ${displayPath(file.file)}  SHA-256 ${file.sha256}`);
    return { exitCode: EXIT.ok, details: result as unknown as Record<string, unknown> };
  },
});

/** `exledger reopen`. */
export const reopenCommand = defineCommand({
  command: 'reopen',
  describe: 'Reopen a closed period and every later closed one, on the record (meta.period_closes): their figures go live again',
  builder: (yargs) =>
    withConfigOptions(yargs)
      .option('period', { type: 'string', describe: 'The closed period to reopen: 2026-10, 2026-Q3 or 2026 (later closed periods are reopened too, newest first)' })
      .option('reason', { type: 'string', describe: 'Why (required): kept in the audit trail' })
      .option('by', { type: 'string', describe: 'Who reopens [default: EXLEDGER_USER, else USER or LOGNAME]' }),
  config: (args) => configOverrides(args),
  handler: async (args, { config, output }) => {
    const result = await reopenJob(config, STREAMS, {
      period: args.period,
      reason: args.reason === undefined ? undefined : String(args.reason),
      ...(args.by === undefined ? {} : { by: String(args.by) }),
    });
    for (const close of result.reopened) output.summary(`reopened ${close.label} (closed on ${close.closedAt} by ${close.closedBy}) on ${secondsOf(result.at)} by ${result.by}: ${result.reason}`);
    output.summary(`  its figures are live again; its signed workbooks and their checksums stay in meta.period_closes and meta.closed_workbooks`);
    return { exitCode: EXIT.ok, details: result as unknown as Record<string, unknown> };
  },
});
