import { archiveJob, describeArchive } from '../jobs/archive-job.ts';
import { defineCommand } from './command.ts';
import { configOverrides, withConfigOptions } from './config-options.ts';
import { EXIT } from './exit-codes.ts';
import { formatArchivedPart } from './result-text.ts';

/** `exledger archive`. */
export const archiveCommand = defineCommand({
  command: 'archive',
  stopsOnSignal: true,
  describe: 'Append what the raw tables gained or changed since the last archive to archive.dir (Parquet by stream, account and month, a manifest of checksums; all or nothing); exledger run does it after each sync',
  builder: (yargs) => withConfigOptions(yargs),
  config: (args) => configOverrides(args),
  handler: async (_args, { config, output, signal }) => {
    const result = await archiveJob(config, { signal, onPart: (part, index, total) => part.how !== 'unchanged' && output.detail(formatArchivedPart(part, index, total)) });
    output.summary(`archive ${result.archiveId}: ${describeArchive(result)}`);
    return {
      exitCode: EXIT.ok,
      details: { archiveId: result.archiveId, dir: result.dir, first: result.first, rawChangeSeq: result.rawChangeSeq, written: result.written, superseded: result.superseded, leftovers: result.leftovers, tables: result.tables, parts: result.parts.filter((part) => part.how !== 'unchanged') },
    };
  },
});
