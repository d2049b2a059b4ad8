import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../errors.ts';
import INTERMEDIATE_DECLARATIONS from '../../sql/intermediate/_models.ts';
import MARTS_DECLARATIONS from '../../sql/marts/_models.ts';
import INT_PRICES from '../../sql/intermediate/int_prices.ts';
import INT_COIN_LOTS from '../../sql/intermediate/int_coin_lots.ts';
import INT_SPOT_AVERAGE_COST from '../../sql/intermediate/int_spot_average_cost.ts';
import INT_SPOT_LOT_SEGMENTS from '../../sql/intermediate/int_spot_lot_segments.ts';
import JOURNAL_ENTRIES from '../../sql/marts/journal_entries.ts';
import PERIOD_ADJUSTMENTS from '../../sql/marts/period_adjustments.ts';
import STAGING_DECLARATIONS from '../../sql/staging/_models.ts';
import { parseChangedConditions, withoutOfLists } from './check-scope.ts';
import { genericTests, validateDeclarations, type LayerDeclaration, type ModelDeclaration } from './declaration.ts';
import type { ProgramModel } from './program-model.ts';

/** The folder of the SQL project: macros/, staging/, intermediate/, marts/ and their tests/. */
export const SQL_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../sql');

/** The model layers, in the order data flows through them (STYLE.md "SQL models"). */
export const LAYERS = ['staging', 'intermediate', 'marts'] as const;
export type Layer = (typeof LAYERS)[number];

/**
 * The repository's model declarations (sql/<layer>/_models.ts), one per layer: every model is
 * declared, so each is checked against its columns and commented, staging tables (at every sync
 * too) as well as tables. A project without declarations (another folder) still builds.
 */
export const REPOSITORY_DECLARATIONS: readonly LayerDeclaration[] = [STAGING_DECLARATIONS, INTERMEDIATE_DECLARATIONS, MARTS_DECLARATIONS];

/**
 * The models computed in TypeScript (sql/<layer>/<name>.ts), by id. They are imported here, as the
 * declarations are, so that loading a project stays synchronous; a project folder (a copy of
 * sql/ too) has such a model where it has its file.
 */
export const PROGRAM_MODELS: ReadonlyMap<string, ProgramModel> = new Map([INT_COIN_LOTS, INT_PRICES, INT_SPOT_AVERAGE_COST, INT_SPOT_LOT_SEGMENTS, JOURNAL_ENTRIES, PERIOD_ADJUSTMENTS].map((model) => [`${model.layer}.${model.name}`, model]));

/**
 * How each layer is materialized: every layer is tables. Staging is parsed from the raw JSON once
 * and kept up to date incrementally (a sync brings it up to date as it ends, src/models/build.ts
 * refreshStaging), so reports and analysts read stored results, and a build parses only new rows.
 */
export const MATERIALIZATION: Readonly<Record<Layer, 'view' | 'table'>> = { staging: 'table', intermediate: 'table', marts: 'table' };

/** One model: one `select` in sql/<layer>/<name>.sql (or a program in sql/<layer>/<name>.ts), materialized as <layer>.<name>. */
export interface Model {
  /** `<layer>.<name>`, the relation it becomes. */
  id: string;
  layer: Layer;
  name: string;
  file: string;
  sql: string;
  /** The models it reads (ids), found from schema-qualified names in its SQL. */
  references: readonly string[];
  /** Its declaration (sql/<layer>/_models.ts), if its layer declares it. */
  declaration?: ModelDeclaration;
  /** For a model computed in TypeScript (sql/<layer>/<name>.ts): the program; its `sql` is then the file's text. */
  program?: ProgramModel;
  /**
   * Its incremental step (sql/<layer>/<name>.incremental.sql): statements that bring its table up
   * to date from temp.main.model_pending (docs/plans/incremental-builds.md, "The contract").
   */
  incrementalSql?: string;
}

/**
 * An SQL test: a query returning the offending rows, either singular (sql/<layer>/tests/<name>.sql)
 * or generic (generated from a model's declaration).
 */
export interface SqlTest {
  /** `<layer>/<name>`. */
  id: string;
  /** The file it is written in: its .sql file, or the declaration it is generated from. */
  file: string;
  sql: string;
  references: readonly string[];
  /** The model whose declaration a generic test is generated from (`<layer>.<name>`); none for a singular test. */
  model?: string;
}

/** A macro file: `create or replace macro` statements in sql/macros/<name>.sql. */
export interface MacroFile {
  id: string;
  file: string;
  sql: string;
}

/** The SQL project, models in build order. */
export interface Project {
  macros: readonly MacroFile[];
  models: readonly Model[];
  tests: readonly SqlTest[];
}

/**
 * Reads the SQL project from `sqlDir` and orders the models so each comes after what it reads.
 * `declarations` default to the repository's for the repository's sql/, to none for another folder.
 */
export function loadProject(sqlDir: string = SQL_DIR, declarations: readonly LayerDeclaration[] = path.resolve(sqlDir) === SQL_DIR ? REPOSITORY_DECLARATIONS : []): Project {
  const macros = sqlFiles(path.join(sqlDir, 'macros')).map((file) => ({ id: `macros/${baseName(file)}`, file, sql: readFileSync(file, 'utf8') }));
  const models: Model[] = [];
  const tests: SqlTest[] = [];
  for (const layer of LAYERS) {
    for (const file of sqlFiles(path.join(sqlDir, layer))) {
      const sql = readFileSync(file, 'utf8');
      const id = `${layer}.${baseName(file)}`;
      const incrementalFile = file.replace(/\.sql$/, '.incremental.sql');
      const incrementalSql = existsSync(incrementalFile) ? readFileSync(incrementalFile, 'utf8') : undefined;
      models.push({
        id,
        layer,
        name: baseName(file),
        file,
        sql,
        references: findReferences(sql).filter((reference) => reference !== id),
        ...(incrementalSql === undefined ? {} : { incrementalSql }),
      });
    }
    for (const file of programFiles(path.join(sqlDir, layer))) {
      const name = path.basename(file, '.ts');
      const id = `${layer}.${name}`;
      const program = PROGRAM_MODELS.get(id);
      if (program === undefined) throw projectError(file, `is not a known TypeScript model (they are listed in src/models/project.ts PROGRAM_MODELS); a helper file's name starts with _`);
      models.push({ id, layer, name, file, sql: readFileSync(file, 'utf8'), references: [...program.references], program });
    }
    for (const file of sqlFiles(path.join(sqlDir, layer, 'tests'))) {
      const sql = readFileSync(file, 'utf8');
      // A malformed {{ changed(…) }} is found here, not by the first check of what changed.
      const conditions = parseChangedConditions(sql, path.relative(process.cwd(), file));
      const references = findReferences(withoutOfLists(sql));
      const unread = conditions.flatMap((condition) => condition.of ?? []).find((model) => !references.includes(model));
      if (unread !== undefined) throw projectError(file, `{{ changed(of: …) }} names ${unread}, which the test does not read: only the models it reads have changes to select by`);
      tests.push({ id: `${layer}/${baseName(file)}`, file, sql, references });
    }
  }
  const declarationFile = (layer: string) => path.relative(process.cwd(), path.join(sqlDir, layer, '_models.ts'));
  const declared = validateDeclarations(declarations, new Set(models.map((model) => model.id)), declarationFile);
  for (const model of models) {
    const declaration = declared.get(model.id);
    if (declaration !== undefined) model.declaration = declaration;
  }
  for (const [id, declaration] of declared) {
    for (const test of genericTests(id, declaration)) tests.push({ ...test, model: id, file: declarationFile(id.split('.')[0]!) });
  }
  // Singular and generic tests together, by layer then name.
  tests.sort((a, b) => LAYERS.indexOf(a.id.split('/')[0] as Layer) - LAYERS.indexOf(b.id.split('/')[0] as Layer) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { macros, models: orderModels(models), tests };
}

/** The model ids an SQL text names (`staging.x`, `intermediate.x`, `marts.x`), comments ignored. */
export function findReferences(sql: string): string[] {
  const code = sql.replace(/--[^\n]*/g, '').replace(/\/\*[\s\S]*?\*\//g, '').replace(/'(?:[^']|'')*'/g, "''");
  const found = new Set<string>();
  for (const match of code.matchAll(/\b(staging|intermediate|marts)\.([a-z_][a-z0-9_]*)\b/gi)) found.add(`${match[1]!.toLowerCase()}.${match[2]!.toLowerCase()}`);
  return [...found].sort();
}

/**
 * Orders models so each follows every model it references (depth-first, ties by layer then
 * name, so the order is stable). A reference to a model with no file, a layer reading a later
 * layer, or a cycle is an error naming the file to fix.
 */
export function orderModels(models: readonly Model[]): Model[] {
  const byId = new Map(models.map((model) => [model.id, model]));
  for (const model of models) {
    for (const reference of model.references) {
      const target = byId.get(reference);
      if (target === undefined) throw projectError(model.file, `reads ${reference}, which no file in sql/ defines`);
      if (LAYERS.indexOf(target.layer) > LAYERS.indexOf(model.layer)) throw projectError(model.file, `reads ${reference}, a later layer (data flows staging → intermediate → marts)`);
    }
  }
  const ordered: Model[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (model: Model, trail: readonly string[]): void => {
    const seen = state.get(model.id);
    if (seen === 'done') return;
    if (seen === 'visiting') throw projectError(model.file, `is part of a reference cycle: ${[...trail.slice(trail.indexOf(model.id)), model.id].join(' → ')}`);
    state.set(model.id, 'visiting');
    for (const reference of model.references) visit(byId.get(reference)!, [...trail, model.id]);
    state.set(model.id, 'done');
    ordered.push(model);
  };
  const sorted = [...models].sort((a, b) => LAYERS.indexOf(a.layer) - LAYERS.indexOf(b.layer) || a.name.localeCompare(b.name));
  for (const model of sorted) visit(model, []);
  return ordered;
}

/** A broken SQL project is bad input: the error names the file to fix. */
function projectError(file: string, message: string): ConfigError {
  return new ConfigError(path.relative(process.cwd(), file), message);
}

function sqlFiles(folder: string): string[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder, { withFileTypes: true })
    // <name>.incremental.sql is a model's incremental step (docs/plans/incremental-builds.md), not a model.
    .filter((entry) => entry.isFile() && entry.name.endsWith('.sql') && !entry.name.endsWith('.incremental.sql'))
    .map((entry) => path.join(folder, entry.name))
    .sort();
}

/** TypeScript models of a layer folder: .ts files, except declarations and helpers (_models.ts). */
function programFiles(folder: string): string[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder, { withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.startsWith('_'))
    .map((entry) => path.join(folder, entry.name))
    .sort();
}

function baseName(file: string): string {
  return path.basename(file, '.sql');
}
