import { STREAMS } from '../../pipelines/index.ts';
import { statusJob, type StatusReport } from '../jobs/status-job.ts';
import { defineCommand } from './command.ts';
import { configOverrides, withConfigOptions } from './config-options.ts';
import { formatCloseStatus } from '../close/close-status.ts';
import { EXIT } from './exit-codes.ts';
import { displayPath, formatDrift } from './result-text.ts';
import { formatTextTable } from './text-table.ts';
import { formatCount } from '../count-text.ts';

/** `exledger status`. */
export const statusCommand = defineCommand({
  command: 'status',
  describe: 'Show, per stream: rows stored, how far it is synced, the last run and its last error (during a sync or run: what it is doing, and the table of the last published copy)',
  builder: (yargs) => withConfigOptions(yargs),
  config: (args) => configOverrides(args),
  handler: async (_args, { config, output }) => {
    const report = await statusJob(config, STREAMS);
    const activity = formatActivity(report);
    if (activity.length > 0) output.summary(activity.join('\n'));
    const { streams: statuses, source } = report;
    if (source === null) {
      output.summary(`\nno published copy to read the table from (${displayPath(report.publishedFile)}): run exledger status again once it is done`);
    } else {
      if (source.kind === 'published copy') output.summary(`\nPer stream, from the published copy of ${source.asOf} (${displayPath(source.file)}), not the database (it is held):`);
      const header = ['account', 'stream', 'rows', 'partitions', 'synced until', 'last run', 'status', 'last error'];
      const rows = statuses.map((s) => [s.account, s.stream, formatCount(s.rows), formatCount(s.partitions), s.coveredUntil ?? '-', s.lastRunAt ?? '-', s.lastStatus ?? '-', s.lastError ?? '']);
      output.summary(formatTextTable(header, rows, { alignRight: header.map((name) => name === 'rows' || name === 'partitions') }).join('\n'));
      if (statuses.length === 0) output.summary('(nothing synced yet: run exledger sync)');
      const drift = formatDrift(statuses.flatMap((status) => status.newFields.map((field) => ({ account: status.account, stream: status.stream, ...field }))));
      if (drift.length > 0) output.summary(drift.join('\n'));
      if (report.closes !== null) output.summary(formatCloseStatus(report.closes).join('\n'));
    }
    return { exitCode: EXIT.ok, details: { streams: statuses, closes: report.closes, source, holders: report.holders, sync: report.sync === null ? null : { ...report.sync.state, running: report.sync.alive, file: report.sync.file } } };
  },
});

/**
 * What other exledger processes are doing with the database: who holds it (and its run), and a
 * sync's streams from its state file; or a note about the state file of a sync that was killed.
 */
function formatActivity(report: StatusReport): string[] {
  const lines = report.holders.map((holder) => `now: exledger ${holder.purpose} (pid ${holder.pid}, since ${holder.since})${holder.lock === 'database' ? ', holding the database' : ''}`);
  const sync = report.sync;
  if (sync === null) return lines;
  const { state } = sync;
  if (!sync.alive) {
    lines.push(`note: a sync (pid ${state.pid}, run ${state.runId}, started ${state.startedAt}) ended without finishing (it was killed); ${displayPath(sync.file)} is left from it (the next sync replaces it); what it committed is in the table`);
    return lines;
  }
  const done = state.streams.filter((stream) => stream.status !== 'running').length;
  lines.push(`sync ${state.runId} (pid ${state.pid}, started ${state.startedAt}): ${done} of ${state.streams.length} streams done, as of ${state.updatedAt}`);
  const header = ['account', 'stream', 'status', 'windows', 'rows read', 'committed until'];
  const rows = state.streams.map((stream) => [
    stream.account,
    stream.stream,
    stream.status,
    `${formatCount(stream.windowsDone)}/${formatCount(stream.windowsTotal)}`,
    formatCount(stream.rows),
    stream.committedUntil ?? '-',
  ]);
  if (rows.length > 0) lines.push(...formatTextTable(header, rows, { alignRight: header.map((name) => name === 'windows' || name === 'rows read') }));
  return lines;
}
