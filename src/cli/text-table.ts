/** Options of formatTextTable. */
export interface TextTableOptions {
  /** Columns aligned right (numbers). @default none */
  alignRight?: readonly boolean[];
  /** A line of dashes under the header. @default false */
  rule?: boolean;
  /** Put before every line. @default '' */
  indent?: string;
}

/**
 * A plain aligned text table, one line per row, columns two spaces apart, trailing blanks
 * trimmed: what `exledger sql`, `status`, `sync` and `check` print. Widths are found in one pass
 * (no spread of a million rows into Math.max, which overflows the call stack).
 */
export function formatTextTable(header: readonly string[], rows: readonly (readonly string[])[], options: TextTableOptions = {}): string[] {
  const widths = header.map((title) => title.length);
  for (const row of rows) row.forEach((cell, column) => (widths[column] = Math.max(widths[column] ?? 0, cell.length)));
  const indent = options.indent ?? '';
  const line = (cells: readonly string[]) =>
    indent + cells.map((cell, column) => (options.alignRight?.[column] === true ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!))).join('  ').trimEnd();
  return [line(header), ...(options.rule === true ? [indent + widths.map((width) => '-'.repeat(width)).join('  ')] : []), ...rows.map(line)];
}
