/** The integer ranges DuckDB's BIGINT and HUGEINT hold, for tests of their ends. */
export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;
export const INT128_MIN = -(2n ** 127n);
export const INT128_MAX = 2n ** 127n - 1n;

/**
 * A value as an SQL literal of `type`, for the independent path of a test that compares what
 * DuckDB stores from it with what our code wrote or read (a TIMESTAMPTZ from its microseconds since
 * 1970, read in UTC: the session's TimeZone must be UTC).
 */
export function sqlLiteral(value: string | bigint | boolean | null, type: string): string {
  if (value === null) return `NULL::${type}`;
  if (typeof value === 'string') return `'${value.replaceAll("'", "''")}'`;
  if (type === 'TIMESTAMPTZ') return `make_timestamp((${value})::BIGINT)::TIMESTAMPTZ`;
  return `(${String(value)})::${type}`;
}
