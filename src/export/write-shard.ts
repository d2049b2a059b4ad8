import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, open, readdir, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { diskFullOf } from '../disk-full.ts';
import { ConfigError } from '../errors.ts';
import type { Database } from '../store/database.ts';
import { isProcessAlive } from '../store/lock.ts';
import { syncDirectory } from '../store/publish.ts';
import {
  copyOptionsOf,
  describeModel,
  isEmptyFolder,
  MANIFEST,
  quoteString,
  selectListOf,
  SHARD_MANIFESTS,
  type DatasetFormat,
  type ExportModel,
  type ManifestModel,
  type ModelShape,
} from './write-dataset.ts';

/**
 * A shard of a dataset shared by several workers (issue 14, "Several workers"): each worker
 * syncs some of the firm's accounts into a database of its own and exports them into one
 * dataset folder. A shard export replaces only its accounts' partitions (`account=<name>/` of
 * each model), each by one rename, and leaves every other account's partitions as they are,
 * so workers can export at the same time without losing each other's data. Each account has
 * its own manifest, `_accounts/<account>.json`, written after its partitions.
 */

/** `_accounts/<account>.json`: what the last shard export of this account wrote. */
export interface ShardManifest {
  /** 1 for this layout. */
  version: 1;
  format: DatasetFormat;
  /** This account. */
  account: string;
  /** Every account of the shard export that wrote it (the worker's share). */
  shard: string[];
  runId: string;
  /** When that export started (ISO 8601 UTC). */
  exportedAt: string;
  /** The worker's database it was read from, and the machine that wrote it. */
  database: string;
  host: string;
  /** Each model as for a whole export (`_manifest.json`), `rows` being this account's. */
  models: ManifestModel[];
}

/** Options of writeShard. */
export interface ShardOptions {
  /** The shared dataset folder (created if missing). */
  out: string;
  /** The shard's accounts (their partitions are replaced, every other account's are kept). */
  accounts: readonly string[];
  /** @default 'parquet' */
  format?: DatasetFormat;
  runId: string;
  /** Told as each model is written (rows: the shard's). */
  onModel?: (model: ManifestModel) => void;
}

/**
 * Checks a shared dataset folder before anything is read: not the filesystem's root, a folder
 * if it exists, and either new, empty, or a shared dataset already (it has `_accounts/`). A
 * whole export (`_manifest.json`) or a folder of anything else is refused, naming it.
 * @throws ConfigError naming the folder.
 */
export function requireShardFolder(out: string, setting: string): void {
  const folder = path.resolve(out);
  if (path.dirname(folder) === folder) throw new ConfigError(folder, 'is the root of the filesystem', { hint: `choose a folder of its own (${setting})` });
  if (!existsSync(folder)) return;
  if (!statSync(folder).isDirectory()) throw new ConfigError(folder, 'is a file, not a folder', { hint: `choose another folder (${setting}), or move the file away` });
  if (existsSync(path.join(folder, MANIFEST))) {
    throw new ConfigError(folder, `is a whole export (it has ${MANIFEST}), not a dataset shared by workers`, { hint: `choose another folder for the shared dataset (${setting}), or export without --shard` });
  }
  // Empty but for work folders: another worker's first shard export, before its manifests are in place.
  if (!existsSync(path.join(folder, SHARD_MANIFESTS)) && !isEmptyFolder(folder) && !readdirSync(folder).every((name) => WORK_FOLDER.test(name))) {
    throw new ConfigError(folder, `is a folder with other things in it (no ${SHARD_MANIFESTS}/): a shard export only writes into a new or empty folder or a shared dataset`, {
      hint: `choose a new or empty folder (${setting})`,
    });
  }
}

/**
 * Models written in shard mode must have an `account` column: a model of no account could not
 * be split between workers (every worker would replace it with its own copy).
 * @throws ConfigError naming those models.
 */
export function requireAccountModels(shapes: readonly ModelShape[]): void {
  const without = shapes.filter((shape) => !shape.hasAccount).map((shape) => shape.name);
  if (without.length > 0) {
    throw new ConfigError('model', `${without.join(', ')} ${without.length === 1 ? 'has' : 'have'} no account column: a shard export writes per account`, {
      hint: 'leave them out of the shard export (export them once, without --shard, into a folder of their own)',
    });
  }
}

/** The machine's name as it appears in the work folder's name. */
const HOST = os.hostname().replace(/[^A-Za-z0-9_-]/g, '_') || 'host';

/** A work folder's name: `.shard-<host>-<pid>`. */
const WORK_FOLDER = /^\.shard-(.+)-(\d+)$/;

/**
 * The work folder of this export, inside the dataset folder (so its renames stay within one
 * filesystem, also when the dataset folder is a mount point) but outside every model's folder
 * (readers read `<layer>/<table>/`; Spark also skips names starting with a dot): `new/` holds
 * the shard written, `old/` the partitions set aside.
 */
const workFolderOf = (folder: string) => path.join(folder, `.shard-${HOST}-${process.pid}`);

/**
 * Removes what shard exports of this machine killed part-way left in the dataset folder
 * (their process is gone): a partition set aside and not replaced is put back first. Work
 * folders of other machines (a shared filesystem) and of running exports are left alone.
 */
export async function removeLeftoverShards(out: string): Promise<void> {
  const folder = path.resolve(out);
  if (!existsSync(folder)) return;
  for (const name of await readdir(folder)) {
    const match = WORK_FOLDER.exec(name);
    if (match === null || match[1] !== HOST || isProcessAlive(Number(match[2]))) continue;
    await restoreSetAside(path.join(folder, name), folder);
    await rm(path.join(folder, name), { recursive: true, force: true });
  }
}

/** Puts back each partition set aside in `<work>/old/<schema>/<table>/account=…` whose place in the dataset is empty. */
async function restoreSetAside(work: string, folder: string): Promise<void> {
  const old = path.join(work, 'old');
  for (const relative of await partitionsUnder(old)) {
    const place = path.join(folder, relative);
    if (!existsSync(place)) await rename(path.join(old, relative), place);
  }
}

/** The `<schema>/<table>/account=…` folders under `root`. */
async function partitionsUnder(root: string): Promise<string[]> {
  if (!existsSync(root)) return [];
  const found: string[] = [];
  for (const schema of await readdir(root)) {
    for (const table of await readdir(path.join(root, schema))) {
      for (const partition of await readdir(path.join(root, schema, table))) found.push(path.join(schema, table, partition));
    }
  }
  return found;
}

const partitionName = (account: string) => `account=${account}`;

/**
 * Writes the shard's accounts of each model into a work folder in the dataset folder, then swaps
 * them in one account partition at a time: the account's previous partition (if any) is renamed
 * aside, the new one renamed into place, and once every model is swapped the account's manifest
 * is replaced (written aside, then renamed over). Other accounts' partitions are never touched.
 * An account with no rows in a model gets one empty file (its columns), so every account the
 * shard exported has each model's schema and an earlier partition never outlives its rows.
 * On a failure before the swaps, nothing in the dataset changed; during them, the partitions
 * set aside are put back where no new one took their place.
 */
export async function writeShard(db: Database, models: readonly ExportModel[], options: ShardOptions): Promise<ShardManifest[]> {
  const folder = path.resolve(options.out);
  const format = options.format ?? 'parquet';
  const exportedAt = new Date().toISOString();
  const work = workFolderOf(folder);
  const shapes = await Promise.all(models.map((model) => describeModel(db, model, format)));
  requireAccountModels(shapes);
  const accountList = options.accounts.map(quoteString).join(', ');
  await rm(work, { recursive: true, force: true });
  await mkdir(path.join(work, 'new'), { recursive: true });
  let swapping = false;
  try {
    // Per account: each model as the manifest lists it.
    const perAccount = new Map<string, ManifestModel[]>(options.accounts.map((account) => [account, []]));
    for (const [index, shape] of shapes.entries()) {
      const model = models[index]!;
      const partitionBy = shape.month === null ? ['account'] : ['account', 'month'];
      const target = path.join(work, 'new', model.schema, model.table);
      await mkdir(target, { recursive: true });
      const counts = new Map(
        (await db.all<{ account: string; rows: string }>(`SELECT account, count(*) AS rows FROM ${shape.relation} WHERE account IN (${accountList}) GROUP BY account`)).map((row) => [
          row.account,
          Number(row.rows),
        ]),
      );
      const select = selectListOf(shape, true);
      if (counts.size > 0) {
        // OVERWRITE_OR_IGNORE: the folder exists (made above), and is empty.
        await db.run(
          `COPY (SELECT ${select} FROM ${shape.relation} WHERE account IN (${accountList})) TO ${quoteString(target)} (${copyOptionsOf(format, shape, shape.month !== null)}, PARTITION_BY (${partitionBy.join(', ')}), WRITE_PARTITION_COLUMNS true, OVERWRITE_OR_IGNORE true)`,
        );
      }
      for (const account of options.accounts) {
        const rows = counts.get(account) ?? 0;
        if (rows === 0) {
          // No rows of this account: one empty file at the partitions' depth (a NULL month), with the model's columns.
          const empty = path.join(target, partitionName(account), ...(shape.month === null ? [] : ['month=__HIVE_DEFAULT_PARTITION__']));
          await mkdir(empty, { recursive: true });
          await db.run(`COPY (SELECT ${select} FROM ${shape.relation} WHERE false) TO ${quoteString(path.join(empty, `data_0.${format}`))} (${copyOptionsOf(format, shape, shape.month !== null)})`);
        }
        perAccount.get(account)!.push({ model: shape.name, path: `${model.schema}/${model.table}`, description: shape.description, rows, partitionBy, month: shape.month, columns: shape.columns });
      }
      const total = [...counts.values()].reduce((sum, rows) => sum + rows, 0);
      options.onModel?.({ model: shape.name, path: `${model.schema}/${model.table}`, description: shape.description, rows: total, partitionBy, month: shape.month, columns: shape.columns });
    }
    const manifests = options.accounts.map(
      (account): ShardManifest => ({ version: 1, format, account, shard: [...options.accounts], runId: options.runId, exportedAt, database: path.resolve(db.location), host: os.hostname(), models: perAccount.get(account)! }),
    );
    await mkdir(path.join(work, SHARD_MANIFESTS));
    for (const manifest of manifests) await writeDurably(path.join(work, SHARD_MANIFESTS, `${manifest.account}.json`), `${JSON.stringify(manifest, null, 2)}\n`);

    swapping = true;
    await mkdir(path.join(folder, SHARD_MANIFESTS), { recursive: true });
    for (const account of options.accounts) {
      for (const model of models) {
        const relative = path.join(model.schema, model.table, partitionName(account));
        const place = path.join(folder, relative);
        await mkdir(path.dirname(place), { recursive: true });
        if (existsSync(place)) {
          await mkdir(path.dirname(path.join(work, 'old', relative)), { recursive: true });
          await rename(place, path.join(work, 'old', relative));
        }
        await rename(path.join(work, 'new', relative), place);
        await syncDirectory(path.dirname(place));
      }
      // The account's manifest last: it names the export whose partitions are all in place.
      await rename(path.join(work, SHARD_MANIFESTS, `${account}.json`), path.join(folder, SHARD_MANIFESTS, `${account}.json`));
    }
    await syncDirectory(path.join(folder, SHARD_MANIFESTS));
    await rm(work, { recursive: true, force: true });
    return manifests;
  } catch (error) {
    if (swapping) await restoreSetAside(work, folder).catch(() => undefined);
    await rm(work, { recursive: true, force: true });
    throw (
      diskFullOf(error, {
        file: folder,
        doing: 'exporting a shard of the warehouse',
        kept: swapping ? "the accounts swapped before it have this export's partitions, the others their previous ones; no other account was touched" : 'nothing in the dataset changed',
      }) ?? error
    );
  }
}

/** Writes a file and flushes it to disk before it is renamed into place. */
async function writeDurably(file: string, text: string): Promise<void> {
  const handle = await open(file, 'wx');
  try {
    await writeFile(handle, text);
    await handle.sync();
  } finally {
    await handle.close();
  }
}
