import { listJob } from '../jobs/list-job.ts';
import { definePlainCommand } from './command.ts';
import { EXIT } from './exit-codes.ts';
import { selectionOf, withSelectOptions } from './select-options.ts';
import { formatTextTable } from './text-table.ts';

/** `exledger ls`. */
export const lsCommand = definePlainCommand({
  command: 'ls',
  describe: 'List the models a selection picks (id, layer, materialization, tags) in build order, or their tests; reads the SQL project only, no database',
  builder: (yargs) =>
    withSelectOptions(yargs, 'Models to list')
      .option('resource-type', { type: 'string', choices: ['model', 'test'], default: 'model', describe: 'What to list: the selected models, or the tests exledger check --select would run for them' })
      .option('output', { type: 'string', choices: ['text', 'json'], default: 'text', describe: 'A table, or one JSON array on stdout' }),
  handler: async (args, { output }) => {
    const listing = listJob(selectionOf(args));
    const tests = args.resourceType === 'test';
    if (args.output === 'json') output.summary(JSON.stringify(tests ? listing.tests : listing.models, null, 2));
    else if (tests) output.summary(formatTextTable(['test', 'model', 'reads'], listing.tests.map((test) => [test.id, test.model ?? '(singular)', test.references.join(', ')])).join('\n'));
    else output.summary(formatTextTable(['model', 'layer', 'materialization', 'tags'], listing.models.map((model) => [model.id, model.layer, model.materialization, model.tags.join(', ')])).join('\n'));
    return { exitCode: EXIT.ok, details: tests ? { tests: listing.tests } : { models: listing.models } };
  },
});
