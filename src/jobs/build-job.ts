import type { Config } from '../config/config.ts';
import { countOf, formatCount } from '../count-text.ts';
import type { StreamDeclaration } from '../extract/stream.ts';
import { ensureRawTables } from '../extract/sync.ts';
import { BUILD_KEPT, buildModels, type ModelResult } from '../models/build.ts';
import { loadProject } from '../models/project.ts';
import { selectModels, type ModelSelection } from '../models/select.ts';
import { whilePending } from '../pending-work.ts';
import { Database } from '../store/database.ts';
import { DatabaseLock } from '../store/lock.ts';
import { chooseCompaction, type ThinnedTable } from '../store/compaction.ts';
import { journalPosting } from '../models/settings.ts';
import { hasClosedTable, readClosedPeriods } from '../store/period-closes.ts';
import { ConfigError, DiskFullError } from '../errors.ts';
import { refusePublishedCopy, requireDatabase } from './paths.ts';

/** Callbacks of a build. */
export interface BuildHooks {
  /** Told as each model finishes (ok, failed or skipped). */
  onModel?: (result: ModelResult, index: number, total: number) => void;
  /** Once aborted, no further model starts (see BuildOptions.signal). */
  signal?: AbortSignal;
  /** Told before the models when this build's checkpoints compact thinned tables (src/store/compaction.ts). */
  onCompaction?: (tables: readonly ThinnedTable[]) => void;
}

/** What a build builds: the selected models (src/models/select.ts), every one by default; whole with fullRefresh. */
export type BuildRequest = BuildHooks & ModelSelection & { fullRefresh?: boolean };

/**
 * The build job: builds the models (or the selected ones) of an existing database in dependency
 * order, under the sync lock (a build never reads a half-written sync). A model that fails keeps
 * its previous table and the models that depend on it are skipped; each has its result. A bad
 * selector is told before the database is opened.
 */
export async function buildJob(config: Readonly<Config>, streams: readonly StreamDeclaration[], request: BuildRequest = {}): Promise<ModelResult[]> {
  const opened = await openForBuild(config, request);
  try {
    return await buildOn(opened.db, config, streams, request);
  } finally {
    opened.close();
  }
}

/** The database opened for a build: under the sync lock until closed. */
export interface BuildDatabase {
  db: Database;
  /** Closes the database, then releases the lock. */
  close(): void;
}

/**
 * Opens the database for a build, after the refusals a build makes before it opens anything (a
 * bad selector, the published copy, no database), under the sync lock. The run keeps it open
 * for its check (src/jobs/run-job.ts): the check then reads what the build wrote from DuckDB's
 * cache instead of the file.
 */
export async function openForBuild(config: Readonly<Config>, selection: ModelSelection = {}): Promise<BuildDatabase> {
  const { select = [], exclude = [] } = selection;
  if (select.length > 0 || exclude.length > 0) selectModels(loadProject(), select, exclude);
  refusePublishedCopy(config.db);
  requireDatabase(config.db);
  const lock = DatabaseLock.acquire(config.db, 'build');
  let db: Database;
  try {
    db = await Database.open(config.db, { memoryLimit: config.memoryLimit });
  } catch (error) {
    lock.release();
    throw error;
  }
  let closed = false;
  return {
    db,
    close: () => {
      if (closed) return;
      closed = true;
      try {
        db.close();
      } finally {
        lock.release();
      }
    },
  };
}

/** buildJob's work on the database openForBuild opened (left open: the caller closes it). */
export async function buildOn(db: Database, config: Readonly<Config>, streams: readonly StreamDeclaration[], request: BuildRequest = {}): Promise<ModelResult[]> {
  const { select = [], exclude = [] } = request;
  try {
    // Tables are built with CREATE TABLE AS: their row order means nothing, and not keeping it
    // lets DuckDB write them in parallel with far less memory.
    await db.run('SET preserve_insertion_order = false');
    // The rows an incremental step replaces stay stored until a table is thinned enough to be
    // worth compacting, rather than at every checkpoint (src/store/compaction.ts).
    const thinned = await chooseCompaction(db);
    if (thinned.length > 0) request.onCompaction?.(thinned);
    await refuseMovedPeriods(db, config);
    await refuseOtherPosting(db, config);
    await ensureRawTables(db, streams);
    const results = await whilePending(`build: the models of ${config.db}`, () => buildModels(db, config.models, { onResult: request.onModel, select, exclude, fullRefresh: request.fullRefresh === true, signal: request.signal }));
    // Checkpoint here, not silently at close: a full disk is told now (the models are
    // committed in the WAL either way, and the next open replays it).
    await db.checkpoint().catch((error: unknown) => {
      throw error instanceof DiskFullError ? error.during('checkpointing the built models into the database file', 'the build is committed in its write-ahead log and nothing was lost') : error;
    });
    return results;
  } catch (error) {
    // A full disk met outside a model (the settings, the raw tables): the same one line.
    if (error instanceof DiskFullError && db.diskFullError === error) throw error.during('building the models', BUILD_KEPT);
    throw error;
  } finally {
    await db.run('RESET preserve_insertion_order').catch(() => undefined);
  }
}

/**
 * A reporting time zone other than the one the closed periods were cut in would move their
 * boundaries (a day, a month's first and last hour): refused while any period is closed, naming them.
 */
async function refuseMovedPeriods(db: Database, config: Readonly<Config>): Promise<void> {
  const closes = await readClosedPeriods(db);
  const moved = closes.filter((close) => close.timeZone !== config.models.reportingTimeZone);
  if (moved.length === 0) return;
  const zones = [...new Set(moved.map((close) => close.timeZone))].join(', ');
  throw new ConfigError('models.reportingTimeZone', `is ${config.models.reportingTimeZone}, but the closed period${moved.length === 1 ? '' : 's'} ${moved.map((close) => close.label).join(', ')} ${moved.length === 1 ? 'was' : 'were'} cut in ${zones}: another zone would move ${moved.length === 1 ? 'its' : 'their'} boundaries`, {
    hint: `set models.reportingTimeZone back to ${zones}, or reopen ${moved[0]!.label} first (exledger reopen --period ${moved[0]!.label} --reason …), which reopens every later closed period too; nothing was built`,
  });
}

/**
 * The journal's lines as closed stay at the grain they were posted at (models.journal.posting:
 * an entry per source record, or per account, day, kind and coin), and a closed period's later
 * changes are adjusting entries to those entries: another grain would reverse every closed entry
 * and post it again, changing nothing. Refused while a period closed at another grain is in force,
 * naming them (the grain read off the closed lines themselves: summary entries are summary/…).
 */
async function refuseOtherPosting(db: Database, config: Readonly<Config>): Promise<void> {
  const closes = await readClosedPeriods(db);
  if (closes.length === 0 || !(await hasClosedTable(db, 'journal_entries'))) return;
  const posting = journalPosting(config.models);
  const other = posting === 'summary' ? 'detail' : 'summary';
  const rows = await db.all<{ close_version: number }>(
    "SELECT DISTINCT close_version FROM closed.journal_entries WHERE adjusted_entry_id IS NULL AND starts_with(entry_id, 'summary/') <> $1",
    [posting === 'summary'],
  );
  const versions = new Set(rows.map((row) => Number(row.close_version)));
  const posted = closes.filter((close) => versions.has(close.version));
  if (posted.length === 0) return;
  const labels = posted.map((close) => close.label).join(', ');
  throw new ConfigError('models.journal.posting', `is ${posting}, but the journal of the closed period${posted.length === 1 ? '' : 's'} ${labels} ${posted.length === 1 ? 'was' : 'were'} posted in ${other}: ${posted.length === 1 ? 'its' : 'their'} lines as closed and their adjusting entries stay at that grain`, {
    hint: `set models.journal.posting back to "${other}", or reopen ${posted[0]!.label} first (exledger reopen --period ${posted[0]!.label} --reason …), which reopens every later closed period too; nothing was built`,
  });
}

/**
 * What a build did, in one phrase counting models (macro files are not models: they are named
 * only when they fail): `41 models: 26 rebuilt whole, 15 unchanged`, or with some not built
 * `39 of 41 models up to date (39 unchanged); failed: marts.fees_daily; skipped: marts.fees_monthly`.
 * Shared by `exledger build`'s last line and the run's summary.
 */
export function describeBuild(results: readonly ModelResult[]): string {
  const models = results.filter((result) => result.materialization !== 'macro');
  const ok = models.filter((result) => result.status === 'ok');
  const how = (kind: NonNullable<ModelResult['how']>) => ok.filter((result) => result.how === kind).length;
  const ways: [number, string][] = [
    [how('whole'), 'rebuilt whole'],
    [how('incremental'), 'incremental'],
    [how('unchanged'), 'unchanged'],
    [ok.filter((result) => result.how === undefined).length, 'built'],
  ];
  const done = ways
    .filter(([count]) => count > 0)
    .map(([count, way]) => `${formatCount(count)} ${way}`)
    .join(', ');
  const failed = results.filter((result) => result.status === 'failed').map((result) => result.id);
  const skipped = results.filter((result) => result.status === 'skipped').map((result) => result.id);
  if (failed.length === 0 && skipped.length === 0) return done === '' ? countOf(models.length, 'model') : `${countOf(models.length, 'model')}: ${done}`;
  return [
    `${formatCount(ok.length)} of ${countOf(models.length, 'model')} up to date${done === '' ? '' : ` (${done})`}`,
    ...(failed.length === 0 ? [] : [`failed: ${failed.join(', ')}`]),
    ...(skipped.length === 0 ? [] : [`skipped: ${skipped.join(', ')}`]),
  ].join('; ');
}
