import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, open, readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { diskFullOf } from '../disk-full.ts';
import { ConfigError } from '../errors.ts';
import { splitColumnComment } from '../store/comments.ts';
import type { Database } from '../store/database.ts';
import { isProcessAlive } from '../store/lock.ts';
import { syncDirectory } from '../store/publish.ts';
import { quoteIdentifier } from '../store/sql-text.ts';

/**
 * The warehouse as files (issue 14): chosen models written with DuckDB's own COPY to Parquet or
 * CSV, hive-partitioned by account and month, with a manifest, into one dataset folder that is
 * only ever replaced whole by a complete new one.
 */

/** The layers a dataset can hold (the SQL models; raw and meta are the sync's bookkeeping). */
export const MODEL_LAYERS = ['staging', 'intermediate', 'marts'] as const;

/** File formats of a dataset. */
export type DatasetFormat = 'parquet' | 'csv';

/** A model chosen for export. */
export interface ExportModel {
  schema: string;
  table: string;
}

/** One column of a model in the manifest. */
export interface ManifestColumn {
  name: string;
  /** Its DuckDB type in the database, e.g. `DECIMAL(38,18)`. */
  type: string;
  /** The type in the files when it differs (Parquet has no 128-bit integer: HUGEINT is written as `DECIMAL(38,0)`). */
  fileType?: string;
  /** What it means, from the database's comment (the model's declaration); null when it has none. */
  description: string | null;
  /** What its values are in (`UTC`, `coin: fee_coin`, `count`); null when it has none (an id, a text). */
  unit: string | null;
}

/** One model in the manifest. */
export interface ManifestModel {
  /** `<schema>.<table>`. */
  model: string;
  /** Its folder, relative to the dataset root: `<schema>/<table>`. */
  path: string;
  /** What it holds, from the database's comment (the model's declaration: description, grain, key); null when none. */
  description: string | null;
  rows: number;
  /** The hive partition keys, outermost first (`account`, `month`), or none. */
  partitionBy: string[];
  /** Where the `month` key comes from: the column and the SQL that derives it; null when not partitioned by month. */
  month: { column: string; expression: string } | null;
  columns: ManifestColumn[];
}

/** `_manifest.json`, at the dataset root. */
export interface DatasetManifest {
  /** 1 for this layout. */
  version: 1;
  format: DatasetFormat;
  runId: string;
  /** When the export started (ISO 8601 UTC). */
  exportedAt: string;
  /** The database it was read from. */
  database: string;
  models: ManifestModel[];
}

export const MANIFEST = '_manifest.json';

/** The folder of a shared (sharded) dataset's manifests, one per account: `_accounts/<account>.json` (write-shard.ts). */
export const SHARD_MANIFESTS = '_accounts';

/** How CSV writes TIMESTAMPTZ: `2026-09-30T23:59:59.999000Z` (strftime format). */
export const CSV_INSTANT = '%Y-%m-%dT%H:%M:%S.%fZ';

export const quoteString = (text: string) => `'${text.replace(/'/g, "''")}'`;

/**
 * The relations of the chosen models (`<layer>.<name>`, from the selection in src/models/select.ts),
 * in their order: each must be in the database, as a table or a view.
 * @throws ConfigError naming the first model this database has no relation for.
 */
export async function resolveModels(db: Database, models: readonly string[]): Promise<ExportModel[]> {
  const present = await db.all<{ schema: string; table: string }>(
    `SELECT table_schema AS schema, table_name AS "table" FROM information_schema.tables
     WHERE table_schema IN (${MODEL_LAYERS.map(quoteString).join(', ')})`,
  );
  return models.map((id) => {
    const [schema, table] = id.split('.') as [string, string];
    if (!present.some((model) => model.schema === schema && model.table === table)) throw new ConfigError('model', `${id} is not in this database`, { hint: 'run exledger build first (exledger run does it)' });
    return { schema, table };
  });
}

/**
 * Checks the dataset folder before anything is read: its parent exists (or can be created) and
 * is writable, and the folder itself, if there, is an earlier export (it has a manifest) or
 * empty, so an export never deletes a folder of something else (`--out ~`).
 * @throws ConfigError naming the folder.
 */
export function requireDatasetFolder(out: string, setting: string): void {
  const folder = path.resolve(out);
  if (path.dirname(folder) === folder) throw new ConfigError(folder, 'is the root of the filesystem: the export replaces its folder whole', { hint: `choose a folder of its own (${setting})` });
  if (!existsSync(folder)) return;
  if (!statSync(folder).isDirectory()) throw new ConfigError(folder, 'is a file, not a folder', { hint: `choose another folder (${setting}), or move the file away` });
  if (!existsSync(path.join(folder, MANIFEST)) && existsSync(path.join(folder, SHARD_MANIFESTS))) {
    throw new ConfigError(folder, `is a dataset shared by several workers (it has ${SHARD_MANIFESTS}/): a whole export would replace the other workers' accounts`, {
      hint: `export this database's accounts into it with --shard, or choose another folder (${setting})`,
    });
  }
  if (!existsSync(path.join(folder, MANIFEST)) && !isEmptyFolder(folder)) {
    throw new ConfigError(folder, `is a folder with other things in it (no ${MANIFEST}): the export replaces its folder whole, so it only replaces an earlier export`, {
      hint: `choose a new or empty folder (${setting})`,
    });
  }
}

export function isEmptyFolder(folder: string): boolean {
  try {
    return readdirSync(folder).length === 0;
  } catch {
    return false;
  }
}

/**
 * The temporary and the set-aside names beside a folder replaced whole (a dataset, the docs site)
 * `<name>`: `.<name>.tmp-<pid>`, `.<name>.old-<pid>`; removeLeftoverExports cleans up both.
 */
export function siblingNames(folder: string): { temporary: string; previous: string; pattern: RegExp } {
  const base = path.basename(folder);
  const escaped = base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return {
    temporary: path.join(path.dirname(folder), `.${base}.tmp-${process.pid}`),
    previous: path.join(path.dirname(folder), `.${base}.old-${process.pid}`),
    pattern: new RegExp(`^\\.${escaped}\\.(tmp|old)-(\\d+)$`),
  };
}

/**
 * Removes what exports killed part-way left beside the dataset folder (their process is gone): a
 * half-written `.tmp-<pid>` folder is deleted; a set-aside `.old-<pid>` (the previous export,
 * killed between its two renames) is put back when the dataset folder is missing, else deleted.
 * An export still running in another process keeps its folders.
 */
export async function removeLeftoverExports(out: string): Promise<void> {
  const folder = path.resolve(out);
  const parent = path.dirname(folder);
  if (!existsSync(parent)) return;
  const { pattern } = siblingNames(folder);
  for (const name of await readdir(parent)) {
    const match = pattern.exec(name);
    if (match === null || isProcessAlive(Number(match[2]))) continue;
    const leftover = path.join(parent, name);
    if (match[1] === 'old' && !existsSync(folder)) await rename(leftover, folder);
    else await rm(leftover, { recursive: true, force: true });
  }
}

/** Options of writeDataset. */
export interface DatasetOptions {
  /** The dataset folder (replaced whole). */
  out: string;
  /** @default 'parquet' */
  format?: DatasetFormat;
  runId: string;
  /** Told as each model is written. */
  onModel?: (model: ManifestModel) => void;
}

/**
 * Writes the models into a temporary folder beside `out`, then swaps it in: the previous
 * dataset (if any) is renamed aside, the new one renamed to `out`, the previous one deleted.
 * A reader sees the old dataset or the new one, never a mix or half of one (for the instant
 * between the two renames, no folder). On any failure the temporary folder is removed and
 * the previous dataset is left as it was.
 */
export async function writeDataset(db: Database, models: readonly ExportModel[], options: DatasetOptions): Promise<DatasetManifest> {
  const folder = path.resolve(options.out);
  const format = options.format ?? 'parquet';
  const exportedAt = new Date().toISOString();
  const { temporary, previous } = siblingNames(folder);
  await mkdir(path.dirname(folder), { recursive: true });
  await rm(temporary, { recursive: true, force: true });
  await mkdir(temporary);
  try {
    const written: ManifestModel[] = [];
    for (const model of models) {
      const result = await writeModel(db, model, temporary, format);
      written.push(result);
      options.onModel?.(result);
    }
    const manifest: DatasetManifest = { version: 1, format, runId: options.runId, exportedAt, database: path.resolve(db.location), models: written };
    await writeSyncedFile(path.join(temporary, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    await swapInFolder(temporary, folder, previous);
    return manifest;
  } catch (error) {
    await rm(temporary, { recursive: true, force: true });
    throw diskFullOf(error, { file: folder, doing: 'exporting the warehouse', kept: 'the previous export in that folder is unchanged and no partial export is left' }) ?? error;
  }
}

/**
 * The month key of a model: its first DATE column named `*_month` (the month the model itself
 * assigns, in the reporting time zone), else its first DATE column named `*_date`; as text
 * `YYYY-MM`. Instants (`*_at`) are never used: their month in UTC can differ from the model's.
 */
function monthColumnOf(columns: readonly ManifestColumn[]): string | undefined {
  const dates = columns.filter((column) => column.type === 'DATE');
  return (dates.find((column) => column.name.endsWith('_month')) ?? dates.find((column) => column.name.endsWith('_date')))?.name;
}

/**
 * The type a column is written as: Parquet has no 128-bit integers (DuckDB would write HUGEINT as
 * DOUBLE, inexact), so they become DECIMAL(38,0), exact integers, also inside a STRUCT or a list.
 */
function fileTypeOf(type: string, format: DatasetFormat): string | undefined {
  if (format !== 'parquet' || !/\bU?HUGEINT\b/.test(type)) return undefined;
  return type.replace(/\bU?HUGEINT\b/g, 'DECIMAL(38,0)');
}

/** A model's columns as the manifest lists them, and its month key (only for a model with an `account` column). */
export interface ModelShape {
  /** `<schema>.<table>`. */
  name: string;
  /** The table's comment; null when none. */
  description: string | null;
  /** The quoted relation, `"marts"."fees_monthly"`. */
  relation: string;
  columns: ManifestColumn[];
  hasAccount: boolean;
  month: { column: string; expression: string } | null;
}

/** Reads a model's columns (with the types the files get) and its month key. */
export async function describeModel(db: Database, model: ExportModel, format: DatasetFormat): Promise<ModelShape> {
  const name = `${model.schema}.${model.table}`;
  const relation = `${quoteIdentifier(model.schema)}.${quoteIdentifier(model.table)}`;
  const described = await db.all<{ column_name: string; column_type: string }>(`DESCRIBE ${relation}`);
  const comments = new Map(
    (
      await db.all<{ column_name: string | null; comment: string | null }>(
        `SELECT NULL AS column_name, comment FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = $1 AND table_name = $2
         UNION ALL SELECT NULL, comment FROM duckdb_views() WHERE database_name = current_database() AND schema_name = $1 AND view_name = $2
         UNION ALL SELECT column_name, comment FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = $1 AND table_name = $2`,
        [model.schema, model.table],
      )
    ).map((row) => [row.column_name, row.comment === '' ? null : row.comment]),
  );
  const columns: ManifestColumn[] = described.map((column) => {
    const fileType = fileTypeOf(column.column_type, format);
    const comment = comments.get(column.column_name);
    const meaning = comment === null || comment === undefined ? { description: null, unit: null } : splitColumnComment(comment);
    return { name: column.column_name, type: column.column_type, ...(fileType === undefined ? {} : { fileType }), ...meaning };
  });
  const hasAccount = columns.some((column) => column.name === 'account');
  const monthColumn = hasAccount && !columns.some((column) => column.name === 'month') ? monthColumnOf(columns) : undefined;
  const month = monthColumn === undefined ? null : { column: monthColumn, expression: `strftime(${quoteIdentifier(monthColumn)}, '%Y-%m')` };
  return { name, description: comments.get(null) ?? null, relation, columns, hasAccount, month };
}

/** The SELECT list a model is written with: its columns (HUGEINT cast to its file type), then `month` when partitioned by month. */
export function selectListOf(shape: ModelShape, withMonth: boolean): string {
  return [
    ...shape.columns.map((column) => (column.fileType === undefined ? quoteIdentifier(column.name) : `CAST(${quoteIdentifier(column.name)} AS ${column.fileType}) AS ${quoteIdentifier(column.name)}`)),
    ...(withMonth && shape.month !== null ? [`${shape.month.expression} AS month`] : []),
  ].join(', ');
}

/** The Parquet key-value metadata key of the model (its value: JSON `{"model", "description"}`). */
export const KV_MODEL = 'exledger.model';
/** The Parquet key-value metadata key prefix of a column: `exledger.column.<name>` (its value: JSON `{"description", "unit"}`). */
export const KV_COLUMN = 'exledger.column.';

/**
 * What a Parquet file of a model says of itself in its key-value metadata (DuckDB's KV_METADATA,
 * read back by parquet_kv_metadata()): the model and its description, and each column's
 * description and unit, the `month` partition key's too when the files have it. Parquet has no
 * place for a column's comment, so an analyst with only the files still finds every meaning.
 */
export function kvMetadataOf(shape: ModelShape, withMonth: boolean): Record<string, string> {
  const entries: [string, string][] = [
    [KV_MODEL, JSON.stringify({ model: shape.name, description: shape.description })],
    ...shape.columns.map((column): [string, string] => [`${KV_COLUMN}${column.name}`, JSON.stringify({ description: column.description, unit: column.unit })]),
  ];
  if (withMonth && shape.month !== null) {
    entries.push([`${KV_COLUMN}month`, JSON.stringify({ description: `Month of ${shape.month.column}, the hive partition key`, unit: 'YYYY-MM' })]);
  }
  return Object.fromEntries(entries);
}

/**
 * COPY's options for a format. CSV instants as every exledger output writes them: ISO 8601 UTC
 * (the session zone is UTC), all six decimals. Parquet files of a model carry its descriptions
 * ({@link kvMetadataOf}).
 */
export function copyOptionsOf(format: DatasetFormat, shape?: ModelShape, withMonth = false): string {
  if (format === 'csv') return `FORMAT csv, HEADER true, TIMESTAMPFORMAT '${CSV_INSTANT}'`;
  if (shape === undefined) return 'FORMAT parquet';
  const metadata = Object.entries(kvMetadataOf(shape, withMonth)).map(([key, value]) => `${quoteIdentifier(key)}: ${quoteString(value)}`);
  return `FORMAT parquet, KV_METADATA {${metadata.join(', ')}}`;
}

async function writeModel(db: Database, model: ExportModel, root: string, format: DatasetFormat): Promise<ManifestModel> {
  const shape = await describeModel(db, model, format);
  const { name, relation, columns, hasAccount, month } = shape;
  const [{ rows }] = (await db.all<{ rows: string }>(`SELECT count(*) AS rows FROM ${relation}`)) as [{ rows: string }];
  const count = Number(rows);
  // A model with no rows has no partitions: one file with its columns, so readers still see its schema.
  const partitionBy = count === 0 || !hasAccount ? [] : month === null ? ['account'] : ['account', 'month'];

  const select = selectListOf(shape, partitionBy.length > 0);
  const folder = path.join(root, model.schema, model.table);
  await mkdir(path.dirname(folder), { recursive: true });
  const formatOptions = copyOptionsOf(format, shape, partitionBy.includes('month'));
  // WRITE_PARTITION_COLUMNS: every file keeps the partition columns too, with their exact types
  // (a reader of one file, or a hive reader that guesses types from paths, gets them right).
  if (partitionBy.length === 0) await mkdir(folder);
  const target =
    partitionBy.length === 0
      ? `${quoteString(path.join(folder, `data_0.${format}`))} (${formatOptions})`
      : `${quoteString(folder)} (${formatOptions}, PARTITION_BY (${partitionBy.join(', ')}), WRITE_PARTITION_COLUMNS true)`;
  await db.run(`COPY (SELECT ${select} FROM ${relation}) TO ${target}`);
  return { model: name, path: `${model.schema}/${model.table}`, description: shape.description, rows: count, partitionBy, month: partitionBy.includes('month') ? month : null, columns };
}

/** Writes a new file and flushes it to disk (it must not exist yet). */
export async function writeSyncedFile(file: string, content: string): Promise<void> {
  const handle = await open(file, 'wx');
  try {
    await writeFile(handle, content);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Puts the complete folder `temporary` in the place of `folder`: the earlier one (if any) is
 * renamed aside to `previous`, the new one renamed in, the parent flushed, the earlier one
 * deleted. A reader sees the earlier folder or the new one, never a mix.
 */
export async function swapInFolder(temporary: string, folder: string, previous: string): Promise<void> {
  const hadPrevious = existsSync(folder);
  if (hadPrevious) await rename(folder, previous);
  await rename(temporary, folder);
  await syncDirectory(path.dirname(folder));
  if (hadPrevious) await rm(previous, { recursive: true, force: true });
}
