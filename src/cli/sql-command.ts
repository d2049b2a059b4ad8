import { existsSync } from 'node:fs';
import { DuckDBTypeId, type DuckDBResultReader, type DuckDBType, type DuckDBValue } from '@duckdb/node-api';
import { ConfigError, QueryError } from '../errors.ts';
import { Database } from '../store/database.ts';
import { publishedPath } from '../store/publish.ts';
import { defineCommand } from './command.ts';
import { configFromArgs, withConfigOptions } from './config-options.ts';
import { EXIT } from './exit-codes.ts';

/** A query's result: column names and types, and its rows as DuckDB values. */
export interface QueryResult {
  columns: string[];
  types: DuckDBType[];
  reader: DuckDBResultReader;
}

/**
 * Runs `sql` on `db`. Several statements run in order and the last one's result is returned
 * (so a temporary table then a query on it works); DuckDB's own multi-statement call returns the
 * first one's.
 */
export async function runQuery(db: Database, sql: string): Promise<QueryResult> {
  try {
    return await db.exclusive(async () => {
      const statements = await db.connection.extractStatements(sql).catch((error: unknown) => {
        // A query of only blanks, semicolons or comments has no statement; the client library
        // then fails without DuckDB's message.
        if (/^Failed to extract statements: \S/.test((error as Error)?.message ?? '')) throw error;
        throw new Error('the query holds no SQL statement', { cause: error });
      });
      for (let index = 0; index < statements.count - 1; index += 1) {
        // Prepared one at a time: a statement may read what the one before created.
        const prepared = await statements.prepare(index);
        try {
          await prepared.run();
        } finally {
          prepared.destroySync();
        }
      }
      const last = await statements.prepare(statements.count - 1);
      try {
        const reader = await last.runAndReadAll();
        return { columns: reader.columnNames(), types: reader.columnTypes(), reader };
      } finally {
        last.destroySync();
      }
    });
  } catch (error) {
    const message = duckdbMessage(error);
    if (/read-only mode/i.test(message)) {
      throw new QueryError(`the published copy is read-only: ${message}`, {
        hint: 'exledger sql only reads; temporary tables (CREATE TEMP TABLE) are allowed, and the database changes through exledger sync and build',
        cause: error,
      });
    }
    throw new QueryError(message, { cause: error });
  }
}

/**
 * DuckDB's message on one line: the text before its first blank line (it goes on with the
 * query and a caret under the error), lines joined, so "Did you mean …?" stays.
 */
function duckdbMessage(error: unknown): string {
  const text = (error as Error)?.message ?? String(error);
  return text
    .replace(/^Failed to extract statements: /, '')
    .split(/\n\s*\n/)[0]!
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .join(' ');
}

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
 * binary floats), times in UTC, lists and structs in DuckDB's notation. FLOAT gets the shortest
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
  return String(value);
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
  const count = `${rows.length} ${rows.length === 1 ? 'row' : 'rows'}`;
  if (result.columns.length === 0) return `${count}\n`;
  const widths = result.columns.map((name, column) => Math.max(name.length, ...rows.map((row) => row[column]!.length)));
  const right = result.types.map((type) => NUMERIC.has(type.typeId));
  const line = (cells: string[]) => cells.map((cell, column) => (right[column] ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!))).join('  ').trimEnd();
  return [line(result.columns), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line), count].join('\n') + '\n';
}

/**
 * RFC 4180: a header row, CRLF line ends, fields quoted when they hold a comma, a quote, CR or
 * LF (quotes doubled). As DuckDB's COPY writes it, SQL NULL is an empty field and an empty
 * string is `""`, so the two stay apart.
 */
export function formatCsv(result: QueryResult): string {
  const field = (cell: string | null) => (cell === null ? '' : cell === '' || /[",\r\n]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell);
  return [result.columns, ...textRows(result)].map((row) => row.map(field).join(',') + '\r\n').join('');
}

/**
 * A JSON array of row objects, one per line. Values are DuckDB's JSON conversion (the one
 * `Database.all` uses): DECIMAL, BIGINT, HUGEINT, UBIGINT and timestamps are exact strings,
 * never JavaScript numbers; 8 to 32-bit integers and DOUBLE are numbers (FLOAT with the digits
 * the table shows); NULL is null. Repeated column names are told apart as `name:1`, `name:2`.
 */
export function formatJson(result: QueryResult): string {
  const names = result.reader.deduplicatedColumnNames();
  const rows = result.reader.getRowsJson().map((row) =>
    Object.fromEntries(
      row.map((value, column) => [names[column]!, typeof value === 'number' && result.types[column]!.typeId === DuckDBTypeId.FLOAT ? Number(shortestFloat32(value)) : value]),
    ),
  );
  return rows.length === 0 ? '[]\n' : `[\n${rows.map((row) => JSON.stringify(row)).join(',\n')}\n]\n`;
}

/** Writes and waits until it is handed over, so `process.exit` after it cuts nothing off. */
function write(text: string): Promise<void> {
  return new Promise((resolve, reject) => process.stdout.write(text, (error) => (error ? reject(error) : resolve())));
}

/** `exledger sql "<query>"`. */
export const sqlCommand = defineCommand({
  command: 'sql <query>',
  describe: 'Run a query on the published (read-only) copy of the database and print the result',
  builder: (yargs) =>
    withConfigOptions(yargs)
      .positional('query', { type: 'string', demandOption: true, describe: 'SQL to run; several statements run in order and the last one is printed' })
      .option('csv', { type: 'boolean', describe: 'Print CSV (RFC 4180) instead of a table' })
      .option('json', { type: 'boolean', describe: 'Print a JSON array of row objects (exact numbers as strings)' })
      .conflicts('csv', 'json'),
  handler: async (args) => {
    const config = configFromArgs(args);
    const published = publishedPath(config.db);
    if (!existsSync(published)) {
      throw new ConfigError(published, 'no published copy of the database yet', { hint: 'run `exledger run` first, which publishes it' });
    }
    if (args.query.trim() === '') throw new ConfigError('<query>', 'is empty: give the SQL to run');
    // Read-only: the published copy is shared by every analyst and replaced by the nightly run.
    const db = await Database.open(published, { readOnly: true, memoryLimit: config.memoryLimit });
    try {
      const result = await runQuery(db, args.query);
      await write(args.csv ? formatCsv(result) : args.json ? formatJson(result) : formatTable(result));
      return EXIT.ok;
    } finally {
      db.close();
    }
  },
});
