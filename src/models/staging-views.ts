import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Database } from '../store/database.ts';

/** The folder of the SQL models. */
export const SQL_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../sql');

/**
 * (Re)creates the staging models as views: one `select` per file in sql/staging, view name =
 * file name. Views read the raw tables live, so staging is current right after every sync.
 */
export async function createStagingViews(db: Database): Promise<string[]> {
  const folder = path.join(SQL_DIR, 'staging');
  const names: string[] = [];
  for (const file of readdirSync(folder).filter((name) => name.endsWith('.sql')).sort()) {
    const name = file.slice(0, -'.sql'.length);
    const sql = readFileSync(path.join(folder, file), 'utf8');
    await db.run(`CREATE OR REPLACE VIEW staging.${name} AS\n${sql}`);
    names.push(name);
  }
  return names;
}
