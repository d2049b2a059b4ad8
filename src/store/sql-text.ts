/** `"name"`: a name quoted for SQL (a table, schema or catalog). */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
