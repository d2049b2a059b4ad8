import { z } from 'zod';
import { ConfigError } from '../errors.ts';

/**
 * What a report declaration says: one typed literal per report in reports/, read by the
 * workbook writer in src/export, which is written once for all (as pipelines/ is for streams).
 * A report only names marts and their columns; how a cell looks follows from its format.
 */

/**
 * How a column is shown:
 * - `text`, `id`: strings, written as text (an id or a symbol beginning with `=` stays text);
 * - `date`, `month`: a DATE as an Excel date (`month` formatted yyyy-mm);
 * - `datetime`: a TIMESTAMPTZ as an Excel date-time in UTC;
 * - `integer`: a count;
 * - `amount`: a DECIMAL in the coin named by `coinColumn` (its decimals follow the coin);
 * - `price`: a DECIMAL price or exchange rate, shown with every decimal its values have in the
 *   period (at least 2), never rounded to a coin's decimals: a price of 0.9996 is not 1.00;
 * - `rate`: a DECIMAL ratio shown as a percentage, with every decimal its values have (as far as
 *   the cell's 15 significant digits go).
 */
export type ColumnFormat = 'text' | 'id' | 'date' | 'month' | 'datetime' | 'integer' | 'amount' | 'price' | 'rate';

/** One column of a detail sheet. */
export interface ColumnSpec {
  /** The mart's column. */
  column: string;
  /** Header text (also the Excel table's column name: no `[`, `]`, `#` or `'`). */
  header: string;
  format: ColumnFormat;
  /**
   * For `amount`: the mart's column holding the coin of this amount (USDT, BTC…); its decimals
   * follow the coin (reports/coin-formats.ts). Omitted where the exchange does not say the unit.
   */
  coinColumn?: string;
  /**
   * The sheet's totals sum this column, one total per coin (and per `SheetSpec.totalsPer`): see
   * `totalsKeys`. @default false
   */
  total?: boolean;
  /**
   * What a NULL of this column (`amount`, `integer`, `rate`) means:
   * - `unknown` (e.g. funding without two collateral snapshots, the cost of a sale beyond the
   *   inventory): the cell shows "unknown", never a blank a reader could take for 0, and a total
   *   over rows that include one shows "unknown" until those rows are filtered out;
   * - `not-applicable` (e.g. the traded volume of the funding account, which does not trade): the
   *   cell is blank and totals leave it out (they are complete without it);
   * - `elsewhere`: the value is kept on other rows of the sheet (funding is per margin coin, on the
   *   rows without a contract; NULL on the contract rows): the cell is blank, and a total is
   *   "unknown" when none of the rows shown holds a value (no funding row: funding is unknown).
   * Other formats' NULLs are blank. @default 'unknown'
   */
  nullMeans?: 'unknown' | 'not-applicable' | 'elsewhere';
  /** Column width in characters. @default from the format */
  width?: number;
  /**
   * About the valuation in the reporting currency (the currency, a value in it, its price, the
   * days without one): left out of the workbook when no reporting currency is set, instead of a
   * column of unknowns for something nobody asked for. @default false
   */
  valuation?: boolean;
}

/** How a sheet's rows are limited to the report's period. */
export interface PeriodFilter {
  /** The mart's DATE column that places a row in time. */
  column: string;
  /**
   * `day`: rows whose day lies in the period; `month`: rows whose month overlaps it (a month
   * column holds its first day); `nearest`: per account, the rows whose instant (a TIMESTAMPTZ:
   * a snapshot's time) is the nearest to the end of the period, before or after it; `booked`: the
   * adjustments to closed periods (marts.period_adjustments) booked in the period (the column: the
   * day they are booked from) for a day before it (`adjusted_date`): a period's own days are in its
   * figures already.
   */
  grain: 'day' | 'month' | 'nearest' | 'booked';
}

/** A detail sheet: the rows of one mart in the period, as an Excel table. */
export interface SheetSpec {
  /** Sheet name (at most 28 characters, so a continuation sheet can add " (2)"). */
  name: string;
  /** Shown above nothing: it is the Summary's line for this sheet. */
  description: string;
  /** `marts.<name>`. */
  mart: string;
  /** null: the mart is a state, not a history (e.g. the latest snapshot), shown whole. */
  period: PeriodFilter | null;
  /** Row order (mart columns; ascending). */
  orderBy: readonly string[];
  columns: readonly ColumnSpec[];
  /**
   * Columns that must hold one value for a total to mean anything (e.g. the cost method: two
   * methods cost the same sales twice). The coin of the totalled amounts always must. Below the
   * table, one totals row per value of these and of the coin (see `totalsKeys`); `orderBy` starts
   * with them, so each total covers one block of rows. @default []
   */
  totalsPer?: readonly string[];
  /** Rows to highlight (e.g. a reconciliation difference): where this column is non-zero (amounts) or non-empty. */
  highlight?: { column: string; when: 'nonzero' | 'always' };
  /** Only the mart's rows whose `column` is one of `values` (e.g. the needs of this report's marts). @default every row */
  only?: { column: string; values: readonly string[] };
  /** What a sheet without rows says (e.g. "Every row has a price."). @default 'No rows in this period.' */
  emptyText?: string;
  /** About the valuation in the reporting currency (Needs a price): left out when none is set. @default false */
  valuation?: boolean;
  /**
   * The streams its rows come from (of the report's `streams`): a period their synced history
   * does not cover says so instead of showing figures. @default the report's streams
   */
  streams?: readonly string[];
  /**
   * How the sheet is rolled up when its rows in the period are more than `reports.detailRowLimit`
   * (a sheet of one row per record: lot matches, journal lines): one line per value of `by`, its
   * `sum` columns summed exactly, with the count of the detail rows it stands for; the full
   * detail is written beside the workbook (roll-up.ts). @default never rolled up (its rows are
   * bounded: per coin and month, per coin and day)
   */
  rollUp?: RollUpSpec;
}

/**
 * A sheet's roll-up: the columns each line is kept per, and the amounts and counts it sums. The
 * rolled-up sheet's columns are `by` (in that order), the count of detail rows, then `sum`.
 */
export interface RollUpSpec {
  /**
   * The columns a line is kept per: a column of the sheet (its name), or another column of the
   * mart with how it is shown (a day: `{ column: 'sell_date', header: 'Sold on', format: 'date' }`
   * in place of the sheet's instants). Each summed amount's coin column is one of them.
   */
  by: readonly (string | ColumnSpec)[];
  /**
   * The sheet's amount and count columns summed on each line. A line over a row whose value is
   * unknown (NULL, `nullMeans` unknown) is unknown, never the sum of the others; NULLs that mean
   * not applicable or elsewhere are left out, as the sheet's totals leave them out.
   */
  sum: readonly string[];
}

/**
 * A key figure on the Summary, over a sheet's rows (same period, same filter), per group (a coin,
 * a method): a sum, the value of the latest row (a balance at the end of the period), or a count
 * of rows when neither is named; `where` narrows the rows further (e.g. the coins that differ).
 */
export interface SummaryFigure {
  label: string;
  /** The detail sheet whose rows it reads. */
  sheet: string;
  /** Column summed. */
  sum?: string;
  /** Column whose value on each group's latest row (by the sheet's period column) is shown. */
  last?: string;
  /**
   * Columns that split the figure (e.g. cost method, coin). Not `account`: the writer splits every
   * figure per account itself (a line per account, then the consolidated one). @default []
   */
  by?: readonly string[];
  /** For a sum or last value: the column holding its coin (one of `by`). */
  coinColumn?: string;
  /** A BOOLEAN column of the sheet's mart (shown or not): only the rows where it is true are read. @default every row */
  where?: string;
  /**
   * What the figure measures, shown beside it: where two figures could be read as one (the
   * commission records and the referral statistics' commission), each says what it is. @default none
   */
  note?: string;
  /**
   * Why the summed column can be unknown (NULL in the mart, e.g. funding without two collateral
   * snapshots). A figure whose value is NULL is always shown as unknown, never 0; with this set, a
   * figure over no rows is unknown too (instead of 0), and this text says why. @default none
   */
  unknown?: string;
  /**
   * For a sum of values in the reporting currency (`*_rc`, NULL where a row has no price): says
   * where the rows lacking a price are listed. Those rows are left out of the sum and counted, and
   * the figure says "Incomplete: N rows need a price" (unknown when no row has one), never a
   * silent 0. The sheet has a `reporting_currency` column: rows without one are not valued at
   * all (no currency is set) and need no price. @default none (not a reporting-currency figure)
   */
  unpriced?: string;
  /**
   * Labels of other figures of this report that are part of this one (the futures funding in the
   * net result). Where one of them is unknown for the same group, this figure says it excludes it. @default []
   */
  includes?: readonly string[];
  /**
   * Labels of figures in other groups that are part of this one (the funding in each margin coin,
   * in the futures net result in the reporting currency): where any of their lines is unknown,
   * this figure says it excludes it. @default []
   */
  includesAnyGroup?: readonly string[];
}

/** The Summary's chart: a monthly figure over the twelve months ending with the period. */
export interface ChartSpec {
  title: string;
  /** The mart it reads (any period; the chart shows the trailing twelve months). */
  mart: string;
  /** Its month column (a DATE holding the month's first day). */
  monthColumn: string;
  /** The amount charted. */
  valueColumn: string;
  /**
   * Columns splitting the mart into series (the coin, a cost method). One series is drawn: the one
   * with the largest absolute total over the twelve months, named in the chart's title.
   */
  seriesBy: readonly string[];
  /** Which of `seriesBy` is the coin (the axis unit). */
  coinColumn: string;
}

/**
 * A CSV written beside the workbook (`<report>-<period>[-<account>].csv`), in a layout another
 * system imports (a general ledger's journal import): one line per row of a detail sheet, in its
 * order and for its period and account, the columns named here. Values are DuckDB's text: dates
 * YYYY-MM-DD, amounts plain decimal strings (trailing zeros after the point dropped), never a
 * float or an exponent.
 */
export interface CsvSpec {
  /** The detail sheet whose rows it holds. */
  sheet: string;
  columns: readonly {
    /** The CSV header. */
    header: string;
    /** The sheet's mart's column. */
    column: string;
    /** An amount of 0 is written empty (a journal line's other side). @default false */
    emptyWhenZero?: boolean;
  }[];
  /**
   * A detail sheet listing what the CSV leaves out (rows it cannot hold, e.g. amounts without a
   * price): its rows in the period are counted (ReportResult.csv.omitted) and the command warns
   * and exits 3. @default none
   */
  omitted?: { sheet: string; note: string };
}

/**
 * The lines of a sheet's mart as ledger imports (`exledger report <name> --format quickbooks,xero,
 * netsuite,hledger`: write-ledger-exports.ts): the columns holding each part of a journal line.
 * Its rows are the sheet's (same period, same account), read in the order of currency, date,
 * entry and line, and rounded to the ledger currency's minor unit (ledger-rounding.ts).
 */
export interface LedgerSpec {
  /** The detail sheet whose rows are the lines. */
  sheet: string;
  columns: {
    /** The entry a line belongs to (its lines share it), a text. */
    entry: string;
    /** The line's number in its entry. */
    line: string;
    /** The entry's DATE. */
    date: string;
    /** The ledger account. */
    account: string;
    /** The line's DECIMAL amount, debit − credit. */
    amount: string;
    /** The currency of the amount. */
    currency: string;
    /** What the line is, in words. */
    memo: string;
  };
  /** As `CsvSpec.omitted`: rows the imports cannot hold, counted, warned about, exit 3. @default none */
  omitted?: { sheet: string; note: string };
}

/** A report: one workbook, a Summary sheet first, then its detail sheets. */
export interface ReportSpec {
  /** `exledger report <name>`; also the workbook's file name. */
  name: string;
  title: string;
  /** Streams the report reads: their freshness is shown on the Summary. */
  streams: readonly string[];
  sheets: readonly SheetSpec[];
  summary: readonly SummaryFigure[];
  /** Lines added to the Summary's notes: how to read this report's sheets. @default [] */
  notes?: readonly string[];
  chart: ChartSpec;
  /**
   * Its figures are values in the reporting currency only (the journal): without
   * models.reportingCurrency it is refused when named, and left out of `all` and `exledger run`. @default false
   */
  requiresReportingCurrency?: boolean;
  /** A CSV written beside the workbook. @default none */
  csv?: CsvSpec;
  /** Its lines as ledger imports, written beside the workbook when asked for (`--format`). @default none */
  ledger?: LedgerSpec;
}

/**
 * The columns one total is kept per: the sheet's `totalsPer`, then the coin column of its
 * totalled amounts (all of them name the same one). Empty where the sheet totals nothing or
 * only counts and coin-less amounts of one unit.
 */
export function totalsKeys(sheet: SheetSpec): string[] {
  const coins = new Set(sheet.columns.filter((column) => column.total === true && column.coinColumn !== undefined).map((column) => column.coinColumn!));
  return [...new Set([...(sheet.totalsPer ?? []), ...coins])];
}

/** The column of a rolled-up sheet counting the detail rows each line stands for. */
export const DETAIL_ROWS_COLUMN = 'detail_rows';

/** The columns a rolled-up sheet keeps its lines per, as they are shown (a key is never totalled). */
export function rollUpKeys(sheet: SheetSpec): ColumnSpec[] {
  return (sheet.rollUp?.by ?? []).map((key) => {
    const column = typeof key === 'string' ? sheet.columns.find((candidate) => candidate.column === key)! : key;
    const { total: _total, ...shown } = column;
    return shown;
  });
}

/**
 * The sheet as it is written when rolled up (docs/workbooks.md "Rolled-up sheets"): the `by`
 * columns, the count of detail rows, then the summed columns, each with its format, coin and
 * what its NULL means; ordered as the sheet is, by the keys it keeps; highlighted as the sheet
 * is when its highlighted column is kept. The rows it reads are built by roll-up.ts.
 */
export function rolledUpSheet(sheet: SheetSpec): SheetSpec {
  const { rollUp, highlight, ...rest } = sheet;
  if (rollUp === undefined) return sheet;
  const keys = rollUpKeys(sheet);
  const names = keys.map((column) => column.column);
  const sums = rollUp.sum.map((name) => sheet.columns.find((column) => column.column === name)!);
  // The count is totalled (per the sheet's totals keys): its total is the sheet's number of detail rows.
  const count: ColumnSpec = { column: DETAIL_ROWS_COLUMN, header: 'Detail rows', format: 'integer', total: true };
  const columns = [...keys, count, ...sums];
  const kept = highlight !== undefined && columns.some((column) => column.column === highlight.column);
  return {
    ...rest,
    columns,
    orderBy: [...sheet.orderBy.filter((column) => names.includes(column)), ...names.filter((column) => !sheet.orderBy.includes(column))],
    ...(kept ? { highlight } : {}),
  };
}

/** Whether the sheet totals any column (if not, it has no totals rows at all). */
export function hasTotals(sheet: SheetSpec): boolean {
  return sheet.columns.some((column) => column.total === true);
}

/**
 * The report as a workbook of a setup without a reporting currency shows it: without its
 * valuation columns, sheets and figures (absent, not a column or line of unknowns).
 */
export function withoutValuation(report: ReportSpec): ReportSpec {
  const sheets = report.sheets
    .filter((sheet) => sheet.valuation !== true)
    .map((sheet) => {
      const columns = sheet.columns.filter((column) => column.valuation !== true);
      const kept = (name: string) => columns.some((column) => column.column === name);
      // A roll-up keeps per and sums the columns that are left (a valuation key of its own is left out too).
      const rollUp =
        sheet.rollUp === undefined
          ? {}
          : { rollUp: { by: sheet.rollUp.by.filter((key) => (typeof key === 'string' ? kept(key) : key.valuation !== true)), sum: sheet.rollUp.sum.filter(kept) } };
      return { ...sheet, columns, ...rollUp };
    });
  return { ...report, sheets, summary: report.summary.filter((figure) => figure.unpriced === undefined && sheets.some((sheet) => sheet.name === figure.sheet)) };
}

/** The sheet of the adjustments to closed periods: added to a workbook once a period is closed (write-report.ts). */
export const ADJUSTMENTS_SHEET = 'Adjustments to closed periods';

/**
 * The sheet of a report's adjustments to closed periods: the changes, since their close, of the
 * figures of the marts it reads, booked in the workbook's period (docs/workbooks.md "Closing a period").
 */
export function adjustmentsSheet(marts: readonly string[]): SheetSpec {
  return {
    name: ADJUSTMENTS_SHEET,
    description: 'Figures of closed periods that changed since their close (late records, corrected prices or settings), booked in this period: each as closed, now, and the adjustment',
    mart: 'marts.period_adjustments',
    period: { column: 'booked_from', grain: 'booked' },
    orderBy: ['account', 'closed_period', 'mart', 'figure_key', 'adjusted_date', 'measure'],
    columns: [
      { column: 'account', header: 'Account', format: 'text' },
      { column: 'closed_period', header: 'Closed period', format: 'text' },
      { column: 'mart', header: 'Mart', format: 'text', width: 32 },
      { column: 'figure_key', header: 'Figure of', format: 'text', width: 34 },
      { column: 'adjusted_date', header: 'Day or month', format: 'date' },
      { column: 'measure', header: 'Measure', format: 'text', width: 19 },
      { column: 'coin', header: 'Coin', format: 'text' },
      { column: 'as_closed', header: 'As closed', format: 'amount', coinColumn: 'coin' },
      { column: 'live', header: 'Now', format: 'amount', coinColumn: 'coin' },
      { column: 'adjustment', header: 'Adjustment', format: 'amount', coinColumn: 'coin' },
      { column: 'reference', header: 'Reference (exledger explain)', format: 'id', width: 30 },
    ],
    only: { column: 'mart', values: marts },
    emptyText: 'No figure of a closed period changed since its close: nothing to adjust.',
    streams: [],
    // A late change to a long closed history (a corrected price) can adjust a figure per day and key.
    rollUp: { by: ['account', 'closed_period', 'mart', 'adjusted_date', 'measure', 'coin'], sum: ['as_closed', 'live', 'adjustment'] },
  };
}

/** A report with its adjustments sheet and Summary line (the marts it reads, adjusted). */
export function withAdjustments(report: ReportSpec): ReportSpec {
  const marts = [...new Set(report.sheets.map((sheet) => sheet.mart))].sort();
  return {
    ...report,
    sheets: [...report.sheets, adjustmentsSheet(marts)],
    summary: [...report.summary, { label: 'Adjustments to closed periods', sheet: ADJUSTMENTS_SHEET, note: 'figures of closed periods changed since their close, booked in this period (rows of the sheet of that name)' }],
  };
}

/** Declares a report with its type checked. */
export function defineReport(spec: ReportSpec): ReportSpec {
  return spec;
}

const identifier = z.string().regex(/^[a-z_][a-z0-9_]*$/, 'a snake_case column name');
const columnSchema = z.strictObject({
  column: identifier,
  header: z
    .string()
    .min(1)
    .max(255)
    .regex(/^[^[\]#'\n]+$/, 'no [, ], #, \' or line break (Excel table column names)'),
  format: z.enum(['text', 'id', 'date', 'month', 'datetime', 'integer', 'amount', 'price', 'rate']),
  coinColumn: identifier.optional(),
  total: z.boolean().optional(),
  nullMeans: z.enum(['unknown', 'not-applicable', 'elsewhere']).optional(),
  width: z.number().int().min(4).max(80).optional(),
  valuation: z.boolean().optional(),
});
const rollUpSchema = z.strictObject({
  by: z.array(z.union([identifier, columnSchema])).min(1),
  sum: z.array(identifier).min(1),
});
const sheetSchema = z.strictObject({
  // Excel: 31 characters at most, none of : \ / ? * [ ]; 28 leaves room for " (2)".
  name: z.string().min(1).max(28).regex(/^[^:\\/?*[\]]+$/, 'no : \\ / ? * [ or ]').refine((name) => name !== 'Summary', 'the Summary sheet is the writer\'s'),
  description: z.string().min(1),
  mart: z.string().regex(/^marts\.[a-z_][a-z0-9_]*$/, 'marts.<name>'),
  period: z.strictObject({ column: identifier, grain: z.enum(['day', 'month', 'nearest', 'booked']) }).nullable(),
  orderBy: z.array(identifier),
  columns: z.array(columnSchema).min(1),
  totalsPer: z.array(identifier).optional(),
  highlight: z.strictObject({ column: identifier, when: z.enum(['nonzero', 'always']) }).optional(),
  only: z.strictObject({ column: identifier, values: z.array(z.string().min(1)).min(1) }).optional(),
  emptyText: z.string().min(1).optional(),
  valuation: z.boolean().optional(),
  streams: z.array(z.string()).optional(),
  rollUp: rollUpSchema.optional(),
});
const reportSchema = z.strictObject({
  name: z.string().regex(/^[a-z][a-z0-9-]*$/, 'lower-case letters, digits and -'),
  title: z.string().min(1),
  streams: z.array(z.string()).min(1),
  sheets: z.array(sheetSchema).min(1),
  summary: z.array(
    z.strictObject({
      label: z.string().min(1),
      sheet: z.string(),
      sum: identifier.optional(),
      last: identifier.optional(),
      by: z.array(identifier).optional(),
      coinColumn: identifier.optional(),
      where: identifier.optional(),
      note: z.string().min(1).optional(),
      unknown: z.string().min(1).optional(),
      unpriced: z.string().min(1).optional(),
      includes: z.array(z.string()).optional(),
      includesAnyGroup: z.array(z.string()).optional(),
    }),
  ),
  notes: z.array(z.string().min(1)).optional(),
  chart: z.strictObject({ title: z.string(), mart: z.string().regex(/^marts\.[a-z_][a-z0-9_]*$/), monthColumn: identifier, valueColumn: identifier, seriesBy: z.array(identifier), coinColumn: identifier }),
  requiresReportingCurrency: z.boolean().optional(),
  csv: z
    .strictObject({
      sheet: z.string(),
      columns: z.array(z.strictObject({ header: z.string().regex(/^[a-z][a-z0-9_]*$/, 'a plain lower-case header'), column: identifier, emptyWhenZero: z.boolean().optional() })).min(1),
      omitted: z.strictObject({ sheet: z.string(), note: z.string().min(1) }).optional(),
    })
    .optional(),
  ledger: z
    .strictObject({
      sheet: z.string(),
      columns: z.strictObject({ entry: identifier, line: identifier, date: identifier, account: identifier, amount: identifier, currency: identifier, memo: identifier }),
      omitted: z.strictObject({ sheet: z.string(), note: z.string().min(1) }).optional(),
    })
    .optional(),
});

/**
 * A sheet's roll-up: its keys are columns of the sheet (or new ones, with a format), its sums the
 * sheet's amounts and counts, each summed amount's coin a key (a line adds one coin), the totals'
 * keys among its keys; and the rolled-up sheet passes the totals' checks of any sheet.
 */
function validateRollUp(sheet: SheetSpec, at: string): void {
  const rollUp = sheet.rollUp!;
  const columns = sheet.columns.map((column) => column.column);
  if (sheet.period?.grain === 'nearest') throw new ConfigError(`${at}.rollUp`, 'a sheet of the instant nearest the period\'s end holds one row per coin: it is never rolled up');
  const names: string[] = [];
  rollUp.by.forEach((key, index) => {
    const name = typeof key === 'string' ? key : key.column;
    if (typeof key === 'string' && !columns.includes(key)) throw new ConfigError(`${at}.rollUp.by.${index}`, `"${key}" is not a column of the sheet (another column of the mart is given with its header and format)`);
    if (typeof key !== 'string' && columns.includes(key.column)) throw new ConfigError(`${at}.rollUp.by.${index}`, `"${key.column}" is a column of the sheet: name it`);
    if (name === DETAIL_ROWS_COLUMN || names.includes(name)) throw new ConfigError(`${at}.rollUp.by.${index}`, `"${name}" is named twice (or is the count of detail rows)`);
    names.push(name);
  });
  rollUp.sum.forEach((name, index) => {
    const column = sheet.columns.find((candidate) => candidate.column === name);
    if (column === undefined || !['amount', 'integer'].includes(column.format)) throw new ConfigError(`${at}.rollUp.sum.${index}`, `"${name}" is not an amount or count column of the sheet`);
    if (names.includes(name)) throw new ConfigError(`${at}.rollUp.sum.${index}`, `"${name}" is also a rollUp.by column`);
    if (column.coinColumn !== undefined && !names.includes(column.coinColumn)) throw new ConfigError(`${at}.rollUp.by`, `has not "${column.coinColumn}", the coin of the summed "${name}": a line would add coins`);
  });
  for (const key of totalsKeys(sheet)) if (!names.includes(key)) throw new ConfigError(`${at}.rollUp.by`, `has not "${key}", a column the sheet's totals are kept per`);
  const rolled = rolledUpSheet(sheet);
  const keys = totalsKeys(rolled);
  if (keys.includes(rolled.columns[0]!.column)) throw new ConfigError(`${at}.rollUp.by.0`, 'the first column holds the totals rows\' label: it is not a totals key');
  if (rolled.orderBy.slice(0, keys.length).some((key) => !keys.includes(key))) throw new ConfigError(`${at}.orderBy`, `starts with the columns totals are kept per (${keys.join(', ')}), so each total of the rolled-up sheet covers one block of lines`);
}

/**
 * Checks every declaration (at start-up of any report command): shapes, and the references
 * inside a report (amount columns name a coin column of the sheet, figures name a sheet, names
 * unique). Throws a ConfigError naming the report and the field.
 */
export function validateReports(reports: readonly ReportSpec[], knownStreams: readonly string[]): void {
  const names = new Set<string>();
  for (const report of reports) {
    const parsed = reportSchema.safeParse(report);
    const where = `reports/${String(report.name)}.ts`;
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new ConfigError(`${where}: ${issue.path.join('.')}`, issue.message);
    }
    if (names.has(report.name)) throw new ConfigError(`${where}: name`, `another report is also called "${report.name}"`);
    names.add(report.name);
    for (const stream of report.streams) if (!knownStreams.includes(stream)) throw new ConfigError(`${where}: streams`, `"${stream}" is not a stream (pipelines/)`);
    const sheetNames = new Set<string>();
    report.sheets.forEach((sheet, index) => {
      const at = `${where}: sheets.${index}`;
      if (sheetNames.has(sheet.name)) throw new ConfigError(`${at}.name`, `two sheets are called "${sheet.name}"`);
      sheetNames.add(sheet.name);
      const columns = sheet.columns.map((column) => column.column);
      const headers = new Set<string>();
      sheet.columns.forEach((column, columnIndex) => {
        if (headers.has(column.header.toLowerCase())) throw new ConfigError(`${at}.columns.${columnIndex}.header`, `"${column.header}" is used twice (Excel table headers are unique)`);
        headers.add(column.header.toLowerCase());
        if (column.coinColumn !== undefined && (column.format !== 'amount' || !columns.includes(column.coinColumn))) {
          throw new ConfigError(`${at}.columns.${columnIndex}.coinColumn`, `names the sheet's column holding an amount's coin (format "amount")`);
        }
        if (column.total === true && !['amount', 'integer'].includes(column.format)) throw new ConfigError(`${at}.columns.${columnIndex}.total`, 'only amounts and counts are totalled');
      });
      for (const column of sheet.totalsPer ?? []) if (!columns.includes(column)) throw new ConfigError(`${at}.totalsPer`, `"${column}" is not a column of the sheet`);
      sheet.columns.forEach((column, columnIndex) => {
        if (column.nullMeans !== undefined && !['amount', 'integer', 'price', 'rate'].includes(column.format)) throw new ConfigError(`${at}.columns.${columnIndex}.nullMeans`, 'only amounts, counts, prices and rates say what their NULL means (other NULLs are blank)');
      });
      // One total adds one coin: every totalled amount of a sheet is in the same coin column.
      const totalledCoins = new Set(sheet.columns.filter((column) => column.total === true && column.format === 'amount').map((column) => column.coinColumn ?? ''));
      if (totalledCoins.size > 1) throw new ConfigError(`${at}.columns`, `totalled amounts name different coin columns (${[...totalledCoins].map((coin) => coin || 'none').join(', ')}): totals are kept per one coin column`);
      const keys = totalsKeys(sheet);
      if (hasTotals(sheet)) {
        if (sheet.columns[0]!.total === true || keys.includes(sheet.columns[0]!.column)) throw new ConfigError(`${at}.columns.0`, 'the first column holds the totals rows\' label: it is neither totalled nor a totals key');
        // The totals are SUBTOTALs over each key's block of rows: the rows must come in blocks.
        const leading = sheet.orderBy.slice(0, keys.length);
        if (keys.some((key) => !leading.includes(key))) throw new ConfigError(`${at}.orderBy`, `starts with the columns totals are kept per (${keys.join(', ')}), so each total covers one block of rows`);
      }
      if (sheet.rollUp !== undefined) validateRollUp(sheet, at);
      for (const stream of sheet.streams ?? []) if (!report.streams.includes(stream)) throw new ConfigError(`${at}.streams`, `"${stream}" is not one of the report's streams`);
      if (sheet.only !== undefined && !columns.includes(sheet.only.column)) throw new ConfigError(`${at}.only.column`, `"${sheet.only.column}" is not a column of the sheet`);
      if (sheet.highlight !== undefined && !columns.includes(sheet.highlight.column)) throw new ConfigError(`${at}.highlight.column`, `"${sheet.highlight.column}" is not a column of the sheet`);
    });
    report.summary.forEach((figure, index) => {
      const at = `${where}: summary.${index}`;
      const sheet = report.sheets.find((candidate) => candidate.name === figure.sheet);
      if (sheet === undefined) throw new ConfigError(`${at}.sheet`, `"${figure.sheet}" is not a sheet of this report`);
      const columns = sheet.columns.map((column) => column.column);
      if (figure.sum !== undefined && figure.last !== undefined) throw new ConfigError(at, 'a figure is a sum or a last value, not both');
      if (figure.last !== undefined && sheet.period === null) throw new ConfigError(`${at}.last`, `the sheet "${sheet.name}" has no period column to order by`);
      for (const column of [...(figure.by ?? []), figure.sum, figure.last]) {
        if (column !== undefined && !columns.includes(column)) throw new ConfigError(at, `"${column}" is not a column of the sheet "${sheet.name}"`);
      }
      if ((figure.by ?? []).includes('account')) throw new ConfigError(`${at}.by`, 'leave "account" out: every figure is given per account and consolidated by the writer (a --account workbook: one account)');
      if (figure.unpriced !== undefined && (figure.sum === undefined || !columns.includes('reporting_currency'))) {
        throw new ConfigError(`${at}.unpriced`, 'only a sum over a sheet with a reporting_currency column counts its rows without a price');
      }
      if (figure.coinColumn !== undefined && !(figure.by ?? []).includes(figure.coinColumn)) throw new ConfigError(`${at}.coinColumn`, 'must be one of `by`');
      if (sheet.rollUp !== undefined) {
        // A figure's rows must be the rolled-up sheet's lines too, so its link still points at rows that sum to it.
        const keys = rollUpKeys(sheet).map((column) => column.column);
        if (figure.last !== undefined) throw new ConfigError(`${at}.last`, `the sheet "${sheet.name}" can be rolled up: a latest value is not on its lines`);
        for (const column of [...(figure.by ?? []), ...(figure.where === undefined ? [] : [figure.where])]) {
          if (!keys.includes(column)) throw new ConfigError(at, `"${column}" is not one of the rollUp.by columns of the sheet "${sheet.name}": its lines could not be told apart by it`);
        }
        if (figure.sum !== undefined && !sheet.rollUp.sum.includes(figure.sum)) throw new ConfigError(`${at}.sum`, `"${figure.sum}" is not one of the rollUp.sum columns of the sheet "${sheet.name}"`);
      }
      for (const part of [...(figure.includes ?? []), ...(figure.includesAnyGroup ?? [])]) {
        if (part === figure.label || !report.summary.some((candidate) => candidate.label === part)) throw new ConfigError(`${at}.includes`, `"${part}" is not another figure of this report`);
      }
    });
    if (report.csv !== undefined) {
      const sheet = report.sheets.find((candidate) => candidate.name === report.csv!.sheet);
      if (sheet === undefined) throw new ConfigError(`${where}: csv.sheet`, `"${report.csv.sheet}" is not a sheet of this report`);
      if (report.csv.omitted !== undefined && !report.sheets.some((candidate) => candidate.name === report.csv!.omitted!.sheet)) throw new ConfigError(`${where}: csv.omitted.sheet`, `"${report.csv.omitted.sheet}" is not a sheet of this report`);
    }
    if (report.ledger !== undefined) {
      const ledger = report.ledger;
      if (!report.sheets.some((candidate) => candidate.name === ledger.sheet)) throw new ConfigError(`${where}: ledger.sheet`, `"${ledger.sheet}" is not a sheet of this report`);
      if (ledger.omitted !== undefined && !report.sheets.some((candidate) => candidate.name === ledger.omitted!.sheet)) throw new ConfigError(`${where}: ledger.omitted.sheet`, `"${ledger.omitted.sheet}" is not a sheet of this report`);
    }
    if (!report.chart.seriesBy.includes(report.chart.coinColumn)) throw new ConfigError(`${where}: chart.coinColumn`, 'must be one of chart.seriesBy');
  }
}
