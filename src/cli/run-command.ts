import { periodOf } from '../jobs/report-job.ts';
import { defineCommand } from './command.ts';
import { modelOverrides, withAccountsOption, withModelOptions } from './config-options.ts';
import { runWithLog } from './nightly-run.ts';

/** `exledger run`. */
export const runCommand = defineCommand({
  command: 'run',
  stopsOnSignal: true,
  describe: 'The nightly job: sync, archive the raw history (when archive.dir is set), build, check, write the reports for the last closed period, publish the read-only copy for analysts',
  builder: (yargs) =>
    withAccountsOption(withModelOptions(yargs))
      .option('period', { type: 'string', describe: 'Report this period instead (2026-10, 2026-Q3, 2026) [default: the last closed reports.period, else month]' })
      .option('from', { type: 'string', describe: 'Report from this day (with --to)' })
      .option('to', { type: 'string', describe: 'Report to this day, included (with --from)' })
      .option('out', { type: 'string', describe: 'Folder of the workbooks [default: reports.outDir, else ./out]' }),
  config: (args) => ({ ...modelOverrides(args), outDir: args.out, accounts: args.accounts }),
  handler: async (args, { config, output, signal }) => {
    const period = args.period === undefined && args.from === undefined && args.to === undefined ? undefined : periodOf(args);
    return runWithLog(config, output, signal, { period });
  },
});
