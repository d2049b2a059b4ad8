import { checkJob } from '../jobs/check-job.ts';
import { defineCommand } from './command.ts';
import { configOverrides, withConfigOptions } from './config-options.ts';
import { EXIT } from './exit-codes.ts';
import { formatTestResult } from './result-text.ts';
import { selectionOf, withSelectOptions } from './select-options.ts';
import { isoInstants } from './time-text.ts';

/** `exledger check`. */
export const checkCommand = defineCommand({
  command: 'check',
  describe: 'Run the SQL tests over the built models (or those of the selected models): pass, or fail with a sample of the offending rows',
  builder: (yargs) => withSelectOptions(withConfigOptions(yargs), 'Models whose tests run (their declarations\' generic tests and the singular tests that read them)'),
  config: (args) => configOverrides(args),
  handler: async (args, { config, output }) => {
    const results = await checkJob(config, {
      ...selectionOf(args),
      onTest: (result) => (result.status === 'pass' ? output.detail(formatTestResult(result)) : output.summary(formatTestResult(result))),
    });
    const failing = results.filter((result) => result.status !== 'pass');
    output.summary(`check: ${results.length - failing.length} passed, ${failing.length} failed of ${results.length}`);
    return { exitCode: failing.length === 0 ? EXIT.ok : EXIT.failure, details: { results: results.map((result) => ({ ...result, sample: result.sample.map(isoInstants), ms: Math.round(result.ms) })) } };
  },
});
