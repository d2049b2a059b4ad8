import type ExcelJS from 'exceljs';
import { writtenWidth } from './xlsx-writer.ts';

/**
 * The Summary's grid, laid out before it is written: the column widths follow the longest text
 * of each column, a text wider than its column (or its merged columns) wraps onto more lines
 * with the row made tall enough, and a left-aligned text right after a right-aligned number is
 * indented, so no cell runs into its neighbour ("10Spot realized PnL…", "06:10OK") in Excel or
 * LibreOffice at the default zoom. Widths are measured in characters of the default font
 * (Calibri 11: a column's width is counted in its digit widths), roughly, with a margin.
 */

/** One cell of the Summary. */
export interface LayoutCell {
  value: ExcelJS.CellValue;
  /** What a reader sees (a number as its format shows it): what is measured. */
  text: string;
  /** @default right for numbers and dates, left for text */
  align?: 'left' | 'right' | 'center';
  numFmt?: string;
  font?: Partial<ExcelJS.Font>;
  fill?: ExcelJS.Fill;
  /** Columns it covers (merged), starting with its own. @default 1 */
  span?: number;
}

/** A row: its cells by column (0-based); null for an empty cell. */
export type LayoutRow = readonly (LayoutCell | null)[];

/** Limits of each column's width, in characters. */
export interface ColumnLimits {
  min: readonly number[];
  max: readonly number[];
  /** The columns together are at least this wide (e.g. the chart below them). @default 0 */
  totalMin?: number;
}

/** Characters of space a cell keeps beside its text (Excel's cell margins, a bold glyph's extra). */
const PADDING = 2;
/** Points per line of the default 11-point font (Excel's default row height). */
const LINE_POINTS = 15;

/** The width of a text in characters of the default font: bold is ~10% wider, sizes scale. */
export function textWidth(text: string, font?: Partial<ExcelJS.Font>): number {
  const longestLine = Math.max(...text.split('\n').map((line) => line.length));
  return longestLine * (font?.bold === true ? 1.1 : 1) * ((font?.size ?? 11) / 11);
}

/** How a cell is aligned when it says nothing: numbers and dates right, text left (Excel's "general"). */
export function alignmentOf(cell: LayoutCell): 'left' | 'right' | 'center' {
  return cell.align ?? (typeof cell.value === 'number' || cell.value instanceof Date ? 'right' : 'left');
}

/** Whether a left-aligned cell follows a right-aligned one (then it is indented by one character). */
function indented(row: LayoutRow, column: number): boolean {
  const cell = row[column];
  const before = column > 0 ? row[column - 1] : null;
  return cell !== null && cell !== undefined && before !== null && before !== undefined && (before.span ?? 1) === 1 && alignmentOf(cell) === 'left' && alignmentOf(before) === 'right';
}

/** The width a cell needs (characters) to show on one line. */
function needed(row: LayoutRow, column: number): number {
  const cell = row[column]!;
  return textWidth(cell.text, cell.font) + PADDING + (indented(row, column) ? 1 : 0);
}

/**
 * Column widths from the content: each column as wide as its widest single-column cell, within
 * its limits (a wider text then wraps). Merged cells do not widen columns: they wrap.
 */
export function columnWidths(rows: readonly LayoutRow[], limits: ColumnLimits): number[] {
  const widths = limits.min.map((min) => min);
  for (const row of rows) {
    row.forEach((cell, column) => {
      if (cell === null || (cell.span ?? 1) > 1) return;
      widths[column] = Math.max(widths[column]!, Math.min(limits.max[column]!, Math.ceil(needed(row, column))));
    });
  }
  const total = widths.reduce((sum, width) => sum + width, 0);
  if (total < (limits.totalMin ?? 0)) widths[widths.length - 1]! += Math.ceil((limits.totalMin ?? 0) - total);
  return widths;
}

/** The lines a text takes when wrapped at word boundaries into `width` characters. */
export function wrappedLines(text: string, width: number, font?: Partial<ExcelJS.Font>): number {
  const factor = textWidth('x', font);
  const perLine = Math.max(1, Math.floor((width - PADDING) / factor));
  let lines = 0;
  for (const paragraph of text.split('\n')) {
    let used = 0;
    lines++;
    for (const word of paragraph.split(' ')) {
      // A word longer than a line is broken (Excel and LibreOffice break it too).
      const length = word.length;
      if (used === 0) used = length;
      else if (used + 1 + length <= perLine) used += 1 + length;
      else {
        lines++;
        used = length;
      }
      while (used > perLine) {
        lines++;
        used -= perLine;
      }
    }
  }
  return lines;
}

/**
 * Writes the rows (each committed) with their merges, wrapping, indents and heights. Returns the
 * number of rows written.
 */
export function writeLayout(sheet: ExcelJS.Worksheet, rows: readonly LayoutRow[], widths: readonly number[]): number {
  sheet.columns = widths.map((width) => ({ width: writtenWidth(width) }));
  rows.forEach((layout, index) => {
    const row = sheet.addRow(layout.map((cell) => cell?.value ?? null));
    let lines = 1;
    let lineHeight = LINE_POINTS;
    layout.forEach((cell, column) => {
      if (cell === null) return;
      const span = cell.span ?? 1;
      const available = widths.slice(column, column + span).reduce((sum, width) => sum + width, 0);
      const indent = indented(layout, column) ? 1 : 0;
      const wrap = typeof cell.value === 'string' && needed(layout, column) > available;
      const target = row.getCell(column + 1);
      if (cell.numFmt !== undefined) target.numFmt = cell.numFmt;
      if (cell.font !== undefined) target.font = cell.font;
      if (cell.fill !== undefined) target.fill = cell.fill;
      target.alignment = { horizontal: alignmentOf(cell), vertical: 'top', ...(indent > 0 ? { indent } : {}), ...(wrap ? { wrapText: true } : {}) };
      if (wrap) lines = Math.max(lines, wrappedLines(cell.text, available - indent, cell.font));
      lineHeight = Math.max(lineHeight, Math.ceil(LINE_POINTS * ((cell.font?.size ?? 11) / 11)));
      if (span > 1) sheet.mergeCells(index + 1, column + 1, index + 1, column + span);
    });
    // Neither Excel nor LibreOffice fits a merged cell's height to its text: it is set here.
    if (lines > 1 || lineHeight > LINE_POINTS) row.height = lines * lineHeight;
    row.commit();
  });
  return rows.length;
}

/**
 * How a number shows under an Excel format (for measuring): its integer digits with thousands
 * separators, then between the format's fixed and fixed + optional decimals. From the exact
 * decimal text, never through a JS number.
 */
export function formattedNumberText(exact: string, numFmt: string): string {
  const section = numFmt.split(';')[0]!;
  const decimals = /\.(0*)(#*)/.exec(section);
  const [fixed, optional] = decimals === null ? [0, 0] : [decimals[1]!.length, decimals[2]!.length];
  const negative = exact.startsWith('-');
  const [whole = '0', fraction = ''] = exact.replace(/^-/, '').split('.');
  const grouped = section.includes(',') ? whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',') : whole;
  const shown = fraction.replace(/0+$/, '').slice(0, fixed + optional).padEnd(fixed, '0');
  return `${negative ? '-' : ''}${grouped}${shown === '' ? '' : `.${shown}`}`;
}
