import { docsJob } from '../jobs/docs-job.ts';
import { countOf, formatCount } from '../count-text.ts';
import { defineCommand } from './command.ts';
import { configOverrides, withConfigOptions } from './config-options.ts';
import { EXIT } from './exit-codes.ts';
import { displayPath } from './result-text.ts';

/** `exledger docs`. */
export const docsCommand = defineCommand({
  command: 'docs',
  describe: 'Write a static documentation site of the SQL project (models by layer, columns, tests and their last results, lineage); opens from file://, the folder is replaced whole',
  builder: (yargs) =>
    withConfigOptions(yargs).option('out', { type: 'string', default: './docs-site', describe: 'The site folder (its parent must exist); an earlier site there is replaced once the new one is complete' }),
  config: (args) => configOverrides(args),
  handler: async (args, { config, output }) => {
    const result = await docsJob(config, { out: args.out });
    const { tests } = result;
    const testLine = result.checkResults.found
      ? `tests: ${formatCount(tests.pass)} pass, ${formatCount(tests.fail)} fail, ${formatCount(tests.error)} error${tests['not-run'] > 0 ? `, ${formatCount(tests['not-run'])} not run` : ''}`
      : 'tests not run yet (run exledger check)';
    output.summary(`docs: ${countOf(result.pages, 'page')}, ${countOf(result.models, 'model')} (${testLine}) in ${displayPath(result.path)}/index.html (${(result.ms / 1000).toFixed(1)} s)`);
    return { exitCode: EXIT.ok, details: { path: result.path, pages: result.pages, models: result.models, tests: result.tests, checkResults: result.checkResults, ms: Math.round(result.ms) } };
  },
});
