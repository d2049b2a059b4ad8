import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/config.ts';
import { closestName } from '../closest-name.ts';
import { ConfigError } from '../errors.ts';
import type { CoinFormats } from '../export/cell-formats.ts';
import type { SummaryStream } from '../export/summary-sheet.ts';
import { parsePeriod, parseRange, type ReportPeriod } from '../export/period.ts';
import { validateReports, type ReportSpec } from '../export/report-definition.ts';
import { FILE_FORMATS, unknownAccount, writeClosedLedgerImports, writeReport, type FileFormat, type ReportResult } from '../export/write-report.ts';
import { LEDGER_FORMATS, type LedgerFormat } from '../export/ledger-layouts.ts';
import { whilePending } from '../pending-work.ts';
import { Database } from '../store/database.ts';
import { isProcessAlive } from '../store/lock.ts';
import { readSyncedAccounts } from '../store/synced-accounts.ts';
import { readClosedPeriods } from '../store/period-closes.ts';
import { restoreClosedWorkbook } from '../close/closed-workbooks.ts';
import { requireDatabase, requireOutputFolder } from './paths.ts';
import { beyondExactSum } from '../export/exact-sum.ts';

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

/** Whose rows the workbooks hold, and what is written beside them. */
export interface ReportScope {
  /**
   * One account of the database (`exledger report --account`): its rows only, in
   * `<report>-<period>-<account>.xlsx`. @default every account, consolidated (what `exledger run` writes)
   */
  account?: string;
  /**
   * The files written beside each workbook (`--format`, chosen by formatsOf): a report's CSV, its
   * ledger imports. @default ['csv'] (what `exledger run` writes)
   */
  formats?: readonly FileFormat[];
  /**
   * Write every workbook, even one whose figures have not changed since it was written at its
   * path (`exledger report --force`). @default false: an unchanged workbook is not written again, and the result says since when
   */
  force?: boolean;
}

/**
 * `--format a,b` (repeatable, or a comma list): the files written beside the workbooks, each
 * once, in the order given; each must be one some report `selected` writes (the journal's CSV
 * and ledger imports; `all`: every report, to name those that do). Undefined when not given. A ConfigError (exit 2) names a wrong one and lists
 * the valid ones.
 */
export function formatsOf(value: unknown, selected: readonly ReportSpec[], all: readonly ReportSpec[]): FileFormat[] | undefined {
  if (value === undefined) return undefined;
  const words = (Array.isArray(value) ? value : [value]).flatMap((item) => String(item).split(',')).map((word) => word.trim().toLowerCase());
  const formats: FileFormat[] = [];
  for (const word of words) {
    if (word === '') continue;
    if (!(FILE_FORMATS as readonly string[]).includes(word)) {
      const meant = closestName(word, FILE_FORMATS);
      throw new ConfigError('--format', `"${word}" is not a format; the formats are ${FILE_FORMATS.join(', ')}${meant === undefined ? '' : `; did you mean ${meant}?`}`, {
        hint: 'e.g. exledger report journal --period 2026-10 --format quickbooks,hledger (csv: the journal\'s CSV, written when --format is not given)',
      });
    }
    if (!formats.includes(word as FileFormat)) formats.push(word as FileFormat);
  }
  if (formats.length === 0) throw new ConfigError('--format', `is empty; the formats are ${FILE_FORMATS.join(', ')}`, { hint: 'name at least one, or leave --format out for the workbook and its CSV' });
  for (const format of formats) {
    const writes = (report: ReportSpec) => (format === 'csv' ? report.csv !== undefined : report.ledger !== undefined);
    if (!selected.some(writes)) {
      const writers = all.filter(writes).map((report) => report.name);
      throw new ConfigError('--format', `${format}: the ${selected.map((report) => report.name).join(', ')} report${selected.length === 1 ? ' writes' : 's write'} no such file; ${writers.join(', ')} ${writers.length === 1 ? 'does' : 'do'}`, {
        hint: `name the ${writers.join(' or ')} report with it, e.g. exledger report ${writers[0] ?? 'journal'} --period 2026-10 --format ${format}`,
      });
    }
  }
  return formats;
}

/**
 * The report job: writes one workbook per report from the built models of an existing
 * database, opened read-only (a sync writing it meanwhile gives one clear error). The output
 * folder and the account (--account) are checked before anything is written; each workbook is
 * written under a temporary name and renamed, so an earlier good workbook is only ever replaced
 * by a complete one. A sheet past `reports.detailRowLimit` is rolled up, its full detail beside
 * the workbook; a workbook whose figures are those it was written with is not written again
 * (unless `scope.force`): its result says `unchanged`.
 */
export async function reportJob(config: Readonly<Config>, catalog: ReportCatalog, period: ReportPeriod, hooks: ReportHooks = {}, scope: ReportScope = {}): Promise<ReportResult[]> {
  const { reports, streams, coinFormats } = catalog;
  requireDatabase(config.db);
  requireOutputFolder(config.reports.outDir, 'outDir');
  const db = await Database.open(config.db, { readOnly: true, memoryLimit: config.memoryLimit });
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
        const restored = await restoreClosedWorkbook(db, close, report.name, config.reports.outDir, scope.account);
        // Its ledger imports post the lines as closed (marts.journal_entries holds them so), beside the signed workbook.
        const ledgerFormats = LEDGER_FORMATS.filter((format: LedgerFormat) => scope.formats?.includes(format) === true);
        const ledger =
          ledgerFormats.length === 0 || config.models.reportingCurrency === null
            ? undefined
            : await writeClosedLedgerImports(db, report, { period, ...(scope.account === undefined ? {} : { account: scope.account }), outDir: config.reports.outDir, ledger: config.reports.ledger, formats: ledgerFormats, currency: config.models.reportingCurrency });
        const result = ledger === undefined ? restored : { ...restored, ledger };
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
          ...(scope.formats === undefined ? {} : { formats: scope.formats }),
          ledger: config.reports.ledger,
          notes: hooks.notes,
          detailRowLimit: config.reports.detailRowLimit,
          skipUnchanged: scope.force !== true,
          onProgress: hooks.onRows === undefined ? undefined : (sheet, written, total) => hooks.onRows!(report.name, sheet, written, total),
        }).catch((error: unknown) => {
          // A sum past DuckDB's exact range elsewhere than a Summary figure (which names itself): named by its workbook.
          throw beyondExactSum(error, `report ${report.name} for ${period.label}`) ?? error;
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
 * name (write-report.ts: `.<report>-<period>[-<account>].xlsx.tmp-<pid>`, its CSV alike, its
 * ledger imports `.<…>.quickbooks.csv.tmp-<pid>`, `.<…>.xero-2.csv.tmp-<pid>`, `.<…>.journal.tmp-<pid>`,
 * the full detail of a rolled-up sheet `.<…>.spot-lot-detail.parquet.tmp-<pid>` and `.csv.tmp-<pid>`),
 * and the folder a close writes its workbooks into before they are committed (`.close-<pid>-…`, close-job.ts).
 */
const LEFTOVERS = [/^\.[a-z][a-z0-9-]*-[0-9A-Za-z_-]+(?:\.[a-z0-9-]+)?\.(?:xlsx|csv|journal|parquet)\.tmp-(\d+)$/, /^\.close-(\d+)-[0-9A-Za-z]+$/];

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
