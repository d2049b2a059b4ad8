import path from 'node:path';
import type { Config } from '../config/config.ts';
import { modelPage, renderSite, sourcePage } from '../docs/render-site.ts';
import { collectSiteData, type SiteData } from '../docs/site-data.ts';
import { requireSiteFolder, writeSite } from '../docs/write-site.ts';
import { readCheckResults } from '../models/check-results.ts';
import { loadProject, SQL_DIR } from '../models/project.ts';
import { whilePending } from '../pending-work.ts';
import { Database } from '../store/database.ts';
import { requireDatabase } from './paths.ts';

/** What to write. */
export interface DocsRequest {
  /** The site's folder (replaced whole). */
  out: string;
}

/** What `exledger docs` wrote. */
export interface DocsResult {
  /** The site's folder. */
  path: string;
  /** HTML pages written (the index, one per model and one per raw table). */
  pages: number;
  models: number;
  /** Tests by their last recorded result (`not-run`: no result for them). */
  tests: Record<'pass' | 'fail' | 'error' | 'not-run', number>;
  /** The check results file read, and whether there was one. */
  checkResults: { file: string; found: boolean };
  ms: number;
}

/**
 * The docs job: a static documentation site of the SQL project (after `dbt docs generate`), from
 * the project's files, the database opened read-only (types, comments, row counts) and the last
 * check's results. The folder and the database are checked before anything is read or written.
 */
export async function docsJob(config: Readonly<Config>, request: DocsRequest): Promise<DocsResult> {
  const started = performance.now();
  requireDatabase(config.db);
  requireSiteFolder(request.out, '--out');
  const project = loadProject();
  const lastCheck = readCheckResults(config.db);
  const db = await Database.open(config.db, { readOnly: true, memoryLimit: config.memoryLimit });
  let site: SiteData;
  try {
    site = await whilePending(`docs: reading the models of ${config.db}`, () => collectSiteData(db, project, lastCheck, path.dirname(SQL_DIR)));
  } finally {
    db.close();
  }
  const files = renderSite(site);
  const counts = { pass: 0, fail: 0, error: 0, 'not-run': 0 };
  for (const test of site.tests) counts[test.last?.status ?? 'not-run'] += 1;
  const mark = {
    version: 1,
    generatedAt: site.generatedAt,
    database: site.database,
    checkResults: site.check,
    models: site.models.map((model) => ({ id: model.id, page: modelPage(model.id), declared: model.declared, rows: model.rows, builtAt: model.builtAt })),
    sources: site.sources.map((source) => ({ id: source.id, page: sourcePage(source.id), rows: source.rows })),
  };
  await whilePending(`docs: writing ${request.out}`, () => writeSite(request.out, files, mark));
  return {
    path: path.resolve(request.out),
    pages: [...files.keys()].filter((file) => file.endsWith('.html')).length,
    models: site.models.length,
    tests: counts,
    checkResults: { file: lastCheck.file, found: lastCheck.kind === 'recorded' },
    ms: performance.now() - started,
  };
}
