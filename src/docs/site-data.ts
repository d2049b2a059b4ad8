import path from 'node:path';
import type { LastCheck, RecordedTestResult } from '../models/check-results.ts';
import { rawInputs } from '../models/incremental.ts';
import { LAYERS, MATERIALIZATION, type Layer, type Project } from '../models/project.ts';
import { splitColumnComment } from '../store/comments.ts';
import type { Database } from '../store/database.ts';
import { quoteIdentifier } from '../store/sql-text.ts';

/**
 * What the documentation site shows, gathered once: the SQL project (models, declarations,
 * tests, references) and the database (read-only: types, comments, row counts, when each model
 * was built), with the last check's results. A model without a declaration is there too, with
 * its columns as the database has them.
 */

/** One column of a model: declared, built, or both. */
export interface SiteColumn {
  name: string;
  /** Its DuckDB type in the database; null when the model is not built or lacks it. */
  type: string | null;
  /** From the declaration, else the database's comment; null when neither has one. */
  description: string | null;
  unit: string | null;
  /** Whether the declaration lists it (false for every column of an undeclared model). */
  declared: boolean;
  /** Whether it is part of the declared key. */
  key: boolean;
}

/** A test of a model, with its last result. */
export interface SiteTest {
  /** `<layer>/<name>`. */
  id: string;
  kind: 'generic' | 'singular';
  /** Where it is written, relative to the repository (its .sql file, or the declaration). */
  file: string;
  sql: string;
  /** The models it reads. */
  references: readonly string[];
  /** Its result in the last recorded check; null when that check did not run it (or none ran). */
  last: RecordedTestResult | null;
}

/** One model's page. */
export interface SiteModel {
  /** `<layer>.<name>`. */
  id: string;
  layer: Layer;
  name: string;
  materialization: 'view' | 'table';
  /** Its SQL file, relative to the repository. */
  file: string;
  sql: string;
  declared: boolean;
  /** From the declaration, else the database's comment. */
  description: string | null;
  grain: string | null;
  key: readonly string[];
  /** Its declared tags (`--select tag:fees`). */
  tags: readonly string[];
  columns: SiteColumn[];
  /** Rows in the database; null when it is not built. */
  rows: number | null;
  /** When it was last built (settings.model_builds), ISO 8601 UTC; null when unknown. */
  builtAt: string | null;
  /** The models it reads, and the models that read it (ids). */
  upstream: readonly string[];
  downstream: string[];
  /** The raw tables it reads (`raw.<stream>`; staging models only), where the lineage starts. */
  sources: readonly string[];
  tests: SiteTest[];
}

/**
 * A raw table (`raw.<stream>`): what the exchange sent, as the sync stored it, and the start of the
 * lineage. Its description and its columns' are the comments the sync wrote from the stream's
 * declaration (pipelines/, src/store/raw-store.ts rawTableDescription).
 */
export interface SiteSource {
  /** `raw.<stream>`. */
  id: string;
  name: string;
  /** The table's comment; null when the database has none (or not the table). */
  description: string | null;
  /** Its columns as the database has them (none when the table is not there: never synced). */
  columns: SiteColumn[];
  /** Rows in the database; null when the table is not there. */
  rows: number | null;
  /** The staging models that read it (ids). */
  downstream: string[];
}

/** The last check, as the site shows it. */
export type SiteCheck =
  | { kind: 'none'; file: string }
  | { kind: 'unreadable'; file: string; reason: string }
  /** `published`: the results were published with this copy of the database checked (publishCheckResults). */
  | { kind: 'recorded'; file: string; database: string; finishedAt: string; sameDatabase: boolean; published: boolean };

/** Everything the site shows. */
export interface SiteData {
  /** ISO 8601 UTC. */
  generatedAt: string;
  /** The database read (absolute path). */
  database: string;
  check: SiteCheck;
  /** Every model of the project, by layer then name. */
  models: SiteModel[];
  /** The raw tables the staging models read (and any other in the database), by name. */
  sources: SiteSource[];
  /** Every test of the project (a model's page lists those that read it), by layer then name. */
  tests: SiteTest[];
}

const layerList = LAYERS.map((layer) => `'${layer}'`).join(', ');

/** Gathers the site's data from the project, the database (opened read-only by the caller) and the last check. */
export async function collectSiteData(db: Database, project: Project, lastCheck: LastCheck, repository: string): Promise<SiteData> {
  const relations = await db.all<{ schema: string; name: string; comment: string | null }>(
    `SELECT schema_name AS schema, table_name AS name, comment FROM duckdb_tables() WHERE database_name = current_database() AND schema_name IN (${layerList})
     UNION ALL
     SELECT schema_name, view_name, comment FROM duckdb_views() WHERE database_name = current_database() AND schema_name IN (${layerList}) AND NOT internal`,
  );
  const builtRelations = new Map(relations.map((relation) => [`${relation.schema}.${relation.name}`, relation]));
  const columnRows = await db.all<{ schema: string; name: string; column: string; type: string; comment: string | null }>(
    `SELECT schema_name AS schema, table_name AS name, column_name AS "column", data_type AS type, comment
     FROM duckdb_columns() WHERE database_name = current_database() AND schema_name IN (${layerList}) ORDER BY schema_name, table_name, column_index`,
  );
  const builtColumns = new Map<string, typeof columnRows>();
  for (const row of columnRows) {
    const id = `${row.schema}.${row.name}`;
    builtColumns.set(id, [...(builtColumns.get(id) ?? []), row]);
  }
  const builds = new Map<string, string>();
  const hasBuilds = await db.all("SELECT 1 FROM information_schema.tables WHERE table_schema = 'settings' AND table_name = 'model_builds'");
  if (hasBuilds.length > 0) {
    for (const row of await db.all<{ model: string; built_at: string }>("SELECT model, strftime(built_at, '%Y-%m-%dT%H:%M:%S.%gZ') AS built_at FROM settings.model_builds")) builds.set(row.model, row.built_at);
  }

  const recorded = lastCheck.kind === 'recorded' ? new Map(lastCheck.results.results.map((result) => [result.id, result])) : new Map<string, RecordedTestResult>();
  const relative = (file: string) => path.relative(repository, path.resolve(file));
  const tests: SiteTest[] = project.tests.map((test) => ({
    id: test.id,
    kind: test.file.endsWith('.sql') ? 'singular' : 'generic',
    file: relative(test.file),
    sql: test.sql,
    references: test.references,
    last: recorded.get(test.id) ?? null,
  }));
  const models: SiteModel[] = [];
  for (const model of [...project.models].sort((a, b) => LAYERS.indexOf(a.layer) - LAYERS.indexOf(b.layer) || a.name.localeCompare(b.name))) {
    const declaration = model.declaration;
    const relation = builtRelations.get(model.id);
    const built = builtColumns.get(model.id) ?? [];
    const declaredColumns: SiteColumn[] = (declaration?.columns ?? []).map((column) => ({
      name: column.name,
      type: built.find((candidate) => candidate.column === column.name)?.type ?? null,
      description: column.description,
      unit: column.unit ?? null,
      declared: true,
      key: declaration!.key.includes(column.name),
    }));
    const undeclaredColumns: SiteColumn[] = built
      .filter((column) => !declaredColumns.some((declared) => declared.name === column.column))
      .map((column) => ({ name: column.column, type: column.type, description: column.comment, unit: null, declared: false, key: false }));
    let rows: number | null = null;
    if (relation !== undefined) {
      const [{ n }] = (await db.all<{ n: string }>(`SELECT count(*) AS n FROM ${quoteIdentifier(model.layer)}.${quoteIdentifier(model.name)}`)) as [{ n: string }];
      rows = Number(n);
    }
    models.push({
      id: model.id,
      layer: model.layer,
      name: model.name,
      materialization: MATERIALIZATION[model.layer],
      file: relative(model.file),
      sql: model.sql,
      declared: declaration !== undefined,
      description: declaration?.description ?? relation?.comment ?? null,
      grain: declaration?.grain ?? null,
      key: declaration?.key ?? [],
      tags: declaration?.tags ?? [],
      columns: [...declaredColumns, ...undeclaredColumns],
      rows,
      builtAt: builds.get(model.id) ?? null,
      upstream: model.references,
      downstream: [],
      sources: rawInputs(model).tables.map((table) => `raw.${table}`),
      tests: tests.filter((test) => test.references.includes(model.id)),
    });
  }
  const byId = new Map(models.map((model) => [model.id, model]));
  for (const model of models) for (const upstream of model.upstream) byId.get(upstream)?.downstream.push(model.id);
  for (const model of models) model.downstream.sort();
  const sources = await collectSources(db, models);

  const check: SiteCheck =
    lastCheck.kind === 'recorded'
      ? {
          kind: 'recorded',
          file: lastCheck.file,
          database: lastCheck.results.database,
          finishedAt: lastCheck.results.finishedAt,
          sameDatabase: [lastCheck.results.database, lastCheck.results.publishedAs].some((checked) => checked !== undefined && path.resolve(checked) === path.resolve(db.location)),
          published: lastCheck.results.publishedAs !== undefined && path.resolve(lastCheck.results.publishedAs) === path.resolve(db.location),
        }
      : lastCheck;
  return { generatedAt: new Date().toISOString(), database: path.resolve(db.location), check, models, sources, tests };
}

/** The raw tables: those the models read, and those the database has; with their comments and row counts. */
async function collectSources(db: Database, models: readonly SiteModel[]): Promise<SiteSource[]> {
  const tables = await db.all<{ name: string; comment: string | null }>("SELECT table_name AS name, comment FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'raw'");
  const columns = await db.all<{ name: string; column: string; type: string; comment: string | null }>(
    `SELECT table_name AS name, column_name AS "column", data_type AS type, comment FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = 'raw' ORDER BY table_name, column_index`,
  );
  const ids = new Set([...models.flatMap((model) => model.sources), ...tables.map((table) => `raw.${table.name}`)]);
  const sources: SiteSource[] = [];
  for (const id of [...ids].sort()) {
    const name = id.slice('raw.'.length);
    const table = tables.find((candidate) => candidate.name === name);
    let rows: number | null = null;
    if (table !== undefined) {
      const [{ n }] = (await db.all<{ n: string }>(`SELECT count(*) AS n FROM raw.${quoteIdentifier(name)}`)) as [{ n: string }];
      rows = Number(n);
    }
    sources.push({
      id,
      name,
      description: table?.comment || null,
      columns: columns
        .filter((column) => column.name === name)
        .map((column) => {
          const comment = column.comment === null || column.comment === '' ? null : splitColumnComment(column.comment);
          return { name: column.column, type: column.type, description: comment?.description ?? null, unit: comment?.unit ?? null, declared: true, key: false };
        }),
      rows,
      downstream: models.filter((model) => model.sources.includes(id)).map((model) => model.id),
    });
  }
  return sources;
}
