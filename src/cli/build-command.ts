import type { Argv } from 'yargs';
import { STREAMS } from '../../pipelines/index.ts';
import type { Config } from '../config/config.ts';
import { ensureRawTables } from '../extract/sync.ts';
import { buildModels, type ModelResult } from '../models/build.ts';
import type { CostMethod } from '../models/settings.ts';
import { Database } from '../store/database.ts';
import { DatabaseLock } from '../store/lock.ts';
import { defineCommand } from './command.ts';
import { withConfigOptions } from './config-options.ts';
import { resolveConfig } from '../config/config.ts';
import { EXIT } from './exit-codes.ts';

/** Adds the options that change what the models compute. */
export function withModelOptions<T>(yargs: Argv<T>) {
  return withConfigOptions(yargs)
    .option('time-zone', { type: 'string', describe: 'Reporting time zone for days and months (IANA name) [default: models.reportingTimeZone, else UTC]' })
    .option('cost-method', { type: 'array', string: true, choices: ['fifo', 'average'], describe: 'Spot cost methods to build [default: models.costMethods, else fifo]' });
}

/** Resolves the configuration with the common and model flags applied. */
export function modelConfigFromArgs(args: { config?: string; db?: string; timeZone?: string; costMethod?: string[] }): Readonly<Config> {
  return resolveConfig({ configPath: args.config, db: args.db, reportingTimeZone: args.timeZone, costMethods: args.costMethod as CostMethod[] | undefined });
}

/**
 * Builds the models into the configured database under the sync lock (a build never reads a
 * half-written sync), printing a line per model as it finishes.
 */
export async function buildWithConfig(config: Readonly<Config>, options: { print: boolean }): Promise<ModelResult[]> {
  const lock = DatabaseLock.acquire(config.db, 'build');
  try {
    const db = await Database.open(config.db, { memoryLimit: config.memoryLimit });
    try {
      // Tables are built with CREATE TABLE AS: their row order means nothing, and not keeping it
      // lets DuckDB write them in parallel with far less memory.
      await db.run('SET preserve_insertion_order = false');
      await ensureRawTables(db, STREAMS);
      return await buildModels(db, config.models, { onResult: options.print ? (result, index, total) => console.log(formatModelResult(result, index, total)) : undefined });
    } finally {
      db.close();
    }
  } finally {
    lock.release();
  }
}

/** `ok      marts.fees_daily           table     0.41 s      1,234 rows`. */
export function formatModelResult(result: ModelResult, index: number, total: number): string {
  const counter = `[${String(index).padStart(String(total).length)}/${total}]`;
  const rows = result.rows === undefined ? '' : `${result.rows.toLocaleString('en-US')} rows`;
  const time = result.status === 'skipped' ? '' : `${(result.ms / 1000).toFixed(2)} s`;
  const line = `${counter} ${result.status.padEnd(7)} ${result.id.padEnd(42)} ${result.materialization.padEnd(5)} ${time.padStart(8)}  ${rows}`.trimEnd();
  return result.message === undefined ? line : `${line}\n        ${result.message}`;
}

/** One line: how many models were built, failed, skipped, and the total time. */
export function summarizeBuild(results: readonly ModelResult[], ms: number): string {
  const count = (status: ModelResult['status']) => results.filter((result) => result.status === status).length;
  return `build: ${count('ok')} ok, ${count('failed')} failed, ${count('skipped')} skipped in ${(ms / 1000).toFixed(2)} s`;
}

/** `exledger build`. */
export const buildCommand = defineCommand({
  command: 'build',
  describe: 'Build the SQL models (staging views, intermediate and marts tables) in dependency order; a line per model',
  builder: (yargs) => withModelOptions(yargs).option('json', { type: 'boolean', default: false, describe: 'Print JSON instead of lines' }),
  handler: async (args) => {
    const config = modelConfigFromArgs(args);
    const started = performance.now();
    const results = await buildWithConfig(config, { print: !args.json });
    const ms = performance.now() - started;
    if (args.json) console.log(JSON.stringify({ ms: Math.round(ms), results: results.map((result) => ({ ...result, ms: Math.round(result.ms) })) }, null, 2));
    else console.log(summarizeBuild(results, ms));
    return results.every((result) => result.status === 'ok') ? EXIT.ok : EXIT.failure;
  },
});
