import { existsSync } from 'node:fs';
import { ConfigError } from '../errors.ts';
import { Database } from '../store/database.ts';
import { readStatus } from '../store/stream-status.ts';
import { defineCommand } from './command.ts';
import { configFromArgs, withConfigOptions } from './config-options.ts';
import { EXIT } from './exit-codes.ts';

/** `exledger status`. */
export const statusCommand = defineCommand({
  command: 'status',
  describe: 'Show, per stream: rows stored, how far it is synced, the last run and its last error',
  builder: (yargs) => withConfigOptions(yargs).option('json', { type: 'boolean', default: false, describe: 'Print JSON instead of a table' }),
  handler: async (args) => {
    const config = configFromArgs(args);
    if (!existsSync(config.db)) throw new ConfigError(config.db, 'no database here yet', { hint: 'run exledger sync first, or point --db / EXLEDGER_DB at the database' });
    const db = await Database.open(config.db, { readOnly: true });
    try {
      const statuses = await readStatus(db);
      if (args.json) {
        console.log(JSON.stringify(statuses, null, 2));
        return EXIT.ok;
      }
      const header = ['account', 'stream', 'rows', 'partitions', 'synced until', 'last run', 'status', 'last error'];
      const rows = statuses.map((s) => [s.account, s.stream, String(s.rows), String(s.partitions), s.coveredUntil ?? '-', s.lastRunAt ?? '-', s.lastStatus ?? '-', s.lastError ?? '']);
      const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
      for (const row of [header, ...rows]) console.log(row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd());
      return EXIT.ok;
    } finally {
      db.close();
    }
  },
});
