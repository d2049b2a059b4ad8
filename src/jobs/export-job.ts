import { randomBytes } from 'node:crypto';
import path from 'node:path';
import dayjs from 'dayjs';
import utc from 'dayjs/plugin/utc.js';
import { parseAccountList, type Config } from '../config/config.ts';
import { ConfigError } from '../errors.ts';
import { removeLeftoverShards, requireShardFolder, writeShard, type ShardManifest } from '../export/write-shard.ts';
import { readSyncedAccounts } from '../store/synced-accounts.ts';
import { removeLeftoverExports, requireDatasetFolder, resolveModels, writeDataset, type DatasetFormat, type DatasetManifest, type ManifestModel } from '../export/write-dataset.ts';
import { loadProject } from '../models/project.ts';
import { selectModelsInOrder } from '../models/select.ts';
import { whilePending } from '../pending-work.ts';
import { Database } from '../store/database.ts';
import { requireDatabase } from './paths.ts';

dayjs.extend(utc);

/** What to export. */
export interface ExportRequest {
  /** Selectors of the models (src/models/select.ts: `marts.fees_monthly`, `layer:marts`, `tag:fees`, `+fees_monthly`). @default every model of marts (`layer:marts`) */
  models: readonly string[];
  /** The dataset folder. */
  out: string;
  /** @default 'parquet' */
  format?: DatasetFormat;
  /** Told as each model is written. */
  onModel?: (model: ManifestModel) => void;
  /**
   * Write this database's accounts as a shard of a dataset shared by several workers: only
   * their partitions are replaced (docs/operating.md "Several workers"). @default false
   */
  shard?: boolean;
  /** With `shard`: only these accounts, comma-separated. @default every account synced into this database */
  accounts?: string;
}

/** What a shard export wrote. */
export interface ShardExportResult {
  /** The shared dataset folder. */
  path: string;
  /** The shard's accounts. */
  accounts: string[];
  runId: string;
  /** One per account, as written to `_accounts/<account>.json`. */
  manifests: ShardManifest[];
  ms: number;
}

/** What an export wrote. */
export interface ExportResult {
  /** The dataset folder. */
  path: string;
  manifest: DatasetManifest;
  ms: number;
}

/**
 * The export job: the chosen models of an existing database, opened read-only (it runs beside
 * analysts; a sync writing it meanwhile is one clear "in use" error), written as one dataset
 * folder. The folder and the model names are checked before anything is written.
 */
export async function exportJob(config: Readonly<Config>, request: ExportRequest): Promise<ExportResult> {
  const started = performance.now();
  if (request.accounts !== undefined) throw new ConfigError('--accounts', 'chooses the accounts of a shard export: give --shard too (a whole export writes every account of the database)');
  requireDatabase(config.db);
  requireDatasetFolder(request.out, '--out');
  const chosen = chooseModels(request.models);
  const db = await Database.open(config.db, { readOnly: true, memoryLimit: config.memoryLimit });
  try {
    const models = await resolveModels(db, chosen);
    await removeLeftoverExports(request.out);
    const runId = `${dayjs.utc().format('YYYYMMDDTHHmmss')}-${randomBytes(3).toString('hex')}`;
    const manifest = await whilePending(`export ${runId}: writing ${models.length} models to ${request.out}`, () =>
      writeDataset(db, models, { out: request.out, format: request.format, runId, onModel: request.onModel }),
    );
    return { path: path.resolve(request.out), manifest, ms: performance.now() - started };
  } finally {
    db.close();
  }
}

/**
 * The shard export: this worker's accounts (`accounts`, else every account synced into its
 * database) of the chosen models, written into a dataset folder shared with other workers;
 * every other account's partitions there are kept. Accounts, models and the folder are checked
 * before anything is written.
 */
export async function exportShardJob(config: Readonly<Config>, request: ExportRequest): Promise<ShardExportResult> {
  const started = performance.now();
  requireDatabase(config.db);
  requireShardFolder(request.out, '--out');
  const chosen = chooseModels(request.models);
  const db = await Database.open(config.db, { readOnly: true, memoryLimit: config.memoryLimit });
  try {
    const synced = await readSyncedAccounts(db);
    const accounts = request.accounts === undefined ? synced : parseAccountList(request.accounts, '--accounts', config.accounts.map((account) => account.name));
    if (accounts.length === 0) throw new ConfigError(config.db, 'holds no synced account: nothing to export as a shard', { hint: 'run exledger sync first' });
    const missing = accounts.filter((account) => !synced.includes(account));
    if (missing.length > 0) {
      throw new ConfigError('--accounts', `${missing.join(', ')} ${missing.length === 1 ? 'was' : 'were'} never synced into ${path.resolve(config.db)} (it holds ${synced.join(', ') || 'none'}): the shard would replace ${missing.length === 1 ? 'its' : 'their'} partitions with nothing`, {
        hint: 'export each account from the worker that syncs it',
      });
    }
    const models = await resolveModels(db, chosen);
    await removeLeftoverShards(request.out);
    const runId = `${dayjs.utc().format('YYYYMMDDTHHmmss')}-${randomBytes(3).toString('hex')}`;
    const manifests = await whilePending(`export ${runId}: writing the shard ${accounts.join(', ')} (${models.length} models) into ${request.out}`, () =>
      writeShard(db, models, { out: request.out, accounts, format: request.format, runId, onModel: request.onModel }),
    );
    return { path: path.resolve(request.out), accounts, runId, manifests, ms: performance.now() - started };
  } finally {
    db.close();
  }
}

/** The ids of the models the selectors pick (`--select`'s forms), the marts by default. */
function chooseModels(selectors: readonly string[]): string[] {
  return selectModelsInOrder(loadProject(), selectors.length === 0 ? ['layer:marts'] : selectors, 'model').map((model) => model.id);
}
