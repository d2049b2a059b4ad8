import { STREAMS } from '../../pipelines/index.ts';
import { statusJob } from '../jobs/status-job.ts';
import { defineCommand } from './command.ts';
import { configOverrides, withConfigOptions } from './config-options.ts';
import { EXIT } from './exit-codes.ts';
import { formatDrift } from './result-text.ts';
import { formatTextTable } from './text-table.ts';

/** `exledger status`. */
export const statusCommand = defineCommand({
  command: 'status',
  describe: 'Show, per stream: rows stored, how far it is synced, the last run and its last error',
  builder: (yargs) => withConfigOptions(yargs),
  config: (args) => configOverrides(args),
  handler: async (_args, { config, output }) => {
    const statuses = await statusJob(config, STREAMS);
    const header = ['account', 'stream', 'rows', 'partitions', 'synced until', 'last run', 'status', 'last error'];
    const rows = statuses.map((s) => [s.account, s.stream, String(s.rows), String(s.partitions), s.coveredUntil ?? '-', s.lastRunAt ?? '-', s.lastStatus ?? '-', s.lastError ?? '']);
    output.summary(formatTextTable(header, rows).join('\n'));
    if (statuses.length === 0) output.summary('(nothing synced yet: run exledger sync)');
    const drift = formatDrift(statuses.flatMap((status) => status.newFields.map((field) => ({ account: status.account, stream: status.stream, ...field }))));
    if (drift.length > 0) output.summary(drift.join('\n'));
    return { exitCode: EXIT.ok, details: { streams: statuses } };
  },
});
