import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseLossless } from 'lossless-json';
import { z } from 'zod';
import { closestName } from '../closest-name.ts';
import { ConfigError } from '../errors.ts';
import { DEFAULT_DEADLINE_MS, DEFAULT_MAX_RESPONSE_BYTES, type Credentials } from '../exchange/exchange-client.ts';
import { DEFAULT_RATE_BUDGET, type RateBudgetOptions } from '../exchange/rate-budget.ts';
import { readPricesFile } from '../models/prices-file.ts';
import { DEFAULT_MEMORY_LIMIT } from '../store/database.ts';
import {
  COST_METHODS,
  DEFAULT_BOOKS_SETTINGS,
  DEFAULT_CHART_OF_ACCOUNTS,
  DEFAULT_MODEL_SETTINGS,
  FEE_TREATMENTS,
  JOURNAL_ACCOUNT_KEYS,
  JOURNAL_POSTINGS,
  POOLINGS,
  TRADE_VALUES,
  VALUATIONS,
  type CostMethod,
  type JournalPosting,
  type JournalSettings,
  type ModelSettings,
  type Pooling,
} from '../models/settings.ts';
import { DEFAULT_RETRY, type RetryOptions } from '../exchange/retry.ts';
import type { PeriodKind } from '../export/period.ts';
import { DEFAULT_LEDGER_SETTINGS, LEDGER_DATE_FORMATS, type LedgerSettings } from '../export/ledger-layouts.ts';
import { DEFAULT_DETAIL_ROW_LIMIT, MAX_DETAIL_ROW_LIMIT } from '../export/roll-up.ts';

/**
 * Configuration, resolved once: defaults, then the config file, then the environment, then
 * flags; validated, frozen and passed down. This is the only module that reads process.env.
 */

/** One exchange account (one API key). */
export interface AccountConfig extends Credentials {
  /** A short name used in tables, logs and the database (`main` for the environment's account). */
  name: string;
}

/** The resolved configuration. */
export interface Config {
  /** Where the config file was read from, or null when none was. */
  configFile: string | null;
  /** DuckDB database path. @default './data/exledger.duckdb' */
  db: string;
  /** Root URL of /api/v2 endpoints. */
  spotBaseUrl: string | null;
  /** Root URL of /capi/v2 endpoints. */
  contractBaseUrl: string | null;
  /** The accounts this process works on: every configured one, or those `--accounts` names (in the configured order). */
  accounts: readonly AccountConfig[];
  /**
   * The account names `--accounts` chose (a worker's share of the firm's accounts), or null when
   * the flag was not given (every configured account). @default null
   */
  selectedAccounts: readonly string[] | null;
  budget: RateBudgetOptions;
  retry: RetryOptions;
  /** Per-request idle timeout (the longest wait for the next byte), ms. @default 15000 */
  timeoutMs: number;
  /** Per-request deadline (the longest one answer may take in all), ms. @default 60000 */
  deadlineMs: number;
  /** The largest answer read, bytes. @default 16777216 (16 MiB) */
  maxResponseBytes: number;
  /**
   * DuckDB's memory limit (e.g. '4GB'): past it, big builds spill to disk instead of growing.
   * DuckDB's own default is 80% of RAM. @default '4GB'
   */
  memoryLimit: string;
  sync: SyncConfig;
  /** How `exledger build` cuts periods and costs spot disposals (docs/architecture.md "Models"). */
  models: ModelSettings;
  /** What `exledger run` reports (docs/workbooks.md "The five workbooks"). */
  reports: ReportsConfig;
  /** Folder of the log file each `exledger run` writes. @default './logs' */
  logDir: string;
  /** Where `exledger run` and `exledger archive` keep the raw history (docs/operating.md "Archive and restore"). */
  archive: ArchiveConfig;
}

/** The archive of the raw history. */
export interface ArchiveConfig {
  /**
   * The archive folder (a mounted remote disk in production), which must exist: exledger never
   * creates it, so a disk that is not mounted is an error, not a folder on the local disk. Null: no archive.
   * @default null
   */
  dir: string | null;
}

/** The reports `exledger run` writes. */
export interface ReportsConfig {
  /** Report names (reports/). @default every report */
  names: readonly string[] | null;
  /** `exledger run` reports the last closed period of this kind. @default 'month' */
  period: PeriodKind;
  /** Folder of the workbooks. @default './out' */
  outDir: string;
  /** How the journal's ledger imports (`exledger report journal --format …`) are rounded and written. @default DEFAULT_LEDGER_SETTINGS */
  ledger: LedgerSettings;
  /**
   * Detail rows a sheet shows in full: past them, a sheet of one row per record (lot matches,
   * journal lines) is rolled up and its full detail written beside the workbook as Parquet and
   * CSV (docs/workbooks.md "Rolled-up sheets"). @default DEFAULT_DETAIL_ROW_LIMIT (100,000)
   */
  detailRowLimit: number;
}

/** How `exledger sync` reads histories. */
export interface SyncConfig {
  /** Spot symbols to read fills and open orders for; null discovers them (docs/operating.md "Spot symbols"). @default null */
  spotSymbols: readonly string[] | null;
  /** Quote coins that discovery pairs with the coins the account holds or traded. @default ['USDT', 'USDC', 'BTC', 'ETH'] */
  quoteCoins: readonly string[];
  /** Days re-read before each cursor on every run, to catch late records. @default 1 */
  lookbackDays: number;
  /** Where histories start on the first sync, YYYY-MM-DD (UTC); null means 365 days before today. @default null */
  startDate: string | null;
  /**
   * Longest window, days. The exchange caps ranges at 3 months (documented for commissions, and
   * 40704 for old history) and every request asks 1 ms more on each side; 88 days stays inside
   * any reading of 3 months (the shortest, February to May, is 89 days). @default 88
   */
  maxWindowDays: number;
  /**
   * Seconds after a partition's last commit at which what it has read is committed, however
   * few rows: a run killed at any instant keeps what it read until about this long before.
   * @default 5
   */
  commitSeconds: number;
}

/** The default config file name, looked for in the working directory. */
export const DEFAULT_CONFIG_FILE = 'exledger.config.json';

/**
 * The base URLs are the roots the exchange's paths are appended to (`{spot_base_url}/api/v2/…`,
 * `{contract_base_url}/capi/v2/…`, shared/spec/exchange-api.md §1): scheme and host, no path.
 */
const SPOT_BASE_URL_FIX = `set EXLEDGER_SPOT_BASE_URL (or spotBaseUrl in ${DEFAULT_CONFIG_FILE}) to the exchange's REST root for /api/v2 paths, scheme and host only, e.g. https://api.example-exchange.com`;
const CONTRACT_BASE_URL_FIX = `set EXLEDGER_CONTRACT_BASE_URL (or contractBaseUrl in ${DEFAULT_CONFIG_FILE}) to the exchange's REST root for /capi/v2 paths, scheme and host only, e.g. https://capi.example-exchange.com`;

/** What to put there: the fix line of a missing base URL (sync and run need both). */
export const BASE_URL_FIX = { spot: SPOT_BASE_URL_FIX, contract: CONTRACT_BASE_URL_FIX } as const;

/** What to put there: the fix line of a missing account (sync and run need one). */
export const ACCOUNT_FIX = `set EXLEDGER_API_KEY, EXLEDGER_API_SECRET and EXLEDGER_API_PASSPHRASE (the exchange's API key, its secret and the passphrase given when the key was made), or "accounts": [{ "name": "main", "apiKey": "…", "secret": "…", "passphrase": "…" }] in ${DEFAULT_CONFIG_FILE}`;

/**
 * An example value of each config file key (array items as `*`), for the fix line of a key that
 * is wrong: what to put there. docs/reference.md "Configuration" shows them together.
 */
const EXAMPLES: Readonly<Record<string, string>> = {
  db: '"./data/exledger.duckdb"',
  spotBaseUrl: '"https://api.example-exchange.com" (scheme and host of the /api/v2 paths)',
  contractBaseUrl: '"https://capi.example-exchange.com" (scheme and host of the /capi/v2 paths)',
  accounts: '[{ "name": "main", "apiKey": "…", "secret": "…", "passphrase": "…" }]',
  'accounts.*': '{ "name": "main", "apiKey": "…", "secret": "…", "passphrase": "…" }',
  'accounts.*.name': '"main"',
  'accounts.*.apiKey': 'the API key the exchange gave, as a string',
  'accounts.*.secret': "the API key's secret, as a string",
  'accounts.*.passphrase': 'the passphrase given when the API key was made, as a string',
  budget: '{ "spot": { "quota": 500, "windowMs": 10000 }, "contract": { "quota": 1000, "windowMs": 10000 } }',
  'budget.spot': '{ "quota": 500, "windowMs": 10000 }',
  'budget.spot.quota': '500',
  'budget.spot.windowMs': '10000',
  'budget.contract': '{ "quota": 1000, "windowMs": 10000 }',
  'budget.contract.quota': '1000',
  'budget.contract.windowMs': '10000',
  'budget.utilization': '0.97 (more than 0, at most 1)',
  'budget.burst': '0.03 (more than 0, less than 1)',
  retry: '{ "retries": 8, "minTimeoutMs": 250, "maxTimeoutMs": 15000, "maxRetryTimeMs": 900000 }',
  'retry.retries': '8',
  'retry.minTimeoutMs': '250',
  'retry.maxTimeoutMs': '15000',
  'retry.maxRetryTimeMs': '900000',
  timeoutMs: '15000',
  deadlineMs: '60000',
  maxResponseBytes: '16777216',
  memoryLimit: '"4GB"',
  sync: '{ "startDate": "2025-11-01", "lookbackDays": 1 }',
  'sync.spotSymbols': '["BTCUSDT_SPBL", "ETHUSDT_SPBL"]',
  'sync.spotSymbols.*': '"BTCUSDT_SPBL"',
  'sync.quoteCoins': '["USDT", "USDC", "BTC", "ETH"]',
  'sync.quoteCoins.*': '"USDT"',
  'sync.lookbackDays': '1',
  'sync.startDate': '"2025-11-01"',
  'sync.maxWindowDays': '88 (1 to 89)',
  'sync.commitSeconds': '5',
  models: '{ "reportingTimeZone": "UTC", "costMethods": ["fifo"], "reportingCurrency": "USD", "pricesFile": "./prices.csv" }',
  'models.reportingTimeZone': '"Europe/Paris" (an IANA time zone)',
  'models.costMethods': `["fifo"] (of ${COST_METHODS.join(', ')})`,
  'models.costMethods.*': `"fifo" (one of ${COST_METHODS.join(', ')})`,
  'models.pooling': `"account" (or ${POOLINGS.filter((pooling) => pooling !== 'account').join(', ')})`,
  'models.openingPositions': '[{ "account": "main", "symbol": "BTCUSDT_SPBL", "quantity": "1.5", "cost": "42000.5" }]',
  'models.openingPositions.*': '{ "account": "main", "symbol": "BTCUSDT_SPBL", "quantity": "1.5", "cost": "42000.5" }',
  'models.openingPositions.*.account': '"main"',
  'models.openingPositions.*.symbol': '"BTCUSDT_SPBL"',
  'models.openingPositions.*.quantity': '"1.5" (quoted)',
  'models.openingPositions.*.cost': '"42000.5" (quoted)',
  'models.reportingCurrency': '"USD"',
  'models.pricesFile': '"./prices.csv"',
  'models.tradeValue': `"given" (or received): which side of a crypto-to-crypto trade sets its value`,
  'models.fees': `"expense" (or ${FEE_TREATMENTS.filter((fees) => fees !== 'expense').join(', ')}): how a trade's fee paid in a coin is booked`,
  'models.valuation': `"cost" (or fair_value)`,
  'models.journal': '{ "costMethod": "fifo", "accounts": { "tradingFees": "Trading fees" } }',
  'models.journal.costMethod': '"fifo" (one of models.costMethods)',
  'models.journal.posting': `"detail" (or ${JOURNAL_POSTINGS.filter((posting) => posting !== 'detail').join(', ')}: an entry per account, day, kind and coin)`,
  'models.journal.accounts': `{ "digitalAssets": "${DEFAULT_CHART_OF_ACCOUNTS.digitalAssets}", "tradingFees": "${DEFAULT_CHART_OF_ACCOUNTS.tradingFees}" }`,
  'models.journal.accounts.*': `"${DEFAULT_CHART_OF_ACCOUNTS.digitalAssets}" (a ledger account name; {coin}, {account}, {counterpart} and {contract} are filled in)`,
  reports: '{ "names": ["pnl", "fees", "rebates", "balances"], "period": "month", "outDir": "./out" }',
  'reports.names': '["pnl", "fees", "rebates", "balances"]',
  'reports.names.*': '"pnl"',
  'reports.period': '"month" (or quarter, year)',
  'reports.outDir': '"./out"',
  'reports.detailRowLimit': `100000 (a whole number of rows, 1 to ${MAX_DETAIL_ROW_LIMIT}: a sheet with more is rolled up)`,
  'reports.ledger': '{ "minorUnit": 2, "roundingAccount": "Rounding differences", "dateFormat": "MM/DD/YYYY", "xero": { "taxRate": "Tax Exempt", "accountCodes": { "Trading fees": "404" } } }',
  'reports.ledger.minorUnit': '2 (decimals of the ledger currency: 0 to 12; default: the reporting currency\'s, ISO 4217)',
  'reports.ledger.roundingAccount': `"${DEFAULT_LEDGER_SETTINGS.roundingAccount}" (a ledger account name of its own)`,
  'reports.ledger.dateFormat': `"MM/DD/YYYY" (or ${LEDGER_DATE_FORMATS.filter((format) => format !== 'MM/DD/YYYY').join(', ')}: QuickBooks Online's and NetSuite's dates)`,
  'reports.ledger.xero': '{ "taxRate": "Tax Exempt", "accountCodes": { "Trading fees": "404" } }',
  'reports.ledger.xero.taxRate': `"${DEFAULT_LEDGER_SETTINGS.xero.taxRate}" (a tax rate's full name in Xero, e.g. "No GST", "No VAT", "BAS Excluded")`,
  'reports.ledger.xero.accountCodes': '{ "Realized gains and losses": "260", "Digital assets:USDT": "610" } (Xero account codes by ledger account name)',
  'reports.ledger.xero.accountCodes.*': '"610" (a Xero account code: letters and digits, at most 10)',
  logDir: '"./logs"',
  archive: '{ "dir": "/mnt/exledger-archive" }',
  'archive.dir': '"/mnt/exledger-archive" (an existing folder, on a mounted disk of its own)',
};

const nonEmpty = z.string().trim().min(1, 'must not be empty');
const url = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });
// A ledger account name of models.journal.accounts: text as the general ledger spells it, with
// {coin}, {account}, {counterpart} and {contract} the only placeholders (anything else in braces is a typo, not a name).
const ledgerAccount = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(200, 'at most 200 characters')
  .refine((name) => ![...name].some((char) => char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f), 'no line breaks or control characters')
  .refine((name) => (name.match(/\{[^}]*\}?/g) ?? []).every((part) => ['{coin}', '{account}', '{counterpart}', '{contract}'].includes(part)), 'the only placeholders are {coin}, {account}, {counterpart} and {contract}');
const group = z.strictObject({ quota: z.number().positive(), windowMs: z.number().int().positive() });

const fileSchema = z.strictObject({
  db: nonEmpty.optional(),
  spotBaseUrl: url.optional(),
  contractBaseUrl: url.optional(),
  accounts: z
    .array(z.strictObject({ name: z.string().regex(/^[a-z0-9_-]+$/i, 'letters, digits, - and _ only'), apiKey: nonEmpty, secret: nonEmpty, passphrase: nonEmpty }))
    .optional(),
  budget: z
    .strictObject({
      spot: group.optional(),
      contract: group.optional(),
      utilization: z.number().gt(0).lte(1).optional(),
      burst: z.number().gt(0).lt(1).optional(),
    })
    .optional(),
  retry: z
    .strictObject({
      retries: z.number().int().min(0).optional(),
      minTimeoutMs: z.number().int().min(0).optional(),
      maxTimeoutMs: z.number().int().positive().optional(),
      maxRetryTimeMs: z.number().int().positive().optional(),
    })
    .optional(),
  timeoutMs: z.number().int().positive().optional(),
  deadlineMs: z.number().int().positive().optional(),
  maxResponseBytes: z.number().int().min(1024).optional(),
  memoryLimit: z.string().regex(/^\d+(\.\d+)?\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i, 'a size such as "4GB" or "512MB"').optional(),
  sync: z
    .strictObject({
      spotSymbols: z.array(z.string().regex(/^[A-Z0-9]+_SPBL$/, 'a spot symbol like BTCUSDT_SPBL')).optional(),
      quoteCoins: z.array(z.string().regex(/^[A-Z0-9]+$/, 'an upper-case coin name')).optional(),
      lookbackDays: z.number().min(0).optional(),
      startDate: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'YYYY-MM-DD').optional(),
      maxWindowDays: z.number().int().min(1).max(89).optional(),
      commitSeconds: z.number().gt(0).max(3600).optional(),
    })
    .optional(),
  models: z
    .strictObject({
      reportingTimeZone: z.string().refine(isTimeZone, 'an IANA time zone such as "UTC" or "Europe/Paris"').optional(),
      costMethods: z.array(z.enum(COST_METHODS)).min(1, `name at least one of ${COST_METHODS.map((method) => `"${method}"`).join(', ')}`).optional(),
      pooling: z.enum(POOLINGS).optional(),
      openingPositions: z
        .array(
          z.strictObject({
            account: z.string().optional(),
            symbol: z.string().regex(/^[A-Z0-9]+_SPBL$/, 'a spot symbol like BTCUSDT_SPBL'),
            // Amounts are strings so they stay exact (a JSON number is a binary float).
            quantity: z.string().regex(/^\d{1,20}(\.\d{1,18})?$/, 'a decimal string of base-coin units, e.g. "1.5" (quoted, at most 18 decimals)'),
            cost: z.string().regex(/^\d{1,26}(\.\d{1,12})?$/, 'a decimal string of quote-coin cost, e.g. "42000.5" (quoted, at most 12 decimals)'),
          }),
        )
        .optional(),
      reportingCurrency: z.string().regex(/^[A-Z0-9]{1,20}$/, 'an upper-case currency code such as "USD" or "EUR"').optional(),
      pricesFile: nonEmpty.optional(),
      tradeValue: z.enum(TRADE_VALUES).optional(),
      fees: z.enum(FEE_TREATMENTS).optional(),
      valuation: z.enum(VALUATIONS).optional(),
      journal: z
        .strictObject({
          costMethod: z.enum(COST_METHODS).optional(),
          posting: z.enum(JOURNAL_POSTINGS).optional(),
          accounts: z.strictObject(Object.fromEntries(JOURNAL_ACCOUNT_KEYS.map((key) => [key, ledgerAccount.optional()])) as Record<(typeof JOURNAL_ACCOUNT_KEYS)[number], z.ZodOptional<typeof ledgerAccount>>).optional(),
        })
        .optional(),
    })
    .optional(),
  reports: z
    .strictObject({
      // Report names are checked against reports/ by the commands (the config module does not load them).
      names: z.array(z.string().regex(/^[a-z][a-z0-9-]*$/, 'a report name such as "pnl"')).min(1).optional(),
      period: z.enum(['month', 'quarter', 'year']).optional(),
      outDir: nonEmpty.optional(),
      detailRowLimit: z
        .number()
        .int('a whole number of rows')
        .min(1, 'at least 1 row')
        .max(MAX_DETAIL_ROW_LIMIT, `at most ${MAX_DETAIL_ROW_LIMIT} rows (a sheet's rows less its header and totals: more would not fit on one sheet)`)
        .optional(),
      ledger: z
        .strictObject({
          minorUnit: z.number().int('a whole number of decimals').min(0).max(12).optional(),
          roundingAccount: ledgerAccount.refine((name) => !/[{}]/.test(name), 'no { or }: the rounding account has no placeholders').optional(),
          dateFormat: z.enum(LEDGER_DATE_FORMATS).optional(),
          xero: z
            .strictObject({
              taxRate: nonEmpty.optional(),
              accountCodes: z.record(z.string().min(1), z.string().regex(/^[A-Za-z0-9._-]{1,10}$/, 'a Xero account code: letters, digits, ".", "-" or "_", at most 10')).optional(),
            })
            .optional(),
        })
        .optional(),
    })
    .optional(),
  logDir: nonEmpty.optional(),
  archive: z.strictObject({ dir: nonEmpty.optional() }).optional(),
});

/** Whether DuckDB and Intl both know this zone name (Intl throws a RangeError for unknown zones). */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** What a command passes in: the flags that override configuration. */
export interface ConfigOverrides {
  /** `--config`: an explicit config file (must exist). */
  configPath?: string;
  db?: string;
  spotBaseUrl?: string;
  contractBaseUrl?: string;
  /** `--time-zone`: the reporting time zone. */
  reportingTimeZone?: string;
  /** `--cost-method`: spot cost methods to build. */
  costMethods?: readonly CostMethod[];
  /** `--pooling`: spot inventory per account or across accounts. */
  pooling?: Pooling;
  /** `--out`: the workbooks' folder. */
  outDir?: string;
  /** `--accounts`: only these configured accounts (comma-separated names, as given). */
  accounts?: string;
  /**
   * Settings in the config file's shape, used instead of reading a config file (`exledger demo`
   * builds its configuration this way); validated like a file.
   */
  values?: unknown;
}

/** Resolves the configuration. `env` defaults to process.env, `cwd` to process.cwd(). */
export function resolveConfig(overrides: ConfigOverrides = {}, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Readonly<Config> {
  const configFile = overrides.values === undefined ? findConfigFile(overrides.configPath, cwd) : null;
  const file = overrides.values !== undefined ? validateSettings(overrides.values, 'settings') : configFile === null ? {} : readConfigFile(configFile);

  const accounts: AccountConfig[] = [...(file.accounts ?? [])];
  const envKey = env.EXLEDGER_API_KEY;
  const envSecret = env.EXLEDGER_API_SECRET;
  const envPassphrase = env.EXLEDGER_API_PASSPHRASE;
  const envCredentials = [envKey, envSecret, envPassphrase].filter((value) => value !== undefined && value !== '');
  if (envCredentials.length > 0) {
    if (envCredentials.length < 3) {
      const missing = [['EXLEDGER_API_KEY', envKey], ['EXLEDGER_API_SECRET', envSecret], ['EXLEDGER_API_PASSPHRASE', envPassphrase]]
        .filter(([, value]) => value === undefined || value === '')
        .map(([name]) => name);
      throw new ConfigError(missing.join(', '), 'is not set, but other API credentials are', {
        hint: `set all three of EXLEDGER_API_KEY, EXLEDGER_API_SECRET and EXLEDGER_API_PASSPHRASE (the exchange's API key, its secret and the passphrase given when the key was made), or none of them and "accounts" in ${DEFAULT_CONFIG_FILE}`,
      });
    }
    // The environment's credentials replace the first account (or make one called `main`).
    const environmentAccount = { name: accounts[0]?.name ?? 'main', apiKey: envKey!, secret: envSecret!, passphrase: envPassphrase! };
    accounts.splice(0, 1, environmentAccount);
  }
  const names = new Set<string>();
  for (const account of accounts) {
    if (names.has(account.name)) {
      throw new ConfigError(`accounts.${account.name}`, 'two accounts have this name; names must be unique', { hint: `give each entry of "accounts" a name of its own, e.g. "${account.name}" and "${account.name}-2"` });
    }
    names.add(account.name);
  }

  const selectedAccounts = overrides.accounts === undefined ? null : parseAccountList(overrides.accounts, '--accounts', accounts.map((account) => account.name));

  const costMethods = overrides.costMethods ?? file.models?.costMethods ?? DEFAULT_MODEL_SETTINGS.costMethods;
  const journal = journalOf(file.models?.journal, costMethods);
  const config: Config = {
    configFile,
    db: overrides.db ?? env.EXLEDGER_DB ?? file.db ?? './data/exledger.duckdb',
    spotBaseUrl: checkUrl('EXLEDGER_SPOT_BASE_URL', overrides.spotBaseUrl ?? env.EXLEDGER_SPOT_BASE_URL) ?? file.spotBaseUrl ?? null,
    contractBaseUrl: checkUrl('EXLEDGER_CONTRACT_BASE_URL', overrides.contractBaseUrl ?? env.EXLEDGER_CONTRACT_BASE_URL) ?? file.contractBaseUrl ?? null,
    accounts: accounts.filter((account) => selectedAccounts === null || selectedAccounts.includes(account.name)).map((account) => Object.freeze(account)),
    selectedAccounts,
    budget: {
      spot: { ...DEFAULT_RATE_BUDGET.spot, ...file.budget?.spot },
      contract: { ...DEFAULT_RATE_BUDGET.contract, ...file.budget?.contract },
      utilization: file.budget?.utilization ?? DEFAULT_RATE_BUDGET.utilization,
      burst: file.budget?.burst ?? DEFAULT_RATE_BUDGET.burst,
    },
    retry: { ...DEFAULT_RETRY, ...file.retry },
    timeoutMs: file.timeoutMs ?? 15_000,
    deadlineMs: file.deadlineMs ?? DEFAULT_DEADLINE_MS,
    maxResponseBytes: file.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    memoryLimit: file.memoryLimit ?? DEFAULT_MEMORY_LIMIT,
    sync: {
      spotSymbols: file.sync?.spotSymbols ?? null,
      quoteCoins: file.sync?.quoteCoins ?? ['USDT', 'USDC', 'BTC', 'ETH'],
      lookbackDays: file.sync?.lookbackDays ?? 1,
      startDate: file.sync?.startDate ?? null,
      maxWindowDays: file.sync?.maxWindowDays ?? 88,
      commitSeconds: file.sync?.commitSeconds ?? 5,
    },
    models: {
      reportingTimeZone: checkTimeZone(overrides.reportingTimeZone) ?? file.models?.reportingTimeZone ?? DEFAULT_MODEL_SETTINGS.reportingTimeZone,
      costMethods,
      pooling: overrides.pooling ?? file.models?.pooling ?? DEFAULT_MODEL_SETTINGS.pooling,
      // Checked against every configured account; a worker keeps those of its own accounts.
      openingPositions: openingPositions(file.models?.openingPositions ?? [], accounts).filter((position) => selectedAccounts === null || selectedAccounts.includes(position.account)),
      reportingCurrency: file.models?.reportingCurrency ?? null,
      prices: pricesFile(file.models?.reportingCurrency, file.models?.pricesFile, configFile === null ? cwd : path.dirname(configFile)),
      ...(journal === undefined ? {} : { journal }),
      books: {
        tradeValue: file.models?.tradeValue ?? DEFAULT_BOOKS_SETTINGS.tradeValue,
        fees: file.models?.fees ?? DEFAULT_BOOKS_SETTINGS.fees,
        valuation: file.models?.valuation ?? DEFAULT_BOOKS_SETTINGS.valuation,
      },
    },
    reports: {
      names: file.reports?.names ?? null,
      period: file.reports?.period ?? 'month',
      outDir: overrides.outDir ?? file.reports?.outDir ?? './out',
      detailRowLimit: file.reports?.detailRowLimit ?? DEFAULT_DETAIL_ROW_LIMIT,
      ledger: {
        minorUnit: file.reports?.ledger?.minorUnit ?? DEFAULT_LEDGER_SETTINGS.minorUnit,
        roundingAccount: file.reports?.ledger?.roundingAccount ?? DEFAULT_LEDGER_SETTINGS.roundingAccount,
        dateFormat: file.reports?.ledger?.dateFormat ?? DEFAULT_LEDGER_SETTINGS.dateFormat,
        xero: {
          taxRate: file.reports?.ledger?.xero?.taxRate ?? DEFAULT_LEDGER_SETTINGS.xero.taxRate,
          accountCodes: { ...DEFAULT_LEDGER_SETTINGS.xero.accountCodes, ...file.reports?.ledger?.xero?.accountCodes },
        },
      },
    },
    logDir: file.logDir ?? './logs',
    archive: { dir: nonEmptyEnvironment(env.EXLEDGER_ARCHIVE_DIR) ?? file.archive?.dir ?? null },
  };
  return deepFreeze(config);
}

/**
 * A comma-separated list of account names (`--accounts a,b`), each a configured account; in the
 * order given, each once.
 * @throws ConfigError naming the first unknown name and listing the configured ones.
 */
export function parseAccountList(list: string, setting: string, configured: readonly string[]): string[] {
  const names = [...new Set(list.split(',').map((name) => name.trim()).filter((name) => name !== ''))];
  const known = configured.length === 0 ? 'no account is configured' : `the configured accounts are ${configured.join(', ')}`;
  const example = configured.length === 0 ? 'main' : configured.slice(0, 2).join(',');
  if (names.length === 0) throw new ConfigError(setting, `name at least one account; ${known}`, { hint: `e.g. ${setting} ${example}` });
  for (const name of names) {
    if (!configured.includes(name)) {
      const meant = closestName(name, configured);
      throw new ConfigError(setting, `"${name}" is not a configured account; ${known}${meant === undefined ? '' : `; did you mean ${meant}?`}`, {
        hint: `check the name (e.g. ${setting} ${meant ?? example}), or add the account to "accounts" in the config file`,
      });
    }
  }
  return names;
}

function findConfigFile(explicit: string | undefined, cwd: string): string | null {
  if (explicit !== undefined) {
    const resolved = path.resolve(cwd, explicit);
    if (!existsSync(resolved)) throw new ConfigError('--config', `the file ${resolved} does not exist`, { hint: `give the path of an existing config file, or leave --config out to read ./${DEFAULT_CONFIG_FILE} when there is one` });
    return resolved;
  }
  const candidate = path.resolve(cwd, DEFAULT_CONFIG_FILE);
  return existsSync(candidate) ? candidate : null;
}

function readConfigFile(file: string): z.infer<typeof fileSchema> {
  const text = readFileSync(file, 'utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text around the error, which may be part of a secret:
    // say where it is, never what is there.
    throw new ConfigError(file, `is not valid JSON ${whereJsonBreaks(text)} (the text there is not shown: the file holds secrets)`, {
      hint: 'fix the JSON there (often a missing or extra comma, quote or brace; keys and strings take double quotes)',
    });
  }
  return validateSettings(json, path.basename(file));
}

/** `at line 3, column 14`, where a JSON parse fails (lossless-json says the position; V8 does not always). */
function whereJsonBreaks(text: string): string {
  try {
    parseLossless(text);
  } catch (error) {
    const position = /at position (\d+)/.exec((error as Error).message);
    if (position !== null) {
      const before = text.slice(0, Number(position[1]));
      const line = before.split('\n').length;
      return `at line ${line}, column ${before.length - before.lastIndexOf('\n')}`;
    }
  }
  return 'somewhere';
}

/** Settings in the config file's shape, validated; errors name `source` and the field. */
function validateSettings(json: unknown, source: string): z.infer<typeof fileSchema> {
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) {
    // A misspelt key is also a required key missing: the misspelling is the one to tell.
    const issue = parsed.error.issues.find((candidate) => candidate.code === 'unrecognized_keys') ?? parsed.error.issues[0]!;
    const where = issue.path.length === 0 ? '(top level)' : issue.path.join('.');
    // The message names the field, never its value: the file holds secrets.
    if (issue.code === 'unrecognized_keys') {
      const known = keysAt(fileSchema, issue.path);
      const unknown = issue.keys[0]!;
      const meant = closestName(unknown, known);
      throw new ConfigError(`${source}: ${where}`, `${issue.message}${meant === undefined ? '' : `; did you mean ${meant}?`}`, {
        hint: `${meant === undefined ? 'remove it' : `rename it to ${meant}`}; the keys ${issue.path.length === 0 ? 'at the top level' : `of ${where}`} are ${known.join(', ')} (docs/reference.md "Configuration")`,
      });
    }
    const key = issue.path.map((step) => (typeof step === 'number' ? '*' : String(step)));
    // A key of a map (models.journal.accounts.tradingFees) has its map's example.
    const example = EXAMPLES[key.join('.')] ?? EXAMPLES[[...key.slice(0, -1), '*'].join('.')];
    throw new ConfigError(`${source}: ${where}`, issue.message, { hint: example === undefined ? 'see docs/reference.md "Configuration" for every key and its form' : `e.g. ${where}: ${example}` });
  }
  return parsed.data;
}

/** The keys of the object the config file's schema expects at `at` (array items through their element). */
function keysAt(schema: z.ZodType, at: readonly PropertyKey[]): string[] {
  const unwrap = (node: unknown): unknown => (node instanceof z.ZodOptional ? unwrap(node.unwrap()) : node);
  let node = unwrap(schema);
  for (const step of at) {
    node = unwrap(node instanceof z.ZodArray ? node.element : node instanceof z.ZodObject ? (node.shape as Record<string, unknown>)[String(step)] : undefined);
  }
  return node instanceof z.ZodObject ? Object.keys(node.shape as Record<string, unknown>) : [];
}

function checkTimeZone(zone: string | undefined): string | undefined {
  if (zone !== undefined && !isTimeZone(zone)) {
    throw new ConfigError('--time-zone', `"${zone}" is not an IANA time zone (e.g. UTC, Europe/Paris, America/New_York)`, { hint: 'give a zone name such as --time-zone Europe/Paris (or set models.reportingTimeZone in the config file)' });
  }
  return zone;
}

/**
 * The prices file, read and validated now (a bad line stops every command before anything is
 * built); a relative path is relative to the config file's folder (else the working directory).
 */
function pricesFile(currency: string | undefined, file: string | undefined, base: string): ModelSettings['prices'] {
  if (file === undefined) return null;
  if (currency === undefined) {
    throw new ConfigError('models.pricesFile', 'is set but models.reportingCurrency is not: say which currency the prices are in', { hint: 'add "reportingCurrency": "USD" (the currency of the prices file) to "models" in the config file' });
  }
  return readPricesFile(path.resolve(base, file));
}

/**
 * models.journal: the spot cost method posted (one of the cost methods built, else its PnL would
 * not exist) and the chart of accounts, each name the file does not give taken from the defaults.
 * Undefined when the file has no models.journal (journalSettings() then gives the defaults).
 */
function journalOf(declared: { costMethod?: CostMethod; posting?: JournalPosting; accounts?: Partial<Record<(typeof JOURNAL_ACCOUNT_KEYS)[number], string | undefined>> } | undefined, costMethods: readonly CostMethod[]): JournalSettings | undefined {
  if (declared === undefined) return undefined;
  const costMethod = declared.costMethod ?? costMethods[0] ?? 'fifo';
  if (!costMethods.includes(costMethod)) {
    throw new ConfigError('models.journal.costMethod', `"${costMethod}" is not one of the cost methods built (${costMethods.join(', ')})`, {
      hint: `set models.journal.costMethod to one of them (e.g. "${costMethods[0]}"), or add "${costMethod}" to models.costMethods`,
    });
  }
  const accounts = { ...DEFAULT_CHART_OF_ACCOUNTS };
  for (const key of JOURNAL_ACCOUNT_KEYS) accounts[key] = declared.accounts?.[key] ?? accounts[key];
  return { costMethod, accounts, posting: declared.posting ?? 'detail' };
}

/** Opening positions name their account; with one account (or none configured yet) it may be left out. */
function openingPositions(declared: readonly { account?: string; symbol: string; quantity: string; cost: string }[], accounts: readonly AccountConfig[]): ModelSettings['openingPositions'] {
  const names = accounts.map((account) => account.name);
  const seen = new Set<string>();
  return declared.map((position, index) => {
    const account = position.account ?? (names.length <= 1 ? (names[0] ?? 'main') : undefined);
    const key = `models.openingPositions.${index}.account`;
    if (account === undefined) throw new ConfigError(key, `several accounts are configured (${names.join(', ')}): say which one holds ${position.symbol}`, { hint: `add "account": "${names[0]}" (or another of them) to that opening position` });
    if (names.length > 0 && !names.includes(account)) {
      const meant = closestName(account, names);
      throw new ConfigError(key, `"${account}" is not a configured account (${names.join(', ')})${meant === undefined ? '' : `; did you mean ${meant}?`}`, { hint: `name one of the configured accounts, e.g. "account": "${meant ?? names[0]}"` });
    }
    if (seen.has(`${account}/${position.symbol}`)) {
      throw new ConfigError(`models.openingPositions.${index}`, `${account} already has an opening position for ${position.symbol}; give one per symbol`, { hint: 'keep one opening position per account and symbol (add the quantities and costs together)' });
    }
    seen.add(`${account}/${position.symbol}`);
    return { account, symbol: position.symbol, quantity: position.quantity, cost: position.cost };
  });
}

/** An environment variable set to something (an empty EXLEDGER_ARCHIVE_DIR= is unset, as cron files often leave it). */
function nonEmptyEnvironment(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

function checkUrl(name: 'EXLEDGER_SPOT_BASE_URL' | 'EXLEDGER_CONTRACT_BASE_URL', value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (!url.safeParse(value).success) throw new ConfigError(name, `"${value}" is not an http(s) URL`, { hint: name === 'EXLEDGER_SPOT_BASE_URL' ? SPOT_BASE_URL_FIX : CONTRACT_BASE_URL_FIX });
  return value;
}

function deepFreeze<T>(value: T): Readonly<T> {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * Who is acting, from the environment (exledger close and reopen record it, unless --by names
 * someone): EXLEDGER_USER, else the login's USER or LOGNAME; undefined when none is set.
 */
export function actorFromEnvironment(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return [env.EXLEDGER_USER, env.USER, env.LOGNAME].find((name) => name !== undefined && name.trim() !== '');
}
