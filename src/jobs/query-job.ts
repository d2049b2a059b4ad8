import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/config.ts';
import { ConfigError } from '../errors.ts';
import { Database } from '../store/database.ts';
import { isPublishedPath, publishedPath } from '../store/publish.ts';
import { runQuery, type QueryResult } from '../store/query.ts';

/**
 * The query job: runs SQL on the published copy of the configured database, read-only (the
 * copy is shared by every analyst and replaced by the nightly run; the live database is never
 * opened, so a query never blocks a sync). A database named as a published copy
 * (`--db data/exledger.published.duckdb`, what an analyst is handed) is that copy itself.
 */
export async function queryJob(config: Readonly<Config>, sql: string): Promise<QueryResult> {
  const published = path.resolve(isPublishedPath(config.db) ? config.db : publishedPath(config.db));
  if (!existsSync(published)) {
    const hint = isPublishedPath(config.db)
      ? 'check the path (--db, EXLEDGER_DB or "db" in the config file): exledger run publishes the copy beside the database'
      : existsSync(config.db)
      ? 'run `exledger run` first, which publishes it'
      : `no database at ${path.resolve(config.db)} either: check --db, EXLEDGER_DB or "db" in the config file`;
    throw new ConfigError(published, 'no published copy of the database here', { hint });
  }
  const db = await Database.open(published, { readOnly: true, memoryLimit: config.memoryLimit });
  try {
    return await runQuery(db, sql);
  } finally {
    db.close();
  }
}
