import { explainJob, REFERENCE_FORMS, type ExplainedSource, type Explanation } from '../jobs/explain-job.ts';
import { defineCommand } from './command.ts';
import { configOverrides, withConfigOptions } from './config-options.ts';
import { EXIT } from './exit-codes.ts';
import { formatTextTable } from './text-table.ts';

type Row = Record<string, string | boolean | null>;

/** A decimal without its trailing zeros (12.500000 -> 12.5); other text as it is. */
const plain = (value: string) => (/^-?\d+\.\d+$/.test(value) ? value.replace(/\.?0+$/, '') : value);

/**
 * A table of rows, the columns named. NULL prints as "unknown" in a figure's column (a value the
 * data does not give, never 0), "-" elsewhere and where the figure does not apply (an acquisition
 * has no proceeds or gain).
 */
function table(rows: readonly Row[], columns: readonly string[], figures: readonly string[] = []): string[] {
  const cell = (row: Row, column: string) => {
    const value = row[column];
    const applies = !(row.direction === 'in' && (column === 'proceeds' || column === 'gain'));
    if (value === null || value === undefined) return figures.includes(column) && applies ? 'unknown' : '-';
    return plain(String(value));
  };
  return formatTextTable(columns, rows.map((row) => columns.map((column) => cell(row, column))), { indent: '  ', rule: true });
}

/** A source's sums against the row's figures: "fees_paid 1.5 = sum of fee" (or "count"), a difference shown as "≠". */
function totalsText(source: ExplainedSource): string {
  return source.totals
    .map((sum) => {
      const value = sum.value === null ? 'unknown' : plain(sum.value);
      const total = sum.total === null ? 'unknown' : plain(sum.total);
      return `${sum.figure} ${value} ${value === total ? '=' : '≠'} ${sum.column === 'count' ? 'their number' : `the sum of their ${sum.column}`}${value === total ? '' : ` ${total}`}`;
    })
    .join('; ');
}

/** A mart row and its sources, as the text a person reads. */
function formatMartRow(explanation: Extract<Explanation, { kind: 'mart' }>): string {
  const out = [`${explanation.reference}: a row of ${explanation.mart}`];
  for (const [column, value] of Object.entries(explanation.row)) if (column !== 'reference' && !column.startsWith('_')) out.push(`  ${column}: ${value === null ? 'unknown' : plain(String(value))}`);
  if (explanation.sources.length === 0) out.push('Sources: none found (a row carried forward, or of a month without records)');
  for (const source of explanation.sources) {
    out.push(`${source.count} ${source.title} (${source.model})${source.totals.length > 0 ? `: ${totalsText(source)}` : ''}`);
    const columns = Object.keys(source.rows[0] ?? {});
    out.push(...table(source.rows, columns, columns));
    if (source.count > source.rows.length) out.push(`  and ${source.count - source.rows.length} more (exledger sql to list them all)`);
  }
  return out.join('\n');
}

/** An explanation as the text a person reads. */
export function formatExplanation(explanation: Explanation): string {
  if (explanation.kind === 'mart') return formatMartRow(explanation);
  if (explanation.kind === 'holding') {
    const row = explanation.row;
    return [
      `${explanation.reference}: ${String(row.coin)} held by ${String(row.account)}, ${String(row.cost_method)}, ${String(row.period_month).slice(0, 7)} (marts.holdings_rollforward)`,
      ...table([row], ['opening_quantity', 'opening_carrying_value', 'acquisitions_cost', 'disposals_cost', 'realized_gain', 'remeasurement', 'closing_quantity', 'closing_carrying_value', 'fair_value'], ['acquisitions_cost', 'disposals_cost', 'realized_gain', 'remeasurement', 'fair_value']),
      `Its ${explanation.events.length} movement${explanation.events.length === 1 ? '' : 's'} (exledger explain <entry> for each):`,
      ...table(explanation.events, ['entry_ref', 'day', 'kind', 'direction', 'units', 'cost', 'proceeds', 'gain'], ['cost', 'proceeds', 'gain']),
    ].join('\n');
  }
  if (explanation.kind === 'summary') {
    const entry = explanation.entry;
    return [
      `${explanation.reference}: ${String(entry.description)} (${String(entry.entry_date)}, ${String(entry.kind)}, ${String(entry.posted_entries)} of ${String(entry.entries)} source records posted)`,
      'Journal lines (marts.journal_entries): the sums per ledger account and coin of the lines of the entries below',
      ...(explanation.lines.length === 0 ? ['  none: its entries\' lines sum to 0'] : table(explanation.lines, ['line_no', 'ledger_account', 'coin', 'debit', 'credit'])),
      `The ${explanation.entries.length} entr${explanation.entries.length === 1 ? 'y' : 'ies'} it sums (marts.journal_sources; exledger explain <entry_id> for each), amount: the entry's debits:`,
      ...table(explanation.entries, ['entry_id', 'status', 'amount', 'description'], ['amount']),
      'Their lines (marts.journal_lines_live):',
      ...table(explanation.entryLines, ['entry_id', 'line_no', 'ledger_account', 'coin', 'debit', 'credit']),
    ].join('\n');
  }
  const entry = explanation.entry;
  const out = [`${explanation.reference}: ${String(entry.description)} (${String(entry.entry_date ?? '').slice(0, 10)}, ${String(entry.kind)}, status ${String(entry.status ?? 'posted')})`];
  if (entry.source_model !== undefined) {
    out.push(`Source record: ${String(entry.source_model)} (${String(entry.source_key)})`);
    for (const record of explanation.source) {
      for (const [column, value] of Object.entries(record)) if (!column.startsWith('_') && value !== null) out.push(`  ${column}: ${String(value)}`);
    }
  }
  if (explanation.legs.length > 0) {
    out.push(`Legs (intermediate.int_coin_events, cost method ${String(entry.cost_method)}):`);
    out.push(...table(explanation.legs.map((leg) => leg.leg), ['leg', 'kind', 'direction', 'coin', 'units', 'value', 'value_basis', 'cost', 'proceeds', 'gain'], ['value', 'cost', 'proceeds', 'gain']));
    for (const { leg, lots } of explanation.legs) {
      if (lots.length === 0) continue;
      out.push(`Lots taken by leg ${String(leg.leg)} (${plain(String(leg.units))} ${String(leg.coin)} out):`);
      out.push(...table(lots, ['rule', 'lot_entry', 'lot_date', 'units', 'cost'], ['cost']));
    }
  }
  out.push(entry.posted_entry_id === undefined ? 'Journal lines (marts.journal_entries):' : `Journal lines (marts.journal_lines_live), posted summed in ${String(entry.posted_entry_id)}:`);
  out.push(...(explanation.lines.length === 0 ? ['  none: nothing of it could be valued (marts.needs_price lists the prices it needs)'] : table(explanation.lines, ['line_no', 'ledger_account', 'coin', 'debit', 'credit'])));
  return out.join('\n');
}

/** `exledger explain`. */
export const explainCommand = defineCommand({
  command: 'explain <reference>',
  describe: 'From a figure to its sources: a journal entry, a roll-forward row or a mart row, with its source records (a journal entry: its legs, the lots it took and its lines; a mart row: the fills, bills, records and lots it sums) (reads the published copy)',
  builder: (yargs) => withConfigOptions(yargs).positional('reference', { type: 'string', demandOption: true, describe: `What to explain: ${REFERENCE_FORMS}` }),
  config: (args) => configOverrides(args),
  handler: async (args, { config, output }) => {
    const explanation = await explainJob(config, String(args.reference));
    if (!output.options.json) output.summary(formatExplanation(explanation));
    return { exitCode: EXIT.ok, details: { explanation } };
  },
});
