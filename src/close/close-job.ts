import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { actorFromEnvironment, type Config } from '../config/config.ts';
import { countOf } from '../count-text.ts';
import { ConfigError, DataError, ExledgerError } from '../errors.ts';
import type { StreamDeclaration } from '../extract/stream.ts';
import { parsePeriod, periodEdgesMs, type ReportPeriod } from '../export/period.ts';
import { writeReport, type ReportResult } from '../export/write-report.ts';
import { buildJob, describeBuild, type BuildHooks } from '../jobs/build-job.ts';
import { checkJob, type CheckHooks } from '../jobs/check-job.ts';
import { refusePublishedCopy, requireDatabase, requireOutputFolder } from '../jobs/paths.ts';
import { removeLeftoverWorkbooks, type ReportCatalog } from '../jobs/report-job.ts';
import { describeBuildSettings, type BuildSettingsRow } from '../models/settings.ts';
import { loadProject } from '../models/project.ts';
import { ADJUSTMENT_COLUMNS, CLOSING_SPECS } from '../../sql/marts/period_adjustments.ts';
import { writeComments } from '../store/comments.ts';
import { Database } from '../store/database.ts';
import { DatabaseLock } from '../store/lock.ts';
import { hasClosedTable, readClosedPeriods, type ClosedPeriod, type ClosePeriodKind } from '../store/period-closes.ts';
import { readStatus } from '../store/stream-status.ts';
import { readSyncedAccounts } from '../store/synced-accounts.ts';
import { sha256 } from './closed-workbooks.ts';

/**
 * Closing a period (docs/workbooks.md "Closing a period"): the controller's signature, kept by
 * the database. A close freezes the marts' figures up to the period's end (schema closed), writes
 * the period's workbooks as closed and keeps them byte for byte, and records who, when, why and
 * with which settings (meta.period_closes); later changes to those figures are adjustments in the
 * first open period (marts.period_adjustments). A reopen undoes closes, newest first, on the record.
 */

/** A close refused: every reason, each its own line. Nothing was closed. */
export class CloseRefusedError extends ExledgerError {
  readonly isRetryable = false;
  readonly reasons: readonly string[];

  constructor(label: string, reasons: readonly string[], hint: string) {
    super(`${label} was not closed (${countOf(reasons.length, 'reason')}):\n${reasons.map((reason) => `  - ${reason}`).join('\n')}`, { hint });
    this.reasons = reasons;
  }
}

/** Who acts: --by, else the environment (EXLEDGER_USER, USER, LOGNAME). */
export function actorOf(by: string | undefined, fromEnvironment: string | undefined = actorFromEnvironment()): string {
  const name = [by, fromEnvironment].find((candidate) => candidate !== undefined && candidate.trim() !== '');
  if (name === undefined) throw new ConfigError('--by', 'say who closes or reopens: no --by, and none of EXLEDGER_USER, USER, LOGNAME is set', { hint: 'add --by "Jane Doe" (or set EXLEDGER_USER)' });
  if (name.length > 200 || /[\n\r]/.test(name)) throw new ConfigError('--by', 'a name on one line, at most 200 characters');
  return name.trim();
}

/** `--period` as a period of the configured kind (reports.period). */
export function closePeriodOf(label: string | undefined, kind: ClosePeriodKind): ReportPeriod {
  const example = { month: '2026-10', quarter: '2026-Q3', year: '2026' }[kind];
  if (label === undefined) throw new ConfigError('--period', `say which period: --period ${example} (a ${kind}: reports.period)`);
  const period = parsePeriod(label);
  const kindOf = /^\d{4}-\d{2}$/.test(period.label) ? 'month' : /^\d{4}-Q\d$/i.test(period.label) ? 'quarter' : 'year';
  if (kindOf !== kind) throw new ConfigError('--period', `${label} is a ${kindOf}, and periods are closed by ${kind} (reports.period): e.g. --period ${example}`);
  return period;
}

/** What a close did. */
export interface CloseResult {
  version: number;
  period: ReportPeriod;
  closedAt: string;
  closedBy: string;
  note: string | null;
  /** Rows frozen per mart. */
  frozen: Record<string, number>;
  /** The workbooks and CSVs written as closed, with their SHA-256. */
  files: { file: string; sha256: string }[];
  /** The build before the close, in a phrase. */
  build: string;
  /** The checks before the close, counted. */
  checks: number;
}

/** What a close is asked. */
export interface CloseRequest {
  period: string | undefined;
  note?: string;
  by?: string;
  now?: Date;
  build?: BuildHooks;
  check?: CheckHooks;
  onWorkbook?: (result: ReportResult) => void;
}

/**
 * Closes a period for every account of the database: builds (so the figures are the data's),
 * runs every check, refuses with every reason unless it can close, writes the period's workbooks
 * as closed, then in one transaction freezes the marts up to the period's end and records the
 * close with the workbooks' bytes; only then are the workbooks moved into reports.outDir. Runs
 * under the run lock: a run (or another close) meanwhile is refused with exit 4.
 */
export async function closeJob(config: Readonly<Config>, streams: readonly StreamDeclaration[], catalog: ReportCatalog, request: CloseRequest): Promise<CloseResult> {
  const period = closePeriodOf(request.period, config.reports.period);
  const by = actorOf(request.by);
  const note = request.note === undefined || request.note.trim() === '' ? null : request.note.trim();
  refusePublishedCopy(config.db);
  requireDatabase(config.db);
  requireOutputFolder(config.reports.outDir, 'outDir');
  const runLock = DatabaseLock.acquire(`${config.db}.run`, 'close');
  try {
    await refuseEarlierPeriods(config, period);
    const builds = await buildJob(config, streams, request.build);
    const checks = await checkJob(config, request.check ?? {});
    const reasons: string[] = [];
    const failedModels = builds.filter((result) => result.status !== 'ok');
    if (failedModels.length > 0) reasons.push(`the build did not complete: ${describeBuild(builds)}`);
    for (const test of checks.filter((result) => result.status !== 'pass')) reasons.push(`check ${test.id} ${test.status === 'fail' ? `failed (${countOf(test.offending, 'offending row')})` : `could not run: ${test.message ?? 'error'}`}`);
    const now = request.now ?? new Date();
    let result: Omit<CloseResult, 'build' | 'checks'>;
    const lock = DatabaseLock.acquire(config.db, 'close');
    try {
      const db = await Database.open(config.db, { memoryLimit: config.memoryLimit });
      try {
        reasons.push(...(await readinessReasons(db, config, streams, period)));
        if (reasons.length > 0) throw new CloseRefusedError(period.label, reasons, `fix each reason (exledger status, exledger check and marts.needs_price say more), then close ${period.label} again; nothing was closed`);
        result = await freezeAndRecord(db, config, catalog, request, { period, by, note, now });
      } finally {
        db.close();
      }
    } finally {
      lock.release();
    }
    // The adjustments and the journal as posted follow the closes now in force.
    await buildJob(config, streams, { select: ['marts.period_adjustments+'] });
    return { ...result, build: describeBuild(builds), checks: checks.length };
  } finally {
    runLock.release();
  }
}

/**
 * Writes the period's workbooks as closed into a folder of their own, then in one transaction
 * freezes the marts and records the close with the workbooks' bytes; once committed, the
 * workbooks are moved into reports.outDir.
 */
async function freezeAndRecord(
  db: Database,
  config: Readonly<Config>,
  catalog: ReportCatalog,
  request: CloseRequest,
  close: { period: ReportPeriod; by: string; note: string | null; now: Date },
): Promise<Omit<CloseResult, 'build' | 'checks'>> {
  const { period, by, note, now } = close;
  const closedAt = now.toISOString();
  const accounts = await readSyncedAccounts(db);
  // The workbooks' own folder: .close-<pid>-…, removed at the end; one a killed close left is removed here.
  mkdirSync(config.reports.outDir, { recursive: true });
  removeLeftoverWorkbooks(config.reports.outDir);
  const folder = mkdtempSync(path.join(config.reports.outDir, `.close-${process.pid}-`));
  try {
    // Written from the figures about to be frozen; several accounts: each account's too.
    const results: ReportResult[] = [];
    for (const account of [undefined, ...(accounts.length > 1 ? accounts : [])]) {
      for (const report of catalog.reports) {
        const result = await writeReport(db, report, {
          period,
          ...(account === undefined ? {} : { account }),
          streams: catalog.streams,
          coinFormats: catalog.coinFormats,
          outDir: folder,
          now,
          closed: { at: closedAt, by },
        });
        results.push(result);
        request.onWorkbook?.(result);
      }
    }
    const stored = results
      .flatMap((result) => [
        { report: result.report, account: result.account, file: result.file },
        ...(result.csv === undefined ? [] : [{ report: result.report, account: result.account, file: result.csv.file }]),
      ])
      .map((entry) => {
        const bytes = readFileSync(entry.file);
        return { ...entry, name: path.basename(entry.file), bytes, sha256: sha256(bytes) };
      });
    const { version, frozen } = await commitClose(db, { period, kind: config.reports.period, timeZone: config.models.reportingTimeZone, by, at: closedAt, note, files: stored });
    // Committed: the signed files take their place (were this interrupted, exledger report writes them again from the database).
    for (const entry of stored) renameSync(entry.file, path.join(config.reports.outDir, entry.name));
    return { version, period, closedAt, closedBy: by, note, frozen, files: stored.map((entry) => ({ file: path.join(config.reports.outDir, entry.name), sha256: entry.sha256 })) };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** A close as committed: the period, who, when, why, and the files written as closed. */
export interface CloseRecord {
  period: ReportPeriod;
  kind: ClosePeriodKind;
  timeZone: string;
  by: string;
  /** ISO instant. */
  at: string;
  note: string | null;
  files: readonly { name: string; report: string; account: string | null; bytes: Buffer; sha256: string }[];
}

/** The version of the next close or reopen in the audit trail (meta.period_closes). */
async function nextVersion(db: Database): Promise<number> {
  const [row] = await db.all<{ next: number }>('SELECT coalesce(max(version), 0) + 1 AS next FROM meta.period_closes');
  return Number(row!.next);
}

/**
 * The close's transaction: freezes the marts up to the period's end (after the previous close's),
 * records it in force (settings.closed_periods) and in the audit trail (meta.period_closes, with
 * the build settings, the files' checksums and the rows frozen), and keeps the files' bytes
 * (meta.closed_workbooks). All or nothing.
 */
export async function commitClose(db: Database, close: CloseRecord): Promise<{ version: number; frozen: Record<string, number> }> {
  const { period, by, at, note, files } = close;
  return db.transaction(async () => {
    const previousTo = (await readClosedPeriods(db)).at(-1)?.to ?? null;
    const version = await nextVersion(db);
    const frozen = await freezeMarts(db, version, previousTo, period.to);
    const settings = await buildSettingsText(db);
    await db.run('INSERT INTO settings.closed_periods VALUES ($1, $2, $3, CAST($4 AS DATE), CAST($5 AS DATE), $6, CAST($7 AS TIMESTAMPTZ), $8)', [version, period.label, close.kind, period.from, period.to, close.timeZone, at, by]);
    await db.run(
      "INSERT INTO meta.period_closes VALUES ($1, 'close', $2, $3, CAST($4 AS DATE), CAST($5 AS DATE), $6, CAST($7 AS TIMESTAMPTZ), $8, $9, $10, $11, $12, NULL)",
      [version, period.label, close.kind, period.from, period.to, close.timeZone, at, by, note, settings, JSON.stringify(Object.fromEntries(files.map((file) => [file.name, file.sha256]))), JSON.stringify(frozen)],
    );
    for (const file of files) {
      await db.run('INSERT INTO meta.closed_workbooks VALUES ($1, $2, $3, $4, $5, from_base64($6))', [version, file.name, file.report, file.account, file.sha256, file.bytes.toString('base64')]);
    }
    return { version, frozen };
  });
}

/**
 * The reopen's transaction: the close of `label` and every later one, newest first, each recorded
 * as reopened (meta.period_closes), out of force (settings.closed_periods), their frozen rows out
 * of schema closed. All or nothing. The closes undone, newest first, and the last version written.
 */
export async function commitReopen(db: Database, label: string, reopen: { by: string; at: string; reason: string }): Promise<{ undone: ClosedPeriod[]; version: number }> {
  const closes = await readClosedPeriods(db);
  const target = closes.find((close) => close.label === label);
  if (target === undefined) {
    throw new ConfigError('--period', `${label} is not closed${closes.length === 0 ? ' (no period is)' : `; the closed periods are ${closes.map((close) => close.label).join(', ')}`}`, { hint: 'name a closed period (exledger status lists them)' });
  }
  const undone = closes.filter((close) => close.to >= target.to).reverse();
  const version = await db.transaction(async () => {
    let version = 0;
    for (const close of undone) {
      version = await nextVersion(db);
      await db.run(
        "INSERT INTO meta.period_closes VALUES ($1, 'reopen', $2, $3, CAST($4 AS DATE), CAST($5 AS DATE), $6, CAST($7 AS TIMESTAMPTZ), $8, $9, NULL, NULL, NULL, $10)",
        [version, close.label, close.kind, close.from, close.to, close.timeZone, reopen.at, reopen.by, reopen.reason, close.version],
      );
      await db.run('DELETE FROM settings.closed_periods WHERE version = $1', [close.version]);
      for (const { table_name: table } of await db.all<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database() AND table_schema = 'closed'")) {
        await db.run(`DELETE FROM closed.${table} WHERE close_version = $1`, [close.version]);
      }
    }
    return version;
  });
  return { undone, version };
}

/** Refuses a period at or before the latest closed one, before any work (read-only). */
async function refuseEarlierPeriods(config: Readonly<Config>, period: ReportPeriod): Promise<void> {
  const db = await Database.open(config.db, { readOnly: true, memoryLimit: config.memoryLimit });
  try {
    const latest = (await readClosedPeriods(db)).at(-1);
    if (latest !== undefined && period.from <= latest.to) {
      throw new ConfigError('--period', `${period.label} is at or before ${latest.label}, the latest closed period (closed on ${latest.closedAt} by ${latest.closedBy}): closes move forward`, {
        hint: `close a period after ${latest.label}, or reopen ${latest.label} first (exledger reopen --period ${latest.label} --reason …)`,
      });
    }
  } finally {
    db.close();
  }
}

/**
 * Why the period cannot be closed yet, besides the build and the checks (the build refuses a
 * reporting zone other than the closes in force): streams not synced through its end plus the
 * lookback, rows that need a price, adjustments booked in it that are unknown.
 */
async function readinessReasons(db: Database, config: Readonly<Config>, streams: readonly StreamDeclaration[], period: ReportPeriod): Promise<string[]> {
  const reasons: string[] = [];
  const endMs = (await periodEdgesMs(db, period, config.models.reportingTimeZone)).endMs + config.sync.lookbackDays * 86_400_000;
  const history = streams.filter((stream) => stream.kind === 'history');
  for (const status of await readStatus(db, history)) {
    // A stream with nothing to read (no spot symbol traded) whose last sync was ok covers every period.
    if (status.partitions === 0 && status.lastStatus === 'ok') continue;
    if (status.coveredUntil === null || Date.parse(status.coveredUntil) < endMs) {
      reasons.push(`${status.account}/${status.stream} is synced until ${status.coveredUntil ?? 'never'}, not through ${new Date(endMs).toISOString()} (the period's end plus sync.lookbackDays ${config.sync.lookbackDays}): run exledger sync`);
    }
  }
  if (config.models.reportingCurrency !== null) {
    const needs = await db.all<{ coin: string; days: string; first: string; last: string }>(
      'SELECT coin, count(DISTINCT needed_date) AS days, CAST(min(needed_date) AS VARCHAR) AS first, CAST(max(needed_date) AS VARCHAR) AS last FROM marts.needs_price WHERE needed_date <= CAST($1 AS DATE) GROUP BY coin ORDER BY coin',
      [period.to],
    );
    for (const need of needs) reasons.push(`${need.coin} needs a price in ${config.models.reportingCurrency} on ${countOf(Number(need.days), 'day')} from ${need.first} to ${need.last} (marts.needs_price): add them to the prices file`);
  }
  const unknown = await db.all<{ n: string }>("SELECT count(*) AS n FROM marts.period_adjustments WHERE status = 'pending' AND adjustment IS NULL");
  if (Number(unknown[0]?.n ?? 0) > 0) reasons.push(`${countOf(Number(unknown[0]!.n), 'adjustment')} to closed periods booked in ${period.label} ${Number(unknown[0]!.n) === 1 ? 'is' : 'are'} unknown (marts.period_adjustments.adjustment is null): add the missing prices`);
  return reasons;
}

/** The settings the marts were built with, as one phrase (describeBuildSettings, with the journal's). */
async function buildSettingsText(db: Database): Promise<string> {
  const [row] = await db.all<BuildSettingsRow & { journal?: string | null }>("SELECT * FROM settings.model_builds WHERE model = 'marts.journal_entries'");
  if (row === undefined) throw new DataError('the marts have not been built in this database', { hint: 'run exledger build, then close again' });
  return `${describeBuildSettings(row)}${row.journal === undefined || row.journal === null ? '' : `; journal: ${row.journal}`}`;
}

/**
 * Copies each closed mart's rows after the previous close's last day through this period's last
 * day into closed.<mart> (created at the first close, with the mart's columns and comments, and
 * close_version), and the pending adjustments into closed.period_adjustments. Returns rows per mart.
 */
async function freezeMarts(db: Database, version: number, previousTo: string | null, to: string): Promise<Record<string, number>> {
  const frozen: Record<string, number> = {};
  const declarations = new Map(loadProject().models.filter((model) => model.declaration !== undefined).map((model) => [model.id, model.declaration!]));
  const targets = [
    ...CLOSING_SPECS.map((spec) => ({ mart: spec.mart, where: `${spec.period} <= CAST($2 AS DATE) AND (CAST($1 AS DATE) IS NULL OR ${spec.period} > CAST($1 AS DATE))` })),
    // The adjustments pending now are booked in the first open period: the one closed now (or one before it).
    { mart: 'marts.period_adjustments', where: "status = 'pending' AND booked_from <= CAST($2 AS DATE) AND (CAST($1 AS DATE) IS NULL OR booked_from > CAST($1 AS DATE))" },
  ];
  for (const { mart, where } of targets) {
    const name = mart.slice('marts.'.length);
    const types = new Map((await db.all<{ column_name: string; data_type: string }>("SELECT column_name, data_type FROM information_schema.columns WHERE table_catalog = current_database() AND table_schema = 'marts' AND table_name = $1 ORDER BY ordinal_position", [name])).map((row) => [row.column_name, row.data_type]));
    const kept = mart === 'marts.period_adjustments' ? ADJUSTMENT_COLUMNS.split(', ') : [...types.keys()];
    if (!(await hasClosedTable(db, name))) {
      await db.run(`CREATE TABLE closed.${name} AS SELECT ${kept.join(', ')}, CAST(NULL AS INTEGER) AS close_version FROM ${mart} WHERE false`);
    } else {
      // A mart that gained a column since the first close: the frozen rows before it have none (NULL).
      const present = new Set((await db.all<{ column_name: string }>("SELECT column_name FROM information_schema.columns WHERE table_catalog = current_database() AND table_schema = 'closed' AND table_name = $1", [name])).map((row) => row.column_name));
      for (const column of kept) if (!present.has(column)) await db.run(`ALTER TABLE closed.${name} ADD COLUMN ${column} ${types.get(column)!}`);
    }
    // Every column described as the mart's (a column added since included); writeComments writes only what differs.
    const declaration = declarations.get(mart);
    await writeComments(db, [
      {
        schema: 'closed',
        table: name,
        description: `${mart} as closed: its rows up to the end of each closed period, frozen by that close (docs/workbooks.md "Closing a period")${declaration === undefined ? '' : `. ${declaration.description}`}`,
        columns: [
          ...kept.map((column) => declaration?.columns.find((candidate) => candidate.name === column) ?? { name: column, description: `As ${mart}.${column}` }),
          { name: 'close_version', description: 'The close that froze the row (meta.period_closes.version)' },
        ],
      },
    ]);
    frozen[mart] = await db.run(`INSERT INTO closed.${name} (${kept.join(', ')}, close_version) SELECT ${kept.join(', ')}, $3 FROM ${mart} WHERE ${where}`, [previousTo, to, version]);
  }
  return frozen;
}

/** What a reopen did. */
export interface ReopenResult {
  /** The closes undone, newest first. */
  reopened: ClosedPeriod[];
  version: number;
  reason: string;
  by: string;
  at: string;
}

/**
 * Reopens a closed period and every later one, newest first: each reopen is recorded in
 * meta.period_closes (who, when, why, the close it undid); their frozen rows leave schema closed
 * (the audit trail and the signed workbooks' bytes stay), and the build makes their figures live
 * again: their adjustments leave the open period.
 */
export async function reopenJob(config: Readonly<Config>, streams: readonly StreamDeclaration[], request: { period: string | undefined; reason: string | undefined; by?: string; now?: Date; build?: BuildHooks }): Promise<ReopenResult> {
  const period = closePeriodOf(request.period, config.reports.period);
  const reason = request.reason?.trim() ?? '';
  if (reason === '') throw new ConfigError('--reason', 'say why the period is reopened: it is kept in the audit trail (meta.period_closes)', { hint: `e.g. exledger reopen --period ${period.label} --reason "late fills of the 30th, ticket FIN-123"` });
  const by = actorOf(request.by);
  refusePublishedCopy(config.db);
  requireDatabase(config.db);
  const at = (request.now ?? new Date()).toISOString();
  const runLock = DatabaseLock.acquire(`${config.db}.run`, 'reopen');
  try {
    const lock = DatabaseLock.acquire(config.db, 'reopen');
    let result: ReopenResult;
    try {
      const db = await Database.open(config.db, { memoryLimit: config.memoryLimit });
      try {
        const { undone, version } = await commitReopen(db, period.label, { by, at, reason });
        result = { reopened: undone, version, reason, by, at };
      } finally {
        db.close();
      }
    } finally {
      lock.release();
    }
    // Their figures are live again: the adjustments and the journal as posted follow.
    await buildJob(config, streams, { ...request.build, select: ['marts.period_adjustments+'] });
    return result;
  } finally {
    runLock.release();
  }
}
