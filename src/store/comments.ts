import type { Database } from './database.ts';

/**
 * Descriptions of tables and columns, kept in the database itself as DuckDB comments (COMMENT ON,
 * read back by duckdb_tables() and duckdb_columns()), so that an analyst with only the published
 * copy finds what every table and column means. A column's comment is its description, then its
 * unit in brackets when it has one: `Fee paid [coin: fee_coin]` (see {@link columnComment}).
 */

/** One column's meaning. */
export interface ColumnDescription {
  name: string;
  description: string;
  /** What its values count or are measured in (`UTC`, `ms since 1970-01-01 UTC`, `coin: fee_coin`). @default none */
  unit?: string;
}

/** One table's meaning, and its columns'. */
export interface TableDescription {
  schema: string;
  table: string;
  description: string;
  columns: readonly ColumnDescription[];
}

/** The `account` column of the bookkeeping tables (meta, settings). */
export const ACCOUNT_COLUMN: ColumnDescription = { name: 'account', description: 'Account name of the configuration' };

/** The `model` column of the build's bookkeeping tables (settings). */
export const MODEL_COLUMN: ColumnDescription = { name: 'model', description: 'Model (<layer>.<name>)' };

/** A column's comment: `description [unit]`, or the description alone. */
export function columnComment(column: Pick<ColumnDescription, 'description' | 'unit'>): string {
  return column.unit === undefined ? column.description : `${column.description} [${column.unit}]`;
}

/** A column's comment read back into its description and unit (the inverse of {@link columnComment}). */
export function splitColumnComment(comment: string): { description: string; unit: string | null } {
  const match = /^([\s\S]*?) \[([^[\]]+)\]$/.exec(comment);
  return match === null ? { description: comment, unit: null } : { description: match[1]!, unit: match[2]! };
}

export function sqlString(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

const quoteIdentifier = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Writes the comments of these tables where the database does not have them already (a COMMENT
 * ON is a catalog change, committed and logged like any other: writing only what differs keeps an
 * open of an up-to-date database free of writes). Tables and columns the database does not have
 * are left out: a table is described once it exists.
 */
export async function writeComments(db: Database, tables: readonly TableDescription[]): Promise<void> {
  if (tables.length === 0) return;
  const schemas = [...new Set(tables.map((table) => table.schema))].map(sqlString).join(', ');
  const present = await db.all<{ schema: string; table: string; column: string | null; comment: string | null }>(
    `SELECT schema_name AS schema, table_name AS "table", NULL AS "column", comment FROM duckdb_tables() WHERE database_name = current_database() AND schema_name IN (${schemas})
     UNION ALL
     SELECT schema_name, table_name, column_name, comment FROM duckdb_columns() WHERE database_name = current_database() AND schema_name IN (${schemas})`,
  );
  const comments = new Map(present.map((row) => [`${row.schema}.${row.table}${row.column === null ? '' : `.${row.column}`}`, row.comment]));
  const statements: string[] = [];
  for (const table of tables) {
    const id = `${table.schema}.${table.table}`;
    if (!comments.has(id)) continue;
    const relation = `${quoteIdentifier(table.schema)}.${quoteIdentifier(table.table)}`;
    if (comments.get(id) !== table.description) statements.push(`COMMENT ON TABLE ${relation} IS ${sqlString(table.description)}`);
    for (const column of table.columns) {
      const key = `${id}.${column.name}`;
      const text = columnComment(column);
      if (comments.has(key) && comments.get(key) !== text) statements.push(`COMMENT ON COLUMN ${relation}.${quoteIdentifier(column.name)} IS ${sqlString(text)}`);
    }
  }
  if (statements.length > 0) await db.run(statements.join(';\n'));
}
