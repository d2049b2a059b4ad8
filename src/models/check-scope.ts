import { createHash } from 'node:crypto';
import { ConfigError } from '../errors.ts';
import { sqlString } from '../store/comments.ts';
import type { Database } from '../store/database.ts';
import type { RecordedTestResult } from './check-results.ts';
import { CHANGES_KEPT_DAYS } from './incremental.ts';

/**
 * The incremental check (`exledger check --changed`, the check step of `exledger run`): each SQL
 * test reads only the rows that the builds changed since it last passed, as the builds recorded
 * them (settings.model_changes, written in each model's own transaction), where its logic allows.
 *
 * A test says how it is restricted with `{{ changed(…) }}` in its SQL, a condition on the rows of
 * one table it reads (docs/architecture.md "The incremental check"):
 *
 *   from intermediate.int_spot_lot_segments as s
 *   where {{ changed(account: s.pool, symbol: s.symbol, at: s.sell_at) }}
 *
 * - `account`: the column a change's account names (the pool, for the spot intermediate models);
 *   left out, a change of any account selects the rows;
 * - `symbol`: the column a change's symbol names; left out, a change of any symbol selects them;
 * - `at` (an instant) or `date` (a reporting-zone date): the rows at or after the change's instant
 *   (its day, with `date`); left out, every row of the changed partitions;
 * - `cut: day` or `cut: month`: the instant is moved back to the start of its reporting-zone day or
 *   month first, so that tables of instants and tables of days or months select the same periods.
 *
 * - `of: m1 m2`: only the changes of these models (among those the test reads) select the rows;
 *   left out, the changes of every model the test reads do. For a test comparing groups across
 *   some of its tables only (a day's row with its sells' matches, where the test also compares
 *   months with days): a change elsewhere cannot change such a group, and a month-grained change
 *   would otherwise make the day-grained part read the whole month.
 *
 * `{{ changed_keys(table: m, alias: s, key: c1 c2, account: …, symbol: …, at: …) }}`, after a
 * `from … as s`, is a semi join: the rows of `s` whose key columns equal (=, never NULL) those of a
 * changed row of model `m` (the conditions name `m`'s columns): every segment of a lot a changed
 * segment takes from. Checking everything, it is nothing.
 *
 * Checking everything, the condition is `true`: the test is the same query. Checking what changed,
 * it selects the rows of the partitions that any model the test reads changed, from the instant
 * they changed (the union of their records, each compared on every table, so a group of rows the
 * test compares across tables is read whole wherever one of its rows changed). A test is sound
 * restricted so only if every group it compares (a sell and its segments, a day and its sources)
 * lies in one account, symbol and period of the columns it names: its header says why it does, or
 * why it has no `{{ changed }}` and runs whole.
 */

const PLACEHOLDER = /\{\{\s*(changed|changed_keys)\(([^)]*)\)\s*\}\}/g;
const COLUMN = /^(?:[a-z_][a-z0-9_]*\.)?[a-z_][a-z0-9_]*$/;
const NAME = /^[a-z_][a-z0-9_]*$/;
const MODEL = /^(staging|intermediate|marts)\.[a-z_][a-z0-9_]*$/;

/** What one `{{ changed(…) }}` (a condition on a row) or `{{ changed_keys(…) }}` (a semi join) names. */
export interface ChangedCondition {
  kind: 'changed' | 'changed_keys';
  account?: string;
  symbol?: string;
  at?: string;
  date?: string;
  /** @default 'row': the instant itself */
  cut: 'row' | 'day' | 'month';
  /** changed_keys: the model whose changed rows give the keys. */
  table?: string;
  /** changed_keys: the alias of the rows kept (those whose key columns equal a changed row's). */
  alias?: string;
  /** changed_keys: the key columns, named alike in both (never NULL: they are compared with =). */
  key?: string[];
  /** The models whose changes select the rows (undefined: every model the test reads). */
  of?: string[];
}

/**
 * A test's SQL without the model lists of its placeholders' `of: …`: the models it reads are found
 * in what is left (a model named only there is not read, and its changes are no reason to check it).
 */
export function withoutOfLists(sql: string): string {
  return sql.replace(PLACEHOLDER, (text) => text.replace(/\bof\s*:[^,)]*/g, 'of:'));
}

/** Whether an SQL text restricts itself to what changed (has a `{{ changed(…) }}` or `{{ changed_keys(…) }}`). */
export function hasChangedCondition(sql: string): boolean {
  return new RegExp(PLACEHOLDER.source).test(sql);
}

/**
 * The conditions of a test's `{{ changed(…) }}`s and `{{ changed_keys(…) }}`s, validated.
 * @throws ConfigError naming the file and what is wrong.
 */
export function parseChangedConditions(sql: string, file: string): ChangedCondition[] {
  const conditions: ChangedCondition[] = [];
  for (const match of sql.matchAll(PLACEHOLDER)) {
    const kind = match[1] as ChangedCondition['kind'];
    const fail = (message: string) => new ConfigError(file, `{{ ${kind}(…) }}: ${message}`);
    const keys = kind === 'changed' ? ['account', 'symbol', 'at', 'date', 'cut', 'of'] : ['table', 'alias', 'key', 'account', 'symbol', 'at', 'date', 'cut', 'of'];
    const condition: ChangedCondition = { kind, cut: 'row' };
    for (const part of match[2]!.split(',').map((text) => text.trim()).filter((text) => text !== '')) {
      const [key, value, ...rest] = part.split(':').map((text) => text.trim());
      if (value === undefined || value === '' || rest.length > 0 || !keys.includes(key!)) throw fail(`"${part}" is not one of ${keys.map((name) => `${name}: …`).join(', ')}`);
      if (key === 'cut') {
        if (value !== 'row' && value !== 'day' && value !== 'month') throw fail(`cut is row, day or month, not "${value}"`);
        condition.cut = value;
      } else if (key === 'table') {
        if (!MODEL.test(value)) throw fail(`table names a model (<layer>.<name>), not "${value}"`);
        condition.table = value;
      } else if (key === 'key') {
        const columns = value.split(/\s+/);
        if (columns.some((column) => !NAME.test(column))) throw fail(`key lists column names separated by spaces, not "${value}"`);
        condition.key = columns;
      } else if (key === 'of') {
        const models = value.split(/\s+/);
        const wrong = models.find((model) => !MODEL.test(model));
        if (wrong !== undefined) throw fail(`of lists models (<layer>.<name>) separated by spaces, not "${wrong}"`);
        condition.of = models;
      } else if (key === 'alias') {
        if (!NAME.test(value)) throw fail(`alias is a name, not "${value}"`);
        condition.alias = value;
      } else {
        // changed_keys compares the changed rows' own columns: plain names.
        if (!(kind === 'changed' ? COLUMN : NAME).test(value)) throw fail(`${key} names a column${kind === 'changed' ? ' (name or alias.name)' : ` of ${condition.table ?? 'the table'}`}, not "${value}"`);
        condition[key as 'account' | 'symbol' | 'at' | 'date'] = value;
      }
    }
    if (condition.at !== undefined && condition.date !== undefined) throw fail('give at (an instant) or date (a day), not both');
    if (kind === 'changed_keys' && (condition.table === undefined || condition.alias === undefined || condition.key === undefined)) throw fail('table, alias and key are required');
    conditions.push(condition);
  }
  return conditions;
}

/** A point of the change record: the last change a check covered, and when it was recorded (so another database's record is not taken for it). */
export interface ChangeMark {
  seq: number;
  /** recorded_at, as DuckDB writes it in UTC. */
  at: string;
}

/** One partition changed, from when, in the forms a condition compares with (UTC instants as SQL literals' text, reporting-zone dates). */
export interface ChangedPartition {
  /** An account or pool; '*': every one. */
  account: string;
  /** null: every symbol. */
  symbol: string | null;
  /** null: from the start. */
  fromAt: string | null;
  /** fromAt in microseconds since 1970 (exact below 2^53: until the year 2255), to order instants. */
  fromUs: number | null;
  dayStart: string | null;
  monthStart: string | null;
  fromDate: string | null;
  fromMonth: string | null;
  /**
   * A bounded change (the record's to_at: a model declaring changeRanges changed only its rows up
   * to it): that instant, in microseconds, the start of the reporting-zone day and month after
   * its own (instants), its date and the first day of the month after (dates). Absent or null:
   * every time from fromAt on.
   */
  toAt?: string | null;
  toUs?: number | null;
  dayEnd?: string | null;
  monthEnd?: string | null;
  toDate?: string | null;
  toMonthEnd?: string | null;
}

/** A change record row of one model. */
interface ChangeRow extends ChangedPartition {
  seq: number;
  model: string;
  /** The record says "everything" (a whole rebuild). */
  everything: boolean;
}

/** The change record of a database since a point, as a check reads it once. */
export interface ChangeLog {
  /** The newest record, or undefined when there is none (a database never built since the record exists). */
  head: ChangeMark | undefined;
  /** Whether the record holds this mark (else it was pruned, or is another database's). */
  holds(mark: ChangeMark): boolean;
  /** The records of these models after a mark. */
  after(seq: number, models: readonly string[]): ChangeRow[];
}

/** Reads the change record after the earliest of `marks` (none: only the head). */
export async function readChangeLog(db: Database, marks: readonly ChangeMark[]): Promise<ChangeLog> {
  const [table] = await db.all<{ n: string }>("SELECT count(*) AS n FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'settings' AND table_name = 'model_changes'");
  if (table?.n !== '1') return { head: undefined, holds: () => false, after: () => [] };
  const [head] = await db.all<{ seq: string; at: string }>('SELECT change_seq AS seq, CAST(recorded_at AS VARCHAR) AS at FROM settings.model_changes ORDER BY change_seq DESC LIMIT 1');
  const from = marks.length === 0 ? Number(head?.seq ?? 0) : Math.min(...marks.map((mark) => mark.seq));
  const known = new Set<string>();
  if (marks.length > 0) {
    for (const row of await db.all<{ seq: string; at: string }>('SELECT DISTINCT change_seq AS seq, CAST(recorded_at AS VARCHAR) AS at FROM settings.model_changes WHERE change_seq >= $1', [from])) known.add(`${row.seq} ${row.at}`);
  }
  // Each instant also as the start of its reporting-zone day and month (cut: day, month) and as those dates.
  const [zone] = await db.all<{ n: string }>("SELECT count(*) AS n FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'settings' AND table_name = 'reporting'");
  const timeZone = zone?.n === '1' ? "coalesce((SELECT any_value(time_zone) FROM settings.reporting), 'UTC')" : "'UTC'";
  // The days as sql/macros/dates.sql's local_date and local_day_start give them, written out: a
  // project of other SQL (a test's) need not have those macros.
  // (a database the builds have not opened since the change ranges has no to_at: every row open-ended)
  const [ranges] = await db.all<{ n: string }>(
    "SELECT count(*) AS n FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = 'settings' AND table_name = 'model_changes' AND column_name = 'to_at'",
  );
  const toAt = ranges?.n === '1' ? 'c.to_at' : 'CAST(NULL AS TIMESTAMPTZ)';
  const columns = ranges?.n === '1' ? 'c.*' : `c.*, ${toAt} AS to_at`;
  const rows = await db.all<{
    seq: string;
    model: string;
    account: string | null;
    symbol: string | null;
    from_at: string | null;
    from_us: string | null;
    day_start: string | null;
    month_start: string | null;
    from_date: string | null;
    from_month: string | null;
    to_at: string | null;
    to_us: string | null;
    day_end: string | null;
    month_end: string | null;
    to_date: string | null;
    to_month_end: string | null;
  }>(
    `WITH changes AS (
       SELECT ${columns}, CAST(timezone(z.time_zone, c.from_at) AS DATE) AS from_date, CAST(timezone(z.time_zone, ${toAt}) AS DATE) AS to_date, z.time_zone
       FROM settings.model_changes AS c
       CROSS JOIN (SELECT ${timeZone} AS time_zone) AS z
       WHERE c.change_seq > $1
     )
     SELECT change_seq AS seq, model, account, symbol,
       CAST(from_at AS VARCHAR) AS from_at,
       epoch_us(from_at) AS from_us,
       CAST(timezone(time_zone, CAST(from_date AS TIMESTAMP)) AS VARCHAR) AS day_start,
       CAST(timezone(time_zone, CAST(date_trunc('month', from_date) AS TIMESTAMP)) AS VARCHAR) AS month_start,
       CAST(from_date AS VARCHAR) AS from_date,
       CAST(CAST(date_trunc('month', from_date) AS DATE) AS VARCHAR) AS from_month,
       CAST(to_at AS VARCHAR) AS to_at,
       epoch_us(to_at) AS to_us,
       CAST(timezone(time_zone, CAST(to_date + 1 AS TIMESTAMP)) AS VARCHAR) AS day_end,
       CAST(timezone(time_zone, CAST(date_trunc('month', to_date) + INTERVAL 1 MONTH AS TIMESTAMP)) AS VARCHAR) AS month_end,
       CAST(to_date AS VARCHAR) AS to_date,
       CAST(CAST(date_trunc('month', to_date) + INTERVAL 1 MONTH AS DATE) AS VARCHAR) AS to_month_end
     FROM changes`,
    [from],
  );
  const changes: ChangeRow[] = rows.map((row) => ({
    seq: Number(row.seq),
    model: row.model,
    everything: row.account === null,
    account: row.account ?? '*',
    symbol: row.symbol,
    fromAt: row.from_at,
    fromUs: row.from_us === null ? null : Number(row.from_us),
    dayStart: row.day_start,
    monthStart: row.month_start,
    fromDate: row.from_date,
    fromMonth: row.from_month,
    toAt: row.to_at,
    toUs: row.to_us === null ? null : Number(row.to_us),
    dayEnd: row.day_end,
    monthEnd: row.month_end,
    toDate: row.to_date,
    toMonthEnd: row.to_month_end,
  }));
  return {
    head: head === undefined ? undefined : { seq: Number(head.seq), at: head.at },
    holds: (mark) => known.has(`${mark.seq} ${mark.at}`),
    after: (seq, models) => changes.filter((change) => change.seq > seq && models.includes(change.model)),
  };
}

/**
 * The partitions that changes select, merged: one per account and symbol from its earliest
 * instant on (null, from the start, wins), and the bounded ones (toAt) that start before it (or
 * where there is none), each once. A change of every account or symbol stays as it is.
 */
export function mergePartitions(changes: readonly ChangedPartition[]): ChangedPartition[] {
  const merged = new Map<string, ChangedPartition>();
  const bounded = new Map<string, ChangedPartition>();
  for (const change of changes) {
    const key = `${change.account}\u0000${change.symbol ?? '\u0001'}`;
    if (isBounded(change)) {
      bounded.set(`${key}\u0000${change.fromUs}\u0000${change.toUs}`, partitionOf(change));
      continue;
    }
    const known = merged.get(key);
    if (known === undefined || (known.fromUs !== null && (change.fromUs === null || change.fromUs < known.fromUs))) merged.set(key, partitionOf(change));
  }
  const partitions = [...merged.values()];
  for (const change of bounded.values()) {
    const open = merged.get(`${change.account}\u0000${change.symbol ?? '\u0001'}`);
    if (open === undefined || (open.fromUs !== null && change.fromUs! < open.fromUs)) partitions.push(change);
  }
  return partitions;
}

/** Whether a change is bounded: only up to its toAt (which a change from the start never is). */
function isBounded(change: ChangedPartition): boolean {
  return change.toUs !== undefined && change.toUs !== null && change.fromUs !== null;
}

function partitionOf(change: ChangedPartition): ChangedPartition {
  const { account, symbol, fromAt, fromUs, dayStart, monthStart, fromDate, fromMonth } = change;
  if (!isBounded(change)) return { account, symbol, fromAt, fromUs, dayStart, monthStart, fromDate, fromMonth };
  const { toAt, toUs, dayEnd, monthEnd, toDate, toMonthEnd } = change;
  return { account, symbol, fromAt, fromUs, dayStart, monthStart, fromDate, fromMonth, toAt, toUs, dayEnd, monthEnd, toDate, toMonthEnd };
}

/** DuckDB's text of a TIMESTAMPTZ in UTC (`2025-12-31 00:00:00.5+00`) as ISO 8601 (`2025-12-31T00:00:00.5Z`), for messages. */
export function isoOfInstant(text: string): string {
  const match = /^(-?\d{4,}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}(?:\.\d+)?)\+00$/.exec(text);
  return match === null ? text : `${match[1]}T${match[2]}Z`;
}

/** The earliest of some partitions (undefined: none, or one of them changed from the start). */
export function earliestPartition(partitions: readonly ChangedPartition[]): ChangedPartition | undefined {
  if (partitions.length === 0 || partitions.some((partition) => partition.fromUs === null)) return undefined;
  return partitions.reduce((earliest, partition) => (partition.fromUs! < earliest.fromUs! ? partition : earliest));
}

/**
 * A test's SQL with each placeholder replaced. Checking everything: `{{ changed(…) }}` by `true`
 * and `{{ changed_keys(…) }}` by nothing, so the test is the query it always was. Checking what
 * changed: `{{ changed(…) }}` by the condition selecting the rows of the changed partitions (none
 * changed: `false`), and `{{ changed_keys(…) }}` by a semi join keeping the rows whose key columns
 * equal those of a changed row of its table (a group read whole wherever one of its rows changed).
 */
export function expandChanged(sql: string, changes: readonly ChangedPartition[] | ChangesByModel | 'everything'): string {
  return sql.replace(PLACEHOLDER, (text) => {
    const [condition] = parseChangedConditions(text, 'the test');
    const partitions = changes === 'everything' ? changes : partitionsOf(changes, condition!);
    if (condition!.kind === 'changed') return partitions === 'everything' ? 'true' : `(${conditionSql(condition!, partitions, (column) => column)})`;
    if (partitions === 'everything') return '';
    const { table, alias, key } = condition as Required<ChangedCondition>;
    const changed = conditionSql(condition!, partitions, (column) => `_changed.${column}`);
    return `SEMI JOIN (SELECT DISTINCT ${key.map((column) => `_changed.${column}`).join(', ')} FROM ${table} AS _changed WHERE ${changed}) AS _changed_keys ON ${key.map((column) => `_changed_keys.${column} = ${alias}.${column}`).join(' AND ')}`;
  });
}

/** The changed partitions of each model a test reads (merged per model), for conditions naming `of`. */
export type ChangesByModel = ReadonlyMap<string, readonly ChangedPartition[]>;

/** The partitions a condition selects: those of the models it names (`of`), else of every model the test reads, merged. */
function partitionsOf(changes: readonly ChangedPartition[] | ChangesByModel, condition: ChangedCondition): readonly ChangedPartition[] {
  if (!(changes instanceof Map)) {
    if (condition.of !== undefined) throw new Error('{{ changed(of: …) }} needs the changes by model');
    return changes as readonly ChangedPartition[];
  }
  const byModel = changes as ChangesByModel;
  const models = condition.of ?? [...byModel.keys()];
  return mergePartitions(models.flatMap((model) => byModel.get(model) ?? []));
}

function conditionSql(condition: ChangedCondition, partitions: readonly ChangedPartition[], column: (name: string) => string): string {
  if (partitions.length === 0) return 'false';
  const account = condition.account === undefined ? undefined : column(condition.account);
  const symbol = condition.symbol === undefined ? undefined : column(condition.symbol);
  const time = (partition: ChangedPartition): string | undefined => {
    if (condition.at !== undefined) {
      const instant = { row: partition.fromAt, day: partition.dayStart, month: partition.monthStart }[condition.cut];
      return instant === null ? undefined : `${column(condition.at)} >= TIMESTAMPTZ ${sqlString(instant)}`;
    }
    if (condition.date !== undefined) {
      const date = condition.cut === 'month' ? partition.fromMonth : partition.fromDate;
      return date === null ? undefined : `${column(condition.date)} >= DATE ${sqlString(date)}`;
    }
    return undefined;
  };
  // A bounded change's end: its instant, or the start of the day or month after it (cut), or its
  // date, or the first day of the month after it (cut: month).
  const until = (partition: ChangedPartition): string | undefined => {
    if (!isBounded(partition)) return undefined;
    if (condition.at !== undefined) {
      if (condition.cut === 'row') return `${column(condition.at)} <= TIMESTAMPTZ ${sqlString(partition.toAt!)}`;
      return `${column(condition.at)} < TIMESTAMPTZ ${sqlString((condition.cut === 'day' ? partition.dayEnd : partition.monthEnd)!)}`;
    }
    if (condition.date !== undefined) {
      return condition.cut === 'month' ? `${column(condition.date)} < DATE ${sqlString(partition.toMonthEnd!)}` : `${column(condition.date)} <= DATE ${sqlString(partition.toDate!)}`;
    }
    return undefined;
  };
  const alternatives = partitions.map((partition) => {
    const parts: string[] = [];
    // A row of pool '*' (pooling universal) belongs to every account's changes; a row without an
    // account or symbol to every one's (a not_null test must see it).
    if (account !== undefined && partition.account !== '*') parts.push(`(${account} = ${sqlString(partition.account)} OR ${account} = '*' OR ${account} IS NULL)`);
    if (symbol !== undefined && partition.symbol !== null) parts.push(`(${symbol} = ${sqlString(partition.symbol)} OR ${symbol} IS NULL)`);
    const from = time(partition);
    if (from !== undefined) parts.push(from);
    const to = until(partition);
    if (to !== undefined) parts.push(to);
    return parts.length === 0 ? 'true' : parts.join(' AND ');
  });
  if (alternatives.includes('true')) return 'true';
  // The earliest instant as a constant beside them: DuckDB skips the row groups before it (it does
  // not for a comparison inside an OR).
  const first = earliestPartition(partitions);
  const earliest = first !== undefined && partitions.every((partition) => time(partition) !== undefined) ? time(first) : undefined;
  return `${earliest === undefined ? '' : `${earliest} AND `}(${[...new Set(alternatives)].join(' OR ')})`;
}

/**
 * What a test's last result must match to be built on: a hash of its SQL, the macro files and the
 * content of each settings table it names (a new time zone or cost method, a closed period). A
 * test whose fingerprint differs from its last pass's is checked whole.
 */
export function testFingerprint(sql: string, macros: string, settings: ReadonlyMap<string, string>): string {
  const hash = createHash('sha256').update(sql).update('\0').update(macros);
  const tables = [...new Set([...sql.replace(/--[^\n]*/g, '').matchAll(/\bsettings\.([a-z_][a-z0-9_]*)/gi)].map((match) => match[1]!.toLowerCase()))].sort();
  for (const table of tables) hash.update(`\0${table}=${settings.get(table) ?? 'absent'}`);
  return hash.digest('hex');
}

/** How one test is checked, and why. */
export type TestScope =
  | { scope: 'whole'; why: string }
  | {
      scope: 'changed';
      /** The partitions of every model the test reads, merged. */
      partitions: ChangedPartition[];
      /** Those of each model it reads (a condition naming `of` takes its models' only). */
      byModel: ChangesByModel;
    }
  | { scope: 'unchanged'; why: string };

/**
 * How a test of a check of what changed is checked: unchanged (nothing it reads changed since it
 * last passed: its pass stands), on the changed rows (it has `{{ changed }}`), or whole (the scope
 * is unknown, or it cannot be restricted), with why.
 */
export function planTest(test: { sql: string; references: readonly string[] }, fingerprint: string, previous: RecordedTestResult | undefined, log: ChangeLog): TestScope {
  if (previous === undefined) return { scope: 'whole', why: 'no earlier result on this database' };
  if (previous.status !== 'pass') return { scope: 'whole', why: `its last result was ${previous.status === 'fail' ? 'a failure' : 'an error'}` };
  if (previous.fingerprint !== fingerprint) return { scope: 'whole', why: previous.fingerprint === undefined ? 'its last result predates the change record' : 'its SQL, a macro or a setting it reads changed since its last pass' };
  if (previous.through === undefined || log.head === undefined) return { scope: 'whole', why: 'no record of the builds’ changes since its last pass' };
  if (!log.holds(previous.through)) return { scope: 'whole', why: `the change record does not reach back to its last pass (kept ${CHANGES_KEPT_DAYS} days; or another database)` };
  if (test.references.length === 0) return { scope: 'whole', why: 'it reads no model' };
  const changes = log.after(previous.through.seq, test.references);
  if (changes.length === 0) return { scope: 'unchanged', why: 'nothing it reads changed since its last pass' };
  const whole = changes.find((change) => change.everything);
  if (whole !== undefined) return { scope: 'whole', why: `${whole.model} was rebuilt whole` };
  if (!hasChangedCondition(test.sql)) return { scope: 'whole', why: 'it has no {{ changed }} condition (its header says why)' };
  const byModel = new Map<string, ChangedPartition[]>();
  for (const change of changes) {
    const known = byModel.get(change.model);
    if (known === undefined) byModel.set(change.model, [change]);
    else known.push(change);
  }
  return { scope: 'changed', partitions: mergePartitions(changes), byModel };
}
