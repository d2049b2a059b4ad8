import type ExcelJS from 'exceljs';
import type { Database } from '../store/database.ts';
import { DataError } from '../errors.ts';
import { DecimalSum, decimalsOf, DEFAULT_WIDTHS, MIN_PRICE_DECIMALS, PAGE_SETUP, UNKNOWN_TEXT, WARNING_FILL, WARNING_FONT, cellValue, isZeroDecimal, numberFormat, type CoinFormats } from './cell-formats.ts';
import { rowFilter, type ReportPeriod } from './period.ts';
import { hasTotals, totalsKeys, type ColumnFormat, type ColumnSpec, type ReportSpec, type SheetSpec } from './report-definition.ts';
import { columnLetters, writtenWidth, type XlsxWriter } from './xlsx-writer.ts';

/**
 * A detail sheet: a mart's rows of the period as an Excel table, streamed from DuckDB row by row
 * (memory stays flat), continued on further sheets past the row limit.
 */

/** The continuation sheets' names: `Lot detail`, `Lot detail (2)`, … */
export function sheetParts(name: string, rows: number, maxRows: number): string[] {
  const count = Math.max(1, Math.ceil(rows / maxRows));
  return Array.from({ length: count }, (_, index) => (index === 0 ? name : `${name} (${index + 1})`));
}

/** Excel table names: letters, digits and `_`, unique in the workbook. */
function tableName(report: string, sheet: string, part: number, taken: Set<string>): string {
  const base = `${report}_${sheet}`.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_+|_+$/g, '');
  let name = `T_${base}${part > 1 ? `_${part}` : ''}`;
  for (let suffix = 2; taken.has(name.toLowerCase()); suffix++) name = `T_${base}_${part}_${suffix}`;
  taken.add(name.toLowerCase());
  return name;
}

/** The SELECT expression of a column: datetimes as epoch milliseconds (exact, zone-free). */
function selectExpression(column: ColumnSpec): string {
  return column.format === 'datetime' ? `epoch_ms(${column.column})` : column.column;
}

/** Widest column the content may ask for, in characters: longer text wraps onto more lines (the row grows), never cut and never printed smaller. */
const MAX_WIDTH = 40;
/** Significant digits an Excel cell holds: a price or rate shows its decimals up to these. */
const CELL_DIGITS = 15;

/** How a sheet's columns are laid out, from what they show in the period. */
interface ColumnLayout {
  /** Width in characters of the default font. */
  widths: number[];
  /** Per price or rate column: the decimals its values have (up to a cell's 15 significant digits); else 0. */
  decimals: number[];
  /** Per column: its longest text is wider than the column, so its cells wrap. */
  wraps: boolean[];
}

/** SQL: the decimals a DECIMAL value has (trailing zeros dropped), up to what a cell's 15 significant digits hold. */
function decimalsExpression(column: string): string {
  const text = `CAST(abs(${column}) AS VARCHAR)`;
  const fraction = `rtrim(split_part(${text}, '.', 2), '0')`;
  const whole = `split_part(${text}, '.', 1)`;
  // 278.93: 2 (15 - 3 integer digits at most); 0.000575757575757576: 18 (the 3 leading zeros are not significant, 15 after them).
  return `CASE WHEN abs(${column}) >= 1 THEN least(length(${fraction}), greatest(0, ${CELL_DIGITS} - length(${whole}))) ELSE least(length(${fraction}), ${CELL_DIGITS} + length(${fraction}) - length(ltrim(${fraction}, '0'))) END`;
}

/**
 * Each column's width in characters, from what it will show in the period: the longest text,
 * the widest formatted amount (its integer digits with separators, its coin's decimals, a sign)
 * or count, a price's or rate's decimals, and the longest word of its header (the header wraps at
 * spaces). Content-sized columns keep a wide sheet legible when printed one page wide. A declared
 * `width` wins; text wider than its column wraps.
 */
async function measureColumns(db: Database, spec: SheetSpec, source: SheetSource, coinFormats: CoinFormats): Promise<ColumnLayout> {
  const measures = spec.columns.map((column, index) => {
    switch (column.format) {
      case 'amount':
        if (column.coinColumn !== undefined) {
          // Each row as its own coin shows it (its integer digits with separators, its coin's decimals): a
          // column of BTC and USDT rows is as wide as its widest row, not as the most digits with the most decimals.
          const digits = `length(CAST(trunc(abs(${column.column})) AS VARCHAR))`;
          const places = `CASE CAST(${column.coinColumn} AS VARCHAR) ${Object.entries(coinFormats.fixedDecimals)
            .map(([coin, decimals]) => `WHEN '${coin.replace(/'/g, "''")}' THEN ${decimals === 0 ? 0 : decimals + 1}`)
            .join(' ')} ELSE ${coinFormats.defaultDecimals === 0 ? 0 : coinFormats.defaultDecimals + 1} END`;
          return `max(length(CAST(trunc(abs(${column.column})) AS VARCHAR))) AS m${index}, max(1 + ${digits} + (${digits} - 1) // 3 + ${places}) AS w${index}`;
        }
        return `max(length(CAST(trunc(abs(${column.column})) AS VARCHAR))) AS m${index}`;
      case 'integer':
        return `max(length(CAST(trunc(abs(${column.column})) AS VARCHAR))) AS m${index}`;
      case 'price':
      case 'rate':
        return `max(length(CAST(trunc(abs(${column.column})) AS VARCHAR))) AS m${index}, max(${decimalsExpression(column.column)}) AS d${index}`;
      case 'text':
      case 'id':
        return `max(length(CAST(${column.column} AS VARCHAR))) AS m${index}`;
      default:
        return `NULL AS m${index}`;
    }
  });
  const coinColumns = [...new Set(spec.columns.map((column) => column.coinColumn).filter((coin): coin is string => coin !== undefined))];
  const coins = coinColumns.map((coin, index) => `list(DISTINCT CAST(${coin} AS VARCHAR)) AS c${index}`);
  const [row] = await db.all<Record<string, string | string[] | null>>(`SELECT ${[...measures, ...coins].join(', ')} FROM ${source.relation} WHERE ${source.where}`, source.values);
  const decimals = spec.columns.map((column, index) => (column.format === 'price' || column.format === 'rate' ? Number(row?.[`d${index}`] ?? 0) : 0));
  const wraps = spec.columns.map(() => false);
  const widths = spec.columns.map((column, index) => {
    const measured = row?.[`m${index}`];
    const length = typeof measured === 'string' ? Number(measured) : null;
    const grouped = (digits: number) => digits + Math.floor((digits - 1) / 3);
    let content: number;
    if (column.format === 'amount' || column.format === 'integer') {
      const digits = length ?? 1;
      const seen = column.coinColumn === undefined ? [] : ((row?.[`c${coinColumns.indexOf(column.coinColumn)}`] as string[] | null) ?? []);
      const places = column.format === 'integer' ? 0 : Math.max(seen.length === 0 ? decimalsOf(undefined, coinFormats) : 0, ...seen.map((coin) => decimalsOf(coin ?? undefined, coinFormats)));
      const widest = row?.[`w${index}`];
      content = Math.max(UNKNOWN_TEXT.length, typeof widest === 'string' ? Number(widest) : 1 + grouped(digits) + (places > 0 ? 1 + places : 0));
    } else if (column.format === 'price' || column.format === 'rate') {
      // As exactFormat shows it: a sign, the integer digits (a rate's two more, as a percentage), the decimals, a %.
      const places = Math.max(MIN_PRICE_DECIMALS, column.format === 'rate' ? decimals[index]! - 2 : decimals[index]!);
      content = Math.max(UNKNOWN_TEXT.length, 1 + grouped((length ?? 1) + (column.format === 'rate' ? 2 : 0)) + 1 + places + (column.format === 'rate' ? 1 : 0));
    } else if (column.format === 'text' || column.format === 'id') {
      content = length ?? 4;
    } else {
      content = DEFAULT_WIDTHS[column.format] - 2;
    }
    const longestWord = Math.max(...column.header.split(' ').map((word) => word.length));
    const indent = afterNumber(spec.columns, index) ? 1 : 0;
    const natural = Math.max(6, content, longestWord + 1) + 2 + indent;
    const width = column.width ?? Math.min(MAX_WIDTH, natural);
    // Text longer than its column wraps (the row grows): it is never cut, nor run into the next column.
    if ((column.format === 'text' || column.format === 'id') && content + 2 + indent > width) wraps[index] = true;
    return width;
  });
  return { widths, decimals, wraps };
}

/** Whether a text column follows a right-aligned number: it is indented, so the two never touch. */
function afterNumber(columns: readonly ColumnSpec[], index: number): boolean {
  return ['text', 'id'].includes(columns[index]!.format) && index > 0 && isNumeric(columns[index - 1]!.format);
}

/**
 * How many lines `text` takes when wrapped in `width` characters (less the cell's margin): at
 * spaces, and after `/`, `-`, `;` or `=` (where LibreOffice and Excel may break an id), a part
 * longer than a line broken where it fills one. Counts high rather than low: a row a line too tall
 * shows everything, a line too short cuts the text.
 */
function wrappedLines(text: string, width: number): number {
  const room = Math.max(1, width - 2);
  let lines = 1;
  let used = 0;
  for (const part of text.match(/[^ /;=-]*[ /;=-]?/g)!.filter((piece) => piece !== '')) {
    const length = part.trimEnd().length;
    if (used > 0 && used + length > room) {
      lines += 1;
      used = 0;
    }
    used += part.length;
    while (used > room + (part.endsWith(' ') ? 1 : 0)) {
      lines += 1;
      used -= room;
    }
  }
  return lines;
}

/**
 * The rows a sheet shows: a relation (its mart, or a roll-up of it: roll-up.ts), the WHERE clause
 * that keeps the workbook's rows, and its parameters.
 */
export interface SheetSource {
  relation: string;
  where: string;
  values: string[];
}

/** A sheet's own rows: its mart's rows of the period (and account). */
export function martSource(spec: SheetSpec, period: ReportPeriod, account?: string): SheetSource {
  return { relation: spec.mart, ...rowFilter(spec, period, account) };
}

/** Excel's last row. */
const EXCEL_ROWS = 1_048_576;
/** Rows kept free below a full sheet's table for its totals: a blank row, a heading, up to 998 totals (coins × methods). */
export const TOTALS_ROWS_RESERVED = 1_000;

/** The rows of one totals key (a coin, a coin and cost method) in one sheet part. */
interface TotalsGroup {
  /** The key columns' values (null shown blank). */
  keys: (string | null)[];
  /** Blocks of sheet rows (1-based, inclusive): one when the rows are ordered by the keys, as validated. */
  runs: { first: number; last: number }[];
  /** Per column: the exact sum of its known values, and how many rows it is unknown or NULL in. */
  sums: DecimalSum[];
  unknown: number[];
  nulls: number[];
}

export async function writeDetailSheet(
  db: Database,
  workbook: XlsxWriter,
  report: ReportSpec,
  spec: SheetSpec,
  plan: {
    period: ReportPeriod;
    account?: string;
    rows: number;
    parts: string[];
    maxRows: number;
    tableNames: Set<string>;
    coinFormats: CoinFormats;
    onProgress?: (sheet: string, written: number, total: number) => void;
    /** The period starts before its streams' synced history (notSyncedReason): said instead of "no rows". */
    notSynced?: string;
    /** The rows it shows. @default its mart's rows of the period and account (martSource) */
    source?: SheetSource;
    /** A line above the table, on every part (a rolled-up sheet says so): the table's header is then on row 2. @default none */
    note?: string;
  },
): Promise<void> {
  const columns = spec.columns;
  const coinIndex = columns.map((column) => (column.coinColumn === undefined ? -1 : columns.findIndex((candidate) => candidate.column === column.coinColumn)));
  const highlightIndex = spec.highlight === undefined ? -1 : columns.findIndex((column) => column.column === spec.highlight!.column);
  // A NULL amount, count or rate is unknown unless declared not applicable: shown as "unknown", never blank (read as 0).
  const unknownIfNull = columns.map((column) => isNumeric(column.format) && (column.nullMeans ?? 'unknown') === 'unknown');
  const elsewhereIfNull = columns.map((column) => column.nullMeans === 'elsewhere');
  const source = plan.source ?? martSource(spec, plan.period, plan.account);
  const sql = `SELECT ${columns.map(selectExpression).join(', ')} FROM ${source.relation} WHERE ${source.where} ORDER BY ${spec.orderBy.join(', ')}`;
  const totalled = hasTotals(spec);
  const keyIndex = totalsKeys(spec).map((key) => columns.findIndex((column) => column.column === key));
  const layout = await measureColumns(db, spec, source, plan.coinFormats);
  const nearest = spec.period?.grain === 'nearest' && plan.source === undefined ? await nearestNote(db, spec, source, plan.period) : undefined;
  // The table's header row: below the note, when there is one.
  const headerRow = plan.note === undefined ? 1 : 2;
  const widths = layout.widths;
  const wrapped = layout.wraps.flatMap((wraps, index) => (wraps ? [index] : []));
  const styles = new StyleCache(columns, plan.coinFormats, layout);
  // The header wraps at spaces: as many lines as its longest column needs.
  const headerLines = Math.max(...columns.map((column, index) => wrappedLines(column.header, widths[index]!)));

  let part = -1;
  let sheet: ExcelJS.Worksheet | undefined;
  let partRows = 0;
  let written = 0;
  let groups = new Map<string, TotalsGroup>();
  let group: TotalsGroup | undefined;

  const openPart = () => {
    part++;
    // The note (if any) and the header stay in view and are printed on every page.
    sheet = workbook.addWorksheet(plan.parts[part]!, { views: [{ state: 'frozen', ySplit: headerRow }], pageSetup: { ...PAGE_SETUP, printTitlesRow: `1:${headerRow}` } });
    sheet.columns = columns.map((column, index) => ({ width: writtenWidth(widths[index]!) }));
    if (plan.note !== undefined) noteRow(sheet, plan.note, { bold: true });
    const header = sheet.addRow(columns.map((column) => column.header));
    header.font = { bold: true };
    header.height = 15 * headerLines;
    columns.forEach((column, index) => {
      const horizontal = ['text', 'id'].includes(column.format) ? 'left' : ['date', 'month', 'datetime'].includes(column.format) ? 'center' : 'right';
      header.getCell(index + 1).alignment = { horizontal, vertical: 'bottom', wrapText: true, ...(afterNumber(columns, index) ? { indent: 1 } : {}) };
    });
    header.commit();
    partRows = 0;
    groups = new Map();
    group = undefined;
  };
  /** The totals group of a row: the current one while the keys repeat (rows come in blocks), else looked up. */
  const groupOf = (values: unknown[]): TotalsGroup => {
    const keys = keyIndex.map((index) => (values[index] === null ? null : String(values[index])));
    if (group !== undefined && keys.every((key, position) => key === group!.keys[position])) return group;
    const id = JSON.stringify(keys);
    let found = groups.get(id);
    if (found === undefined) {
      found = { keys, runs: [], sums: columns.map(() => new DecimalSum()), unknown: columns.map(() => 0), nulls: columns.map(() => 0) };
      groups.set(id, found);
    }
    return found;
  };
  const closePart = () => {
    if (sheet === undefined) return;
    if (partRows === 0) {
      const empty = plan.notSynced === undefined ? (spec.emptyText ?? 'No rows in this period.') : `No rows: ${plan.notSynced}. Rows of the period may exist at the exchange.`;
      noteRow(sheet, empty, plan.notSynced === undefined ? undefined : WARNING_FONT);
    } else {
      const name = tableName(report.name, spec.name, part + 1, plan.tableNames);
      workbook.addTable(sheet, { name, headerRow, dataRows: partRows, columns: columns.map((column) => ({ name: column.header })) });
      if (totalled) writeTotals(sheet, [...groups.values()], partRows);
      if (nearest !== undefined) {
        sheet.addRow([]).commit();
        noteRow(sheet, nearest, { italic: true });
      }
    }
    sheet.commit();
  };
  /**
   * Below the table (a blank row between, so the table does not take the totals in), one totals
   * row per key: SUBTOTAL(109, …) over that key's block of rows, so a total follows the filters and
   * never adds two coins or two cost methods; the cached result is the exact sum (BigInt). A total
   * whose shown rows include an unknown value shows "unknown" (a count of the column's numbers
   * below the count of shown rows), and the total of the rest once those rows are filtered out;
   * a total of a value kept on other rows (`elsewhere`) is "unknown" while no row shown holds one.
   */
  const writeTotals = (target: ExcelJS.Worksheet, list: TotalsGroup[], rows: number) => {
    const lastRow = headerRow + rows + 2 + list.length;
    if (lastRow > EXCEL_ROWS) throw new DataError(`${spec.mart}: ${list.length} totals rows do not fit below ${rows} rows on the sheet "${target.name}" (Excel ends at row ${EXCEL_ROWS})`);
    target.addRow([]).commit();
    const keyHeaders = keyIndex.map((index) => columns[index]!.header);
    const mayBeUnknown = columns.some((column, index) => column.total === true && (unknownIfNull[index] || elsewhereIfNull[index]));
    noteRow(
      target,
      `Totals of the rows shown (they follow the filters)${keyHeaders.length === 0 ? '' : `, per ${keyHeaders.join(' and ')}`}` +
        (mayBeUnknown ? `; "${UNKNOWN_TEXT}" where a row shown is unknown (filter such rows out to total the rest)` : ''),
      { italic: true },
    );
    for (const totals of list) {
      const coinKey = keyIndex.findIndex((index) => columns.some((column) => column.total === true && column.coinColumn === columns[index]!.column));
      const coin = coinKey < 0 ? undefined : (totals.keys[coinKey] ?? undefined);
      const ranges = (index: number) => totals.runs.map((run) => `${columnLetters(index + 1)}${run.first}:${columnLetters(index + 1)}${run.last}`);
      const subtotal = (code: number, index: number) => ranges(index).map((range) => `SUBTOTAL(${code},${range})`).join('+');
      // Rows shown are counted on a column without a NULL in this block (the first such).
      const countColumn = totals.nulls.findIndex((nulls) => nulls === 0);
      const values = columns.map((column, index): ExcelJS.CellValue => {
        if (index === 0) return 'Total';
        const key = keyIndex.indexOf(index);
        if (key >= 0) return totals.keys[key];
        if (column.total !== true) return null;
        const sum = subtotal(109, index);
        const exact = Number(totals.sums[index]!.toString());
        if (elsewhereIfNull[index]) {
          const rows = totals.runs.reduce((count, run) => count + run.last - run.first + 1, 0);
          return { formula: `IF(${wrap(subtotal(102, index))}=0,"${UNKNOWN_TEXT}",${sum})`, result: totals.nulls[index] === rows ? UNKNOWN_TEXT : exact };
        }
        if (totals.unknown[index] === 0) return { formula: sum, result: exact };
        if (countColumn < 0) return UNKNOWN_TEXT;
        return { formula: `IF(${wrap(subtotal(102, index))}<${wrap(subtotal(103, countColumn))},"${UNKNOWN_TEXT}",${sum})`, result: UNKNOWN_TEXT };
      });
      const row = target.addRow(values);
      row.font = { bold: true };
      columns.forEach((column, index) => {
        if (column.total !== true) return;
        const cell = row.getCell(index + 1);
        cell.numFmt = numberFormat(column.format, plan.coinFormats, column.format === 'amount' && column.coinColumn !== undefined ? coin : undefined, layout.decimals[index])!;
        cell.alignment = { horizontal: 'right' };
      });
      row.commit();
    }
  };

  /** A line of text under or instead of the table: across the sheet's columns, wrapped, never running past them. */
  const noteRow = (target: ExcelJS.Worksheet, text: string, font?: Partial<ExcelJS.Font>) => {
    const row = target.addRow([text]);
    const across = widths.reduce((sum, width) => sum + width, 0);
    if (columns.length > 1) target.mergeCells(row.number, 1, row.number, columns.length);
    row.getCell(1).alignment = { horizontal: 'left', vertical: 'top', wrapText: true };
    if (font !== undefined) row.getCell(1).font = font;
    // Bold text is about a tenth wider.
    const lines = wrappedLines(text, font?.bold === true ? Math.floor(across / 1.1) : across);
    if (lines > 1) row.height = 15 * lines;
    row.commit();
  };

  openPart();
  await db.exclusive(async () => {
    const result = await db.connection.stream(sql, source.values);
    for await (const chunk of result.yieldRowsJson()) {
      for (const values of chunk) {
        if (partRows === plan.maxRows) {
          closePart();
          openPart();
        }
        const highlighted = highlightIndex >= 0 && (spec.highlight!.when === 'always' || (values[highlightIndex] !== null && !isZeroDecimal(String(values[highlightIndex]))));
        const cells = values.map((value, index) =>
          value === null && unknownIfNull[index] ? UNKNOWN_TEXT : cellValue(columns[index]!.format, value, () => `${spec.mart}.${columns[index]!.column}`),
        );
        const row = sheet!.addRow(cells);
        // A wrapped text's row is as tall as its lines (neither Excel nor LibreOffice grows a streamed row by itself).
        if (wrapped.length > 0) {
          const lines = Math.max(1, ...wrapped.map((index) => (typeof cells[index] === 'string' ? wrappedLines(cells[index], widths[index]! - (afterNumber(columns, index) ? 1 : 0)) : 1)));
          if (lines > 1) row.height = 15 * lines;
        }
        const rowNumber = partRows + headerRow + 1;
        if (totalled) {
          group = groupOf(values);
          const run = group.runs[group.runs.length - 1];
          if (run !== undefined && run.last === rowNumber - 1) run.last = rowNumber;
          else group.runs.push({ first: rowNumber, last: rowNumber });
        }
        columns.forEach((column, index) => {
          const coin = coinIndex[index]! >= 0 ? ((values[coinIndex[index]!] as string | null) ?? undefined) : undefined;
          // Always one shared object, even an empty one: exceljs caches styles by identity, and
          // a cell left without one gets a new empty style to process (a fifth of the time).
          row.getCell(index + 1).style = styles.get(index, coin, highlighted);
          if (group === undefined) return;
          if (values[index] === null) {
            group.nulls[index]!++;
            if (column.total === true && unknownIfNull[index]) group.unknown[index]!++;
          } else if (column.total === true) {
            group.sums[index]!.add(String(values[index]));
          }
        });
        row.commit();
        partRows++;
        written++;
        if (written % 50_000 === 0) plan.onProgress?.(spec.name, written, plan.rows);
      }
      await workbook.drain(sheet!);
    }
  });
  closePart();
  if (written % 50_000 !== 0) plan.onProgress?.(spec.name, written, plan.rows);
}

/**
 * Under a sheet of the instant nearest the end of the period (a snapshot): which instant each
 * account's rows are of, and how far before or after the end of the period it lies, so nobody
 * takes the 26 November snapshot for the 31 October balance.
 */
async function nearestNote(db: Database, spec: SheetSpec, filter: SheetSource, period: ReportPeriod): Promise<string | undefined> {
  const column = spec.period!.column;
  const rows = await db.all<{ account: string; at_ms: string; end_ms: string }>(
    `SELECT DISTINCT CAST(account AS VARCHAR) AS account, epoch_ms(${column}) AS at_ms, epoch_ms(CAST(CAST($${filter.values.length + 1} AS DATE) + 1 AS TIMESTAMP) AT TIME ZONE 'UTC') AS end_ms
     FROM ${spec.mart} WHERE (${filter.where}) AND ${column} IS NOT NULL ORDER BY account`,
    [...filter.values, period.to],
  );
  if (rows.length === 0) return undefined;
  const header = spec.columns.find((candidate) => candidate.column === column)?.header ?? column;
  const lines = rows.map((row) => {
    const at = Number(row.at_ms);
    const hours = Math.round(Math.abs(at - Number(row.end_ms)) / 3_600_000);
    const distance = hours < 48 ? `${hours} hours` : `${Math.round(hours / 24)} days`;
    const side = at === Number(row.end_ms) ? 'at the end of the period' : `${distance} ${at > Number(row.end_ms) ? 'after' : 'before'} the end of the period (${period.to} 24:00 UTC)`;
    return `${rows.length > 1 ? `account ${row.account}: ` : ''}${new Date(at).toISOString().slice(0, 19).replace('T', ' ')} UTC, ${side}`;
  });
  return `Compared at the snapshot nearest the end of the period (${header}): ${lines.join('; ')}. No snapshot is nearer; the records are taken up to that time.`;
}

function isNumeric(format: ColumnFormat): boolean {
  return format === 'amount' || format === 'integer' || format === 'price' || format === 'rate';
}

/** A sum of SUBTOTALs (more than one block) in parentheses, for a comparison. */
function wrap(expression: string): string {
  return expression.includes('+') ? `(${expression})` : expression;
}

/**
 * One style object per column, coin and highlight: exceljs caches styles by object identity, and
 * the lookup runs for every cell (a key string built per cell cost ~1.6 s a million rows).
 */
class StyleCache {
  private readonly styles: Map<string, Partial<ExcelJS.Style>>[][];

  constructor(
    private readonly columns: readonly ColumnSpec[],
    private readonly formats: CoinFormats,
    private readonly layout: ColumnLayout,
  ) {
    this.styles = columns.map(() => [new Map(), new Map()]);
  }

  get(column: number, coin: string | undefined, highlighted: boolean): Partial<ExcelJS.Style> {
    const styles = this.styles[column]![highlighted ? 1 : 0]!;
    let style = styles.get(coin ?? '');
    if (style === undefined) {
      const numFmt = numberFormat(this.columns[column]!.format, this.formats, coin, this.layout.decimals[column]);
      // Numbers, and the "unknown" among them, right-aligned.
      // Dates and months centred: a right-aligned date would touch left-aligned text beside it.
      const format = this.columns[column]!.format;
      // A sheet with wrapped text has rows taller than a line: every cell reads from the top.
      const vertical: Partial<ExcelJS.Alignment> = this.layout.wraps.includes(true) ? { vertical: 'top' } : {};
      const horizontal: Partial<ExcelJS.Alignment> | undefined = isNumeric(format)
        ? { horizontal: 'right' }
        : ['date', 'month', 'datetime'].includes(format)
          ? { horizontal: 'center' }
          : afterNumber(this.columns, column)
            ? { horizontal: 'left', indent: 1 }
            : undefined;
      const wrap: Partial<ExcelJS.Alignment> = this.layout.wraps[column] === true ? { wrapText: true } : {};
      const alignment = horizontal === undefined && vertical.vertical === undefined && wrap.wrapText === undefined ? undefined : { ...horizontal, ...vertical, ...wrap };
      style = { ...(numFmt === undefined ? {} : { numFmt }), ...(alignment === undefined ? {} : { alignment }), ...(highlighted ? { fill: WARNING_FILL, font: WARNING_FONT } : {}) };
      styles.set(coin ?? '', style);
    }
    return style;
  }
}
