import { STREAMS } from '../../pipelines/index.ts';
import { syncJob, type SyncOutcome } from '../jobs/sync-job.ts';
import { defineCommand } from './command.ts';
import { configOverrides, withAccountsOption, withConfigOptions } from './config-options.ts';
import { formatSyncSummary, syncExitCode, syncJson } from './result-text.ts';

/** `exledger sync`. */
export const syncCommand = defineCommand({
  command: 'sync',
  stopsOnSignal: true,
  describe: 'Pull new exchange history and snapshots into DuckDB (incremental; safe to kill and rerun)',
  builder: (yargs) =>
    withAccountsOption(withConfigOptions(yargs))
      .option('since', { type: 'string', describe: 'Backfill from this day (YYYY-MM-DD, UTC) instead of each stream\'s cursor' })
      .option('until', { type: 'string', describe: 'Read up to this day (YYYY-MM-DD, UTC, exclusive) [default: now]' })
      .option('streams', { type: 'string', describe: `Only these streams, comma-separated: ${STREAMS.map((stream) => stream.name).join(', ')}` })
      .option('spot-symbols', { type: 'string', describe: 'Spot symbols to read, comma-separated (e.g. BTCUSDT_SPBL) [default: discovered]' })
      .option('full-refresh', { type: 'boolean', default: false, describe: 'Forget what was synced for the chosen streams and start over' }),
  config: (args) => ({ ...configOverrides(args), accounts: args.accounts }),
  handler: async (args, { config, output, signal }) => {
    const progress = output.syncProgress();
    let outcome: SyncOutcome;
    try {
      outcome = await syncJob(config, STREAMS, { since: args.since, until: args.until, streams: args.streams, spotSymbols: args.spotSymbols, fullRefresh: args.fullRefresh }, { progress, signal });
    } finally {
      progress.stop();
    }
    output.summary(formatSyncSummary(outcome));
    // On stderr too, so a scheduler's log (or cron's mail) says the sync did not finish.
    if (outcome.status === 'interrupted') output.error(`error: ${signal.aborted ? (signal.reason as Error).message : 'interrupted'}: the sync stopped; what it read is committed\n  fix: run exledger sync again: it continues from there`);
    else if (outcome.status === 'failed') output.error('error: the sync failed for every stream: see the errors under the table above');
    return { exitCode: syncExitCode(outcome.status), details: syncJson(outcome) };
  },
});
