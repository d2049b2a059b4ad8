/** `"name"`: a name quoted for SQL (a table, schema or catalog). */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * The statements of an SQL text, in order, each without its `;` (blank ones left out). A `;` ends
 * a statement only outside a string ('…', '' inside), a quoted name ("…") and a comment (-- to
 * the line's end, /* … *\/).
 */
export function splitStatements(sql: string): string[] {
  const statements: string[] = [];
  let start = 0;
  let i = 0;
  const skipPast = (end: string, from: number) => {
    const at = sql.indexOf(end, from);
    return at === -1 ? sql.length : at + end.length;
  };
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "'" || c === '"') {
      // A doubled quote inside is the quote itself: the string goes on after it.
      let j = i + 1;
      for (;;) {
        j = skipPast(c, j);
        if (sql[j] !== c) break;
        j += 1;
      }
      i = j;
    } else if (c === '-' && sql[i + 1] === '-') i = skipPast('\n', i + 2);
    else if (c === '/' && sql[i + 1] === '*') i = skipPast('*/', i + 2);
    else if (c === ';') {
      statements.push(sql.slice(start, i));
      i += 1;
      start = i;
    } else i += 1;
  }
  statements.push(sql.slice(start));
  // A statement of comments only is none. (Line by line: the pattern /^(?:--[^\n]*\n?\s*)+$/
  // backtracked exponentially in the comment lines before a statement, \n? and \s* both taking a
  // newline: 0.5 s for a test of 20 header lines, 85 s for one of 27.)
  return statements.map((statement) => statement.trim()).filter((statement) => statement !== '' && !statement.split('\n').every((line) => line.trim() === '' || line.trim().startsWith('--')));
}
