import { DuckDBTypeId, type DuckDBType, type DuckDBValue } from '@duckdb/node-api';
import { countOf } from '../count-text.ts';
import { ConfigError } from '../errors.ts';
import { queryJob } from '../jobs/query-job.ts';
import type { QueryResult } from '../store/query.ts';
import { defineCommand } from './command.ts';
import { configOverrides, withConfigOptions } from './config-options.ts';
import { EXIT } from './exit-codes.ts';
import { formatTextTable } from './text-table.ts';
import { isoInstant } from './time-text.ts';

const NUMERIC = new Set<DuckDBTypeId>([
  DuckDBTypeId.TINYINT,
  DuckDBTypeId.SMALLINT,
  DuckDBTypeId.INTEGER,
  DuckDBTypeId.BIGINT,
  DuckDBTypeId.HUGEINT,
  DuckDBTypeId.UTINYINT,
  DuckDBTypeId.USMALLINT,
  DuckDBTypeId.UINTEGER,
  DuckDBTypeId.UBIGINT,
  DuckDBTypeId.UHUGEINT,
  DuckDBTypeId.BIGNUM,
  DuckDBTypeId.DECIMAL,
  DuckDBTypeId.FLOAT,
  DuckDBTypeId.DOUBLE,
]);

/**
 * A value as text, as DuckDB prints it: DECIMAL, BIGINT, HUGEINT and the other 64/128-bit
 * integers exactly (the client library gives them as bigint or exact decimal values, never
 * binary floats), instants (TIMESTAMPTZ) in ISO 8601 UTC (`2026-11-23T07:44:37.78Z`), lists and structs in DuckDB's notation. FLOAT gets the shortest
 * digits that read back to the same 32-bit value (`0.1`, not its widened double); DOUBLE the
 * shortest that read back to the same double (JavaScript's spelling: `1e-7` where DuckDB writes
 * `1e-07`). Null for SQL NULL.
 */
export function formatValue(value: DuckDBValue, type: DuckDBType): string | null {
  if (value === null) return null;
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return 'nan';
    if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
    return type.typeId === DuckDBTypeId.FLOAT ? shortestFloat32(value) : String(value);
  }
  return type.typeId === DuckDBTypeId.TIMESTAMP_TZ ? isoInstant(String(value)) : String(value);
}

function shortestFloat32(value: number): string {
  for (let digits = 1; digits < 9; digits += 1) {
    const candidate = Number(value.toPrecision(digits));
    if (Math.fround(candidate) === value) return String(candidate);
  }
  return String(value);
}

/** Rows of text cells, null for SQL NULL. */
function textRows(result: QueryResult): (string | null)[][] {
  return result.reader.getRows().map((row) => row.map((value, column) => formatValue(value, result.types[column]!)));
}

/**
 * A plain aligned table: header, a line of dashes, the rows, then `N rows`. Numbers are aligned
 * right. SQL NULL prints as `NULL` (an empty string prints as nothing); line breaks and tabs in
 * text print as `\n`, `\r`, `\t` so a row stays one line.
 */
export function formatTable(result: QueryResult): string {
  const rows = textRows(result).map((row) => row.map((cell) => (cell === null ? 'NULL' : cell.replace(/\r/g, '\\r').replace(/\n/g, '\\n').replace(/\t/g, '\\t'))));
  const count = countOf(rows.length, 'row');
  if (result.columns.length === 0) return `${count}\n`;
  const table = formatTextTable(result.columns, rows, { alignRight: result.types.map((type) => NUMERIC.has(type.typeId)), rule: true });
  return [...table, count].join('\n') + '\n';
}

/** What a spreadsheet evaluates when a cell begins with it (OWASP "CSV injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * RFC 4180: a header row, CRLF line ends, fields quoted when they hold a comma, a quote, CR or
 * LF (quotes doubled). As DuckDB's COPY writes it, SQL NULL is an empty field and an empty
 * string is `""`, so the two stay apart.
 *
 * A text value that a spreadsheet would evaluate (beginning with `=`, `+`, `-`, `@`, a tab or a
 * CR: exchange text is not ours) gets a leading `'`, which spreadsheets show as text and do not
 * evaluate; numbers are never touched (`-0.5` stays a number). `raw` writes text exactly as
 * stored, for programs rather than spreadsheets (and `--json` is always exact).
 */
export function formatCsv(result: QueryResult, options: { raw?: boolean } = {}): string {
  const text = result.types.map((type) => !NUMERIC.has(type.typeId));
  const neutral = (cell: string | null, column: number) => (options.raw !== true && cell !== null && text[column] === true && FORMULA_START.test(cell) ? `'${cell}` : cell);
  const field = (cell: string | null) => (cell === null ? '' : cell === '' || /[",\r\n]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell);
  const rows = textRows(result).map((row) => row.map(neutral));
  return [result.columns, ...rows].map((row) => row.map(field).join(',') + '\r\n').join('');
}

/**
 * The rows as objects, for `--json`'s `rows`. Values are DuckDB's JSON conversion (the one
 * `Database.all` uses): DECIMAL, BIGINT, HUGEINT and UBIGINT are exact strings, never JavaScript
 * numbers; instants are ISO 8601 UTC strings; 8 to 32-bit integers and DOUBLE are numbers (FLOAT
 * with the digits the table shows); NULL is null. Repeated column names are told apart as
 * `name:1`, `name:2`.
 */
export function jsonRows(result: QueryResult): Record<string, unknown>[] {
  const names = result.reader.deduplicatedColumnNames();
  return result.reader.getRowsJson().map((row) =>
    Object.fromEntries(
      row.map((value, column) => {
        const typeId = result.types[column]!.typeId;
        if (typeof value === 'number' && typeId === DuckDBTypeId.FLOAT) return [names[column]!, Number(shortestFloat32(value))];
        return [names[column]!, typeof value === 'string' && typeId === DuckDBTypeId.TIMESTAMP_TZ ? isoInstant(value) : value];
      }),
    ),
  );
}

/** Writes and waits until it is handed over; a reader that went away (`| head -1`) ends the output quietly. */
function write(text: string): Promise<void> {
  return new Promise((resolve, reject) =>
    process.stdout.write(text, (error) => (error && (error as NodeJS.ErrnoException).code !== 'EPIPE' && (error as NodeJS.ErrnoException).code !== 'ERR_STREAM_DESTROYED' ? reject(error) : resolve())),
  );
}

/** The query from standard input (`exledger sql -`), whole. */
async function readStandardInput(): Promise<string> {
  if (process.stdin.isTTY === true) throw new ConfigError('<query>', '"-" reads the query from standard input, which is a terminal here', { hint: 'pipe the query in (exledger sql - < query.sql), or give it as an argument' });
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** `exledger sql "<query>"`. */
export const sqlCommand = defineCommand({
  command: 'sql <query>',
  describe: 'Run a query on the published (read-only) copy of the database and print the result (- reads the query from standard input)',
  builder: (yargs) =>
    withConfigOptions(yargs)
      .positional('query', { type: 'string', demandOption: true, describe: 'SQL to run, or - to read it from standard input; several statements run in order and the last one is printed' })
      .option('csv', { type: 'boolean', describe: "Print CSV (RFC 4180) instead of a table; text a spreadsheet would evaluate (=, +, -, @ first) gets a leading '" })
      .option('raw', { type: 'boolean', describe: 'With --csv: text exactly as stored, even text a spreadsheet would evaluate (for programs, not spreadsheets)' })
      .conflicts('csv', 'json')
      .implies('raw', 'csv'),
  config: (args) => configOverrides(args),
  handler: async (args, { config, output, argv }) => {
    // `-` reaches us as an empty string (yargs' reading of a lone dash): look at the command line.
    const fromStdin = args.query === '-' || (args.query === '' && argv.includes('-'));
    const sql = fromStdin ? await readStandardInput() : args.query;
    if (sql.trim() === '') throw new ConfigError('<query>', `is empty${fromStdin ? ' (nothing came on standard input)' : ''}: give the SQL to run`);
    const result = await queryJob(config, sql);
    if (output.options.json) {
      // The rows as the details of the one --json object; exact numbers as strings.
      return { exitCode: EXIT.ok, details: { columns: result.columns, types: result.types.map((type) => type.toString()), rows: jsonRows(result) } };
    }
    await write(args.csv === true ? formatCsv(result, { raw: args.raw }) : formatTable(result));
    return { exitCode: EXIT.ok, details: {} };
  },
});
