import { STREAMS } from '../../pipelines/index.ts';
import { COIN_FORMATS } from '../../reports/coin-formats.ts';
import { REPORTS } from '../../reports/index.ts';
import { accountOf, formatsOf, periodOf, reportJob, selectReports } from '../jobs/report-job.ts';
import { countOf } from '../count-text.ts';
import { defineCommand } from './command.ts';
import { configOverrides, withConfigOptions } from './config-options.ts';
import { EXIT } from './exit-codes.ts';
import { displayPath, formatReportResult, reportResultJson, reportRowsProgress } from './result-text.ts';

/** `exledger report`. */
export const reportCommand = defineCommand({
  command: 'report <name..>',
  describe: 'Write Excel workbooks (pnl, fees, rebates, balances, journal, holdings, or all) for a period from the built models',
  builder: (yargs) =>
    withConfigOptions(yargs)
      // Required by `<name..>`; no default (yargs would show a variadic's `[default: []]` beside `[required]`).
      .positional('name', { type: 'string', array: true, demandOption: true, default: undefined, describe: 'Reports to write: pnl, fees, rebates, balances, journal (workbook and CSV) and holdings (both need models.reportingCurrency), or all' })
      .option('period', { type: 'string', describe: 'A month (2026-10), quarter (2026-Q3) or year (2026), in the reporting time zone' })
      .option('from', { type: 'string', describe: 'First day, YYYY-MM-DD (with --to)' })
      .option('to', { type: 'string', describe: 'Last day, YYYY-MM-DD, included (with --from)' })
      .option('out', { type: 'string', describe: 'Folder of the workbooks [default: reports.outDir, else ./out]' })
      .option('account', {
        type: 'string',
        describe: 'One account of the database: every sheet and figure holds its rows only, in <report>-<period>-<account>.xlsx [default: every account, consolidated]',
      })
      .option('format', {
        type: 'string',
        array: true,
        describe: 'Files written beside the journal workbook, repeated or comma-separated: csv, quickbooks, xero, netsuite, hledger (ledger imports rounded to the currency\'s minor unit) [default: csv]',
      })
      .option('force', {
        type: 'boolean',
        default: false,
        describe: 'Write every workbook, even one whose figures have not changed since it was written (else it is not written again, and the line says since when)',
      }),
  config: (args) => ({ ...configOverrides(args), outDir: args.out }),
  handler: async (args, { config, output }) => {
    const reports = selectReports(REPORTS, STREAMS.map((stream) => stream.name), args.name.map(String), config.models.reportingCurrency);
    const formats = formatsOf(args.format, reports, REPORTS);
    const period = periodOf(args);
    const account = accountOf(args.account);
    const results = await reportJob(
      config,
      { reports, streams: STREAMS, coinFormats: COIN_FORMATS },
      period,
      { onWorkbook: (result) => output.summary(formatReportResult(result)), onRows: reportRowsProgress(output) },
      { ...(account === undefined ? {} : { account }), ...(formats === undefined ? {} : { formats }), force: args.force === true },
    );
    // A CSV or ledger import whose source rows are not all valued (the journal's records without a price) is written, said, and partial (exit 3).
    const incomplete = results.filter((result) => (result.csv?.omitted ?? 0) > 0 || (result.ledger?.omitted ?? 0) > 0);
    for (const result of incomplete) {
      const files = [...(result.csv === undefined ? [] : [result.csv.file]), ...(result.ledger?.exports.flatMap((written) => written.files.map((file) => file.file)) ?? [])];
      const omitted = result.csv ?? result.ledger!;
      output.error(`warning: ${files.map(displayPath).join(', ')}: ${countOf(omitted.omitted, 'source row')} not valued in full: ${omitted.note}`);
    }
    return { exitCode: incomplete.length > 0 ? EXIT.partial : EXIT.ok, details: { period, reports: results.map(reportResultJson) } };
  },
});
