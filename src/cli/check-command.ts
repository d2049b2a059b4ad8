import { checkJob, describeChecks, describeCheckScope, type CheckRecord } from '../jobs/check-job.ts';
import type { CheckScope } from '../models/check.ts';
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
  builder: (yargs) =>
    withSelectOptions(withConfigOptions(yargs), 'Models whose tests run (their declarations\' generic tests and the singular tests that read them)')
      .option('changed', {
        type: 'boolean',
        describe:
          'Check only what the builds changed since each test last passed (the nightly run\'s check): the changed partitions from the instant they changed; a test whose last pass is unknown, or that cannot be restricted, runs whole',
      })
      .option('full', { type: 'boolean', describe: 'Check everything, every test on every row (the default)' })
      .conflicts('changed', 'full'),
  config: (args) => configOverrides(args),
  handler: async (args, { config, output }) => {
    let record: CheckRecord = { file: '', error: 'not recorded' };
    let scope: CheckScope | undefined;
    const results = await checkJob(config, {
      ...selectionOf(args),
      changed: args.changed === true,
      onScope: (told) => (scope = told),
      onTest: (result) => (result.status === 'pass' ? output.detail(formatTestResult(result)) : output.summary(formatTestResult(result))),
      onRecorded: (recorded) => (record = recorded),
    });
    const failing = results.filter((result) => result.status !== 'pass');
    output.summary(`check: ${describeChecks(results)}${scope === undefined ? '' : `; ${describeCheckScope(scope)}`}`);
    if (record.error === undefined) output.detail(`results recorded in ${displayPath(record.file)} (for exledger docs)`);
    else output.error(`warning: the results could not be recorded in ${record.file}: ${record.error} (exledger docs shows the previous ones)`);
    return {
      exitCode: failing.length === 0 ? EXIT.ok : EXIT.failure,
      details: {
        scope: scope ?? null,
        results: results.map(({ fingerprint: _, ...result }) => ({ ...result, sample: result.sample.map(isoInstants), ms: Math.round(result.ms) })),
        resultsFile: record.error === undefined ? record.file : null,
      },
    };
  },
});
