import type { Argv } from 'yargs';
import type { ConfigOverrides } from '../config/config.ts';
import { COST_METHODS, POOLINGS, type CostMethod, type Pooling } from '../models/settings.ts';

/** Adds the options every command that reads configuration takes. */
export function withConfigOptions<T>(yargs: Argv<T>) {
  return yargs
    .option('config', { type: 'string', describe: 'Config file [default: ./exledger.config.json if present]' })
    .option('db', { type: 'string', describe: 'DuckDB database file (overrides EXLEDGER_DB) [default: ./data/exledger.duckdb]' });
}

/** The common flags as configuration overrides. */
export function configOverrides(args: { config?: string; db?: string }): ConfigOverrides {
  return { configPath: args.config, db: args.db };
}

/** Adds the options that change what the models compute. */
export function withModelOptions<T>(yargs: Argv<T>) {
  return withConfigOptions(yargs)
    .option('time-zone', { type: 'string', describe: 'Reporting time zone for days and months (IANA name) [default: models.reportingTimeZone, else UTC]' })
    .option('cost-method', { type: 'array', string: true, choices: [...COST_METHODS], describe: 'Spot cost methods to build [default: models.costMethods, else fifo]' })
    .option('pooling', { type: 'string', choices: [...POOLINGS], describe: 'Spot inventory per account, or one per symbol across accounts [default: models.pooling, else account]' });
}

/** The common and model flags as configuration overrides. */
export function modelOverrides(args: { config?: string; db?: string; timeZone?: string; costMethod?: string[]; pooling?: string }): ConfigOverrides {
  return { ...configOverrides(args), reportingTimeZone: args.timeZone, costMethods: args.costMethod as CostMethod[] | undefined, pooling: args.pooling as Pooling | undefined };
}

/** Adds `--accounts`, for the commands that work per account (sync, run): a worker's share of the configured accounts. */
export function withAccountsOption<T>(yargs: Argv<T>) {
  return yargs.option('accounts', {
    type: 'string',
    describe: 'Only these configured accounts, comma-separated (a worker\'s share when several workers split the accounts; see docs/operating.md "Several workers") [default: every configured account]',
  });
}
