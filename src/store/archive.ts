import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { diskFullOf } from '../disk-full.ts';
import { ArchiveError } from '../errors.ts';
import { sqlString } from './comments.ts';
import type { Database } from './database.ts';
import {
  emptyManifest,
  readManifest,
  removeUnlisted,
  sha256Of,
  syncFile,
  verifyFile,
  writeManifest,
  type ArchiveFile,
  type ArchiveManifest,
  type ArchivedTable,
} from './archive-manifest.ts';
import { syncDirectory } from './publish.ts';

/**
 * The archive of the raw history (docs/operating.md "Archive and restore"): every raw table as
 * hive-partitioned Parquet by stream, account and month, plus the bookkeeping a restore needs
 * (the cursors, so the next sync is incremental) and the signed periods (closes, their workbooks,
 * the frozen marts), under a manifest of SHA-256 checksums (archive-manifest.ts).
 *
 * Incremental: meta.raw_changes logs every commit of raw rows (raw-store.ts), so the changes after
 * the manifest's high-water mark name the (account, month) partitions a night touched. Only those
 * are compared with what the archive holds: rows the archive lacks go into a new part file; a
 * partition whose archived rows the database no longer has all of (a re-read range of totals
 * replaced, a `sync --full-refresh`) is written again whole, its old files dropped from the
 * manifest. Restoring the union of the listed files is then the database's raw state, whatever
 * the corrections were.
 *
 * Values stay exact: Parquet keeps VARCHAR, BIGINT, DECIMAL, TIMESTAMPTZ and BLOB as they are;
 * the types it would turn into DOUBLE or lose (HUGEINT, JSON's type, UUID, INTERVAL…) are written
 * as text and cast back on restore, from the column types the manifest records.
 */

/** Bookkeeping and signed periods archived whole, when they changed (the raw tables aside). */
const WHOLE_TABLES = ['meta.cursors', 'meta.facts', 'meta.schema_drift', 'meta.runs', 'meta.period_closes', 'meta.closed_workbooks', 'settings.closed_periods'];
/** Schemas archived whole, every table: the marts' rows as each close froze them. */
const WHOLE_SCHEMAS = ['closed'];

/** Types Parquet keeps exactly as DuckDB writes them; any other is archived as text. */
const PARQUET_EXACT = /^(VARCHAR|BIGINT|INTEGER|SMALLINT|TINYINT|UBIGINT|UINTEGER|USMALLINT|UTINYINT|BOOLEAN|DATE|TIMESTAMP|TIMESTAMP WITH TIME ZONE|DECIMAL\(\d+,\d+\)|BLOB|DOUBLE|FLOAT|VARCHAR\[\]|BIGINT\[\])$/;

/** What one partition or table of the archive got in this run. */
export interface ArchivedPart {
  /** raw.<stream>, or a whole table (meta.cursors). */
  table: string;
  account?: string;
  month?: string;
  /**
   * added: a new part file with the rows the archive lacked; rewritten: the partition written
   * again whole (rows gone from the database, or a file that no longer matched its checksum);
   * removed: no row left (its files dropped); unchanged: nothing to write.
   */
  how: 'added' | 'rewritten' | 'removed' | 'unchanged';
  /** Rows written. */
  rows: number;
  /** The file written, relative to the archive folder. */
  file: string | null;
  /** Why it was rewritten, when it was. */
  why?: string;
}

/** What an archive run did. */
export interface ArchiveResult {
  archiveId: string;
  dir: string;
  /** The first archive into this folder (every row written). */
  first: boolean;
  parts: ArchivedPart[];
  /** Files written in this run. */
  written: ArchiveFile[];
  /** Files of earlier runs dropped from the manifest (their partition was written again). */
  superseded: number;
  /** Files of earlier runs the manifest still lists. */
  keptFiles: number;
  /** Files a killed archive had left, removed. */
  leftovers: number;
  /** Rows per raw table now in the archive, and for each table archived whole. */
  tables: { table: string; kind: ArchivedTable['kind']; rows: number }[];
  /** The manifest's high-water mark (meta.raw_changes.change_seq). */
  rawChangeSeq: string;
}

/** Callbacks of an archive run. */
export interface ArchiveHooks {
  /** Aborted to stop before the next file: the archive stays as it was (no manifest written). */
  signal?: AbortSignal;
  /** Told as each partition or table is done (index from 1, of total). */
  onPart?: (part: ArchivedPart, index: number, total: number) => void;
}

interface Column {
  name: string;
  type: string;
}

interface TableInfo {
  name: string;
  kind: ArchivedTable['kind'];
  columns: Column[];
}

/** A partition or table to compare with the archive and write. */
interface Task {
  table: TableInfo;
  account?: string;
  month?: string;
  /** Rows of it in the database now. */
  rows: number;
  digest?: string;
}

/**
 * Archives `db` into `dir` (which exists). The caller holds the database lock (nothing writes the
 * raw tables meanwhile) and the archive's lock.
 * @throws ArchiveError when the archive there cannot be read (see readManifest).
 */
export async function archiveDatabase(db: Database, dir: string, hooks: ArchiveHooks = {}): Promise<ArchiveResult> {
  const archiveId = `${new Date().toISOString().replace(/[-:]/g, '').slice(0, 15)}-${randomBytes(3).toString('hex')}`;
  let manifest = readManifest(dir);
  // A first archive that was killed left an empty manifest (no archive id): this is still the first.
  const first = manifest === null || manifest.archiveId === '';
  if (manifest === null) {
    // An empty manifest first: a first archive killed part-way leaves files it does not list,
    // which the next run removes, instead of files without any manifest (refused, see readManifest).
    manifest = emptyManifest();
    await guarded(path.join(dir, 'manifest.json'), () => writeManifest(dir, manifest!));
  }
  const leftovers = await removeUnlisted(dir, manifest);

  const [{ seq }] = (await db.all<{ seq: string | null }>('SELECT CAST(max(change_seq) AS VARCHAR) AS seq FROM meta.raw_changes')) as [{ seq: string | null }];
  const rawChangeSeq = seq ?? '0';
  const tasks: Task[] = [];
  const tables = await tablesToArchive(db);
  for (const table of tables) {
    if (table.kind === 'whole') tasks.push(...(await wholeTask(db, table, manifest)));
    else tasks.push(...(await rawTasks(db, table, manifest, rawChangeSeq)));
  }
  // Tables archived before that the database no longer has (a frozen mart dropped by a reopen).
  const present = new Set(tables.map((table) => table.name));
  const dropped = Object.keys(manifest.tables).filter((name) => !present.has(name));

  const kept = manifest.files.filter((file) => !dropped.includes(file.table));
  const written: ArchiveFile[] = [];
  const superseded = new Set<string>(manifest.files.filter((file) => dropped.includes(file.table)).map((file) => file.path));
  const parts: ArchivedPart[] = [];
  for (const [index, task] of tasks.entries()) {
    hooks.signal?.throwIfAborted();
    const archived = kept.filter((file) => file.table === task.table.name && file.account === task.account && file.month === task.month);
    const part = await archiveTask(db, dir, task, archived, archiveId);
    for (const file of part.supersedes) superseded.add(file);
    if (part.file !== null) written.push(part.file);
    const result: ArchivedPart = { table: task.table.name, ...(task.account === undefined ? {} : { account: task.account, month: task.month }), how: part.how, rows: part.rows, file: part.file?.path ?? null, ...(part.why === undefined ? {} : { why: part.why }) };
    parts.push(result);
    hooks.onPart?.(result, index + 1, tasks.length);
  }
  hooks.signal?.throwIfAborted();

  const files = [...kept.filter((file) => !superseded.has(file.path)), ...written];
  const next: ArchiveManifest = {
    format: 'exledger-archive',
    version: 1,
    archiveId,
    archivedAt: new Date().toISOString(),
    rawChangeSeq,
    tables: Object.fromEntries(
      tables.map((table) => {
        const rows = files.filter((file) => file.table === table.name).reduce((sum, file) => sum + file.rows, 0);
        const digest = table.kind === 'whole' ? (tasks.find((task) => task.table.name === table.name)?.digest ?? manifest.tables[table.name]?.digest ?? null) : null;
        return [table.name, { kind: table.kind, columns: table.columns, rows, changeSeq: table.kind === 'whole' ? null : rawChangeSeq, digest }];
      }),
    ),
    files: files.sort((a, b) => a.path.localeCompare(b.path, 'en')),
  };
  await checkCounts(db, next);
  hooks.signal?.throwIfAborted();
  await guarded(path.join(dir, 'manifest.json'), () => writeManifest(dir, next));
  // The manifest no longer lists them: removed now, or by the next run if this one is killed first.
  for (const file of superseded) await rm(path.join(dir, ...file.split('/')), { force: true });
  return {
    archiveId,
    dir,
    first,
    parts,
    written,
    superseded: superseded.size,
    keptFiles: next.files.length - written.length,
    leftovers,
    tables: Object.entries(next.tables).map(([table, entry]) => ({ table, kind: entry.kind, rows: entry.rows })),
    rawChangeSeq,
  };
}

/** Every raw table, and the whole tables that exist, with their columns in order. */
async function tablesToArchive(db: Database): Promise<TableInfo[]> {
  const rows = await db.all<{ name: string; schema: string; column_name: string; data_type: string }>(
    `SELECT c.table_schema || '.' || c.table_name AS name, c.table_schema AS schema, c.column_name, c.data_type
     FROM information_schema.columns c JOIN information_schema.tables t USING (table_catalog, table_schema, table_name)
     WHERE c.table_catalog = current_database() AND t.table_type = 'BASE TABLE'
       AND (c.table_schema IN ('raw', ${WHOLE_SCHEMAS.map((schema) => `'${schema}'`).join(', ')}) OR c.table_schema || '.' || c.table_name IN (${WHOLE_TABLES.map((table) => `'${table}'`).join(', ')}))
     ORDER BY name, c.ordinal_position`,
  );
  const tables = new Map<string, TableInfo>();
  for (const row of rows) {
    const table = tables.get(row.name) ?? { name: row.name, kind: 'whole' as ArchivedTable['kind'], columns: [] };
    tables.set(row.name, table);
    table.columns.push({ name: row.column_name, type: row.data_type });
  }
  for (const table of tables.values()) {
    if (!table.name.startsWith('raw.')) continue;
    const names = table.columns.map((column) => column.name);
    // A raw table of neither shape (none is today) is archived whole, as it is.
    table.kind = names.includes('_event_ms') && names.includes('_key') ? 'history' : names.includes('_snapshot_at') ? 'snapshot' : 'whole';
  }
  return [...tables.values()];
}

/** The month (YYYY-MM, UTC) of a raw row, as SQL: its event time, or when its snapshot was taken. */
function monthOf(table: TableInfo): string {
  return table.kind === 'history' ? "strftime(epoch_ms(_event_ms), '%Y-%m')" : "strftime(_snapshot_at AT TIME ZONE 'UTC', '%Y-%m')";
}

/** The rows of one (account, month) of a raw table, as SQL conditions that zone maps can prune on. */
function partitionFilter(table: TableInfo, account: string, month: string): string {
  const start = Date.parse(`${month}-01T00:00:00Z`);
  const end = new Date(start);
  end.setUTCMonth(end.getUTCMonth() + 1);
  const range = table.kind === 'history' ? `_event_ms >= ${start} AND _event_ms < ${end.getTime()}` : `_snapshot_at >= make_timestamptz(${start * 1000}) AND _snapshot_at < make_timestamptz(${end.getTime() * 1000})`;
  return `_account = ${sqlString(account)} AND ${range}`;
}

/**
 * The partitions of a raw table to look at: on the first archive (or over a database whose change
 * log is behind the manifest: another database), every one; else those a change after the
 * high-water mark touched, and any whose row count differs from the archive's.
 */
async function rawTasks(db: Database, table: TableInfo, manifest: ArchiveManifest, rawChangeSeq: string): Promise<Task[]> {
  const current = await db.all<{ account: string; month: string; n: string }>(`SELECT _account AS account, ${monthOf(table)} AS month, count(*) AS n FROM ${table.name} GROUP BY ALL`);
  const archived = new Map<string, number>();
  for (const file of manifest.files.filter((entry) => entry.table === table.name)) {
    const key = `${file.account}\n${file.month}`;
    archived.set(key, (archived.get(key) ?? 0) + file.rows);
  }
  const counts = new Map(current.map((row) => [`${row.account}\n${row.month}`, Number(row.n)]));
  const mark = manifest.tables[table.name]?.changeSeq ?? null;
  const everything = mark === null || BigInt(rawChangeSeq) < BigInt(mark);
  const changes = everything
    ? []
    : await db.all<{ account: string; kind: string; from_month: string | null; to_month: string | null }>(
        `SELECT account, kind, strftime(epoch_ms(min_event_ms), '%Y-%m') AS from_month, strftime(epoch_ms(max_event_ms), '%Y-%m') AS to_month
         FROM meta.raw_changes WHERE raw_table = $1 AND change_seq > CAST($2 AS BIGINT)`,
        [table.name.slice('raw.'.length), mark],
      );
  const touched = (account: string, month: string) =>
    changes.some((change) => change.account === account && (change.kind === 'reset' || change.from_month === null || change.to_month === null || (change.from_month <= month && month <= change.to_month)));
  const tasks: Task[] = [];
  for (const key of [...new Set([...counts.keys(), ...archived.keys()])].sort()) {
    const [account, month] = key.split('\n') as [string, string];
    const rows = counts.get(key) ?? 0;
    if (everything || rows !== (archived.get(key) ?? 0) || touched(account, month)) tasks.push({ table, account, month, rows });
  }
  return tasks;
}

/** A whole table to write again when its rows differ from what was archived (by digest). */
async function wholeTask(db: Database, table: TableInfo, manifest: ArchiveManifest): Promise<Task[]> {
  const [row] = await db.all<{ digest: string; n: string }>(`SELECT md5(coalesce(string_agg(CAST(t AS VARCHAR), chr(10) ORDER BY CAST(t AS VARCHAR)), '')) AS digest, count(*) AS n FROM ${table.name} t`);
  const previous = manifest.tables[table.name];
  const sameColumns = previous !== undefined && JSON.stringify(previous.columns) === JSON.stringify(table.columns);
  if (previous !== undefined && sameColumns && previous.digest === row!.digest && previous.rows === Number(row!.n)) return [];
  return [{ table, rows: Number(row!.n), digest: row!.digest }];
}

/** Writes what one partition or table needs; returns the file written and the files it replaces. */
async function archiveTask(db: Database, dir: string, task: Task, archived: readonly ArchiveFile[], archiveId: string): Promise<{ how: ArchivedPart['how']; rows: number; file: ArchiveFile | null; supersedes: string[]; why?: string }> {
  const { table } = task;
  const source = `SELECT ${table.columns.map((column) => parquetColumn(column)).join(', ')} FROM ${table.name}${task.account === undefined ? '' : ` WHERE ${partitionFilter(table, task.account, task.month!)}`}`;
  const whole = async (why?: string) => {
    const file = task.rows === 0 ? null : await writePart(db, dir, task, archived, source, archiveId);
    return { how: (task.rows === 0 ? 'removed' : 'rewritten') as ArchivedPart['how'], rows: file?.rows ?? 0, file, supersedes: archived.map((entry) => entry.path), ...(why === undefined ? {} : { why }) };
  };
  if (table.kind === 'whole') return { ...(await whole()), how: task.rows === 0 && archived.length === 0 ? 'unchanged' : task.rows === 0 ? 'removed' : archived.length === 0 ? 'added' : 'rewritten' };
  if (archived.length === 0) {
    if (task.rows === 0) return { how: 'unchanged', rows: 0, file: null, supersedes: [] };
    const file = await writePart(db, dir, task, archived, source, archiveId);
    return { how: 'added', rows: file.rows, file, supersedes: [] };
  }
  // The archived rows are read to compare: a file that no longer matches its checksum is not
  // trusted, and the partition is written again from the database.
  for (const entry of archived) {
    try {
      await verifyFile(dir, entry);
    } catch (error) {
      if (!(error instanceof ArchiveError)) throw error;
      return whole(`${entry.path} did not match its checksum`);
    }
  }
  const stored = `SELECT ${table.columns.map((column) => `"${column.name}"`).join(', ')} FROM read_parquet([${archived.map((entry) => sqlString(path.join(dir, ...entry.path.split('/')))).join(', ')}], hive_partitioning = false, union_by_name = true)`;
  const [{ gone, added }] = (await db.all<{ gone: string; added: string }>(
    `SELECT (SELECT count(*) FROM (${stored} EXCEPT ALL ${source})) AS gone, (SELECT count(*) FROM (${source} EXCEPT ALL ${stored})) AS added`,
  )) as [{ gone: string; added: string }];
  if (gone !== '0') return whole(`${gone} archived rows are no longer in the database`);
  if (added === '0') return { how: 'unchanged', rows: 0, file: null, supersedes: [] };
  const file = await writePart(db, dir, task, archived, `${source} EXCEPT ALL ${stored}`, archiveId);
  return { how: 'added', rows: file.rows, file, supersedes: [] };
}

/** A column as written to Parquet: as it is when Parquet keeps it exactly, else as text. */
function parquetColumn(column: Column): string {
  return PARQUET_EXACT.test(column.type) ? `"${column.name}"` : `CAST("${column.name}" AS VARCHAR) AS "${column.name}"`;
}

/** Writes the rows of `query` as the partition's next part file, fsynced, and describes it for the manifest. */
async function writePart(db: Database, dir: string, task: Task, archived: readonly ArchiveFile[], query: string, archiveId: string): Promise<ArchiveFile> {
  const folder = task.account === undefined ? `tables/table=${task.table.name}` : `raw/stream=${task.table.name.slice('raw.'.length)}/account=${task.account}/month=${task.month}`;
  const number = 1 + Math.max(0, ...archived.map((entry) => Number(/part-(\d+)\.parquet$/.exec(entry.path)?.[1] ?? 0)));
  const relative = `${folder}/part-${number}.parquet`;
  const file = path.join(dir, ...relative.split('/'));
  return guarded(file, async () => {
    const created = !existsSync(path.join(dir, ...folder.split('/')));
    await mkdir(path.dirname(file), { recursive: true });
    const rows = await db.run(`COPY (${query}) TO ${sqlString(file)} (FORMAT parquet, COMPRESSION zstd)`);
    await syncFile(file);
    await syncDirectory(path.dirname(file));
    // A new folder's own entry must survive a power cut too.
    if (created) for (let up = path.dirname(path.dirname(file)); up.length >= dir.length; up = path.dirname(up)) await syncDirectory(up);
    const [sha256, { size }] = await Promise.all([sha256Of(file), stat(file)]);
    return {
      path: relative,
      sha256,
      rows,
      bytes: size,
      table: task.table.name,
      ...(task.account === undefined ? {} : { stream: task.table.name.slice('raw.'.length), account: task.account, month: task.month }),
      archiveId,
    };
  });
}

/** The manifest's rows per raw table must be the database's: checked before the manifest is written. */
async function checkCounts(db: Database, manifest: ArchiveManifest): Promise<void> {
  for (const [name, table] of Object.entries(manifest.tables)) {
    const [{ n }] = (await db.all<{ n: string }>(`SELECT count(*) AS n FROM ${name}`)) as [{ n: string }];
    if (Number(n) !== table.rows) throw new Error(`archive: ${name} has ${n} rows but the archive would list ${table.rows}; the archive was left as it was`);
  }
}

/** A file-system failure while archiving: a full disk is a DiskFullError naming the archive file. */
async function guarded<T>(file: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw diskFullOf(error, { file, doing: 'archiving the raw history', kept: 'the archive is as it was (its manifest is unchanged)' }) ?? error;
  }
}

