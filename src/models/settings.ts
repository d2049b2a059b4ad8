import { ACCOUNT_COLUMN, MODEL_COLUMN, writeComments, type TableDescription } from '../store/comments.ts';
import type { Database } from '../store/database.ts';
import type { PricesFile } from './prices-file.ts';

/**
 * How spot disposals are costed: first in first out, moving weighted average, last in first out,
 * highest unit cost first (ties: the earliest lot), or HMRC share pooling (same day, 30 days,
 * section 104 pool). docs/workbooks.md "Conventions".
 */
export const COST_METHODS = ['fifo', 'average', 'lifo', 'hifo', 'uk'] as const;
export type CostMethod = (typeof COST_METHODS)[number];

/**
 * Which units a spot sell is matched with: those of its own account (`account`), or those of
 * every account holding the symbol (`universal`: one inventory per symbol, as HMRC pools per
 * person, not per exchange account). docs/workbooks.md "Conventions".
 */
export const POOLINGS = ['account', 'universal'] as const;
export type Pooling = (typeof POOLINGS)[number];

/**
 * The ledger accounts journal entries are posted to (docs/workbooks.md "Journal entries"). Each is a name as
 * the general ledger knows it; `{coin}` is replaced by the coin of the line, `{account}` by the
 * exchange account's name (of the configuration).
 */
export interface ChartOfAccounts {
  /** The coins held on the exchange, debited when they grow. @default 'Digital assets:{coin}' */
  digitalAssets: string;
  /** Spot and futures realized PnL (credit: gain, debit: loss). @default 'Realized gains and losses' */
  realizedGains: string;
  /** Futures trading and liquidation fees. @default 'Trading fees' */
  tradingFees: string;
  /** Fees of the funding account's bills (withdrawals and other non-trading fees). @default 'Other exchange fees' */
  otherFees: string;
  /** Futures funding received. @default 'Funding income' */
  fundingIncome: string;
  /** Futures funding paid. @default 'Funding expense' */
  fundingExpense: string;
  /** Affiliate commission earned. @default 'Commission income' */
  commissionIncome: string;
  /**
   * Where coins come from or go to outside the exchange account: deposits, withdrawals, c2c trades
   * and transfers between accounts of the database (`{counterpart}`: external, c2c, or the other
   * account's name). @default 'Transfers clearing:{counterpart}'
   */
  transfersClearing: string;
  /**
   * What cannot be valued yet: a movement without a price, or the part of a disposal whose cost is
   * unknown (units held before the history). Its balance is what marts.needs_price and the
   * unmatched disposals leave open, never a gain or a loss. @default 'Suspense:unvalued'
   */
  suspense: string;
  /** Remeasurement to fair value at each period end (models.valuation fair_value). @default 'Unrealized gains and losses' */
  unrealizedGains: string;
  /**
   * Open futures positions at fair value (models.valuation fair_value), against unrealized gains
   * and losses (`{contract}`: the futures contract). @default 'Futures positions:{contract}'
   */
  futuresPositions: string;
}

/** The names of the chart of accounts, in the order the settings table and the README list them. */
export const JOURNAL_ACCOUNT_KEYS = [
  'digitalAssets',
  'realizedGains',
  'tradingFees',
  'otherFees',
  'fundingIncome',
  'fundingExpense',
  'commissionIncome',
  'transfersClearing',
  'suspense',
  'unrealizedGains',
  'futuresPositions',
] as const satisfies readonly (keyof ChartOfAccounts)[];

export const DEFAULT_CHART_OF_ACCOUNTS: Readonly<ChartOfAccounts> = Object.freeze({
  digitalAssets: 'Digital assets:{coin}',
  realizedGains: 'Realized gains and losses',
  tradingFees: 'Trading fees',
  otherFees: 'Other exchange fees',
  fundingIncome: 'Funding income',
  fundingExpense: 'Funding expense',
  commissionIncome: 'Commission income',
  transfersClearing: 'Transfers clearing:{counterpart}',
  suspense: 'Suspense:unvalued',
  unrealizedGains: 'Unrealized gains and losses',
  futuresPositions: 'Futures positions:{contract}',
});

/**
 * Which side of a crypto-to-crypto trade sets its value in the reporting currency: the coin given
 * up (rotki values both sides at the price of the asset spent) or the coin received (HMRC's
 * examples take the disposal's proceeds at the value of the token received, CRYPTO22257).
 */
export const TRADE_VALUES = ['given', 'received'] as const;
export type TradeValue = (typeof TRADE_VALUES)[number];

/**
 * How a spot trade's fee, paid in a coin, is booked: `expense`, a disposal of the coin at its value,
 * expensed as a trading fee; `capitalize`, a disposal of the coin at its value, added to the cost of
 * what a buy acquires or taken from the proceeds of what a sale gives up (HMRC's allowable costs,
 * CRYPTO22280; RP2; Koinly); `in_units`, part of the trade: fewer units acquired or received, no
 * disposal of its own (rotki's include_fees_in_cost_basis; the quote-coin PnL marts' convention).
 */
export const FEE_TREATMENTS = ['expense', 'capitalize', 'in_units'] as const;
export type FeeTreatment = (typeof FEE_TREATMENTS)[number];

/** How holdings are carried at a period end: at cost, or remeasured to the period-end price (US GAAP ASU 2023-08). */
export const VALUATIONS = ['cost', 'fair_value'] as const;
export type Valuation = (typeof VALUATIONS)[number];

/** How the books value movements in the reporting currency (docs/workbooks.md "Books in the reporting currency"). */
export interface BooksSettings {
  /** Which side of a trade sets its value. @default 'given' */
  tradeValue: TradeValue;
  /** How a trade's fee is booked (FEE_TREATMENTS). @default 'expense' */
  fees: FeeTreatment;
  /** Carrying value at period ends. @default 'cost' */
  valuation: Valuation;
}

export const DEFAULT_BOOKS_SETTINGS: Readonly<BooksSettings> = Object.freeze({ tradeValue: 'given', fees: 'expense', valuation: 'cost' });

/**
 * The grain the journal posts at (docs/workbooks.md "Journal entries"): `detail`, an entry per
 * source record (a fill, a bill, a futures contract's day…); `summary`, an entry per exchange
 * account, day, kind and coin, its lines the detail lines summed per ledger account and coin
 * (Cryptio's rolled-up ledger entries, Ledgible's summary sync): for volumes a ledger import cannot
 * take. Every ledger account's balance is the same either way.
 */
export const JOURNAL_POSTINGS = ['detail', 'summary'] as const;
export type JournalPosting = (typeof JOURNAL_POSTINGS)[number];

/** What marts.journal_entries posts with (models.journal). */
export interface JournalSettings {
  /** The spot cost method whose realized PnL is posted (one of costMethods). @default the first of costMethods */
  costMethod: CostMethod;
  /** Ledger account names. @default DEFAULT_CHART_OF_ACCOUNTS */
  accounts: Readonly<ChartOfAccounts>;
  /** The grain posted (JOURNAL_POSTINGS). Optional so that settings written before it existed still type-check. @default 'detail' */
  posting?: JournalPosting;
}

/** A position held before the first synced day: a lot placed before every fill of its symbol. */
export interface OpeningPosition {
  /** The account it belongs to (an account name of the configuration). */
  account: string;
  /** Spot symbol, e.g. `BTCUSDT_SPBL`. */
  symbol: string;
  /** Units of the base coin, a decimal string. */
  quantity: string;
  /** What they cost in the quote coin, a decimal string. */
  cost: string;
}

/** What the models need from configuration; written to the `settings` schema before every build. */
export interface ModelSettings {
  /** IANA zone in which days and months are cut. @default 'UTC' */
  reportingTimeZone: string;
  /** Spot cost methods to build. @default ['fifo'] */
  costMethods: readonly CostMethod[];
  /** Declared opening positions. @default [] */
  openingPositions: readonly OpeningPosition[];
  /** Spot inventory per account, or one per symbol across accounts. @default 'account' */
  pooling: Pooling;
  /**
   * The currency the marts' `*_rc` columns are valued in (docs/workbooks.md "Reporting currency"); null: no
   * valuation (those columns are NULL, marts.needs_price is empty). @default null
   */
  reportingCurrency: string | null;
  /** The prices file (models.pricesFile), read and validated; null: none. @default null */
  prices: PricesFile | null;
  /**
   * The journal's cost method and chart of accounts (models.journal). Optional so that settings
   * written before it existed still type-check; absent: journalSettings() gives the defaults.
   * @default the first cost method, DEFAULT_CHART_OF_ACCOUNTS
   */
  journal?: JournalSettings;
  /** How the books value movements (models.tradeValue, fees, valuation). Optional as journal is. @default DEFAULT_BOOKS_SETTINGS */
  books?: BooksSettings;
}

/** The journal settings in effect: models.journal, else the first cost method and the default accounts. */
export function journalSettings(settings: Pick<ModelSettings, 'costMethods' | 'journal'>): JournalSettings {
  return settings.journal ?? { costMethod: settings.costMethods[0] ?? 'fifo', accounts: DEFAULT_CHART_OF_ACCOUNTS };
}

/** The grain the journal posts at: models.journal.posting, else detail. */
export function journalPosting(settings: Pick<ModelSettings, 'journal'>): JournalPosting {
  return settings.journal?.posting ?? 'detail';
}

/** The journal settings as recorded with each model (settings.model_builds.journal) and shown on the journal workbook. */
export function journalText(settings: Pick<ModelSettings, 'costMethods' | 'journal' | 'books'>): string {
  const journal = journalSettings(settings);
  const books = settings.books ?? DEFAULT_BOOKS_SETTINGS;
  // The posting named only when summary, so the text of a detail journal reads as before.
  const posting = journal.posting === 'summary' ? '; posting summary' : '';
  return `cost method ${journal.costMethod}${posting}; trade value ${books.tradeValue}; fees ${books.fees}; valuation ${books.valuation}; accounts ${JOURNAL_ACCOUNT_KEYS.map((key) => `${key} "${journal.accounts[key]}"`).join(', ')}`;
}

export const DEFAULT_MODEL_SETTINGS: Readonly<ModelSettings> = Object.freeze({
  reportingTimeZone: 'UTC',
  costMethods: Object.freeze(['fifo'] as CostMethod[]),
  openingPositions: Object.freeze([]),
  pooling: 'account',
  reportingCurrency: null,
  prices: null,
});

/** Rows of the prices file per INSERT statement (bound parameters, 6 a row). */
const PRICE_ROWS_PER_INSERT = 500;

/**
 * Writes the settings tables the models read: `settings.reporting` (one row: time_zone,
 * cost_methods, pooling) and `settings.opening_positions`. Values come from validated configuration and
 * go in as parameters; amounts are cast from their decimal strings, never through a JS number.
 */
export async function writeSettings(db: Database, settings: ModelSettings): Promise<void> {
  await db.transaction(async () => {
    await db.run('CREATE SCHEMA IF NOT EXISTS settings');
    await db.run('CREATE OR REPLACE TABLE settings.reporting (time_zone VARCHAR NOT NULL, cost_methods VARCHAR[] NOT NULL, pooling VARCHAR NOT NULL, reporting_currency VARCHAR)');
    await db.run("INSERT INTO settings.reporting SELECT $1, string_split($2, ','), $3, $4", [settings.reportingTimeZone, settings.costMethods.join(','), settings.pooling, settings.reportingCurrency]);
    // The prices file, each line a row: a day's close (price_date) or an instant (price_at).
    await db.run(
      'CREATE OR REPLACE TABLE settings.prices (line INTEGER NOT NULL, price_date DATE, price_at TIMESTAMPTZ, coin VARCHAR NOT NULL, currency VARCHAR NOT NULL, price DECIMAL(38, 18) NOT NULL)',
    );
    const rows = settings.prices?.rows ?? [];
    for (let start = 0; start < rows.length; start += PRICE_ROWS_PER_INSERT) {
      const batch = rows.slice(start, start + PRICE_ROWS_PER_INSERT);
      const values = batch.map((_, index) => `($${index * 6 + 1}, CAST($${index * 6 + 2} AS DATE), CAST($${index * 6 + 3} AS TIMESTAMPTZ), $${index * 6 + 4}, $${index * 6 + 5}, CAST($${index * 6 + 6} AS DECIMAL(38, 18)))`);
      await db.run(`INSERT INTO settings.prices VALUES ${values.join(', ')}`, batch.flatMap((row) => [row.line, row.date, row.at, row.coin, row.currency, row.price]));
    }
    // The journal's cost method, chart of accounts and grain posted (marts.journal_entries), one row.
    const journal = journalSettings(settings);
    await db.run(`CREATE OR REPLACE TABLE settings.journal (cost_method VARCHAR NOT NULL, ${JOURNAL_ACCOUNT_KEYS.map((key) => `${snakeCase(key)} VARCHAR NOT NULL`).join(', ')}, posting VARCHAR NOT NULL)`);
    await db.run(
      `INSERT INTO settings.journal VALUES (${[0, ...JOURNAL_ACCOUNT_KEYS, 0].map((_, index) => `$${index + 1}`).join(', ')})`,
      [journal.costMethod, ...JOURNAL_ACCOUNT_KEYS.map((key) => journal.accounts[key]), journalPosting(settings)],
    );
    // How the books value movements (intermediate.int_coin_events, the roll-forward), one row.
    const books = settings.books ?? DEFAULT_BOOKS_SETTINGS;
    await db.run('CREATE OR REPLACE TABLE settings.books (trade_value VARCHAR NOT NULL, fees VARCHAR NOT NULL, valuation VARCHAR NOT NULL)');
    await db.run('INSERT INTO settings.books VALUES ($1, $2, $3)', [books.tradeValue, books.fees, books.valuation]);
    await db.run(
      'CREATE OR REPLACE TABLE settings.opening_positions (account VARCHAR NOT NULL, symbol VARCHAR NOT NULL, quantity DECIMAL(38, 18) NOT NULL, cost DECIMAL(38, 12) NOT NULL, PRIMARY KEY (account, symbol))',
    );
    for (const position of settings.openingPositions) {
      await db.run('INSERT INTO settings.opening_positions VALUES ($1, $2, CAST($3 AS DECIMAL(38, 18)), CAST($4 AS DECIMAL(38, 12)))', [position.account, position.symbol, position.quantity, position.cost]);
    }
    // No PRIMARY KEY: recordModelBuild deletes a model's row before inserting it. DuckDB's index
    // behind a key could not take a full disk: a commit that failed writing left the index
    // holding a key its rows did not, and the next build's insert of that model aborted the
    // process (FatalException "duplicate key", no error line). A model has one row, checked
    // by test/disk-full.test.ts.
    await db.run(
      'CREATE TABLE IF NOT EXISTS settings.model_builds (model VARCHAR NOT NULL, time_zone VARCHAR NOT NULL, cost_methods VARCHAR[] NOT NULL, opening_positions VARCHAR NOT NULL, built_at TIMESTAMPTZ NOT NULL, pooling VARCHAR)',
    );
    // A database whose builds predate pooling: its tables were built per account (a null pooling reads as 'account').
    await db.run('ALTER TABLE settings.model_builds ADD COLUMN IF NOT EXISTS pooling VARCHAR');
    // Added with the reporting currency: a database built before keeps its rows (NULL: none).
    await db.run('ALTER TABLE settings.model_builds ADD COLUMN IF NOT EXISTS reporting_currency VARCHAR');
    await db.run('ALTER TABLE settings.model_builds ADD COLUMN IF NOT EXISTS prices VARCHAR');
    // Added with the journal: its cost method and accounts (journalText). Not part of
    // describeBuildSettings: only marts.journal_entries depends on it and nothing reads that mart.
    await db.run('ALTER TABLE settings.model_builds ADD COLUMN IF NOT EXISTS journal VARCHAR');
    await dropModelBuildsKey(db);
    // CREATE OR REPLACE dropped the comments: written again, in the same transaction.
    await writeComments(db, SETTINGS_TABLES);
  });
}

/** A ledger account name of the chart of accounts, as settings.journal holds it. */
const JOURNAL_ACCOUNT_MEANINGS: Readonly<Record<(typeof JOURNAL_ACCOUNT_KEYS)[number], string>> = {
  digitalAssets: 'the coins held on the exchange, debited when they grow ({coin}: the coin of the line)',
  realizedGains: 'spot and futures realized PnL (credit: gain, debit: loss)',
  tradingFees: 'futures trading and liquidation fees',
  otherFees: "fees of the funding account's bills (withdrawals and other non-trading fees)",
  fundingIncome: 'futures funding received',
  fundingExpense: 'futures funding paid',
  commissionIncome: 'affiliate commission earned',
  transfersClearing: 'deposits, withdrawals, c2c trades and transfers between accounts ({counterpart}: external, c2c or the other account)',
  suspense: 'what cannot be valued yet: a movement without a price, the part of a disposal of unknown cost',
  unrealizedGains: 'remeasurement of holdings to the period-end price (models.valuation fair_value)',
  futuresPositions: 'open futures positions at fair value (models.valuation fair_value; {contract}: the contract)',
};

/**
 * What the settings tables mean (the configuration the models were built with, and the build's
 * own bookkeeping), written as their comments (src/store/comments.ts). settings.model_state and
 * settings.model_pending are described in incremental.ts, settings.spot_lot_state and settings.spot_lot_open by their model.
 */
export const SETTINGS_TABLES: readonly TableDescription[] = [
  {
    schema: 'settings',
    table: 'reporting',
    description: 'The reporting settings of the last build (models in the configuration), one row.',
    columns: [
      { name: 'time_zone', description: 'Time zone of days and months in the reports (models.reportingTimeZone), an IANA name' },
      { name: 'cost_methods', description: 'Spot cost methods computed (fifo, average, lifo, hifo, uk), the first one the default' },
      { name: 'pooling', description: "Which lots a spot sell is matched with: account (its own account's) or universal (every account's)" },
      { name: 'reporting_currency', description: 'Currency figures are also valued in (models.reportingCurrency); null when none is set', unit: 'currency code' },
    ],
  },
  {
    schema: 'settings',
    table: 'prices',
    description: "The prices file (models.prices), one row per line: a day's close or a price at an instant, of one coin in one currency.",
    columns: [
      { name: 'line', description: 'Line of the prices file', unit: 'count' },
      { name: 'price_date', description: "Day whose close the price is (null for a price at an instant)", unit: 'reporting time zone day' },
      { name: 'price_at', description: 'Instant of the price (null for a day close)', unit: 'UTC' },
      { name: 'coin', description: 'Coin priced', unit: 'coin code' },
      { name: 'currency', description: 'Currency of the price', unit: 'currency code' },
      { name: 'price', description: 'Price of one unit of coin', unit: 'coin: currency per unit of coin' },
    ],
  },
  {
    schema: 'settings',
    table: 'journal',
    description: 'The journal settings of the last build (models.journal): the spot cost method posted, the ledger account names and the grain posted, one row.',
    columns: [
      { name: 'cost_method', description: "Spot cost method whose realized PnL marts.journal_entries posts" },
      ...JOURNAL_ACCOUNT_KEYS.map((key) => ({ name: snakeCase(key), description: `Ledger account name of ${JOURNAL_ACCOUNT_MEANINGS[key]}` })),
      { name: 'posting', description: 'The grain marts.journal_entries posts at (models.journal.posting): detail (an entry per source record) or summary (an entry per account, day, kind and coin)' },
    ],
  },
  {
    schema: 'settings',
    table: 'books',
    description: 'How the books value movements in the reporting currency (models.tradeValue, models.fees, models.valuation), one row.',
    columns: [
      { name: 'trade_value', description: 'Which side of a crypto-to-crypto trade sets its value: given (the coin given up) or received' },
      { name: 'fees', description: "How a trade's fee paid in a coin is booked: expense (a disposal, expensed), capitalize (a disposal, in the trade's cost or proceeds) or in_units (fewer units, no disposal)" },
      { name: 'valuation', description: 'Carrying value at period ends: cost, or fair_value (remeasured to the period-end price)' },
    ],
  },
  {
    schema: 'settings',
    table: 'opening_positions',
    description: 'Positions held before the first synced day (models.openingPositions): a lot placed before every fill of its symbol. Key: (account, symbol).',
    columns: [
      ACCOUNT_COLUMN,
      { name: 'symbol', description: 'Spot symbol, e.g. BTCUSDT_SPBL' },
      { name: 'quantity', description: 'Units held', unit: 'coin: base coin of symbol' },
      { name: 'cost', description: 'What they cost', unit: 'coin: quote coin of symbol' },
    ],
  },
  {
    schema: 'settings',
    table: 'model_builds',
    description: 'The settings each model was last built with, one row per model: a workbook describes its marts with them, and a build with other settings rebuilds what they change.',
    columns: [
      MODEL_COLUMN,
      { name: 'time_zone', description: 'Reporting time zone it was built with, an IANA name' },
      { name: 'cost_methods', description: 'Spot cost methods it was built with' },
      { name: 'opening_positions', description: 'Opening positions it was built with, as sorted JSON' },
      { name: 'built_at', description: 'When it was last built', unit: 'UTC' },
      { name: 'pooling', description: 'Pooling it was built with (account, universal); null: built before pooling existed (per account)' },
      { name: 'reporting_currency', description: 'Reporting currency it was built with; null when none', unit: 'currency code' },
      { name: 'prices', description: "Prices file it was built with: its name and the start of its sha256; null when none" },
      { name: 'journal', description: "Journal settings it was built with: spot cost method and ledger account names" },
    ],
  },
];

/** A settings.model_builds of an earlier version has a PRIMARY KEY on model: copied into one without. */
async function dropModelBuildsKey(db: Database): Promise<void> {
  const keys = await db.all("SELECT 1 FROM duckdb_constraints() WHERE schema_name = 'settings' AND table_name = 'model_builds' AND constraint_type = 'PRIMARY KEY'");
  if (keys.length === 0) return;
  await db.run('CREATE TABLE settings.model_builds_unkeyed AS SELECT * FROM settings.model_builds');
  await db.run('DROP TABLE settings.model_builds');
  await db.run('ALTER TABLE settings.model_builds_unkeyed RENAME TO model_builds');
}

/**
 * Records, inside the transaction that builds a model, the settings it was built with
 * (`settings.model_builds`): a model that fails, or a build killed before it, keeps its previous
 * table and the row that describes it, so a workbook describes its marts, never the settings of
 * a build that did not reach them.
 */
export async function recordModelBuild(db: Database, model: string, settings: ModelSettings): Promise<void> {
  await db.run('DELETE FROM settings.model_builds WHERE model = $1', [model]);
  await db.run(
    "INSERT INTO settings.model_builds (model, time_zone, cost_methods, opening_positions, built_at, pooling, reporting_currency, prices, journal) VALUES ($1, $2, string_split($3, ','), $4, now(), $5, $6, $7, $8)",
    [model, settings.reportingTimeZone, settings.costMethods.join(','), openingPositionsText(settings.openingPositions), settings.pooling, settings.reportingCurrency, pricesText(settings.prices), journalText(settings)],
  );
}

/**
 * How the settings a model was last built with (settings.model_builds) differ from `settings`:
 * undefined when they are the same, else one phrase naming both (`was built with time zone UTC, …;
 * this build has time zone Europe/Paris, …`), or saying that no settings are recorded for it.
 */
export async function otherBuildSettings(db: Database, model: string, settings: ModelSettings): Promise<string | undefined> {
  const [row] = await db.all<BuildSettingsRow>(
    "SELECT time_zone, cost_methods, opening_positions, coalesce(pooling, 'account') AS pooling, reporting_currency, prices FROM settings.model_builds WHERE model = $1",
    [model],
  );
  if (row === undefined) return 'has no record of the settings it was built with';
  const built = describeBuildSettings(row);
  const wanted = describeBuildSettings({
    time_zone: settings.reportingTimeZone,
    cost_methods: [...settings.costMethods],
    opening_positions: openingPositionsText(settings.openingPositions),
    pooling: settings.pooling,
    reporting_currency: settings.reportingCurrency,
    prices: pricesText(settings.prices),
  });
  return built === wanted ? undefined : `was built with ${built}; this build has ${wanted}`;
}

/** A row of settings.model_builds, without its model and time (columns added later may be missing or NULL). */
export interface BuildSettingsRow {
  time_zone: string;
  cost_methods: string[];
  opening_positions: string;
  pooling?: string | null;
  reporting_currency?: string | null;
  prices?: string | null;
}

/**
 * The settings a model was built with, as one comparable phrase (also in the reports' refusals).
 * Pooling is named only when universal and the valuation only when a currency is set, so builds
 * without them read as before.
 */
export function describeBuildSettings(row: BuildSettingsRow): string {
  const pooling = row.pooling ?? 'account';
  const pooled = pooling === 'account' ? '' : `, pooling ${pooling}`;
  const opening = row.opening_positions === '[]' ? 'none' : row.opening_positions;
  const currency = row.reporting_currency ?? null;
  const valuation = currency === null ? '' : `, reporting currency ${currency}, prices ${row.prices ?? 'none'}`;
  return `time zone ${row.time_zone}, cost methods ${row.cost_methods.join(', ')}${pooled}, opening positions ${opening}${valuation}`;
}

/** The prices file as recorded with each model: its name and the start of its SHA-256 (what was read, not only where). */
export function pricesText(prices: PricesFile | null): string | null {
  return prices === null ? null : `${prices.file.split(/[\\/]/).pop()!} sha256:${prices.sha256.slice(0, 16)}`;
}

/** The opening positions as one comparable text (sorted JSON). */
function openingPositionsText(positions: readonly OpeningPosition[]): string {
  const sorted = [...positions].sort((a, b) => `${a.account}\u0000${a.symbol}`.localeCompare(`${b.account}\u0000${b.symbol}`));
  return JSON.stringify(sorted.map(({ account, symbol, quantity, cost }) => ({ account, symbol, quantity, cost })));
}

/** `digitalAssets` → `digital_assets`: the settings.journal column of a chart-of-accounts key. */
function snakeCase(key: string): string {
  return key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}
