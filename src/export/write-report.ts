import { createWriteStream, mkdirSync, renameSync, rmSync, utimesSync, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';
import { diskFullOf } from '../disk-full.ts';
import { formatCount } from '../count-text.ts';
import { ConfigError, DataError, DiskFullError, OutputError } from '../errors.ts';
import { describeBuildSettings, type BuildSettingsRow } from '../models/settings.ts';
import type { Database } from '../store/database.ts';
import type { CoinFormats } from './cell-formats.ts';
import { sheetParts, TOTALS_ROWS_RESERVED, writeDetailSheet } from './detail-sheet.ts';
import { readSyncedAccounts } from '../store/synced-accounts.ts';
import { rowFilter, type ReportPeriod } from './period.ts';
import { reportPrintSetup } from './print-setup.ts';
import { rolledUpSheet, rollUpKeys, withAdjustments, withoutValuation, type ReportSpec, type SheetSpec } from './report-definition.ts';
import { countRollUpLines, detailColumns, detailFileName, DETAIL_FORMATS, rollUpSource, writeDetailFiles, type DetailFormat } from './roll-up.ts';
import { digestSheet, fingerprintOf, identify, modifiedStamp, recordProperties, unchangedRecord, type WrittenRecord } from './report-fingerprint.ts';
import { readClosedPeriods, type ClosedPeriod } from '../store/period-closes.ts';
import { applyCoverage, notSyncedReason, readChart, readFigures, readFreshness, writeSummary, type SummaryStream } from './summary-sheet.ts';
import { writeCsv } from './write-csv.ts';
import { DEFAULT_LEDGER_SETTINGS, LEDGER_FORMATS, type LedgerFormat, type LedgerSettings } from './ledger-layouts.ts';
import { planLedgerExports, type LedgerExports, type LedgerPlan } from './write-ledger-exports.ts';
import { createXlsxWriter } from './xlsx-writer.ts';

/**
 * The files a report can write beside its workbook (`exledger report --format`): its CSV
 * (`CsvSpec`) and its ledger imports (`LedgerSpec`, ledger-layouts.ts).
 */
export const FILE_FORMATS = ['csv', ...LEDGER_FORMATS] as const;
export type FileFormat = (typeof FILE_FORMATS)[number];

/** Excel's last row (1,048,576) less the header row and the rows kept for the totals below the table. */
export const EXCEL_MAX_DATA_ROWS = 1_048_576 - 1 - TOTALS_ROWS_RESERVED;

/** Options of writeReport. */
export interface WriteReportOptions {
  period: ReportPeriod;
  /**
   * One account of the database (`exledger report --account`): every sheet, figure, the chart and
   * the freshness hold its rows only, and the file is `<report>-<period>-<account>.xlsx`.
   * @default every account: the consolidated workbook `<report>-<period>.xlsx`
   */
  account?: string;
  /** The stream declarations (pipelines/): the Summary's freshness names them. */
  streams: readonly SummaryStream[];
  /** How many decimals each coin's amounts show (reports/coin-formats.ts). */
  coinFormats: CoinFormats;
  /** Folder of the workbook (created if needed). */
  outDir: string;
  /** Data rows per detail sheet before it continues on another. @default EXCEL_MAX_DATA_ROWS */
  maxRowsPerSheet?: number;
  /** The time the report is generated at. @default now */
  now?: Date;
  /** Hours after which a stream's last sync counts as stale. @default 36 */
  staleAfterHours?: number;
  /** Extra lines for the Summary's notes (e.g. the checks of the run that wrote it). */
  notes?: readonly string[];
  /** Called with each detail sheet's progress (rows written so far, rows in all). */
  onProgress?: (sheet: string, written: number, total: number) => void;
  /** The period is being closed (exledger close): its workbook says "Closed on … by …". @default a draft */
  closed?: { at: string; by: string };
  /**
   * The files written beside the workbook, of those the report declares (others are ignored): its
   * CSV, its ledger imports. @default ['csv']
   */
  formats?: readonly FileFormat[];
  /** How the ledger imports are rounded and written (reports.ledger). @default DEFAULT_LEDGER_SETTINGS */
  ledger?: LedgerSettings;
  /**
   * Detail rows a sheet shows in full (`reports.detailRowLimit`): a sheet with more, and a
   * `rollUp` declared, is rolled up, its full detail written beside the workbook as Parquet and
   * CSV (roll-up.ts). @default none: every sheet in full (what a close writes)
   */
  detailRowLimit?: number;
  /**
   * When the workbook at its path was written from the same fingerprint and its files are as
   * written, it is not written again (the result says `unchanged`). @default false: always written
   */
  skipUnchanged?: boolean;
}

/** One detail sheet as written. */
export interface WrittenSheet {
  name: string;
  /** The sheet names it was written to (more than one past Excel's row limit). */
  parts: string[];
  /** Its rows of the period; a rolled-up sheet's are in `rolledUp.detailRows`, and these are its lines. */
  rows: number;
  /** More than `detailRowLimit` detail rows: the lines it shows instead, and the files that hold every row. */
  rolledUp?: RolledUp;
}

/** A rolled-up sheet: its detail rows, the columns its lines are per (their headers), and the full detail's files. */
export interface RolledUp {
  detailRows: number;
  by: string[];
  files: { file: string; format: DetailFormat; rows: number }[];
}

/** What writeReport wrote. */
export interface ReportResult {
  report: string;
  /** The one account it covers (--account); null: every account, consolidated. */
  account: string | null;
  file: string;
  period: ReportPeriod;
  sheets: WrittenSheet[];
  /** Stale or incomplete streams, as shown on the Summary. */
  warnings: string[];
  /**
   * The CSV written beside the workbook (a report with `csv`): its file, data rows, and how many
   * rows of the period it leaves out (`omitted`: e.g. amounts without a price), with why.
   */
  csv?: { file: string; rows: number; omitted: number; note: string };
  /**
   * The ledger imports written beside the workbook (a report with `ledger`, `formats` naming
   * them): their files, how they were rounded, and the rows of the period they leave out, with why.
   */
  ledger?: LedgerExports & { omitted: number; note: string };
  /** A closed period's workbook, written again as its close wrote it (its sheets are not listed). */
  closed?: { at: string; by: string; version: number; sha256: string };
  /** Not written again: the workbook and its files at their paths are those of the same figures, written `since` (ISO 8601 UTC). */
  unchanged?: { since: string };
  ms: number;
}

/**
 * Writes one report's workbook: a Summary sheet (period, zone, freshness of its streams, key
 * figures, the monthly chart), then each detail sheet as an Excel table of its mart's rows in
 * the period, streamed row by row (memory stays flat whatever the size). The file is written
 * under a temporary name and renamed when complete, so nobody opens half a workbook.
 */
export async function writeReport(db: Database, declared: ReportSpec, options: WriteReportOptions): Promise<ReportResult> {
  const started = performance.now();
  const now = options.now ?? new Date();
  const reporting = await readReporting(db, declared);
  if (declared.requiresReportingCurrency === true && reporting.reportingCurrency === null) throw missingReportingCurrency(declared.name);
  // Without a reporting currency, nothing is valued in one: its columns, sheets and figures are left out.
  const valued = reporting.reportingCurrency === null ? withoutValuation(declared) : declared;
  const valuationLeftOut = valued !== declared && JSON.stringify(valued) !== JSON.stringify(declared);
  // Once a period is closed, every workbook lists the adjustments to closed periods booked in its period.
  const closes = await readClosedPeriods(db);
  const report = closes.length === 0 ? valued : withAdjustments(valued);
  const closure = closureText(options.period, closes, options.closed);
  await checkMarts(db, report);
  const account = options.account;
  const accounts = await readSyncedAccounts(db);
  if (account !== undefined && !accounts.includes(account)) throw unknownAccount(account, accounts);
  const counts = await Promise.all(report.sheets.map(async (sheet) => countRows(db, sheet, options.period, account)));
  // Past the limit, a sheet that declares how is rolled up: its lines, counted here.
  const limit = options.detailRowLimit;
  const rollUps = await Promise.all(
    report.sheets.map(async (sheet, index) =>
      limit !== undefined && sheet.rollUp !== undefined && counts[index]! > limit ? { spec: rolledUpSheet(sheet), lines: await countRollUpLines(db, sheet, options.period, account) } : undefined,
    ),
  );
  const rolledUpSheets = new Set(report.sheets.filter((_, index) => rollUps[index] !== undefined).map((sheet) => sheet.name));
  const freshness = await readFreshness(db, report, options.streams, options.period, reporting.timeZone, now, options.staleAfterHours ?? 36, account);
  // A database of one account: its lines would repeat the totals, so there are none.
  // A period the synced history does not reach shows no number for it, never the 0 of no rows.
  const figures = applyCoverage(await readFigures(db, report, options.period, { ...(account === undefined ? { perAccount: accounts.length > 1 } : { account }), rolledUp: rolledUpSheets }), report, freshness);
  const chart = await readChart(db, report, options.period, options.coinFormats.chartCoins, account);

  // An account's workbook never takes the consolidated one's name (nor another account's).
  const base = workbookBase(report.name, options.period, account);
  const folder = options.outDir;
  const file = path.join(folder, `${base}.xlsx`);
  const temporary = path.join(folder, `.${base}.xlsx.tmp-${process.pid}`);
  const csvFile = path.join(folder, `${base}.csv`);
  const csvTemporary = path.join(folder, `.${base}.csv.tmp-${process.pid}`);
  const formats = options.formats ?? ['csv'];
  const ledgerFormats = report.ledger === undefined ? [] : LEDGER_FORMATS.filter((format: LedgerFormat) => formats.includes(format));
  const maxRows = options.maxRowsPerSheet ?? EXCEL_MAX_DATA_ROWS;

  // The full detail of each rolled-up sheet, beside the workbook.
  const detailFiles = report.sheets.map((sheet, index) =>
    rollUps[index] === undefined
      ? undefined
      : (Object.fromEntries(DETAIL_FORMATS.map((format) => [format, path.join(folder, detailFileName(base, sheet.name, format))])) as Record<DetailFormat, string>),
  );
  const planned = report.sheets.map((sheet, index) => {
    const rollUp = rollUps[index];
    if (rollUp === undefined) return { sheet, rows: counts[index]!, parts: sheetParts(sheet.name, counts[index]!, maxRows) };
    // A rolled-up sheet's note takes a row above its table.
    const files = DETAIL_FORMATS.map((format) => ({ file: detailFiles[index]![format], format, rows: counts[index]! }));
    return {
      sheet: rollUp.spec,
      rows: rollUp.lines,
      parts: sheetParts(sheet.name, rollUp.lines, maxRows - 1),
      rolledUp: { detailRows: counts[index]!, by: rollUpKeys(sheet).map((column) => column.header), files, limit: limit! },
    };
  });
  const sheets: WrittenSheet[] = planned.map(({ sheet, rows, parts, rolledUp }) => ({ name: sheet.name, parts, rows, ...(rolledUp === undefined ? {} : { rolledUp: { detailRows: rolledUp.detailRows, by: rolledUp.by, files: rolledUp.files } }) }));
  const warnings = freshness.filter((line) => line.state !== 'ok').map((line) => `${[line.account, line.stream].filter((part) => part !== '').join(' ')}: ${line.note}`);
  // The rows of the period a file leaves out (the sheet that lists them), and why.
  const omittedOf = (omitted: { sheet: string; note: string } | undefined) => {
    const index = omitted === undefined ? -1 : report.sheets.findIndex((candidate) => candidate.name === omitted.sheet);
    return { omitted: index < 0 ? 0 : counts[index]!, note: omitted?.note ?? '' };
  };
  // The CSV holds the rows of its sheet: as many as counted.
  const csvSheet = report.csv === undefined || !formats.includes('csv') ? -1 : report.sheets.findIndex((sheet) => sheet.name === report.csv!.sheet);
  const csv: ReportResult['csv'] = csvSheet < 0 ? undefined : { file: csvFile, rows: counts[csvSheet]!, ...omittedOf(report.csv!.omitted) };
  const result: Omit<ReportResult, 'ms'> = { report: report.name, account: account ?? null, file, period: options.period, sheets, warnings, ...(csv === undefined ? {} : { csv }) };

  // Everything the workbook and its files are made from; unchanged since they were written, they
  // are not written again. Ledger imports (asked for now and then, never by the nightly run) are
  // always written, and their workbook with them.
  const fingerprint = fingerprintOf({
    report,
    period: options.period,
    account: account ?? null,
    reporting,
    closure: closure.text,
    freshness: freshness.map((line) => ({ account: line.account, stream: line.stream, state: line.state, gap: line.gap?.side ?? null, newFields: line.newFields })),
    figures,
    chart,
    notes: options.notes ?? [],
    csv: csv !== undefined,
    coinFormats: options.coinFormats,
    detailRowLimit: limit ?? null,
    maxRows,
    sheets: await Promise.all(report.sheets.map(async (sheet) => digestSheet(db, sheet, fingerprintColumns(report, sheet), options.period, account))),
  });
  if (options.skipUnchanged === true && ledgerFormats.length === 0) {
    const unchanged = await unchangedRecord(file, fingerprint);
    if (unchanged !== undefined) return { ...result, unchanged: { since: unchanged.writtenAt }, ms: performance.now() - started };
  }

  const ledgerTemporaries = new Set<string>();
  // The ledger imports are in the reporting currency (the marts' values in it).
  const ledgerCurrency = ledgerFormats.length === 0 ? '' : (reporting.reportingCurrency ?? '');
  if (ledgerFormats.length > 0 && ledgerCurrency === '') throw missingReportingCurrency(report.name);
  // What would make a ledger import unusable (an account without its Xero code) is refused before the workbook is written.
  const ledgerPlan = ledgerFormats.length === 0 ? undefined : await planLedgerOf(db, report, { ...options, formats: ledgerFormats, currency: ledgerCurrency }, ledgerTemporaries);
  const detailTemporaries = detailFiles.flatMap((files) => (files === undefined ? [] : DETAIL_FORMATS.map((format) => temporaryOf(files[format]))));
  let output: WriteStream | undefined;
  // A process ended at once (a second Ctrl-C) leaves no half-written file behind.
  const removeTemporary = () => {
    rmSync(temporary, { force: true });
    rmSync(csvTemporary, { force: true });
    for (const file of ledgerTemporaries) rmSync(file, { force: true });
    for (const file of detailTemporaries) rmSync(file, { force: true });
  };
  process.once('exit', removeTemporary);
  try {
    output = await openOutput(folder, temporary, file);
    // A write that fails later (a full disk) rejects this; every wait below races it, so the
    // failure is reported instead of leaving the writer waiting for a drain that never comes.
    // It names the workbook, not the temporary file (which is removed below).
    const failed = new Promise<never>((_, reject) => output!.once('error', (error: NodeJS.ErrnoException) => reject(outputError(file, error))));
    failed.catch(() => undefined);
    return await Promise.race([failed, writeWorkbook(output)]);
  } finally {
    output?.destroy();
    process.off('exit', removeTemporary);
    removeTemporary();
  }

  async function writeWorkbook(stream: WriteStream): Promise<ReportResult> {
    // The files beside the workbook first (the workbook records what identifies them), all under
    // temporary names: a failure (a full disk) leaves the earlier files as they were.
    // Every detail row of each rolled-up sheet, by DuckDB.
    const beside: string[] = [];
    for (const [index, files] of detailFiles.entries()) {
      if (files === undefined) continue;
      const sheet = report.sheets[index]!;
      let rows: number;
      try {
        rows = await writeDetailFiles(db, sheet, { period: options.period, ...(account === undefined ? {} : { account }), report: report.name, files: { parquet: temporaryOf(files.parquet), csv: temporaryOf(files.csv) } });
      } catch (error) {
        throw diskFullOf(error, { file: files.parquet, doing: 'writing the full detail of a rolled-up sheet', kept: 'the previous workbook and files of this name, if any, are unchanged and no half-written file is left' }) ?? error;
      }
      if (rows !== counts[index]) throw new DataError(`${sheet.mart}: ${rows} detail rows written for the sheet "${sheet.name}", where ${counts[index]} were counted (the database changed meanwhile?)`, { hint: 'write the report again' });
      beside.push(files.parquet, files.csv);
    }
    if (csv !== undefined) {
      const rows = await writeCsv(db, report.csv!, report.sheets[csvSheet]!, { period: options.period, account, file: csvTemporary, onError: (error) => outputError(csvFile, error) });
      if (rows !== csv.rows) throw new DataError(`${report.sheets[csvSheet]!.mart}: ${rows} lines written to ${path.basename(csvFile)}, where ${csv.rows} were counted (the database changed meanwhile?)`, { hint: 'write the report again' });
      beside.push(csvFile);
    }
    const ledger = await ledgerPlan?.write();
    let ledgerResult: ReportResult['ledger'];
    if (ledger !== undefined) {
      const { commit: _commit, ...exports } = ledger;
      ledgerResult = { ...exports, ...omittedOf(report.ledger!.omitted) };
    }

    // What it is written from, inside it: the next report of the same figures is not written again.
    const record: WrittenRecord = { fingerprint, writtenAt: now.toISOString(), stampMs: modifiedStamp(), files: await Promise.all(beside.map(async (written) => ({ name: path.basename(written), ...(await identify(temporaryOf(written))) }))) };
    const workbook = createXlsxWriter({ stream, printSetup: reportPrintSetup(report, options.period, account, closure.header) });
    workbook.creator = 'exledger';
    workbook.created = now;
    workbook.customProperties = recordProperties(record);
    writeSummary(workbook, report, { ...options, accounts, now, timeZone: reporting.timeZone, costMethods: reporting.costMethods, reportingCurrency: reporting.reportingCurrency, prices: reporting.prices, journal: reporting.journal, valuationLeftOut, freshness, figures, chart, planned, closure });
    const tableNames = new Set<string>();
    for (const [index, { sheet, rows, parts, rolledUp }] of planned.entries()) {
      const notSynced = notSyncedReason(report, sheet, freshness, account ?? null);
      await writeDetailSheet(db, workbook, report, sheet, {
        period: options.period,
        account,
        rows,
        parts,
        maxRows: rolledUp === undefined ? maxRows : maxRows - 1,
        tableNames,
        coinFormats: options.coinFormats,
        onProgress: options.onProgress,
        ...(notSynced === undefined ? {} : { notSynced }),
        ...(rolledUp === undefined ? {} : { source: rollUpSource(report.sheets[index]!, options.period, account), note: rolledUpNote(rows, rolledUp) }),
      });
    }
    await workbook.commit();

    // Every file complete: each takes its name, the workbook first.
    const rename = (final: string) => {
      try {
        renameSync(temporaryOf(final), final);
      } catch (error) {
        throw outputError(final, error as NodeJS.ErrnoException);
      }
    };
    rename(file);
    // Its modification time as recorded inside it: a workbook saved again (by anyone) is written again.
    utimesSync(file, new Date(record.stampMs), new Date(record.stampMs));
    if (csv !== undefined) rename(csvFile);
    for (const [index, sheet] of report.sheets.entries()) {
      if (sheet.rollUp === undefined) continue;
      for (const format of DETAIL_FORMATS) {
        const final = detailFiles[index]?.[format];
        // A sheet no longer rolled up leaves no full detail of an earlier writing beside its workbook.
        if (final === undefined) rmSync(path.join(folder, detailFileName(base, sheet.name, format)), { force: true });
        else rename(final);
      }
    }
    ledger?.commit();
    return { ...result, ...(ledgerResult === undefined ? {} : { ledger: ledgerResult }), ms: performance.now() - started };
  }
}

/** What planLedgerOf needs: the workbook's period, account and folder, the ledger formats (at least one) and the currency. */
type LedgerOptions = Pick<WriteReportOptions, 'period' | 'account' | 'outDir' | 'ledger'> & { formats: readonly LedgerFormat[]; currency: string };

/** The report's ledger imports, checked (planLedgerExports), beside its workbook. */
async function planLedgerOf(db: Database, report: ReportSpec, options: LedgerOptions, temporaries: Set<string>): Promise<LedgerPlan> {
  const spec = report.ledger!;
  return planLedgerExports(db, spec, report.sheets.find((candidate) => candidate.name === spec.sheet)!, {
    period: options.period,
    ...(options.account === undefined ? {} : { account: options.account }),
    outDir: options.outDir,
    base: workbookBase(report.name, options.period, options.account),
    formats: options.formats,
    settings: options.ledger ?? DEFAULT_LEDGER_SETTINGS,
    currency: options.currency,
    title: `${report.title} ${options.period.label}${options.account === undefined ? '' : ` (account ${options.account})`}`,
    temporaries,
    onError: (name, error) => outputError(name, error),
  });
}

/**
 * The ledger imports of a closed period, beside its workbook as its close wrote it: from
 * marts.journal_entries, which holds the period's lines as closed (its adjusting entries
 * included), so they post what the signed workbook shows. Written under temporary names and
 * renamed once all are complete. Undefined for a report without ledger imports.
 */
export async function writeClosedLedgerImports(db: Database, report: ReportSpec, options: LedgerOptions): Promise<ReportResult['ledger']> {
  if (report.ledger === undefined || options.formats.length === 0) return undefined;
  const temporaries = new Set<string>();
  const remove = () => {
    for (const file of temporaries) rmSync(file, { force: true });
  };
  process.once('exit', remove);
  try {
    mkdirSync(options.outDir, { recursive: true });
    const ledger = await (await planLedgerOf(db, report, options, temporaries)).write();
    ledger.commit();
    const { commit: _commit, ...written } = ledger;
    const omitted = report.ledger.omitted;
    const sheet = report.sheets.find((candidate) => candidate.name === omitted?.sheet);
    return { ...written, omitted: sheet === undefined ? 0 : await countRows(db, sheet, options.period, options.account), note: omitted?.note ?? '' };
  } finally {
    process.off('exit', remove);
    remove();
  }
}

/** The file name of a report's workbook (and of its CSV, `.csv`), without the extension: `<report>-<period>[-<account>]`. */
export function workbookBase(report: string, period: Pick<ReportPeriod, 'label'>, account?: string): string {
  return `${report}-${period.label}${account === undefined ? '' : `-${account}`}`;
}

/**
 * Whether a workbook's period is closed, in words: "Closed on 2026-11-02 09:14 UTC by alice" (the
 * close being made), else a draft: "Draft: not closed", saying when closed periods lie inside it
 * (their figures here are as the data gives them now; their signed ones are in their own workbooks).
 */
export function closureText(period: ReportPeriod, closes: readonly ClosedPeriod[], closed?: { at: string; by: string }): { text: string; header: string; closed: boolean } {
  if (closed !== undefined) {
    const text = `Closed on ${closed.at.slice(0, 10)} ${closed.at.slice(11, 16)} UTC by ${closed.by}`;
    return { text, header: text, closed: true };
  }
  const inside = closes.filter((close) => close.to >= period.from && close.from <= period.to).map((close) => close.label);
  if (inside.length === 0) return { text: 'Draft: not closed', header: 'Draft: not closed', closed: false };
  return { header: 'Draft: not closed', text: `Draft: not closed; it includes the closed period${inside.length === 1 ? '' : 's'} ${inside.join(', ')}, shown as the data gives ${inside.length === 1 ? 'it' : 'them'} now (signed figures: ${inside.length === 1 ? 'its' : 'their'} own workbooks)`, closed: false };
}

/**
 * `--account` naming no account of the database: bad input, named with the accounts it holds.
 * Thrown before any workbook is opened.
 */
export function unknownAccount(account: string, accounts: readonly string[]): ConfigError {
  const held = accounts.length === 0 ? 'it holds no synced account yet' : `its accounts are ${accounts.join(', ')}`;
  return new ConfigError('--account', `"${account}" is not an account of this database; ${held}`, { hint: 'check the name (exledger status lists the accounts), or leave --account out for every account, consolidated' });
}

/**
 * A report in the reporting currency only (the journal) over marts built without one: bad input,
 * naming the setting. (The command refuses earlier when the configuration has none.)
 */
export function missingReportingCurrency(report: string): ConfigError {
  return new ConfigError('models.reportingCurrency', `is not set (the marts were built without one): the ${report} report posts values in the reporting currency`, {
    hint: 'set models.reportingCurrency (e.g. "USD") and models.pricesFile in the config file, run exledger build, then the report again',
  });
}

/** Creates the folder and opens the temporary file (refusing to write through an existing one). */
async function openOutput(dir: string, file: string, workbook: string): Promise<WriteStream> {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw outputError(dir, error as NodeJS.ErrnoException);
  }
  rmSync(file, { force: true });
  const stream = createWriteStream(file, { flags: 'wx' });
  try {
    await once(stream, 'open');
  } catch (error) {
    throw outputError(workbook, error as NodeJS.ErrnoException);
  }
  return stream;
}

/** A file system error as one line naming the file, its cause in words, and what to do. */
function outputError(file: string, error: NodeJS.ErrnoException): OutputError | DiskFullError {
  const full = diskFullOf(error, { file, doing: 'writing this workbook', kept: `the previous ${path.basename(file)}, if any, is unchanged and no half-written file is left` });
  if (full !== undefined) return full;
  const why: Record<string, string> = {
    ENOSPC: 'the disk is full',
    EDQUOT: 'the disk quota is used up',
    EACCES: 'permission denied (the folder is not writable)',
    EPERM: 'permission denied',
    EROFS: 'the file system is read-only',
    ENOTDIR: 'a part of the path is a file, not a folder',
    ENOENT: 'the folder disappeared',
    EISDIR: 'a folder has this name',
  };
  return new OutputError(file, `could not be written: ${why[error.code ?? ''] ?? error.message}`, {
    hint: 'free space or fix the folder, then write the reports again; the earlier workbook of this name, if any, is unchanged',
    cause: error,
  });
}

/**
 * The settings the report's marts were built with (settings.model_builds, written with each
 * table). Marts built with different settings (a build that failed or was killed part-way after
 * the settings changed) are refused: no workbook may describe settings its figures lack.
 */
async function readReporting(db: Database, report: ReportSpec): Promise<{ timeZone: string; costMethods: string[]; reportingCurrency: string | null; prices: string | null; journal: string | null }> {
  const exists = await db.all("SELECT 1 FROM information_schema.tables WHERE table_schema = 'settings' AND table_name = 'model_builds'");
  if (exists.length === 0) throw new DataError('the models have not been built in this database (by this version of exledger)', { hint: 'run exledger build first (exledger run does it)' });
  // A database whose models an earlier version built has no valuation settings recorded (nor marts with its columns).
  const valued = await db.all("SELECT 1 FROM information_schema.columns WHERE table_schema = 'settings' AND table_name = 'model_builds' AND column_name = 'prices'");
  if (valued.length === 0) throw new DataError('the models were built by an earlier version of exledger (no reporting currency recorded)', { hint: 'run exledger build first (exledger run does it)' });
  const marts = [...new Set([...report.sheets.map((sheet) => sheet.mart), report.chart.mart])].sort();
  // SELECT *: a database last built before pooling existed has no pooling column (its tables are per account).
  const rows = await db.all<BuildSettingsRow & { model: string }>(
    "SELECT * FROM settings.model_builds WHERE list_contains(string_split($1, ','), model) ORDER BY model",
    [marts.join(',')],
  );
  const unbuilt = marts.filter((mart) => !rows.some((row) => row.model === mart));
  if (unbuilt.length > 0) throw new DataError(`${unbuilt.join(', ')} ${unbuilt.length === 1 ? 'has' : 'have'} not been built (report ${report.name})`, { hint: 'run exledger build first (exledger run does it)' });
  const describe = describeBuildSettings;
  const variants = [...new Set(rows.map(describe))];
  if (variants.length > 1) {
    throw new DataError(
      `the marts of report ${report.name} were built with different settings (${rows.map((row) => `${row.model}: ${describe(row)}`).join('; ')}): a build did not finish`,
      { hint: 'run exledger build (exledger run does it), then the report again; no workbook was written' },
    );
  }
  // The journal's settings are recorded with every model but only marts.journal_entries depends on them.
  const journal = (rows.find((row) => row.model === 'marts.journal_entries') as { journal?: string | null } | undefined)?.journal ?? null;
  return { timeZone: rows[0]!.time_zone, costMethods: rows[0]!.cost_methods, reportingCurrency: rows[0]!.reporting_currency ?? null, prices: rows[0]!.prices ?? null, journal };
}

/** Every mart and column the report names must exist: one clear error instead of a SQL one halfway. */
async function checkMarts(db: Database, report: ReportSpec): Promise<void> {
  const rows = await db.all<{ name: string; column_name: string; data_type: string }>(
    "SELECT 'marts.' || table_name AS name, column_name, data_type FROM information_schema.columns WHERE table_schema = 'marts'",
  );
  const columns = new Map<string, Set<string>>();
  for (const row of rows) columns.set(row.name, (columns.get(row.name) ?? new Set()).add(row.column_name));
  const needed: { mart: string; names: string[] }[] = [
    // Every figure is computed per account (and --account filters on it): each mart has `account`.
    ...report.sheets.map((sheet) => ({ mart: sheet.mart, names: [...sheet.columns.map((column) => column.column), ...sheet.orderBy, ...(sheet.period === null ? [] : [sheet.period.column]), 'account'] })),
    { mart: report.chart.mart, names: [report.chart.monthColumn, report.chart.valueColumn, ...report.chart.seriesBy] },
    ...(report.csv === undefined ? [] : [{ mart: report.sheets.find((sheet) => sheet.name === report.csv!.sheet)!.mart, names: report.csv.columns.map((column) => column.column) }]),
    ...(report.ledger === undefined ? [] : [{ mart: report.sheets.find((sheet) => sheet.name === report.ledger!.sheet)!.mart, names: Object.values(report.ledger.columns) }]),
  ];
  for (const { mart, names } of needed) {
    const known = columns.get(mart);
    if (known === undefined) throw new DataError(`${mart} does not exist (report ${report.name})`, { hint: 'run exledger build first (exledger run does it)' });
    const missing = names.find((name) => !known.has(name));
    if (missing !== undefined) throw new ConfigError(`reports/${report.name}.ts`, `"${missing}" is not a column of ${mart}`);
  }
  for (const figure of report.summary) {
    if (figure.where === undefined) continue;
    const mart = report.sheets.find((sheet) => sheet.name === figure.sheet)!.mart;
    const type = rows.find((row) => row.name === mart && row.column_name === figure.where)?.data_type;
    if (type !== 'BOOLEAN') throw new ConfigError(`reports/${report.name}.ts`, `"${figure.where}" (where of the figure "${figure.label}") is not a BOOLEAN column of ${mart}`);
  }
}

async function countRows(db: Database, sheet: SheetSpec, period: ReportPeriod, account: string | undefined): Promise<number> {
  const filter = rowFilter(sheet, period, account);
  return Number((await db.all<{ n: string }>(`SELECT count(*) AS n FROM ${sheet.mart} WHERE ${filter.where}`, filter.values))[0]!.n);
}

/** A file's temporary name while it is written: `.<name>.tmp-<pid>` in its folder (report-job.ts removes those of writers that are gone). */
function temporaryOf(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.tmp-${process.pid}`);
}

/** The line above a rolled-up sheet's table: that it is rolled up, from how many rows, per what, and where every row is. */
function rolledUpNote(lines: number, rolledUp: RolledUp & { limit: number }): string {
  const names = rolledUp.files.map((written) => path.basename(written.file));
  const by = rolledUp.by.length === 1 ? rolledUp.by[0]! : `${rolledUp.by.slice(0, -1).join(', ')} and ${rolledUp.by.at(-1)!}`;
  return (
    `Rolled up: ${formatCount(rolledUp.detailRows)} detail rows in this period, more than the ${formatCount(rolledUp.limit)} shown in full (reports.detailRowLimit). ` +
    `Each of the ${formatCount(lines)} ${lines === 1 ? 'line' : 'lines'} sums the rows of one ${by}: amounts exactly, "unknown" where a row summed is unknown; "Detail rows" counts them. ` +
    `Every detail row is in ${names.join(' and ')}, beside this workbook.`
  );
}

/**
 * The columns whose values a sheet's digest covers: those its full detail holds (the sheet's and
 * the roll-up's keys) and those its CSV or ledger imports read.
 */
function fingerprintColumns(report: ReportSpec, sheet: SheetSpec): string[] {
  const csv = report.csv?.sheet === sheet.name ? report.csv.columns.map((column) => column.column) : [];
  const ledger = report.ledger?.sheet === sheet.name ? Object.values(report.ledger.columns) : [];
  return [...new Set([...detailColumns(sheet), ...csv, ...ledger])];
}
