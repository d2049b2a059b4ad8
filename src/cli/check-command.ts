import { checkJob, describeChecks, type CheckRecord } from '../jobs/check-job.ts';
import { defineCommand } from './command.ts';
import { configOverrides, withConfigOptions } from './config-options.ts';
import { EXIT } from './exit-codes.ts';
import { displayPath, formatTestResult } from './result-text.ts';
import { selectionOf, withSelectOptions } from './select-options.ts';
import { isoInstants } from './time-text.ts';

/** `exledger check`. */
export const checkCommand = defineCommand({
  command: 'check',
  describe: 'Run the SQL tests over the built models (or those of the selected models): pass, or fail with a sample of the offending rows',
  builder: (yargs) => withSelectOptions(withConfigOptions(yargs), 'Models whose tests run (their declarations\' generic tests and the singular tests that read them)'),
  config: (args) => configOverrides(args),
  handler: async (args, { config, output }) => {
    let record: CheckRecord = { file: '', error: 'not recorded' };
    const results = await checkJob(config, {
      ...selectionOf(args),
      onTest: (result) => (result.status === 'pass' ? output.detail(formatTestResult(result)) : output.summary(formatTestResult(result))),
      onRecorded: (recorded) => (record = recorded),
    });
    const failing = results.filter((result) => result.status !== 'pass');
    output.summary(`check: ${describeChecks(results)}`);
    if (record.error === undefined) output.detail(`results recorded in ${displayPath(record.file)} (for exledger docs)`);
    else output.error(`warning: the results could not be recorded in ${record.file}: ${record.error} (exledger docs shows the previous ones)`);
    return {
      exitCode: failing.length === 0 ? EXIT.ok : EXIT.failure,
      details: { results: results.map((result) => ({ ...result, sample: result.sample.map(isoInstants), ms: Math.round(result.ms) })), resultsFile: record.error === undefined ? record.file : null },
    };
  },
});
