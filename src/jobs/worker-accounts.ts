import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/config.ts';
import { ConfigError } from '../errors.ts';
import { Database } from '../store/database.ts';
import { readSyncedAccounts } from '../store/synced-accounts.ts';

/**
 * `exledger run --accounts a,b` builds, checks, reports and publishes the whole database, so the
 * database must hold the worker's accounts only: the models and workbooks then cover exactly
 * them. A database that also holds other accounts (synced before the accounts were split) is
 * refused before anything is written, naming them.
 * @throws ConfigError naming the database and the other accounts.
 */
export async function requireWorkerDatabase(config: Readonly<Config>): Promise<void> {
  if (config.selectedAccounts === null || !existsSync(config.db)) return;
  const db = await Database.open(config.db, { readOnly: true, memoryLimit: config.memoryLimit });
  let others: string[];
  try {
    others = (await readSyncedAccounts(db)).filter((account) => !config.selectedAccounts!.includes(account));
  } finally {
    db.close();
  }
  if (others.length > 0) {
    throw new ConfigError(
      '--accounts',
      `the database ${path.resolve(config.db)} also holds ${others.join(', ')}, which --accounts ${config.selectedAccounts.join(',')} leaves out: its models, workbooks and published copy would include them`,
      { hint: 'give this worker a database of its own (--db, EXLEDGER_DB or "db"), or run without --accounts' },
    );
  }
}
