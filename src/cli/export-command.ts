import { exportJob, exportShardJob } from '../jobs/export-job.ts';
import type { DatasetFormat, ManifestModel } from '../export/write-dataset.ts';
import { countOf } from '../count-text.ts';
import { defineCommand } from './command.ts';
import { configOverrides, withConfigOptions } from './config-options.ts';
import { EXIT } from './exit-codes.ts';
import { displayPath } from './result-text.ts';

/** `exledger export`. */
export const exportCommand = defineCommand({
  command: 'export [models..]',
  describe: 'Write built models (default: every marts table) as a Parquet or CSV dataset, hive-partitioned by account and month, with a manifest; the folder is replaced whole (with --shard: only this database\'s accounts in a folder shared by several workers)',
  builder: (yargs) =>
    withConfigOptions(yargs)
      // No model named means layer:marts; yargs shows that as the default (an `[]` default would
      // print `[default: []]`, and no default gives `[undefined]`).
      .positional('models', { type: 'string', array: true, default: [], defaultDescription: 'layer:marts', describe: 'Models, as exledger build --select takes them: marts.fees_monthly (or fees_monthly), layer:marts|intermediate|staging, tag:<tag>, +model, model+' })
      .option('out', { type: 'string', default: './export', describe: 'The dataset folder; an earlier export there is replaced once the new one is complete' })
      .option('format', { type: 'string', choices: ['parquet', 'csv'], default: 'parquet', describe: 'File format' })
      .option('shard', {
        type: 'boolean',
        default: false,
        describe: "Write this database's accounts into a dataset shared by several workers: only their account= partitions are replaced, other workers' are kept (docs/operating.md \"Several workers\")",
      })
      .option('accounts', { type: 'string', describe: 'With --shard: only these accounts, comma-separated [default: every account synced into this database]' }),
  config: (args) => configOverrides(args),
  handler: async (args, { config, output }) => {
    const onModel = (model: ManifestModel) =>
      output.detail(`${model.model.padEnd(40)} ${countOf(model.rows, 'row').padStart(15)}  ${model.partitionBy.length === 0 ? 'not partitioned' : `by ${model.partitionBy.join(', ')}`}`);
    const request = { models: (args.models ?? []).map(String), out: args.out, format: args.format as DatasetFormat, onModel, accounts: args.accounts };
    if (args.shard) {
      const result = await exportShardJob(config, request);
      const models = result.manifests[0]?.models.length ?? 0;
      const rows = result.manifests.reduce((sum, manifest) => sum + manifest.models.reduce((total, model) => total + model.rows, 0), 0);
      output.summary(
        `export ${result.runId}: shard ${result.accounts.join(', ')}: ${countOf(models, 'model')}, ${countOf(rows, 'row')} as ${request.format} in ${displayPath(result.path)}, other accounts kept (${(result.ms / 1000).toFixed(1)} s)`,
      );
      return { exitCode: EXIT.ok, details: { path: result.path, ms: Math.round(result.ms), shard: result.accounts, runId: result.runId, manifests: result.manifests } };
    }
    const result = await exportJob(config, request);
    const { manifest } = result;
    const rows = manifest.models.reduce((sum, model) => sum + model.rows, 0);
    output.summary(`export ${manifest.runId}: ${countOf(manifest.models.length, 'model')}, ${countOf(rows, 'row')} as ${manifest.format} in ${displayPath(result.path)} (${(result.ms / 1000).toFixed(1)} s)`);
    return { exitCode: EXIT.ok, details: { path: result.path, ms: Math.round(result.ms), manifest } };
  },
});
