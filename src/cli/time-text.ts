/** DuckDB's text of a TIMESTAMPTZ in the session zone UTC: `2026-11-23 07:44:37.78+00`. */
const DUCKDB_UTC_INSTANT = /^(-?\d{4,}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(\.\d+)?\+00$/;

/**
 * An instant as every output shows it, ISO 8601 in UTC (`2026-11-23T07:44:37.78Z`), from
 * DuckDB's text of a TIMESTAMPTZ; the fraction keeps DuckDB's digits (microseconds, exactly).
 * Any other text is returned as it is.
 */
export function isoInstant(text: string): string {
  const match = DUCKDB_UTC_INSTANT.exec(text);
  return match === null ? text : `${match[1]}T${match[2]}${match[3] ?? ''}Z`;
}

/** A row's values with every DuckDB instant text made ISO 8601 (for rows read as JSON values). */
export function isoInstants(row: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(row).map(([name, value]) => [name, typeof value === 'string' ? isoInstant(value) : value]));
}
