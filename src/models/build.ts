import path from 'node:path';
import { DiskFullError } from '../errors.ts';
import type { Database } from '../store/database.ts';
import { SET_WRITE_COMPRESSION } from '../store/storage-settings.ts';
import { columnDisagreement, commentStatements, type LayerDeclaration } from './declaration.ts';
import { loadProject, MATERIALIZATION, SQL_DIR, type MacroFile, type Model } from './project.ts';
import { applyStagingChanges, changesAfter, ensureStateTables, explainedByLog, fingerprints, lastRawChange, loadPending, passOn, pendingOf, pruneChanges, rawInputs, rawRowCount, readState, recordChanges, settingsDigests, writeState } from './incremental.ts';
import { selectModels } from './select.ts';
import { otherBuildSettings, recordModelBuild, writeSettings, type ModelSettings } from './settings.ts';

/** What happened to one model (kysely's migrator style: a result per step, no throw halfway). */
export interface ModelResult {
  /** `<layer>.<name>`, or `macros/<file>` for a macro file. */
  id: string;
  materialization: 'view' | 'table' | 'macro';
  status: 'ok' | 'failed' | 'skipped';
  /**
   * How an ok model was brought up to date: rebuilt whole, changed incrementally (only what its
   * inputs' changes touched), or left as it was (nothing it reads changed).
   */
  how?: 'whole' | 'incremental' | 'unchanged';
  /** Why it was rebuilt whole. */
  why?: string;
  /** Wall time of its statement, ms (0 when skipped). */
  ms: number;
  /** Rows in the table after the build (tables only). */
  rows?: number;
  /** Why it failed, or which failed model it was skipped for. */
  message?: string;
}

/** Options of buildModels. */
export interface BuildOptions {
  /** The SQL project folder. @default the repository's sql/ */
  sqlDir?: string;
  /** The models' declarations. @default the repository's for its sql/, none for another folder */
  declarations?: readonly LayerDeclaration[];
  /** Selectors of the models to build (src/models/select.ts: `+marts.fees_monthly`, `tag:spot`, …). @default every model */
  select?: readonly string[];
  /** Selectors of models not to build. @default none */
  exclude?: readonly string[];
  /** Rebuild every selected model whole, whatever changed (build --full-refresh). @default false */
  fullRefresh?: boolean;
  /** Called as each model finishes, for progress lines. */
  onResult?: (result: ModelResult, index: number, total: number) => void;
  /**
   * Once aborted, no further model starts: the build throws the signal's reason (an
   * InterruptedError) before the next one; every model built before it stays. @default none
   */
  signal?: AbortSignal;
}

/**
 * Builds every model (or the selected ones) in dependency order: macros, then the settings
 * tables, then staging, intermediate and marts tables. Each model is brought up to date in its own
 * transaction, together with the row of settings.model_builds that says which settings built it,
 * so a model that fails leaves its previous table readable and described; the models that read it
 * are skipped (and keep their previous tables too). A selected model that reads a model not
 * selected reads its existing table or view, which must be there and, for a table, built with
 * this build's settings (else the model fails naming what to build), so its settings row never
 * describes inputs built otherwise. Returns a result per model built.
 * @throws ConfigError for a selector that is malformed or matches nothing, before anything is written.
 */
export async function buildModels(db: Database, settings: ModelSettings, options: BuildOptions = {}): Promise<ModelResult[]> {
  const project = loadProject(options.sqlDir ?? SQL_DIR, ...(options.declarations === undefined ? [] : [options.declarations]));
  const models = selectModels(project, options.select ?? [], options.exclude ?? []);
  const total = project.macros.length + models.length;
  const results: ModelResult[] = [];
  const report = (result: ModelResult) => {
    results.push(result);
    options.onResult?.(result, results.length, total);
  };

  await db.run('CREATE SCHEMA IF NOT EXISTS staging; CREATE SCHEMA IF NOT EXISTS intermediate; CREATE SCHEMA IF NOT EXISTS marts;');
  await writeSettings(db, settings).catch((error: unknown) => {
    throw error instanceof DiskFullError ? error.during('recording the build settings (settings.reporting)', BUILD_KEPT) : error;
  });
  await ensureStateTables(db);
  await pruneChanges(db);
  const context: BuildContext = {
    settings,
    fingerprints: fingerprints(project.models, project.macros, await settingsDigests(db)),
    readers: readersOf(project.models),
    fullRefresh: options.fullRefresh === true,
    relations: await relationsOf(db),
  };
  const restoreStorage = await useBuildStorageSettings(db);
  try {
    await buildProject(db, project.macros, models, new Map(project.models.map((model) => [model.id, model])), context, report, options.signal);
  } finally {
    // After a full disk every statement fails with that same error: the build's own one is told.
    await restoreStorage().catch((error: unknown) => {
      if (db.diskFullError === undefined) throw error;
    });
  }
  return results;
}

/**
 * Storage settings for the build's tables (src/store/storage-settings.ts: bitpacking left out),
 * undone afterwards (the connection may serve other work).
 */
async function useBuildStorageSettings(db: Database): Promise<() => Promise<void>> {
  const [previous] = await db.all<{ value: string }>("SELECT current_setting('disabled_compression_methods') AS value");
  await db.run(SET_WRITE_COMPRESSION);
  return async () => {
    await db.run(`SET disabled_compression_methods = '${(previous?.value ?? '').replace(/'/g, "''")}'`);
  };
}

/** What every model of one build shares. */
interface BuildContext {
  /** The build's settings; none for refreshStaging (staging reads no setting, and records none). */
  settings?: ModelSettings;
  fingerprints: ReadonlyMap<string, string>;
  /** The models that read each model, by id (the whole project's, selected or not). */
  readers: ReadonlyMap<string, readonly string[]>;
  fullRefresh: boolean;
  /**
   * The models' relations as the build found them (`layer.name`: a table or a view), read once:
   * only a model's own build creates or replaces its relation, after its plan has read this.
   */
  relations: ReadonlyMap<string, 'table' | 'view'>;
}

/** Every table and view of the models' layers, by `schema.name` (one query instead of one per model). */
async function relationsOf(db: Database): Promise<Map<string, 'table' | 'view'>> {
  const rows = await db.all<{ id: string; kind: 'table' | 'view' }>(
    `SELECT schema_name || '.' || table_name AS id, 'table' AS kind FROM duckdb_tables() WHERE database_name = current_database() AND schema_name IN ('staging', 'intermediate', 'marts')
     UNION ALL
     SELECT schema_name || '.' || view_name, 'view' FROM duckdb_views() WHERE database_name = current_database() AND schema_name IN ('staging', 'intermediate', 'marts')`,
  );
  return new Map(rows.map((row) => [row.id, row.kind]));
}

function readersOf(models: readonly Model[]): Map<string, string[]> {
  const readers = new Map<string, string[]>(models.map((model) => [model.id, []]));
  for (const model of models) for (const reference of model.references) readers.get(reference)?.push(model.id);
  return readers;
}

async function buildProject(
  db: Database,
  macros: readonly MacroFile[],
  models: readonly Model[],
  byId: ReadonlyMap<string, Model>,
  context: BuildContext,
  report: (result: ModelResult) => void,
  signal?: AbortSignal,
): Promise<void> {
  for (const macro of macros) {
    const started = performance.now();
    try {
      await db.transaction(() => db.run(macro.sql));
      report({ id: macro.id, materialization: 'macro', status: 'ok', ms: performance.now() - started });
    } catch (error) {
      if (error instanceof DiskFullError) throw error.during(`building ${macro.id}`, BUILD_KEPT);
      report({ id: macro.id, materialization: 'macro', status: 'failed', ms: performance.now() - started, message: firstLine(error) });
    }
  }

  const failed = new Map<string, string>();
  const building = new Set(models.map((model) => model.id));
  for (const model of models) {
    signal?.throwIfAborted();
    const blocker = model.references.find((reference) => failed.has(reference));
    if (blocker !== undefined) {
      failed.set(model.id, blocker);
      report({ id: model.id, materialization: MATERIALIZATION[model.layer], status: 'skipped', ms: 0, message: `reads ${blocker}, which ${failed.get(blocker) === blocker ? 'failed' : 'was not built'}` });
      continue;
    }
    const unusable = context.settings === undefined ? undefined : await unusableUpstream(db, model, byId, building, context.settings);
    if (unusable !== undefined) {
      failed.set(model.id, model.id);
      report({ id: model.id, materialization: MATERIALIZATION[model.layer], status: 'failed', ms: 0, message: unusable });
      continue;
    }
    report(await buildModel(db, model, context, () => failed.set(model.id, model.id)));
  }
}

/**
 * Why a model of a partial build cannot read a model this build does not rebuild, if it cannot:
 * its relation is missing, or it is a table built with other settings (or with no record of
 * them), whose figures this model's settings row would misdescribe. A view is read live, so only
 * its presence matters.
 */
async function unusableUpstream(db: Database, model: Model, byId: ReadonlyMap<string, Model>, building: ReadonlySet<string>, settings: ModelSettings): Promise<string | undefined> {
  const fix = `build it too (--select +${model.id}) or run exledger build`;
  for (const reference of model.references) {
    if (building.has(reference)) continue;
    const upstream = byId.get(reference)!;
    const present = await db.all('SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = $2', [upstream.layer, upstream.name]);
    if (present.length === 0) return `reads ${reference}, which is not in this database: ${fix}`;
    // Staging reads no setting (and a sync, which has none, brings it up to date).
    if (upstream.layer === 'staging') continue;
    const other = await otherBuildSettings(db, reference, settings);
    if (other !== undefined) return `reads ${reference}, which ${other}: ${fix}`;
  }
  return undefined;
}

async function buildModel(db: Database, model: Model, context: BuildContext, onFailure: () => void): Promise<ModelResult> {
  const materialization = MATERIALIZATION[model.layer];
  const started = performance.now();
  try {
    const plan = await planModel(db, model, context);
    const rows = await db.transaction(async () => {
      // A table of rows per account and snapshot, rebuilt whole for new snapshots: its readers are
      // told only the rows that are new (snapshots are only ever added), not "everything".
      const snapshotDiff = plan.how === 'whole' && plan.newSnapshots === true;
      if (snapshotDiff) await db.run(`CREATE OR REPLACE TEMP TABLE previous_rows AS SELECT * FROM ${model.id}`);
      // A table of a few rows per account and month (declared `changes` and `handOn: 'changed
      // rows'`) rebuilt whole for what it reads: its readers are told the rows that differ from
      // before, so one that follows the night is not rebuilt whole for it.
      const rowsDiff = !snapshotDiff && plan.how === 'whole' && plan.inputsOnly === true && materialization === 'table' && model.declaration?.handOn === 'changed rows' && model.declaration.changes?.account !== undefined;
      if (rowsDiff) await db.run(`CREATE OR REPLACE TEMP TABLE previous_rows AS SELECT * FROM ${model.id}`);
      // A table rebuilt whole for what it reads (its SQL, settings and columns as before) that was
      // empty and is empty again changed nothing (the books' models without a reporting currency,
      // every night): its readers are told nothing, and no change is recorded.
      const wasEmpty = plan.inputsOnly === true && !snapshotDiff && materialization === 'table' && (await isEmpty(db, model.id));
      if (plan.how === 'whole') await createModel(db, model);
      else if (plan.how === 'incremental') await applyIncremental(db, model, plan);
      const stillEmpty = wasEmpty && (await isEmpty(db, model.id));
      if (stillEmpty) await db.run(`CREATE OR REPLACE TEMP TABLE model_pending (account VARCHAR, symbol VARCHAR, from_at TIMESTAMPTZ)`);
      if (rowsDiff) await changedRows(db, model);
      if (plan.how !== 'unchanged') {
        const handOn = plan.how === 'whole' && !stillEmpty && !rowsDiff && !(snapshotDiff && (await newSnapshotRows(db, model))) ? 'whole' : 'incremental';
        // (bounded changes only from a step that read them: temp.main.model_pending then has to_at)
        const ranges = plan.how === 'incremental' && model.declaration?.changeRanges === true;
        await passOn(db, model.id, context.readers.get(model.id) ?? [], handOn, ranges);
        // What the check of this build's changes reads (exledger check --changed), with the table it describes.
        await recordChanges(db, model.id, handOn, ranges);
        const rawTables = rawInputs(model).tables;
        const lastChangeSeq = plan.how === 'whole' ? await lastRawChange(db) : plan.lastChangeSeq;
        await writeState(db, model.id, context.fingerprints.get(model.id)!, lastChangeSeq, plan.how, rawTables.length === 0 ? null : await rawRowCount(db, rawTables));
      }
      // An unchanged model is what these settings give too (its fingerprint covers every setting it reads).
      if (context.settings !== undefined) await recordModelBuild(db, model.id, context.settings);
      if (materialization === 'view') return undefined;
      return Number((await db.all<{ n: string }>(`SELECT count(*) AS n FROM ${model.id}`))[0]!.n);
    });
    return {
      id: model.id,
      materialization,
      status: 'ok',
      how: plan.how,
      ...(plan.why === undefined ? {} : { why: plan.why }),
      ms: performance.now() - started,
      ...(rows === undefined ? {} : { rows }),
    };
  } catch (error) {
    // A full disk stops the build: every model after it would fail the same way.
    if (error instanceof DiskFullError) throw error.during(`building ${model.id}`, BUILD_KEPT);
    onFailure();
    return { id: model.id, materialization, status: 'failed', ms: performance.now() - started, message: firstLine(error) };
  }
}

/** How a model will be brought up to date, and why (docs/plans/incremental-builds.md, "The contract"). */
interface Plan {
  how: 'whole' | 'incremental' | 'unchanged';
  why?: string;
  /** The last raw change the model will have taken (staging). */
  lastChangeSeq: number;
  /**
   * Rebuilt whole, with rows per account and snapshot (hasSnapshotRows), from inputs that may only
   * have gained snapshots: a snapshot stream's staging table, or a model without an incremental
   * step over snapshots (int_futures_funding_changes). If every previous row is still there, its
   * readers are told only the new rows (newSnapshotRows).
   */
  newSnapshots?: boolean;
  /** Rebuilt whole only because what it reads changed: its fingerprint (SQL, settings, columns) is as before. */
  inputsOnly?: boolean;
  /** The raw changes a staging model takes incrementally. */
  changes?: Awaited<ReturnType<typeof changesAfter>>;
  rawTable?: string;
}

async function planModel(db: Database, model: Model, context: BuildContext): Promise<Plan> {
  const state = await readState(db, model.id);
  const whole = (why: string): Plan => ({ how: 'whole', why, lastChangeSeq: 0 });
  if (context.fullRefresh) return whole('full refresh');
  const existing = context.relations.get(model.id);
  if (state === undefined || existing === undefined || existing === 'view') return whole('first build');
  if (state.fingerprint !== context.fingerprints.get(model.id)) return whole('its SQL, a macro, a setting it reads or a model upstream changed');
  // Raw tables are read by staging (and, in a hand-built project, may be by any model).
  const inputs = rawInputs(model);
  const changes = inputs.tables.length === 0 ? [] : await changesAfter(db, inputs.tables, state.lastChangeSeq);
  if (inputs.tables.length > 0 && !explainedByLog(state, changes, await rawRowCount(db, inputs.tables))) return whole('its raw rows changed without a logged change (written outside a sync)');
  const lastChangeSeq = changes.length === 0 ? state.lastChangeSeq : Number(changes[changes.length - 1]!.change_seq);
  if (inputs.keyed !== undefined && model.references.length === 0) {
    if (changes.length === 0) return { how: 'unchanged', lastChangeSeq };
    return { how: 'incremental', lastChangeSeq, changes, rawTable: inputs.keyed };
  }
  if (changes.length > 0) {
    if (model.layer !== 'staging') return whole('new raw rows');
    return { ...whole('new snapshots'), newSnapshots: changes.every((change) => change.kind === 'snapshot') && (await hasSnapshotRows(db, model)) };
  }
  const pending = await pendingOf(db, model.id);
  if (pending.rows === 0) return { how: 'unchanged', lastChangeSeq };
  if (pending.everything) return { ...whole('a model it reads was rebuilt whole'), inputsOnly: true };
  if (model.incrementalSql === undefined && model.program?.incremental === undefined) {
    // Rows per account and snapshot (a row per pair of consecutive snapshots): a new snapshot adds rows.
    return { ...whole('its inputs changed (it has no incremental step)'), inputsOnly: true, newSnapshots: await hasSnapshotRows(db, model) };
  }
  return { how: 'incremental', lastChangeSeq };
}

/**
 * After a model of rows per account and snapshot was rebuilt (its previous rows in temp
 * previous_rows): whether every previous row is still there (a snapshot is only ever added); if
 * so, temp.main.model_pending gets, per account, the earliest snapshot_at of the new rows, which
 * is all its readers need to know.
 */
async function newSnapshotRows(db: Database, model: Model): Promise<boolean> {
  const [gone] = await db.all<{ n: string }>(`SELECT count(*) AS n FROM (SELECT * FROM temp.main.previous_rows EXCEPT ALL SELECT * FROM ${model.id})`);
  const appended = gone?.n === '0';
  if (appended) {
    await db.run(`CREATE OR REPLACE TEMP TABLE model_pending AS
      SELECT account, CAST(NULL AS VARCHAR) AS symbol, min(snapshot_at) AS from_at
      FROM (SELECT * FROM ${model.id} EXCEPT ALL SELECT * FROM temp.main.previous_rows)
      GROUP BY account`);
  }
  await db.run('DROP TABLE temp.main.previous_rows');
  return appended;
}

/**
 * After a model declaring `handOn: 'changed rows'` was rebuilt (its previous rows in temp
 * previous_rows): temp.main.model_pending gets, per account and symbol of its declared `changes`,
 * the earliest instant of the rows added, changed or gone (a date: the start of its
 * reporting-zone day); nothing when every row is as it was.
 */
async function changedRows(db: Database, model: Model): Promise<void> {
  const changes = model.declaration!.changes!;
  const symbol = changes.symbol === undefined ? 'CAST(NULL AS VARCHAR)' : `"${changes.symbol}"`;
  const fromAt =
    changes.at !== undefined ? `"${changes.at}"` : changes.date !== undefined ? `local_day_start("${changes.date}", (SELECT any_value(time_zone) FROM settings.reporting))` : 'CAST(NULL AS TIMESTAMPTZ)';
  await db.run(`CREATE OR REPLACE TEMP TABLE model_pending AS
    SELECT "${changes.account!}" AS account, ${symbol} AS symbol, CASE WHEN bool_or(from_at IS NULL) THEN NULL ELSE min(from_at) END AS from_at
    FROM (
      SELECT *, ${fromAt} AS from_at FROM (SELECT * FROM temp.main.previous_rows EXCEPT ALL SELECT * FROM ${model.id})
      UNION ALL
      SELECT *, ${fromAt} AS from_at FROM (SELECT * FROM ${model.id} EXCEPT ALL SELECT * FROM temp.main.previous_rows)
    )
    GROUP BY ALL`);
  await db.run('DROP TABLE temp.main.previous_rows');
}

/** Whether a model's table has no rows. */
async function isEmpty(db: Database, table: string): Promise<boolean> {
  const [row] = await db.all<{ n: string }>(`SELECT count(*) AS n FROM (SELECT 1 FROM ${table} LIMIT 1)`);
  return row?.n === '0';
}

/** Whether the model's table has the columns account and snapshot_at (rows per account and snapshot). */
async function hasSnapshotRows(db: Database, model: Model): Promise<boolean> {
  const [found] = await db.all<{ n: string }>(
    "SELECT count(*) AS n FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = $1 AND table_name = $2 AND column_name IN ('account', 'snapshot_at')",
    [model.layer, model.name],
  );
  return found?.n === '2';
}

async function applyIncremental(db: Database, model: Model, plan: Plan): Promise<void> {
  if (plan.rawTable !== undefined) return applyStagingChanges(db, model, plan.rawTable, plan.changes!);
  await loadPending(db, model.id, model.declaration?.changeRanges === true);
  if (model.program?.incremental !== undefined) await db.withMemoryReserved(PROGRAM_HEAP_RESERVE, () => model.program!.incremental!(db));
  else await db.run(expandModelSql(model.incrementalSql!, model));
}

/**
 * An incremental step may run its model's own SQL on other inputs, so the two cannot drift apart:
 * `{{ model(staging.spot_fills -> temp.main.changed_fills, …) }}` stands for the model's SQL with
 * each relation on the left read from the one on the right.
 */
export function expandModelSql(sql: string, model: Model): string {
  return sql.replace(/\{\{\s*model\(([^)]*)\)\s*\}\}/g, (_, pairs: string) => {
    let text = model.sql;
    for (const pair of pairs.split(',')) {
      const [from, to] = pair.split('->').map((part) => part.trim());
      if (from === undefined || to === undefined || from === '' || to === '') throw new Error(`${model.id}: malformed {{ model(…) }} in its incremental step: "${pair.trim()}"`);
      // The relation's name outside comments and string literals ('intermediate.int_futures_fill_days'
      // as source_model names where a row comes from, and stays).
      const pattern = new RegExp(`--[^\\n]*|'(?:[^']|'')*'|\\b${from.replace(/[.]/g, '\\.')}\\b`, 'g');
      let found = false;
      text = text.replace(pattern, (match) => {
        if (match.startsWith("'") || match.startsWith('--')) return match;
        found = true;
        return to;
      });
      if (!found) throw new Error(`${model.id}: its SQL does not read ${from}, which its incremental step replaces`);
    }
    return `(\n${text}\n)`;
  });
}

/**
 * What a model computed in TypeScript takes of memoryLimit for its JS heap while it runs (DuckDB
 * gets the rest: Database.withMemoryReserved), so the process stays within memoryLimit plus the
 * 1.5 GB issue 28 allows above it (docs/operating.md "Memory"). The lot matching of the 10M
 * benchmark history (a full build, five cost methods) held up to 1.6 GB of heap, of which ~0.5 GB
 * live, until the heap's garbage was bounded (src/heap-garbage.ts): now what is live and 256 MB.
 */
const PROGRAM_HEAP_RESERVE = 1e9;

/**
 * Creates or replaces a model's view or table (a TypeScript model: an empty table its program
 * fills); a declared model must have built exactly its
 * declared columns (else this throws naming them, and the transaction keeps the previous one), and
 * gets its declared descriptions as comments (CREATE OR REPLACE drops the previous ones).
 */
async function createModel(db: Database, model: Model): Promise<void> {
  const materialization = MATERIALIZATION[model.layer];
  if (model.program !== undefined) {
    await db.run(`CREATE OR REPLACE TABLE ${model.id} (${model.program.columns})`);
    await db.withMemoryReserved(PROGRAM_HEAP_RESERVE, () => model.program!.build(db));
  } else {
    // A database built before staging became tables has views by those names.
    const [existing] = await db.all<{ table_type: string }>('SELECT table_type FROM information_schema.tables WHERE table_schema = $1 AND table_name = $2 AND table_catalog = current_database()', [model.layer, model.name]);
    if (materialization === 'table' && existing?.table_type === 'VIEW') await db.run(`DROP VIEW ${model.id}`);
    await db.run(`CREATE OR REPLACE ${materialization === 'view' ? 'VIEW' : 'TABLE'} ${model.id} AS\n${model.sql}`);
  }
  if (model.declaration === undefined) return;
  const built = await db.all<{ column_name: string }>('SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = $1 AND table_name = $2 ORDER BY column_index', [model.layer, model.name]);
  const disagreement = columnDisagreement(built.map((row) => row.column_name), model.declaration);
  if (disagreement !== undefined) throw new Error(`${model.id}: ${disagreement} (${path.relative(process.cwd(), path.join(path.dirname(model.file), '_models.ts'))})`);
  // One round trip for all of them (a staging table has up to 30 columns, and a sync may create every one).
  await db.run(commentStatements(model.id, materialization, model.declaration).join(';\n'));
}

/** What a build stopped by a full disk leaves: each model is replaced in its own transaction. */
export const BUILD_KEPT = 'nothing of this build was lost (a model not rebuilt keeps its previous table)';

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n').filter((line) => line.trim() !== '').slice(0, 2).join(' ');
}

/**
 * Brings the staging tables up to date with the raw tables, alone: a sync calls this as it ends
 * (and before it starts, so that a new database has them), so staging is current without
 * rebuilding intermediate and marts. Incremental as a build is: only the keys the sync's changes
 * touched are parsed again. The macro files come first: staging calls them
 * (sql/macros/staging.sql). Throws on the first failure.
 */
export async function refreshStaging(db: Database, sqlDir: string = SQL_DIR): Promise<void> {
  const project = loadProject(sqlDir);
  for (const macro of project.macros) await db.transaction(() => db.run(macro.sql));
  await db.run('CREATE SCHEMA IF NOT EXISTS staging');
  await ensureStateTables(db);
  const context: BuildContext = { fingerprints: fingerprints(project.models, project.macros, new Map()), readers: readersOf(project.models), fullRefresh: false, relations: await relationsOf(db) };
  for (const model of project.models.filter((candidate) => candidate.layer === 'staging')) {
    const result = await buildModel(db, model, context, () => undefined);
    if (result.status !== 'ok') throw new Error(`${model.id}: ${result.message}`);
  }
}
