import { QueryError } from '../errors.ts';
import type { Database } from './database.ts';
import type { DuckDBResultReader, DuckDBType } from '@duckdb/node-api';

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

