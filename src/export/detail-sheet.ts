import type ExcelJS from 'exceljs';
import type { Database } from '../store/database.ts';
import { DecimalSum, DEFAULT_WIDTHS, PAGE_SETUP, WARNING_FILL, WARNING_FONT, cellValue, isZeroDecimal, numberFormat, type CoinFormats } from './cell-formats.ts';
import { periodFilter, type ReportPeriod } from './period.ts';
import type { ColumnSpec, ReportSpec, SheetSpec } from './report-definition.ts';
import type { XlsxWriter } from './xlsx-writer.ts';

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

export async function writeDetailSheet(
  db: Database,
  workbook: XlsxWriter,
  report: ReportSpec,
  spec: SheetSpec,
  plan: { period: ReportPeriod; rows: number; parts: string[]; maxRows: number; tableNames: Set<string>; coinFormats: CoinFormats; onProgress?: (sheet: string, written: number, total: number) => void },
): Promise<void> {
  const columns = spec.columns;
  const coinIndex = columns.map((column) => (column.coinColumn === undefined ? -1 : columns.findIndex((candidate) => candidate.column === column.coinColumn)));
  const highlightIndex = spec.highlight === undefined ? -1 : columns.findIndex((column) => column.column === spec.highlight!.column);
  const styles = new StyleCache(columns, plan.coinFormats);
  const filter = periodFilter(spec, plan.period);
  const sql = `SELECT ${columns.map(selectExpression).join(', ')} FROM ${spec.mart} WHERE ${filter.where} ORDER BY ${spec.orderBy.join(', ')}`;

  let part = -1;
  let sheet: ExcelJS.Worksheet | undefined;
  let partRows = 0;
  let written = 0;
  let totals: { sum: DecimalSum; coins: Set<string> }[] = [];
  const totalsPerIndex = (spec.totalsPer ?? []).map((name) => columns.findIndex((column) => column.column === name));
  let totalsPerValues: Set<string>[] = [];

  const openPart = () => {
    part++;
    sheet = workbook.addWorksheet(plan.parts[part]!, { views: [{ state: 'frozen', ySplit: 1 }], pageSetup: { ...PAGE_SETUP, printTitlesRow: '1:1' } });
    sheet.columns = columns.map((column) => ({ width: column.width ?? Math.max(DEFAULT_WIDTHS[column.format], Math.min(40, column.header.length + 3)) }));
    const header = sheet.addRow(columns.map((column) => column.header));
    header.font = { bold: true };
    columns.forEach((column, index) => {
      if (!['text', 'id'].includes(column.format)) header.getCell(index + 1).alignment = { horizontal: 'right' };
    });
    header.commit();
    partRows = 0;
    totals = columns.map(() => ({ sum: new DecimalSum(), coins: new Set<string>() }));
    totalsPerValues = totalsPerIndex.map(() => new Set<string>());
  };
  const closePart = () => {
    if (sheet === undefined) return;
    if (partRows === 0) {
      sheet.addRow(['No rows in this period.']).commit();
    } else {
      const name = tableName(report.name, spec.name, part + 1, plan.tableNames);
      // A total over two coins (or two cost methods) is no figure: the label says to filter first.
      const mixed = totals.some((total) => total.coins.size > 1) || totalsPerValues.some((values) => values.size > 1);
      const label = mixed ? 'Total of the rows shown: mixes coins or methods, filter to one first' : 'Total';
      const values = columns.map((column, index): ExcelJS.CellValue => {
        if (column.total !== true) return index === 0 ? label : null;
        return { formula: `SUBTOTAL(109,${name}[[${column.header}]])`, result: Number(totals[index]!.sum.toString()) };
      });
      const row = sheet.addRow(values);
      row.font = { bold: true };
      columns.forEach((column, index) => {
        if (column.total !== true) return;
        const coins = [...totals[index]!.coins];
        row.getCell(index + 1).numFmt = numberFormat(column.format, plan.coinFormats, coins.length === 1 ? coins[0] : undefined)!;
      });
      row.commit();
      workbook.addTable(sheet, { name, headerRow: 1, dataRows: partRows, columns: columns.map((column) => ({ name: column.header, total: column.total === true })), totalsRow: true, totalsLabel: label });
    }
    sheet.commit();
  };

  openPart();
  await db.exclusive(async () => {
    const result = await db.connection.stream(sql, filter.values);
    for await (const chunk of result.yieldRowsJson()) {
      for (const values of chunk) {
        if (partRows === plan.maxRows) {
          closePart();
          openPart();
        }
        const highlighted = highlightIndex >= 0 && (spec.highlight!.when === 'always' || (values[highlightIndex] !== null && !isZeroDecimal(String(values[highlightIndex]))));
        const cells = values.map((value, index) => cellValue(columns[index]!.format, value, () => `${spec.mart}.${columns[index]!.column}`));
        const row = sheet!.addRow(cells);
        totalsPerIndex.forEach((index, position) => totalsPerValues[position]!.add(String(values[index])));
        columns.forEach((column, index) => {
          const coin = coinIndex[index]! >= 0 ? ((values[coinIndex[index]!] as string | null) ?? undefined) : undefined;
          // Always one shared object, even an empty one: exceljs caches styles by identity, and
          // a cell left without one gets a new empty style to process (a fifth of the time).
          row.getCell(index + 1).style = styles.get(index, coin, highlighted);
          if (column.total === true && values[index] !== null) {
            totals[index]!.sum.add(String(values[index]));
            if (coin !== undefined) totals[index]!.coins.add(coin);
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
 * One style object per column, coin and highlight: exceljs caches styles by object identity, and
 * the lookup runs for every cell (a key string built per cell cost ~1.6 s a million rows).
 */
class StyleCache {
  private readonly styles: Map<string, Partial<ExcelJS.Style>>[][];

  constructor(
    private readonly columns: readonly ColumnSpec[],
    private readonly formats: CoinFormats,
  ) {
    this.styles = columns.map(() => [new Map(), new Map()]);
  }

  get(column: number, coin: string | undefined, highlighted: boolean): Partial<ExcelJS.Style> {
    const styles = this.styles[column]![highlighted ? 1 : 0]!;
    let style = styles.get(coin ?? '');
    if (style === undefined) {
      const numFmt = numberFormat(this.columns[column]!.format, this.formats, coin);
      style = { ...(numFmt === undefined ? {} : { numFmt }), ...(highlighted ? { fill: WARNING_FILL, font: WARNING_FONT } : {}) };
      styles.set(coin ?? '', style);
    }
    return style;
  }
}
