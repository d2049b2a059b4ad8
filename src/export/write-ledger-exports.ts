import { createWriteStream, existsSync, renameSync, rmSync, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';
import { ConfigError, DataError } from '../errors.ts';
import type { Database } from '../store/database.ts';
import { LEDGER_LAYOUTS, type LedgerFileContext, type LedgerFormat, type LedgerLayout, type LedgerSettings } from './ledger-layouts.ts';
import { createLedgerRounder, decimalUnits, EXACT_SCALE, type ExactEntry, type ExactLine } from './ledger-rounding.ts';
import { minorUnitOf } from './minor-unit.ts';
import { rowFilter, type ReportPeriod } from './period.ts';
import type { LedgerSpec, SheetSpec } from './report-definition.ts';

/** Options of planLedgerExports. */
export interface LedgerExportOptions {
  period: ReportPeriod;
  /** One account's lines (`--account`). @default every account's */
  account?: string;
  /** The folder of the workbook: the files are written beside it. */
  outDir: string;
  /** The workbook's file name without `.xlsx` (workbookBase): each file's name starts with it. */
  base: string;
  /** The layouts to write (ledger-layouts.ts), each once. */
  formats: readonly LedgerFormat[];
  settings: LedgerSettings;
  /** The reporting currency: the currency of a file without lines. Lines in another are refused. */
  currency: string;
  /** What the files hold, in words (the hledger journal's first line), e.g. `Journal entries 2026-10`. */
  title: string;
  /**
   * Each temporary file is added here as it is created: the caller removes the ones left (a
   * failure, a process ended at once) when it is done. Committed files are no longer temporary.
   */
  temporaries: Set<string>;
  /** The error to throw for a file that cannot be written (a full disk), naming the file. */
  onError: (file: string, error: NodeJS.ErrnoException) => Error;
}

/** One file as written. */
export interface LedgerFile {
  file: string;
  /** Lines (rows after the header; an hledger journal: postings). */
  lines: number;
  entries: number;
}

/** One layout as written: its file, or files (Xero's 300 lines each). */
export interface LedgerExport {
  format: LedgerFormat;
  /** The ledger's import, in words. */
  title: string;
  files: LedgerFile[];
}

/** What the ledger imports hold. */
export interface LedgerExports {
  exports: LedgerExport[];
  /** The amounts' currency and the decimals they are rounded to. */
  currency: string;
  minorUnit: number;
  /** The ledger account of the rounding differences. */
  roundingAccount: string;
  /** Entries written (in every file alike). */
  entries: number;
  /** Lines posting an entry's rounding difference. */
  roundingLines: number;
  /** Entries whose every line rounds to 0: not written (their accounts' rounded totals include them all the same). */
  dropped: number;
}

/** Ledger imports written under temporary names: `commit` gives them their names. */
export interface PreparedLedgerExports extends LedgerExports {
  /** Renames each file to its name, replacing an earlier one, and removes an earlier export's files past the new last part. */
  commit(): void;
}

/** Ledger imports checked against what their lines post to, ready to be written. */
export interface LedgerPlan {
  /**
   * Writes the report's lines in each layout (ledger-layouts.ts) under temporary names beside the
   * workbook: read once from DuckDB in the order of currency, date, entry and line (memory stays
   * flat whatever the size), each entry rounded to the minor unit (ledger-rounding.ts), then
   * written to every layout. Nothing has its final name until `commit`, which the caller calls
   * once the workbook is complete too.
   */
  write(): Promise<PreparedLedgerExports>;
}

/**
 * Reads which currency and ledger accounts the report's lines post to in the period, and checks
 * them against each layout asked for (a Xero code for every account, a rounding account of its
 * own, no more decimals than the import reads): what would make a file unusable is refused
 * (ConfigError, DataError) before anything is written.
 */
export async function planLedgerExports(db: Database, spec: LedgerSpec, sheet: SheetSpec, options: LedgerExportOptions): Promise<LedgerPlan> {
  const { columns } = spec;
  const filter = rowFilter(sheet, options.period, options.account);
  const scope = await db.all<{ currency: string; account: string }>(
    `SELECT DISTINCT CAST(${columns.currency} AS VARCHAR) AS currency, CAST(${columns.account} AS VARCHAR) AS account FROM ${sheet.mart} WHERE ${filter.where}`,
    filter.values,
  );
  const currencies = [...new Set(scope.map((row) => row.currency))];
  const foreign = currencies.find((currency) => currency !== options.currency);
  if (foreign !== undefined) throw new DataError(`${sheet.mart} holds lines in ${foreign}, not the reporting currency ${options.currency}: a ledger import is in one currency`, { hint: 'run exledger build, then the report again' });
  const { roundingAccount } = options.settings;
  const posted = [...new Set(scope.map((row) => row.account))];
  if (posted.includes(roundingAccount)) {
    throw new ConfigError('reports.ledger.roundingAccount', `"${roundingAccount}" is also an account the journal posts to: its rounding differences could not be told apart`, {
      hint: 'name a ledger account of its own for the rounding differences, e.g. "Rounding differences"',
    });
  }
  const minorUnit = options.settings.minorUnit ?? minorUnitOf(options.currency);
  const context: LedgerFileContext = { currency: options.currency, minorUnit, settings: options.settings, accounts: [...posted, roundingAccount].sort(), title: options.title };
  const layouts = options.formats.map((format) => LEDGER_LAYOUTS[format]);
  for (const layout of layouts) layout.check(context);
  return { write: async () => writeLedgerExports(db, spec, sheet, options, context) };
}

async function writeLedgerExports(db: Database, spec: LedgerSpec, sheet: SheetSpec, options: LedgerExportOptions, context: LedgerFileContext): Promise<PreparedLedgerExports> {
  const { columns } = spec;
  const filter = rowFilter(sheet, options.period, options.account);
  const { minorUnit } = context;
  const { roundingAccount } = options.settings;
  const layouts = options.formats.map((format) => LEDGER_LAYOUTS[format]);
  const sinks = layouts.map((layout) => new LedgerSink(layout, options, context));
  const rounder = createLedgerRounder({ minorUnit, roundingAccount });
  let entries = 0;
  try {
    for (const sink of sinks) await sink.start();
    let day = '';
    let ordinal = 0;
    const post = async (exact: ExactEntry) => {
      const entry = rounder.round(exact);
      if (entry === null) return;
      ordinal = entry.date === day ? ordinal + 1 : 1;
      day = entry.date;
      entries++;
      for (const sink of sinks) await sink.write(entry, ordinal);
    };
    const sql = `SELECT ${[columns.entry, columns.date, columns.currency, columns.account, columns.amount, columns.memo].map((column) => `CAST(${column} AS VARCHAR)`).join(', ')}
      FROM ${sheet.mart} WHERE ${filter.where} ORDER BY ${[columns.currency, columns.date, columns.entry, columns.line].join(', ')}`;
    let current: { id: string; date: string; currency: string; lines: ExactLine[] } | undefined;
    await db.exclusive(async () => {
      const result = await db.connection.stream(sql, filter.values);
      for await (const chunk of result.yieldRowsJson()) {
        for (const [id, date, currency, account, amount, memo] of chunk as (string | null)[][]) {
          if (current === undefined || current.id !== id || current.currency !== currency) {
            if (current !== undefined) await post(current);
            current = { id: id!, date: date!, currency: currency!, lines: [] };
          }
          current.lines.push({ account: account!, amount: decimalUnits(amount!, EXACT_SCALE), memo: memo ?? null });
        }
      }
    });
    if (current !== undefined) await post(current);
    for (const sink of sinks) await sink.end();
  } catch (error) {
    for (const sink of sinks) sink.destroy();
    throw error;
  }

  return {
    exports: sinks.map((sink) => ({ format: sink.layout.format, title: sink.layout.title, files: sink.files.map(({ file, lines, entries: count }) => ({ file, lines, entries: count })) })),
    currency: options.currency,
    minorUnit,
    roundingAccount,
    entries,
    roundingLines: rounder.roundingLines,
    dropped: rounder.dropped,
    commit() {
      for (const sink of sinks) sink.commit();
    },
  };
}

/** The files of one layout: the one being written, and those done (a new one past `maxLinesPerFile`). */
class LedgerSink {
  readonly files: (LedgerFile & { temporary: string })[] = [];
  private stream: WriteStream | undefined;
  private failure: Error | undefined;

  constructor(
    readonly layout: LedgerLayout,
    private readonly options: LedgerExportOptions,
    private readonly context: LedgerFileContext,
  ) {}

  /** Opens the first file. */
  async start(): Promise<void> {
    await this.open();
  }

  /** Writes an entry, in a new file when this one would pass the layout's lines per file. */
  async write(entry: Parameters<LedgerLayout['entry']>[0], ordinal: number): Promise<void> {
    const lines = this.layout.lineCount(entry);
    const limit = this.layout.maxLinesPerFile;
    if (limit !== undefined && lines > limit) throw new DataError(`journal entry ${entry.id} has ${lines} lines, more than the ${limit} a ${this.layout.title} file takes (an entry is never split)`, { hint: `write the other formats without ${this.layout.format}, and post this entry by hand` });
    if (limit !== undefined && this.current.lines + lines > limit) {
      await this.close();
      await this.open();
    }
    await this.text(this.layout.entry(entry, ordinal, this.context));
    this.current.lines += lines;
    this.current.entries++;
  }

  /** Completes the last file. */
  async end(): Promise<void> {
    await this.close();
  }

  /** Gives each file its name; an earlier export's parts past the last one are removed (they would be imported again). */
  commit(): void {
    for (const file of this.files) {
      try {
        renameSync(file.temporary, file.file);
      } catch (error) {
        throw this.options.onError(file.file, error as NodeJS.ErrnoException);
      }
      this.options.temporaries.delete(file.temporary);
    }
    if (this.layout.maxLinesPerFile === undefined) return;
    for (let part = this.files.length + 1; existsSync(this.nameOf(part)); part++) rmSync(this.nameOf(part), { force: true });
  }

  destroy(): void {
    this.stream?.destroy();
  }

  private get current(): LedgerFile & { temporary: string } {
    return this.files.at(-1)!;
  }

  private nameOf(part: number): string {
    return path.join(this.options.outDir, this.layout.fileName(this.options.base, this.layout.maxLinesPerFile === undefined ? undefined : part));
  }

  private async open(): Promise<void> {
    const file = this.nameOf(this.files.length + 1);
    const temporary = path.join(path.dirname(file), `.${path.basename(file)}.tmp-${process.pid}`);
    this.options.temporaries.add(temporary);
    rmSync(temporary, { force: true });
    this.files.push({ file, temporary, lines: 0, entries: 0 });
    this.failure = undefined;
    const stream = createWriteStream(temporary, { flags: 'wx' });
    this.stream = stream;
    stream.on('error', (error: NodeJS.ErrnoException) => (this.failure ??= this.options.onError(file, error)));
    try {
      await once(stream, 'open');
    } catch (error) {
      throw this.options.onError(file, error as NodeJS.ErrnoException);
    }
    await this.text(this.layout.head(this.context));
  }

  private async text(text: string): Promise<void> {
    if (this.failure !== undefined) throw this.failure;
    if (this.stream!.write(text)) return;
    try {
      await once(this.stream!, 'drain');
    } catch {
      // once() rejects on the stream's 'error': the listener above has made it a named error.
    }
    if (this.failure !== undefined) throw this.failure;
  }

  private async close(): Promise<void> {
    const stream = this.stream!;
    stream.end();
    try {
      await once(stream, 'finish');
    } catch {
      // As in text(): the error is the stream's, kept by its listener.
    }
    if (this.failure !== undefined) throw this.failure;
  }
}
