import type { Database } from './database.ts';

/**
 * The accounts this database holds: every account a sync has recorded a run or a cursor for
 * (meta.runs, meta.cursors), sorted. A worker's database holds its own accounts only.
 */
export async function readSyncedAccounts(db: Database): Promise<string[]> {
  const rows = await db.all<{ account: string }>('SELECT DISTINCT account FROM meta.runs UNION SELECT DISTINCT account FROM meta.cursors ORDER BY 1');
  return rows.map((row) => row.account);
}
