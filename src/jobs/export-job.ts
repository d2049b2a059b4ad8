import { randomBytes } from 'node:crypto';
import path from 'node:path';
import dayjs from 'dayjs';
import utc from 'dayjs/plugin/utc.js';
import type { Config } from '../config/config.ts';
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
  requireDatabase(config.db);
  requireDatasetFolder(request.out, '--out');
  const chosen = selectModelsInOrder(loadProject(), request.models.length === 0 ? ['layer:marts'] : request.models, 'model');
  const db = await Database.open(config.db, { readOnly: true, memoryLimit: config.memoryLimit });
  try {
    const models = await resolveModels(db, chosen.map((model) => model.id));
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
