/**
 * RFC 4180 text as rows of fields: CRLF line ends, quoted fields may hold commas and doubled
 * quotes (the files exledger writes hold no line break inside a field). Blank lines are skipped.
 */
export function parseCsv(text: string): string[][] {
  return text
    .split('\r\n')
    .filter((line) => line !== '')
    .map((line) => {
      const fields: string[] = [];
      let field = '';
      let quoted = false;
      for (let index = 0; index < line.length; index++) {
        const char = line[index]!;
        if (quoted && char === '"' && line[index + 1] === '"') {
          field += '"';
          index++;
        } else if (char === '"') quoted = !quoted;
        else if (char === ',' && !quoted) {
          fields.push(field);
          field = '';
        } else field += char;
      }
      fields.push(field);
      return fields;
    });
}
