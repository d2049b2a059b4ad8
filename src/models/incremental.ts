import { listValue } from '@duckdb/node-api';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { MODEL_COLUMN, writeComments, type TableDescription } from '../store/comments.ts';
import type { Database } from '../store/database.ts';
import type { MacroFile, Model } from './project.ts';

/**
 * What makes a build incremental (docs/plans/incremental-builds.md): each model's fingerprint and
 * how far it got (settings.model_state), the changes waiting for each model (settings.model_pending),
 * and the staging step that takes the sync's change log (meta.raw_changes) into the typed tables.
 */

/** The pending changes of the model being built, as its incremental step reads them. */
export const PENDING_TABLE = 'temp.main.model_pending';

/**
 * Settings tables that describe the build itself, or hold a model's own saved state (the lot
 * matcher's checkpoints), not what a model computes from: never fingerprinted.
 */
const BOOKKEEPING_SETTINGS = new Set(['model_builds', 'model_state', 'model_pending', 'model_changes', 'spot_lot_state', 'spot_lot_open', 'coin_lot_state']);

/**
 * Staging models whose readers are told which symbols changed, and from when: the columns of the
 * changed rows. Other staging models tell only the account.
 */
const STAGING_CHANGE_COLUMNS: Readonly<Record<string, { symbol?: string; at: string }>> = {
  'staging.spot_fills': { symbol: 'symbol', at: 'c_time_at' },
  'staging.futures_fills': { symbol: 'symbol', at: 'created_time_at' },
  'staging.funding_bills': { at: 'c_time_at' },
  'staging.transfer_records': { at: 'trade_time_at' },
  'staging.affiliate_commissions': { at: 'deal_time_at' },
};

/** A model's saved state: the fingerprint it was built with, and the last raw change a staging model took. */
export interface ModelState {
  fingerprint: string;
  lastChangeSeq: number;
  /** Rows of a staging model's raw tables after its build: a count the log does not explain means rows written outside a sync. */
  rawRows: number | null;
}

export async function ensureStateTables(db: Database): Promise<void> {
  await db.run(`
    CREATE SCHEMA IF NOT EXISTS settings;
    CREATE TABLE IF NOT EXISTS settings.model_state (model VARCHAR NOT NULL, fingerprint VARCHAR NOT NULL, last_change_seq BIGINT NOT NULL, how VARCHAR NOT NULL, built_at TIMESTAMPTZ NOT NULL, raw_rows BIGINT);
    CREATE TABLE IF NOT EXISTS settings.model_pending (model VARCHAR NOT NULL, account VARCHAR, symbol VARCHAR, from_at TIMESTAMPTZ, to_at TIMESTAMPTZ);
    CREATE TABLE IF NOT EXISTS settings.model_changes (change_seq BIGINT NOT NULL, model VARCHAR NOT NULL, account VARCHAR, symbol VARCHAR, from_at TIMESTAMPTZ, recorded_at TIMESTAMPTZ NOT NULL, to_at TIMESTAMPTZ);
    -- (databases from before the change ranges: their rows are all open-ended)
    ALTER TABLE settings.model_pending ADD COLUMN IF NOT EXISTS to_at TIMESTAMPTZ;
    ALTER TABLE settings.model_changes ADD COLUMN IF NOT EXISTS to_at TIMESTAMPTZ;
  `);
  await writeComments(db, STATE_TABLES);
}

/** The end of a bounded change, in settings.model_pending and settings.model_changes alike. */
const TO_AT_COLUMN = { name: 'to_at', description: 'Latest time changed, for a change of some rows before the others (uk replaying a sell of the 30 days before); null: every time from from_at on', unit: 'UTC' };

/** What the incremental build's own tables mean, written as their comments (src/store/comments.ts). */
const STATE_TABLES: readonly TableDescription[] = [
  {
    schema: 'settings',
    table: 'model_state',
    description: 'How far each model got: the fingerprint it was last built with and the last raw change it took, one row per model (docs/plans/incremental-builds.md).',
    columns: [
      MODEL_COLUMN,
      { name: 'fingerprint', description: 'Hash of its SQL, macros, settings read and the fingerprints of the models it reads: another one rebuilds it whole' },
      { name: 'last_change_seq', description: 'Last raw change it took (meta.raw_changes.change_seq); 0 for none', unit: 'count' },
      { name: 'how', description: 'How it was last built: whole, or incremental (only the pending changes)' },
      { name: 'built_at', description: 'When it was last built', unit: 'UTC' },
      { name: 'raw_rows', description: "Rows of a staging model's raw tables after its build (a count the change log does not explain means rows written outside a sync); null for other models", unit: 'count' },
    ],
  },
  {
    schema: 'settings',
    table: 'model_pending',
    description: 'Changes a model has yet to take, passed on by the models it reads: one row per account and symbol changed, and from when.',
    columns: [
      { name: 'model', description: 'Model that has yet to take the change (<layer>.<name>)' },
      { name: 'account', description: 'Account changed; null: everything (a whole rebuild of what it reads)' },
      { name: 'symbol', description: 'Symbol changed; null: every symbol of the account' },
      { name: 'from_at', description: 'Earliest time changed; null: from the start', unit: 'UTC' },
      TO_AT_COLUMN,
    ],
  },
  {
    schema: 'settings',
    table: 'model_changes',
    description:
      "What each build changed in each model's table, for the incremental check (exledger check --changed): one row per account and symbol changed, and from when, written in the model's own transaction; kept 60 days.",
    columns: [
      { name: 'change_seq', description: 'One number per model brought up to date, increasing: a check remembers the last one it covered', unit: 'count' },
      MODEL_COLUMN,
      { name: 'account', description: 'Account changed (the pool, for the spot intermediate models; * every account); null: everything (rebuilt whole)' },
      { name: 'symbol', description: 'Symbol changed; null: every symbol of the account' },
      { name: 'from_at', description: 'Earliest time changed; null: from the start', unit: 'UTC' },
      { name: 'recorded_at', description: 'When the build recorded it', unit: 'UTC' },
      TO_AT_COLUMN,
    ],
  },
];

export async function readState(db: Database, model: string): Promise<ModelState | undefined> {
  const [row] = await db.all<{ fingerprint: string; last_change_seq: string; raw_rows: string | null }>('SELECT fingerprint, last_change_seq, raw_rows FROM settings.model_state WHERE model = $1', [model]);
  return row === undefined ? undefined : { fingerprint: row.fingerprint, lastChangeSeq: Number(row.last_change_seq), rawRows: row.raw_rows === null ? null : Number(row.raw_rows) };
}

/** Records a model's state, in its build's transaction (delete then insert: no key, see settings.model_builds). */
export async function writeState(db: Database, model: string, fingerprint: string, lastChangeSeq: number, how: 'whole' | 'incremental', rawRows: number | null): Promise<void> {
  await db.run('DELETE FROM settings.model_state WHERE model = $1', [model]);
  await db.run('INSERT INTO settings.model_state VALUES ($1, $2, $3, $4, now(), $5)', [model, fingerprint, lastChangeSeq, how, rawRows]);
}

/** The rows of these raw tables now. */
export async function rawRowCount(db: Database, tables: readonly string[]): Promise<number> {
  let rows = 0;
  for (const table of tables) rows += Number((await db.all<{ n: string }>(`SELECT count(*) AS n FROM raw.${table}`))[0]!.n);
  return rows;
}

/**
 * Whether the raw tables hold the rows the log says: the count at the last build, plus the rows
 * each change stored, less those it deleted. Unknown after a reset (which takes the account again whole).
 */
export function explainedByLog(state: ModelState, changes: readonly Change[], rows: number): boolean {
  if (state.rawRows === null || changes.some((change) => change.kind === 'reset')) return true;
  const logged = changes.reduce((sum, change) => sum + Number(change.rows_stored) - (change.deleted_keys?.length ?? 0), 0);
  return state.rawRows + logged === rows;
}

/** The pending rows of a model: none, some, or one with account NULL ("everything"). */
export async function pendingOf(db: Database, model: string): Promise<{ rows: number; everything: boolean }> {
  const [row] = await db.all<{ n: string; everything: boolean | null }>('SELECT count(*) AS n, bool_or(account IS NULL) AS everything FROM settings.model_pending WHERE model = $1', [model]);
  return { rows: Number(row?.n ?? 0), everything: row?.everything === true };
}

/**
 * Gathers a model's pending rows into temp.main.model_pending: one row per account and symbol, the
 * earliest from_at (NULL is earliest), every time from there on.
 *
 * With `ranges` (a model declaring `changeRanges`, whose step reads them): also the bounded rows
 * (to_at not NULL: only the rows from from_at to to_at changed) that start before their account's
 * and symbol's open-ended row (or where there is none), each once; the open-ended rows' to_at is
 * NULL. A model without `ranges` reads a bounded row as open-ended (every time from its from_at on:
 * more than changed, never less).
 */
export async function loadPending(db: Database, model: string, ranges = false): Promise<void> {
  if (!ranges) {
    await db.run(
      `CREATE OR REPLACE TEMP TABLE model_pending AS
       SELECT account, symbol, CASE WHEN bool_or(from_at IS NULL) THEN NULL ELSE min(from_at) END AS from_at
       FROM settings.model_pending WHERE model = $1
       GROUP BY account, symbol`,
      [model],
    );
    return;
  }
  await db.run(
    `CREATE OR REPLACE TEMP TABLE model_pending AS
     WITH rows AS (SELECT * FROM settings.model_pending WHERE model = $1),
     open AS (
       SELECT account, symbol, CASE WHEN bool_or(from_at IS NULL) THEN NULL ELSE min(from_at) END AS from_at, CAST(NULL AS TIMESTAMPTZ) AS to_at, true AS open
       FROM rows WHERE to_at IS NULL
       GROUP BY account, symbol
     )
     SELECT account, symbol, from_at, to_at FROM open
     UNION
     SELECT b.account, b.symbol, b.from_at, b.to_at
     FROM rows AS b
     LEFT JOIN open AS o ON o.account IS NOT DISTINCT FROM b.account AND o.symbol IS NOT DISTINCT FROM b.symbol
     WHERE b.to_at IS NOT NULL AND (o.open IS NULL OR (o.from_at IS NOT NULL AND b.from_at < o.from_at))`,
    [model],
  );
}

/**
 * Hands on what changed to the models that read `model`, and drops its own pending rows: from
 * temp.main.model_pending after an incremental step (with `ranges`, its to_at column too; else
 * every row open-ended), or "everything" after a whole rebuild.
 */
export async function passOn(db: Database, model: string, readers: readonly string[], how: 'whole' | 'incremental', ranges = false): Promise<void> {
  await db.run('DELETE FROM settings.model_pending WHERE model = $1', [model]);
  for (const reader of readers) {
    if (how === 'whole') await db.run('INSERT INTO settings.model_pending (model, account, symbol, from_at, to_at) VALUES ($1, NULL, NULL, NULL, NULL)', [reader]);
    else await db.run(`INSERT INTO settings.model_pending (model, account, symbol, from_at, to_at) SELECT $1, account, symbol, from_at, ${ranges ? 'to_at' : 'NULL'} FROM ${PENDING_TABLE}`, [reader]);
  }
}

/**
 * Days the change records are kept (settings.model_changes): a check whose tests last passed
 * longer ago than this cannot know what changed since, and checks them whole.
 */
export const CHANGES_KEPT_DAYS = 60;

/**
 * Records what a model's build changed, in that build's transaction (so a killed build records
 * nothing, and a committed one always has its record): after a whole rebuild, everything (a row
 * with account NULL); after an incremental step, the rows it hands on (temp.main.model_pending:
 * its rows may differ from before only in those accounts and symbols, at or after from_at; with
 * `ranges`, only up to to_at where it is not NULL).
 */
export async function recordChanges(db: Database, model: string, how: 'whole' | 'incremental', ranges = false): Promise<void> {
  const next = '(SELECT coalesce(max(change_seq), 0) + 1 FROM settings.model_changes)';
  const columns = '(change_seq, model, account, symbol, from_at, recorded_at, to_at)';
  if (how === 'whole') await db.run(`INSERT INTO settings.model_changes ${columns} SELECT ${next}, $1, NULL, NULL, NULL, now(), NULL`, [model]);
  else await db.run(`INSERT INTO settings.model_changes ${columns} SELECT ${next}, $1, account, symbol, from_at, now(), ${ranges ? 'to_at' : 'NULL'} FROM ${PENDING_TABLE}`, [model]);
}

/** Drops the change records older than CHANGES_KEPT_DAYS (each build does, before its models). */
export async function pruneChanges(db: Database): Promise<void> {
  await db.run(`DELETE FROM settings.model_changes WHERE recorded_at < now() - INTERVAL ${CHANGES_KEPT_DAYS} DAY`);
}

/** The raw tables a staging model reads, and the one it takes incrementally (`first_fetches('raw.x')`, one row per key) if any. */
export function rawInputs(model: Model): { tables: string[]; keyed?: string } {
  const code = model.sql.replace(/--[^\n]*/g, '');
  const tables = [...new Set([...code.matchAll(/\braw\.([a-z_][a-z0-9_]*)/gi)].map((match) => match[1]!.toLowerCase()))].sort();
  const keyed = [...code.matchAll(/first_fetches\('raw\.([a-z_][a-z0-9_]*)'\)/gi)];
  return keyed.length === 1 && tables.length === 1 ? { tables, keyed: tables[0]! } : { tables };
}

/** The newest raw change (0 when none was logged). */
export async function lastRawChange(db: Database): Promise<number> {
  const [row] = await db.all<{ seq: string | null }>('SELECT max(change_seq) AS seq FROM meta.raw_changes');
  return row?.seq === null || row?.seq === undefined ? 0 : Number(row.seq);
}

/** A raw change a staging model has not taken yet. */
interface Change {
  change_seq: string;
  rows_stored: string;
  account: string;
  kind: 'window' | 'snapshot' | 'reset';
  min_event_ms: string | null;
  max_event_ms: string | null;
  deleted_keys: string[] | null;
}

export async function changesAfter(db: Database, tables: readonly string[], after: number): Promise<Change[]> {
  if (tables.length === 0) return [];
  return db.all<Change>(
    `SELECT change_seq, account, kind, min_event_ms, max_event_ms, rows_stored, deleted_keys FROM meta.raw_changes
     WHERE raw_table IN (${tables.map((_, index) => `$${index + 2}`).join(', ')}) AND change_seq > $1 ORDER BY change_seq`,
    [after, ...tables],
  );
}

/**
 * The incremental step of a staging model that reads one raw history table by key: every key the
 * changes touched (the rows of their windows, the keys they deleted, every key of a reset account)
 * is parsed again from all its raw rows, with the model's own SQL reading only those rows, so a key
 * keeps the row its first fetch gives (as a whole build). Leaves in temp.main.model_pending, per
 * account (and symbol, for fills), the earliest time among the rows that differ from before (added,
 * changed or gone): nothing when a window read again brought nothing new.
 */
export async function applyStagingChanges(db: Database, model: Model, rawTable: string, changes: readonly Change[]): Promise<void> {
  const columns = STAGING_CHANGE_COLUMNS[model.id];
  await db.run(`CREATE OR REPLACE TEMP TABLE stage_keys (account VARCHAR, _key VARCHAR)`);
  const resets = [...new Set(changes.filter((change) => change.kind === 'reset').map((change) => change.account))];
  for (const [account, low, high] of mergedRanges(changes.filter((change) => change.kind === 'window' && !resets.includes(change.account)))) {
    await db.run(`INSERT INTO temp.main.stage_keys SELECT _account, _key FROM raw.${rawTable} WHERE _account = $1 AND _event_ms BETWEEN $2 AND $3`, [account, low, high]);
  }
  for (const change of changes) {
    if (change.deleted_keys !== null && change.deleted_keys.length > 0) {
      await db.run('INSERT INTO temp.main.stage_keys SELECT $1, unnest($2::VARCHAR[])', [change.account, listValue(change.deleted_keys)]);
    }
  }
  for (const account of resets) {
    await db.run(`INSERT INTO temp.main.stage_keys SELECT account, _key FROM ${model.id} WHERE account = $1`, [account]);
    await db.run(`INSERT INTO temp.main.stage_keys SELECT _account, _key FROM raw.${rawTable} WHERE _account = $1`, [account]);
  }
  await db.run(`CREATE OR REPLACE TEMP TABLE stage_keys AS SELECT DISTINCT account, _key FROM temp.main.stage_keys`);
  // The raw rows of those keys, in stored order (first_fetches breaks ties by it): a build runs
  // with preserve_insertion_order off, which would let the copy take any order.
  await db.withInsertionOrder(() =>
    db.run(
      `CREATE OR REPLACE TEMP TABLE stage_raw AS
       SELECT * EXCLUDE (_row) FROM (
         SELECT r.*, r.rowid AS _row FROM raw.${rawTable} AS r
         SEMI JOIN temp.main.stage_keys AS k ON k.account = r._account AND k._key = r._key
       ) ORDER BY _row`,
    ),
  );
  const touched = `account, ${columns?.symbol ?? 'NULL::VARCHAR'} AS symbol, ${columns?.at ?? 'NULL::TIMESTAMPTZ'} AS changed_at`;
  await db.run(`CREATE OR REPLACE TEMP TABLE stage_previous AS SELECT s.* FROM ${model.id} AS s SEMI JOIN temp.main.stage_keys AS k ON k.account = s.account AND k._key = s._key`);
  const [{ n: previous } = { n: '0' }] = await db.all<{ n: string }>('SELECT count(*) AS n FROM temp.main.stage_previous');
  // The keys' rows as staged now, in the table's columns and types (the rows inserted below, as
  // the table then holds them), made once rather than read back from the table.
  const sql = model.sql.replace(`first_fetches('raw.${rawTable}')`, `first_fetches('temp.main.stage_raw')`);
  await db.run(`CREATE OR REPLACE TEMP TABLE stage_current AS SELECT * FROM ${model.id} LIMIT 0`);
  await db.run(`INSERT INTO temp.main.stage_current BY NAME SELECT * FROM (\n${sql}\n)`);
  // A join (not EXISTS): DuckDB then filters the table's scan by the keys' range (0.2 s to 0.01 s
  // on 10M rows). Keys new to the table (a night's new fills, mostly) have no rows to delete.
  if (previous !== '0') await db.run(`DELETE FROM ${model.id} AS s USING temp.main.stage_keys AS k WHERE k.account = s.account AND k._key = s._key`);
  await db.run(`INSERT INTO ${model.id} SELECT * FROM temp.main.stage_current`);
  // The readers are told the rows that differ (a window read again holds mostly rows as they
  // were); with no previous row, every row staged now is new (no EXCEPT ALL to number them by).
  await db.run(
    previous === '0'
      ? `CREATE OR REPLACE TEMP TABLE model_pending AS
         SELECT account, symbol, min(changed_at) AS from_at
         FROM (SELECT ${touched} FROM temp.main.stage_current)
         GROUP BY account, symbol`
      : `CREATE OR REPLACE TEMP TABLE model_pending AS
         SELECT account, symbol, min(changed_at) AS from_at
         FROM (
           SELECT ${touched} FROM (SELECT * FROM temp.main.stage_previous EXCEPT ALL SELECT * FROM temp.main.stage_current) AS s
           UNION ALL
           SELECT ${touched} FROM (SELECT * FROM temp.main.stage_current EXCEPT ALL SELECT * FROM temp.main.stage_previous) AS s
         )
         GROUP BY account, symbol`,
  );
  await db.run('DROP TABLE temp.main.stage_keys; DROP TABLE temp.main.stage_raw; DROP TABLE temp.main.stage_previous; DROP TABLE temp.main.stage_current');
}

/** The windows' event ranges, per account, with overlapping or touching ranges merged. */
function mergedRanges(changes: readonly Change[]): [string, number, number][] {
  const byAccount = new Map<string, [number, number][]>();
  for (const change of changes) {
    if (change.min_event_ms === null || change.max_event_ms === null) continue;
    const ranges = byAccount.get(change.account) ?? [];
    ranges.push([Number(change.min_event_ms), Number(change.max_event_ms)]);
    byAccount.set(change.account, ranges);
  }
  const merged: [string, number, number][] = [];
  for (const [account, ranges] of byAccount) {
    ranges.sort((a, b) => a[0] - b[0]);
    let current = ranges[0]!;
    for (const range of ranges.slice(1)) {
      if (range[0] <= current[1] + 1) current = [current[0], Math.max(current[1], range[1])];
      else {
        merged.push([account, ...current]);
        current = range;
      }
    }
    merged.push([account, ...current]);
  }
  return merged;
}

/** A digest of each settings table's content (those a model may read), by name. */
export async function settingsDigests(db: Database): Promise<Map<string, string>> {
  const tables = await db.all<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'settings' AND table_catalog = current_database() ORDER BY table_name");
  const digests = new Map<string, string>();
  for (const { table_name: table } of tables) {
    if (BOOKKEEPING_SETTINGS.has(table)) continue;
    const [row] = await db.all<{ digest: string }>(`SELECT md5(coalesce(string_agg(CAST(t AS VARCHAR), chr(10) ORDER BY CAST(t AS VARCHAR)), '')) AS digest FROM settings.${table} AS t`);
    digests.set(table, row!.digest);
  }
  return digests;
}

/**
 * Each model's fingerprint, in build order: a hash of its SQL (or program, and the source files
 * it imports), its incremental step, every macro file, the content of each settings table it
 * names, and the fingerprints of the models it reads. A build whose fingerprint for a model
 * differs from the one its table was built with rebuilds it whole; so an edit anywhere upstream,
 * a new time zone, cost method, opening position, pooling or price file does.
 */
export function fingerprints(models: readonly Model[], macros: readonly MacroFile[], settings: ReadonlyMap<string, string>): Map<string, string> {
  const macroText = macros.map((macro) => macro.sql).join('\n');
  const result = new Map<string, string>();
  for (const model of models) {
    const hash = createHash('sha256');
    hash.update(model.sql).update('\0').update(model.incrementalSql ?? '').update('\0').update(macroText);
    if (model.program !== undefined) for (const source of importedSources(model.file, model.sql)) hash.update('\0').update(source);
    for (const table of [...new Set([...(model.program === undefined ? model.sql.replace(/--[^\n]*/g, '') : model.sql.replace(/\/\/[^\n]*/g, '')).matchAll(/\bsettings\.([a-z_][a-z0-9_]*)/gi)].map((match) => match[1]!.toLowerCase()))].sort()) {
      hash.update(`\0${table}=${settings.get(table) ?? 'absent'}`);
    }
    for (const reference of model.references) hash.update(`\0${reference}=${result.get(reference) ?? 'not built here'}`);
    result.set(model.id, hash.digest('hex'));
  }
  return result;
}

/** The text of the repository source files a program model imports (one level: the code it runs). */
function importedSources(file: string, text: string): string[] {
  const sources: string[] = [];
  for (const match of text.matchAll(/from '(\.{1,2}\/[^']+\.ts)'/g)) {
    const imported = path.resolve(path.dirname(file), match[1]!);
    if (existsSync(imported)) sources.push(readFileSync(imported, 'utf8'));
  }
  return sources;
}
