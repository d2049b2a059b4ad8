import path from 'node:path';
import { STREAMS } from '../../pipelines/index.ts';
import { formatCount } from '../count-text.ts';
import { restoreJob } from '../jobs/restore-job.ts';
import { defineCommand } from './command.ts';
import { configOverrides, withConfigOptions } from './config-options.ts';
import { EXIT } from './exit-codes.ts';
import { displayPath } from './result-text.ts';
import { formatTextTable } from './text-table.ts';

/** `exledger restore`. */
export const restoreCommand = defineCommand({
  command: 'restore',
  describe: 'Build a new database (--db, which must not exist) from an archive (--from): raw tables, cursors and signed periods, every file checked against its SHA-256 first; then exledger build',
  builder: (yargs) => withConfigOptions(yargs).option('from', { type: 'string', demandOption: true, describe: 'The archive folder (archive.dir of the database it was made from)' }),
  config: (args) => configOverrides(args),
  handler: async (args, { config, output }) => {
    const result = await restoreJob(config, STREAMS, args.from, {
      // A line per 100 files checked (and the last): an archive of years has thousands.
      onVerified: (_file, index, total) => (index % 100 === 0 || index === total) && output.progress(`restore: ${formatCount(index)} of ${formatCount(total)} files match their SHA-256`),
    });
    const rows = result.tables.filter((table) => table.rows > 0 || table.table.startsWith('raw.'));
    output.summary(`restored ${displayPath(result.db)} from ${path.resolve(args.from)} (archive ${result.archiveId} of ${result.archivedAt}): ${formatCount(result.files)} files, each matching its SHA-256`);
    output.summary(
      formatTextTable(
        ['table', 'rows', 'per account'],
        rows.map((table) => [table.table, formatCount(table.rows), Object.entries(table.accounts).map(([account, count]) => `${account} ${formatCount(count)}`).join(', ')]),
        { alignRight: [false, true, false] },
      ).join('\n'),
    );
    output.summary(`next: exledger build --db ${displayPath(result.db)} (the models are not archived: the build makes them from the raw tables), then point EXLEDGER_DB or "db" at it; the next sync reads on from the restored cursors`);
    return { exitCode: EXIT.ok, details: { db: path.resolve(result.db), from: path.resolve(args.from), archiveId: result.archiveId, archivedAt: result.archivedAt, files: result.files, tables: result.tables } };
  },
});
