import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/config.ts';
import { closestName } from '../closest-name.ts';
import { ConfigError } from '../errors.ts';
import type { CoinFormats } from '../export/cell-formats.ts';
import type { SummaryStream } from '../export/summary-sheet.ts';
import { parsePeriod, parseRange, type ReportPeriod } from '../export/period.ts';
import { validateReports, type ReportSpec } from '../export/report-definition.ts';
import { unknownAccount, writeReport, type ReportResult } from '../export/write-report.ts';
import { whilePending } from '../pending-work.ts';
import { Database } from '../store/database.ts';
import { isProcessAlive } from '../store/lock.ts';
import { readSyncedAccounts } from '../store/synced-accounts.ts';
import { readClosedPeriods } from '../store/period-closes.ts';
import { restoreClosedWorkbook } from '../close/closed-workbooks.ts';
import { requireDatabase, requireOutputFolder } from './paths.ts';

/** Callbacks of a report job. */
export interface ReportHooks {
  /** Told as each workbook is written. */
  onWorkbook?: (result: ReportResult) => void;
  /** Told as rows of a detail sheet are written (rows so far, rows in all). */
  onRows?: (report: string, sheet: string, written: number, total: number) => void;
  /** Extra lines for every Summary's notes (e.g. the checks of the run that writes them). */
  notes?: readonly string[];
  /** Once aborted, no further workbook is started: the job throws the signal's reason; the workbooks written stay. */
  signal?: AbortSignal;
}

/** What the report job writes from: declarations, given as arguments (src/export imports neither pipelines/ nor reports/). */
export interface ReportCatalog {
  /** The reports to write (chosen and validated: selectReports). */
  reports: readonly ReportSpec[];
  streams: readonly SummaryStream[];
  coinFormats: CoinFormats;
}

/**
 * The reports named (`all` for every one), checked against the declarations, which are validated.
 * A report in the reporting currency only (the journal) needs models.reportingCurrency: without
 * one (`reportingCurrency` null) `all` leaves it out and naming it is a ConfigError naming the setting.
 */
export function selectReports(reports: readonly ReportSpec[], streamNames: readonly string[], names: readonly string[], reportingCurrency: string | null = null): ReportSpec[] {
  validateReports(reports, streamNames);
  if (names.includes('all')) return reports.filter((report) => report.requiresReportingCurrency !== true || reportingCurrency !== null);
  return names.map((name) => {
    const report = reports.find((candidate) => candidate.name === name);
    if (report === undefined) {
      const names = reports.map((candidate) => candidate.name);
      const meant = closestName(name, [...names, 'all']);
      throw new ConfigError('report', `"${name}" is not a report; the reports are ${names.join(', ')} (or all)${meant === undefined ? '' : `; did you mean ${meant}?`}`, { hint: `name reports from that list, e.g. exledger report ${meant ?? names[0]} --period 2026-10` });
    }
    if (report.requiresReportingCurrency === true && reportingCurrency === null) {
      throw new ConfigError('models.reportingCurrency', `is not set: the ${name} report posts values in the reporting currency`, {
        hint: 'set models.reportingCurrency (e.g. "USD") and models.pricesFile in the config file, run exledger build, then the report again',
      });
    }
    return report;
  });
}

/**
 * `--account NAME`: one account, given once. A workbook holds one account or all of them
 * (consolidated); several accounts, each in its own workbook, are one command per account.
 */
export function accountOf(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  const fix = 'name one account (exledger report pnl --period 2026-10 --account alpha): a workbook holds one account, or every account without --account; run the command once per account for several';
  if (Array.isArray(value)) throw new ConfigError('--account', `given ${value.length} times (${value.join(', ')}); ${fix}`);
  const name = String(value);
  if (name.includes(',')) throw new ConfigError('--account', `"${name}" names several accounts; ${fix}`);
  if (name.trim() === '') throw new ConfigError('--account', `is empty; ${fix}`);
  return name;
}

/** `--period` or `--from`/`--to`, exactly one of them. */
export function periodOf(request: { period?: string; from?: string; to?: string }): ReportPeriod {
  if (request.period !== undefined) {
    if (request.from !== undefined || request.to !== undefined) throw new ConfigError('--period', 'give either --period or --from and --to, not both');
    return parsePeriod(request.period);
  }
  if (request.from === undefined || request.to === undefined) throw new ConfigError('--period', 'say which period: --period 2026-10 (or 2026-Q3, 2026), or --from 2026-10-01 --to 2026-10-31');
  return parseRange(request.from, request.to);
}

/** Whose rows the workbooks hold. */
export interface ReportScope {
  /**
   * One account of the database (`exledger report --account`): its rows only, in
   * `<report>-<period>-<account>.xlsx`. @default every account, consolidated (what `exledger run` writes)
   */
  account?: string;
}

/**
 * The report job: writes one workbook per report from the built models of an existing
 * database, opened read-only (a sync writing it meanwhile gives one clear error). The output
 * folder and the account (--account) are checked before anything is written; each workbook is
 * written under a temporary name and renamed, so an earlier good workbook is only ever replaced
 * by a complete one.
 */
export async function reportJob(config: Readonly<Config>, catalog: ReportCatalog, period: ReportPeriod, hooks: ReportHooks = {}, scope: ReportScope = {}): Promise<ReportResult[]> {
  const { reports, streams, coinFormats } = catalog;
  requireDatabase(config.db);
  requireOutputFolder(config.reports.outDir, 'outDir');
  const db = await Database.open(config.db, { readOnly: true });
  try {
    if (scope.account !== undefined) {
      const accounts = await readSyncedAccounts(db);
      if (!accounts.includes(scope.account)) throw unknownAccount(scope.account, accounts);
    }
    removeLeftoverWorkbooks(config.reports.outDir);
    // A closed period's workbooks are the ones its close wrote, byte for byte (docs/workbooks.md "Closing a period").
    const close = (await readClosedPeriods(db)).find((candidate) => candidate.label === period.label && candidate.from === period.from && candidate.to === period.to);
    const results: ReportResult[] = [];
    for (const report of reports) {
      hooks.signal?.throwIfAborted();
      if (close !== undefined) {
        const result = await restoreClosedWorkbook(db, close, report.name, config.reports.outDir, scope.account);
        results.push(result);
        hooks.onWorkbook?.(result);
        continue;
      }
      const result = await whilePending(`report: writing the ${report.name} workbook for ${period.label}${scope.account === undefined ? '' : ` (account ${scope.account})`} in ${config.reports.outDir}`, () =>
        writeReport(db, report, {
          period,
          ...(scope.account === undefined ? {} : { account: scope.account }),
          streams,
          coinFormats,
          outDir: config.reports.outDir,
          notes: hooks.notes,
          onProgress: hooks.onRows === undefined ? undefined : (sheet, written, total) => hooks.onRows!(report.name, sheet, written, total),
        }),
      );
      results.push(result);
      hooks.onWorkbook?.(result);
    }
    return results;
  } finally {
    db.close();
  }
}

/**
 * What a writer of the output folder leaves while it works, with its pid: a workbook's temporary
 * name (write-report.ts: `.<report>-<period>[-<account>].xlsx.tmp-<pid>`, its CSV alike), and the
 * folder a close writes its workbooks into before they are committed (`.close-<pid>-…`, close-job.ts).
 */
const LEFTOVERS = [/^\.[a-z][a-z0-9-]*-[0-9A-Za-z_-]+\.(?:xlsx|csv)\.tmp-(\d+)$/, /^\.close-(\d+)-[0-9A-Za-z]+$/];

/**
 * Removes what report writers and closes that are gone left in the output folder (killed
 * mid-write: each workbook can be tens of MB, and nothing else would ever remove them). A writer
 * still running, in another process, keeps its file.
 */
export function removeLeftoverWorkbooks(outDir: string): void {
  if (!existsSync(outDir)) return;
  for (const name of readdirSync(outDir)) {
    const pid = LEFTOVERS.map((pattern) => pattern.exec(name)?.[1]).find((match) => match !== undefined);
    if (pid !== undefined && !isProcessAlive(Number(pid))) rmSync(path.join(outDir, name), { recursive: true, force: true });
  }
}
