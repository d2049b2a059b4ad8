import type { Argv } from 'yargs';
import { resolveConfig, type Config } from '../config/config.ts';

/** Adds the options every command that reads configuration takes. */
export function withConfigOptions<T>(yargs: Argv<T>) {
  return yargs
    .option('config', { type: 'string', describe: 'Config file [default: ./exledger.config.json if present]' })
    .option('db', { type: 'string', describe: 'DuckDB database file (overrides EXLEDGER_DB) [default: ./data/exledger.duckdb]' });
}

/** Resolves the configuration with the common flags applied. */
export function configFromArgs(args: { config?: string; db?: string }): Readonly<Config> {
  return resolveConfig({ configPath: args.config, db: args.db });
}
