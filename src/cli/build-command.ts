import { STREAMS } from '../../pipelines/index.ts';
import { buildJob } from '../jobs/build-job.ts';
import { defineCommand } from './command.ts';
import { modelOverrides, withModelOptions } from './config-options.ts';
import { EXIT } from './exit-codes.ts';
import { formatModelResult, summarizeBuild } from './result-text.ts';
import { selectionOf, withSelectOptions } from './select-options.ts';
import { describeCompaction } from '../store/compaction.ts';

/** `exledger build`. */
export const buildCommand = defineCommand({
  command: 'build',
  describe: 'Build the SQL models (staging, intermediate and marts tables), or the selected ones, in dependency order, incrementally (only what the syncs changed since the last build); a line per model',
  builder: (yargs) =>
    withSelectOptions(withModelOptions(yargs), 'Models to build (the others are read as they are in the database)').option('full-refresh', {
      type: 'boolean',
      default: false,
      describe: 'Rebuild every selected model whole from the raw tables, instead of applying only what changed since the last build',
    }),
  config: (args) => modelOverrides(args),
  handler: async (args, { config, output }) => {
    const started = performance.now();
    const results = await buildJob(config, STREAMS, {
      ...selectionOf(args),
      fullRefresh: args.fullRefresh === true,
      onModel: (result, index, total) => {
        if (result.status === 'ok') output.detail(formatModelResult(result, index, total));
        // A model that failed is shown even with --quiet: it is part of what went wrong.
        else output.summary(formatModelResult(result, index, total));
      },
      onCompaction: (tables) => output.detail(describeCompaction(tables)),
    });
    const ms = performance.now() - started;
    output.summary(summarizeBuild(results, ms));
    return { exitCode: results.every((result) => result.status === 'ok') ? EXIT.ok : EXIT.failure, details: { ms: Math.round(ms), results: results.map((result) => ({ ...result, ms: Math.round(result.ms) })) } };
  },
});
