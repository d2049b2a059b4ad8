import { statSync } from 'node:fs';
import { DatabaseBusyError, DiskFullError } from '../errors.ts';
import { expandChanged, mergePartitions, readChangeLog, type ChangeLog } from '../models/check-scope.ts';
import type { ModelDeclaration } from '../models/declaration.ts';
import { sqlString } from './comments.ts';
import { chooseCompaction, type ThinnedTable } from './compaction.ts';
import { Database } from './database.ts';
import { quoteIdentifier } from './sql-text.ts';
import { SET_WRITE_COMPRESSION } from './storage-settings.ts';

/**
 * The incremental publish (docs/plans/incremental-publish.md): brings the standby copy of the
 * database, a past state of it published two nights ago, up to date by what changed since, table
 * by table, in one transaction on the standby. What it lacks is read from its own bookkeeping
 * against the database's: raw rows from meta.raw_changes, models from settings.model_state and
 * the builds' record settings.model_changes, closed periods from meta.period_closes; every other
 * table (bookkeeping and settings) gets its rows that differ (copyDifference).
 */

/** Where a model's changed rows lie: its declaration's `changes` (src/models/declaration.ts). */
export interface RowPlacement {
  changes: NonNullable<ModelDeclaration['changes']>;
}

/** What bringing the standby up to date did, or why it could not (then the caller copies the whole file). */
export type StandbyOutcome =
  | {
      updated: true;
      /** Tables the standby was changed in (`schema.table`). */
      tables: string[];
      /** Tables in the database. */
      of: number;
      /** Rows inserted into the standby (a table copied whole counts all its rows). */
      rows: number;
      /** Tables of the standby its checkpoint compacted (none: it vacuumed nothing). */
      compacted: ThinnedTable[];
      /** Where the time went, ms per step (for benchmarks). */
      phases: Record<string, number>;
    }
  | { updated: false; why: string };

/**
 * More than this share of the database's rows to copy table by table, and a file copy is faster:
 * the kernel copies bytes, while DuckDB decodes and encodes every row it inserts.
 */
const MOST_OF_THE_DATABASE = 0.25;

/** Names the two databases get in the session that compares them. */
const SOURCE = 'exledger_source';
const STANDBY = 'exledger_standby';

/**
 * Brings `standby` (a copy of `db` published earlier) up to date with `db`, or says why it cannot
 * and leaves it as it was. `db` is checkpointed and nobody writes it meanwhile (the caller holds
 * the sync lock); the standby is not published (no new opener reaches it).
 * @throws DiskFullError when the disk is full (the standby keeps its state: nothing committed).
 */
export async function updateStandby(db: string, standby: string, placements: ReadonlyMap<string, RowPlacement>): Promise<StandbyOutcome> {
  // An in-memory session, the two files attached: neither is opened as a Database of ours (no
  // bookkeeping tables created in them), and the database only for reading.
  const phases: Record<string, number> = {};
  let mark = performance.now();
  const phase = (name: string) => {
    const now = performance.now();
    phases[name] = (phases[name] ?? 0) + now - mark;
    mark = now;
  };
  const session = await Database.open(':memory:', { bookkeeping: false });
  try {
    await session.run(`SET temp_directory = ${sqlString(`${db}.tmp`)}`);
    // As the build writes its tables (src/store/storage-settings.ts): analysing the 128-bit amounts
    // for bitpacking is most of the time DuckDB takes to write them, here in the checkpoint that
    // rewrites each changed table's last row groups.
    await session.run(SET_WRITE_COMPRESSION);
    try {
      // A read lock: nobody opens the database for writing while the standby is brought up to date.
      await session.run(`ATTACH ${sqlString(db)} AS ${SOURCE} (READ_ONLY)`);
    } catch (error) {
      if (!/lock/i.test(firstLine(error))) throw error;
      throw new DatabaseBusyError(db, 'is open in another process (a running sync, or a client holding it for writing)', { hint: 'wait for it to finish, then try again', cause: error });
    }
    try {
      await session.run(`ATTACH ${sqlString(standby)} AS ${STANDBY}`);
    } catch (error) {
      return { updated: false, why: standbyUnusable(standby, error) };
    }
    await session.run(`USE ${SOURCE}`);
    phase('attach');
    // The rows replaced stay stored in the copy until one of its tables is thinned enough to be
    // worth compacting (src/store/compaction.ts): the database's build decides so for its own.
    const compacted = await chooseCompaction(session, STANDBY);
    phase('count deleted rows');

    const difference = await schemaDifference(session);
    phase('schema');
    if (difference !== undefined) return { updated: false, why: `the schema changed (${difference})` };

    const tables = await tablesOf(session);
    const state = await standbyState(session, tables);
    if ('why' in state) return { updated: false, why: state.why };
    const plans = await planTables(session, tables, state, placements);
    phase('plan');
    const whole = plans.filter((plan) => plan.kind === 'whole').reduce((sum, plan) => sum + plan.table.rows, 0);
    const all = tables.reduce((sum, table) => sum + table.rows, 0);
    if (whole > MOST_OF_THE_DATABASE * all) {
      return { updated: false, why: `most of the database changed: ${whole.toLocaleString('en-US')} of its ${all.toLocaleString('en-US')} rows are in tables rebuilt whole (${describeWhole(plans)})` };
    }

    const same = await sameSmallTables(session, plans);
    phase('compare the small tables');
    const changed = plans.filter((plan): plan is Exclude<TablePlan, { kind: 'skip' }> => plan.kind !== 'skip' && !same.has(plan.table.id));
    let rows = 0;
    try {
      await session.transaction(async () => {
        for (const plan of changed) {
          rows += await applyPlan(session, plan);
          phase(plan.kind === 'whole' ? `copy ${plan.table.id} whole (${plan.why})` : plan.kind === 'difference' ? `copy the rows that differ of ${plan.table.id}` : `copy rows of ${plan.table.id}`);
        }
        await alignSequences(session);
        const disagreement = await countDisagreement(session, tables);
        phase('count rows');
        if (disagreement !== undefined) throw new CountDisagreement(disagreement);
      });
    } catch (error) {
      if (error instanceof CountDisagreement) return { updated: false, why: error.message };
      throw error;
    }
    phase('commit');
    await session.run(`CHECKPOINT ${STANDBY}`);
    phase('checkpoint the copy');
    return { updated: true, tables: changed.map((plan) => plan.table.id), of: tables.length, rows, compacted, phases };
  } catch (error) {
    if (error instanceof DiskFullError || error instanceof DatabaseBusyError || session.diskFullError !== undefined) throw error;
    // Anything else the incremental way met (a statement DuckDB refused): the whole file is copied
    // instead, and the reason said.
    return { updated: false, why: `the incremental copy failed (${firstLine(error)})` };
  } finally {
    session.close();
  }
}

class CountDisagreement extends Error {}

/** Why the standby could not be opened for writing: an analyst holding it (DuckDB's lock), or a broken file. */
function standbyUnusable(standby: string, error: unknown): string {
  const message = firstLine(error);
  if (/lock/i.test(message)) {
    const pid = /\(PID (\d+)\)/.exec(message)?.[1];
    let published = '';
    try {
      published = ` published ${statSync(standby).mtime.toISOString()}`;
    } catch {
      // Only the date is missing from the reason.
    }
    return `an analyst still has the other copy${published} open${pid === undefined ? '' : ` (process ${pid})`}`;
  }
  return `the other copy does not open (${message})`;
}

/**
 * The first difference between the two catalogs, if any: schemas, tables (their CREATE
 * statement: columns, types, constraints), columns, views, macros, sequences (not their
 * counters), indexes and types, each with its comment.
 */
async function schemaDifference(session: Database): Promise<string | undefined> {
  const both = `database_name IN ('${SOURCE}', '${STANDBY}')`;
  const comment = "coalesce(' -- ' || comment, '')";
  const [row] = await session.all<{ difference: string }>(`
    WITH lines AS (
      SELECT database_name AS db, 'schema ' || schema_name || ${comment} AS line FROM duckdb_schemas() WHERE ${both}
      UNION ALL SELECT database_name, 'table ' || schema_name || '.' || table_name || ': ' || sql || ${comment} FROM duckdb_tables() WHERE ${both}
      UNION ALL SELECT database_name, 'column ' || schema_name || '.' || table_name || '.' || column_name || ' ' || data_type || ${comment} FROM duckdb_columns() WHERE ${both}
      UNION ALL SELECT database_name, 'view ' || schema_name || '.' || view_name || ': ' || sql || ${comment} FROM duckdb_views() WHERE ${both} AND NOT internal
      UNION ALL SELECT database_name, 'macro ' || schema_name || '.' || function_name || '(' || array_to_string(parameters, ', ') || '): ' || coalesce(macro_definition, '') || ${comment}
        FROM duckdb_functions() WHERE ${both} AND function_type IN ('macro', 'table_macro') AND NOT internal
      UNION ALL SELECT database_name, 'sequence ' || schema_name || '.' || sequence_name || ' increment ' || increment_by || ' from ' || min_value || ' to ' || max_value || CASE WHEN cycle THEN ' cycle' ELSE '' END || ${comment}
        FROM duckdb_sequences() WHERE ${both}
      UNION ALL SELECT database_name, 'index ' || schema_name || '.' || index_name || ': ' || coalesce(sql, '') || ${comment} FROM duckdb_indexes() WHERE ${both}
      UNION ALL SELECT database_name, 'type ' || schema_name || '.' || type_name || ' ' || logical_type || ${comment} FROM duckdb_types() WHERE ${both} AND NOT internal
    )
    SELECT difference FROM (
      SELECT 1 AS side, 'only in the database: ' || line AS difference FROM (SELECT line FROM lines WHERE db = '${SOURCE}' EXCEPT ALL SELECT line FROM lines WHERE db = '${STANDBY}')
      UNION ALL
      SELECT 2, 'only in the copy: ' || line FROM (SELECT line FROM lines WHERE db = '${STANDBY}' EXCEPT ALL SELECT line FROM lines WHERE db = '${SOURCE}')
    )
    ORDER BY side, difference
    LIMIT 1`);
  if (row === undefined) return undefined;
  return row.difference.length > 160 ? `${row.difference.slice(0, 160)}…` : row.difference;
}

/** A table of the database. */
interface Table {
  schema: string;
  name: string;
  /** `schema.name`: a model's id for a model's table. */
  id: string;
  /** `"schema"."name"`, for SQL. */
  sql: string;
  /** DuckDB's estimate of its rows. */
  rows: number;
  /** A raw history table (`_event_ms`), a raw snapshot table, or another. */
  kind: 'history' | 'snapshot' | 'other';
}

async function tablesOf(session: Database): Promise<Table[]> {
  const rows = await session.all<{ schema_name: string; table_name: string; estimated_size: string; event_ms: boolean }>(
    `SELECT t.schema_name, t.table_name, t.estimated_size,
       EXISTS (SELECT 1 FROM duckdb_columns() AS c WHERE c.database_name = t.database_name AND c.schema_name = t.schema_name AND c.table_name = t.table_name AND c.column_name = '_event_ms') AS event_ms
     FROM duckdb_tables() AS t WHERE t.database_name = '${SOURCE}' ORDER BY t.schema_name, t.table_name`,
  );
  return rows.map((row) => ({
    schema: row.schema_name,
    name: row.table_name,
    id: `${row.schema_name}.${row.table_name}`,
    sql: `${quoteIdentifier(row.schema_name)}.${quoteIdentifier(row.table_name)}`,
    rows: Number(row.estimated_size),
    kind: row.schema_name !== 'raw' ? 'other' : row.event_ms ? 'history' : 'snapshot',
  }));
}

/** A point of a log: its last row's number and when it was recorded (so another database's log is not taken for it). */
interface Mark {
  seq: number;
  at: string;
}

/** What the standby holds, as its own logs say, against the database's. */
interface StandbyState {
  /** The last raw change it holds (0: none). */
  rawSeq: number;
  /** The database's builds' record since the standby's last one; undefined when the standby has none (a changed model is then copied whole). */
  modelChanges: { log: ChangeLog; after: number } | undefined;
  /** Models whose settings.model_state row differs between the two (changed since). */
  changedModels: Set<string>;
  /** Models the database's settings.model_state records. */
  recordedModels: Set<string>;
  /** Whether a period was closed or reopened since (meta.period_closes differs). */
  closesChanged: boolean;
}

/**
 * What the standby holds: its last raw change and build record, which the database must hold too
 * (else it is not a past state of this database), the models changed since, and whether a period
 * was closed or reopened since.
 */
async function standbyState(session: Database, tables: readonly Table[]): Promise<StandbyState | { why: string }> {
  const has = (id: string) => tables.some((table) => table.id === id);
  const rawMark = has('meta.raw_changes') ? await lastMark(session, 'meta.raw_changes') : undefined;
  const modelMark = has('settings.model_changes') ? await lastMark(session, 'settings.model_changes') : undefined;
  if (rawMark === undefined && modelMark === undefined) return { why: 'the other copy holds no record of raw changes or builds to start from' };
  if (rawMark !== undefined) {
    const [held] = await session.all('SELECT 1 FROM meta.raw_changes WHERE change_seq = $1 AND CAST(recorded_at AS VARCHAR) = $2', [rawMark.seq, rawMark.at]);
    if (held === undefined) return { why: `the other copy is not a past state of this database: its last raw change (${rawMark.seq}) is not the database's` };
  }
  let modelChanges: StandbyState['modelChanges'];
  if (modelMark !== undefined) {
    const log = await readChangeLog(session, [modelMark]);
    if (!log.holds(modelMark)) return { why: `the other copy's last build record (${modelMark.seq}) is not in the database's: another database, or a record pruned since (kept 60 days)` };
    modelChanges = { log, after: modelMark.seq };
  }
  const changedModels = new Set<string>();
  const recordedModels = new Set<string>();
  if (has('settings.model_state')) {
    for (const row of await session.all<{ model: string }>('SELECT DISTINCT model FROM settings.model_state')) recordedModels.add(row.model);
    for (const row of await session.all<{ model: string }>(
      `SELECT model FROM (FROM ${SOURCE}.settings.model_state EXCEPT ALL FROM ${STANDBY}.settings.model_state)
       UNION SELECT model FROM (FROM ${STANDBY}.settings.model_state EXCEPT ALL FROM ${SOURCE}.settings.model_state)`,
    )) {
      changedModels.add(row.model);
    }
  }
  const closesChanged = !has('meta.period_closes') || (await differs(session, 'meta.period_closes'));
  return { rawSeq: rawMark?.seq ?? 0, modelChanges, changedModels, recordedModels, closesChanged };
}

async function lastMark(session: Database, table: string): Promise<Mark | undefined> {
  const [row] = await session.all<{ seq: string; at: string }>(`SELECT change_seq AS seq, CAST(recorded_at AS VARCHAR) AS at FROM ${STANDBY}.${table} ORDER BY change_seq DESC LIMIT 1`);
  return row === undefined ? undefined : { seq: Number(row.seq), at: row.at };
}

async function differs(session: Database, table: string): Promise<boolean> {
  const [row] = await session.all<{ n: string }>(`SELECT ${rowsThatDiffer(table)} AS n`);
  return row?.n !== '0';
}

/** SQL counting the rows `table` (`schema.name`, quoted as needed) holds in one copy and not the other, as often as held. */
function rowsThatDiffer(table: string): string {
  const [source, target] = [`${SOURCE}.${table}`, `${STANDBY}.${table}`];
  return `(SELECT count(*) FROM ((FROM ${source} EXCEPT ALL FROM ${target}) UNION ALL (FROM ${target} EXCEPT ALL FROM ${source})))`;
}

/** What to do with one table: nothing, copy it whole, or replace the rows a condition selects. */
type TablePlan = { table: Table; kind: 'skip' } | { table: Table; kind: 'whole'; why: string } | { table: Table; kind: 'rows'; where: string } | { table: Table; kind: 'difference' };

const MODEL_SCHEMAS = new Set(['staging', 'intermediate', 'marts']);

async function planTables(session: Database, tables: readonly Table[], state: StandbyState, placements: ReadonlyMap<string, RowPlacement>): Promise<TablePlan[]> {
  const rawChanges = tables.some((table) => table.id === 'meta.raw_changes')
    ? await session.all<{ raw_table: string; account: string; kind: string; min_event_ms: string | null; max_event_ms: string | null }>(
        'SELECT raw_table, account, kind, min_event_ms, max_event_ms FROM meta.raw_changes WHERE change_seq > $1',
        [state.rawSeq],
      )
    : [];
  const plans: TablePlan[] = [];
  for (const table of tables) {
    if (table.schema === 'raw') {
      plans.push(planRaw(table, rawChanges.filter((change) => change.raw_table === table.name)));
    } else if (MODEL_SCHEMAS.has(table.schema)) {
      plans.push(planModel(table, state, placements));
    } else if (table.schema === 'closed' || table.id === 'meta.closed_workbooks') {
      plans.push(state.closesChanged ? { table, kind: 'whole', why: 'a period was closed or reopened' } : { table, kind: 'skip' });
    } else {
      // Bookkeeping: only the rows that differ. The build's open lots (settings.spot_lot_open) hold
      // 776k rows on the 10M benchmark's history, of which a night changes a few thousand; copied
      // whole, they were half the rows of the night's publish.
      plans.push({ table, kind: 'difference' });
    }
  }
  return plans;
}

/**
 * A raw table: a history table's rows of the changed windows (every row a window stores or
 * deletes lies in its event range, src/store/raw-store.ts), a reset account's rows; a snapshot
 * table's rows from the account's first new snapshot on (snapshots are only ever added).
 */
function planRaw(table: Table, changes: readonly { account: string; kind: string; min_event_ms: string | null; max_event_ms: string | null }[]): TablePlan {
  if (changes.length === 0) return { table, kind: 'skip' };
  const resets = new Set(changes.filter((change) => change.kind === 'reset').map((change) => change.account));
  if (table.kind === 'snapshot') return planSnapshots(table, changes, resets);
  const ranges = new Map<string, [bigint, bigint][]>();
  for (const change of changes) {
    if (change.kind !== 'window' || resets.has(change.account)) continue;
    // A window without an event range: the account's rows, as for a reset.
    if (change.min_event_ms === null || change.max_event_ms === null) {
      resets.add(change.account);
      continue;
    }
    ranges.set(change.account, [...(ranges.get(change.account) ?? []), [BigInt(change.min_event_ms), BigInt(change.max_event_ms)]]);
  }
  const alternatives = [...resets].map((account) => `_account = ${sqlString(account)}`);
  let low: bigint | undefined;
  for (const [account, windows] of ranges) {
    if (resets.has(account)) continue;
    for (const [from, to] of mergeRanges(windows)) {
      alternatives.push(`(_account = ${sqlString(account)} AND _event_ms BETWEEN ${from} AND ${to})`);
      if (low === undefined || from < low) low = from;
    }
  }
  if (alternatives.length === 0) return { table, kind: 'skip' };
  // The earliest instant as a constant beside the alternatives: DuckDB skips the row groups before it.
  const where = resets.size === 0 && low !== undefined ? `_event_ms >= ${low} AND (${alternatives.join(' OR ')})` : alternatives.join(' OR ');
  return { table, kind: 'rows', where };
}

function planSnapshots(table: Table, changes: readonly { account: string; kind: string; min_event_ms: string | null }[], resets: ReadonlySet<string>): TablePlan {
  const from = new Map<string, bigint>();
  for (const change of changes) {
    if (resets.has(change.account)) continue;
    if (change.kind !== 'snapshot' || change.min_event_ms === null) return { table, kind: 'whole', why: `a ${change.kind} change` };
    const taken = BigInt(change.min_event_ms);
    const earliest = from.get(change.account);
    if (earliest === undefined || taken < earliest) from.set(change.account, taken);
  }
  const alternatives = [
    ...[...resets].map((account) => `_account = ${sqlString(account)}`),
    ...[...from].map(([account, ms]) => `(_account = ${sqlString(account)} AND _snapshot_at >= make_timestamptz(${ms * 1000n}))`),
  ];
  return { table, kind: 'rows', where: alternatives.join(' OR ') };
}

/** Ranges with overlapping or touching ones merged, in order. */
function mergeRanges(ranges: readonly [bigint, bigint][]): [bigint, bigint][] {
  const sorted = [...ranges].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const merged: [bigint, bigint][] = [];
  for (const [from, to] of sorted) {
    const last = merged.at(-1);
    if (last !== undefined && from <= last[1] + 1n) last[1] = to > last[1] ? to : last[1];
    else merged.push([from, to]);
  }
  return merged;
}

/**
 * A model's table: unchanged when its settings.model_state row is the standby's (every build that
 * changes a table rewrites that row in the same transaction); else the rows of the partitions the
 * builds' record names, placed by its declaration; whole when it was rebuilt whole, has no
 * placement, or the record does not reach back to the standby.
 */
function planModel(table: Table, state: StandbyState, placements: ReadonlyMap<string, RowPlacement>): TablePlan {
  if (!state.changedModels.has(table.id)) {
    // A table in a model schema that no build records (not a model of the project) is copied whole.
    return state.recordedModels.has(table.id) ? { table, kind: 'skip' } : { table, kind: 'whole', why: 'not a model the builds record' };
  }
  if (state.modelChanges === undefined) return { table, kind: 'whole', why: 'no build record in the other copy' };
  const changes = state.modelChanges.log.after(state.modelChanges.after, [table.id]);
  if (changes.length === 0) return { table, kind: 'whole', why: 'its state changed without a build record' };
  const everything = changes.find((change) => change.everything);
  if (everything !== undefined) return { table, kind: 'whole', why: 'rebuilt whole' };
  const placement = placements.get(table.id);
  if (placement === undefined) return { table, kind: 'whole', why: 'its declaration does not place its changes' };
  const partitions = mergePartitions(changes);
  const { cut, ...columns } = placement.changes;
  const condition = expandChanged(`{{ changed(${[...Object.entries(columns).map(([name, column]) => `${name}: ${column}`), ...(cut === undefined ? [] : [`cut: ${cut}`])].join(', ')}) }}`, partitions);
  return { table, kind: 'rows', where: condition };
}

/**
 * Below this many rows (DuckDB's estimate), a bookkeeping table is compared with the standby's in
 * one query with the others before any is copied: most are the same each night (the build's
 * settings, the closed periods), and comparing each on its own cost ~10 ms of statements.
 */
const SMALL_TABLE_ROWS = 10_000;

/**
 * The small bookkeeping tables (copied by the rows that differ) that hold the same rows in the
 * standby as in the database, compared in one query: they are left as they are.
 */
async function sameSmallTables(session: Database, plans: readonly TablePlan[]): Promise<Set<string>> {
  const small = plans.filter((plan) => plan.kind === 'difference' && plan.table.rows <= SMALL_TABLE_ROWS).map((plan) => plan.table);
  if (small.length === 0) return new Set();
  const rows = await session.all<{ id: string; n: string }>(
    small.map((table) => `SELECT ${sqlString(table.id)} AS id, ${rowsThatDiffer(table.sql)} AS n`).join('\nUNION ALL\n'),
  );
  return new Set(rows.filter((row) => row.n === '0').map((row) => row.id));
}

/** Applies one table's plan in the standby; the rows inserted. */
async function applyPlan(session: Database, plan: Exclude<TablePlan, { kind: 'skip' }>): Promise<number> {
  const target = `${STANDBY}.${plan.table.sql}`;
  const source = `${SOURCE}.${plan.table.sql}`;
  if (plan.kind === 'difference') return copyDifference(session, plan.table, source, target);
  // Delete, then insert what the database holds: whatever state the standby's rows were in, the
  // table ends equal to the database's there (so a publish killed and run again does no harm).
  const where = plan.kind === 'rows' ? ` WHERE ${plan.where}` : '';
  await session.run(`DELETE FROM ${target}${where}`);
  return session.run(`INSERT INTO ${target} SELECT * FROM ${source}${where}`);
}

/**
 * Makes the standby's table equal to the database's by the rows that differ, compared whole (one
 * hash aggregate over both: how often each row is held in each), and returns the rows inserted.
 * Every copy of a row held a different number of times in the two is deleted from the standby and
 * inserted again as often as the database holds it: exact for rows held twice too.
 */
async function copyDifference(session: Database, table: Table, source: string, target: string): Promise<number> {
  const columns = await session.all<{ column_name: string }>(
    `SELECT column_name FROM duckdb_columns() WHERE database_name = '${SOURCE}' AND schema_name = $1 AND table_name = $2 ORDER BY column_index`,
    [table.schema, table.name],
  );
  const names = columns.map((column) => quoteIdentifier(column.column_name));
  const list = names.join(', ');
  const difference = 'temp.main.exledger_publish_difference';
  try {
    await session.run(`
      CREATE OR REPLACE TEMP TABLE exledger_publish_difference AS
      SELECT ${list}, count(*) FILTER (WHERE exledger_side) AS exledger_held
      FROM (SELECT ${list}, true AS exledger_side FROM ${source} UNION ALL SELECT ${list}, false AS exledger_side FROM ${target})
      GROUP BY ALL
      HAVING count(*) FILTER (WHERE exledger_side) <> count(*) FILTER (WHERE NOT exledger_side)`);
    await session.run(`DELETE FROM ${target} AS t USING ${difference} AS d WHERE ${names.map((name) => `t.${name} IS NOT DISTINCT FROM d.${name}`).join(' AND ')}`);
    return await session.run(`INSERT INTO ${target} SELECT ${list} FROM (SELECT *, unnest(range(exledger_held)) FROM ${difference})`);
  } finally {
    await session.run(`DROP TABLE IF EXISTS ${difference}`);
  }
}

/** Gives each sequence of the standby the next value the database's would give (the catalogs are otherwise equal). */
async function alignSequences(session: Database): Promise<void> {
  const behind = await session.all<{ schema_name: string; sequence_name: string; next: string; increment_by: string; min_value: string; max_value: string; cycle: boolean; comment: string | null }>(
    `SELECT s.schema_name, s.sequence_name, coalesce(s.last_value + s.increment_by, s.start_value) AS next, s.increment_by, s.min_value, s.max_value, s.cycle, s.comment
     FROM duckdb_sequences() AS s
     JOIN duckdb_sequences() AS t ON t.database_name = '${STANDBY}' AND t.schema_name = s.schema_name AND t.sequence_name = s.sequence_name
     WHERE s.database_name = '${SOURCE}'
       AND coalesce(s.last_value + s.increment_by, s.start_value) IS DISTINCT FROM coalesce(t.last_value + t.increment_by, t.start_value)`,
  );
  for (const sequence of behind) {
    const name = `${STANDBY}.${quoteIdentifier(sequence.schema_name)}.${quoteIdentifier(sequence.sequence_name)}`;
    await session.run(
      `CREATE OR REPLACE SEQUENCE ${name} START WITH ${sequence.next} INCREMENT BY ${sequence.increment_by} MINVALUE ${sequence.min_value} MAXVALUE ${sequence.max_value}${sequence.cycle ? ' CYCLE' : ''}`,
    );
    if (sequence.comment !== null) await session.run(`COMMENT ON SEQUENCE ${name} IS ${sqlString(sequence.comment)}`);
  }
}

/** The first table whose rows the standby and the database count differently, said; undefined when all agree. */
async function countDisagreement(session: Database, tables: readonly Table[]): Promise<string | undefined> {
  if (tables.length === 0) return undefined;
  const counts = tables.map(
    (table) => `SELECT ${sqlString(table.id)} AS id, (SELECT count(*) FROM ${SOURCE}.${table.sql}) AS database_rows, (SELECT count(*) FROM ${STANDBY}.${table.sql}) AS copy_rows`,
  );
  const [row] = await session.all<{ id: string; database_rows: string; copy_rows: string }>(`SELECT * FROM (${counts.join('\nUNION ALL\n')}) WHERE database_rows <> copy_rows ORDER BY id LIMIT 1`);
  if (row === undefined) return undefined;
  return `the incremental copy of ${row.id} would hold ${Number(row.copy_rows).toLocaleString('en-US')} rows, the database ${Number(row.database_rows).toLocaleString('en-US')} (rows changed without a record of the change)`;
}

function describeWhole(plans: readonly TablePlan[]): string {
  const whole = plans.filter((plan): plan is Extract<TablePlan, { kind: 'whole' }> => plan.kind === 'whole').sort((a, b) => b.table.rows - a.table.rows);
  return `${whole
    .slice(0, 3)
    .map((plan) => `${plan.table.id}: ${plan.why}`)
    .join(', ')}${whole.length > 3 ? `, and ${whole.length - 3} more` : ''}`;
}


function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
}
