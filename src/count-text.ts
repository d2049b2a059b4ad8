/**
 * How exledger prints a count, in every command's output, log and summary: digits grouped by
 * thousands (`2,205`, never `2205` beside `2,205`), and the noun singular for exactly one
 * (`1 row`, `0 rows`, `2,205 rows`).
 */

const GROUPED = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** A whole number with thousands separators: `2205` → `2,205`. */
export function formatCount(value: number | bigint): string {
  return GROUPED.format(value);
}

/** A count and what it counts: `countOf(1, 'row')` → `1 row`, `countOf(2205, 'row')` → `2,205 rows`. */
export function countOf(value: number | bigint, singular: string, plural = `${singular}s`): string {
  return `${formatCount(value)} ${value === 1 || value === 1n ? singular : plural}`;
}
