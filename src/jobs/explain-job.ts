import { existsSync } from 'node:fs';
import path from 'node:path';
import { lotsTaken, type CoinEvent } from '../books/coin-lots.ts';
import type { Config } from '../config/config.ts';
import MARTS_DECLARATIONS from '../../sql/marts/_models.ts';
import { ConfigError } from '../errors.ts';
import type { CostMethod } from '../models/settings.ts';
import { unitsText } from '../export/ledger-rounding.ts';
import { Database } from '../store/database.ts';
import { isPublishedPath, publishedPath } from '../store/publish.ts';
import { explainSummary, type SummaryExplanation } from './explain-summary.ts';
import { MART_SOURCES } from './mart-sources.ts';

/**
 * `exledger explain REFERENCE`: from a figure to its sources (docs/workbooks.md "From a figure to
 * its sources"), on the published copy (read-only, as `exledger sql`). A reference is a journal
 * entry (its `entry_id`: the CSV's reference, the Reference column of the journal workbook), a
 * roll-forward row (`holdings/<account>/<coin>/<cost method>/<YYYY-MM>`) or another mart's row (its
 * `reference` column, `<mart>/<key values>`: sql/macros/references.sql; its sources: mart-sources.ts).
 */
export const REFERENCE_FORMS =
  `a journal entry (spot/<account>/<fill id>, bill/<account>/<bill id>, futures/<account>/<contract>/<day>, funding/…, commission/…, opening/…, remeasurement/…, position/…, adjustment/…, summary/<account>/<kind>/<YYYY-MM-DD>/<coin> with models.journal.posting summary: the Reference column of the journal), a roll-forward row (holdings/<account>/<coin>/<cost method>/<YYYY-MM>) or a mart row (its reference column, <mart>/<key values>, the Reference column of the workbooks: ${Object.keys(MART_SOURCES).join(', ')})`;

type Row = Record<string, string | boolean | null>;

/** One leg of the entry, with the lots a disposal took. */
export interface ExplainedLeg {
  leg: Row;
  lots: Row[];
}

/** A figure of a mart row and the exact sum of its sources' column (DECIMAL in DuckDB; `count`: their number). */
export interface SourceTotal {
  figure: string;
  column: string;
  /** The row's figure, as the mart has it (null: unknown). */
  value: string | null;
  /** The sum over every source record (null: none, or one unknown). */
  total: string | null;
}

/** One kind of source record of a mart row: the first SOURCE_ROW_LIMIT of them, their count and sums. */
export interface ExplainedSource {
  title: string;
  model: string;
  /** Every record of the kind (rows lists the first SOURCE_ROW_LIMIT). */
  count: number;
  rows: Row[];
  totals: SourceTotal[];
}

/** Records listed per kind of source; the rest are counted ("and N more") and summed. */
export const SOURCE_ROW_LIMIT = 20;

export type Explanation =
  | { kind: 'entry'; reference: string; entry: Row; source: Row[]; legs: ExplainedLeg[]; lines: Row[] }
  | { kind: 'holding'; reference: string; row: Row; events: Row[] }
  | SummaryExplanation
  | { kind: 'mart'; reference: string; mart: string; row: Row; sources: ExplainedSource[] };

/** Resolves a reference on the published copy of the configured database. */
export async function explainJob(config: Readonly<Config>, reference: string): Promise<Explanation> {
  const published = path.resolve(isPublishedPath(config.db) ? config.db : publishedPath(config.db));
  if (!existsSync(published)) throw new ConfigError(published, 'no published copy of the database here', { hint: 'run `exledger run` first, which publishes it' });
  const db = await Database.open(published, { readOnly: true, memoryLimit: config.memoryLimit });
  try {
    return await explainReference(db, reference);
  } finally {
    db.close();
  }
}

/**
 * Resolves a reference on an open database (the published copy, or a test's). A reference not
 * found is looked for again without the spaces and line ends around it, which no reference has at
 * its ends but a copied one often does: a line of `exledger sql --csv` ends in CRLF (RFC 4180), and
 * a shell's `$(…)` keeps the CR; a cell copied from a workbook brings a line end.
 */
export async function explainReference(db: Database, reference: string): Promise<Explanation> {
  const trimmed = reference.trim();
  try {
    return await explainExactly(db, reference);
  } catch (error) {
    if (!(error instanceof ReferenceNotFound) || trimmed === reference || trimmed === '') throw error;
  }
  return await explainExactly(db, trimmed);
}

async function explainExactly(db: Database, reference: string): Promise<Explanation> {
  if (reference.startsWith('holdings/')) return await explainHolding(db, reference);
  if (reference.startsWith('summary/')) {
    const summary = await explainSummary(db, reference);
    if (summary === undefined) throw notFound(reference, 'a journal entry');
    return summary;
  }
  const mart = reference.slice(0, reference.indexOf('/'));
  if (Object.hasOwn(MART_SOURCES, mart)) return await explainMartRow(db, mart, reference);
  return await explainEntry(db, reference);
}

/** A mart row by its reference, and the source records of each kind its sources name. */
async function explainMartRow(db: Database, mart: string, reference: string): Promise<Explanation> {
  // mart is a key of MART_SOURCES (a fixed name), never text of the reference written into SQL.
  const narrowed = await keyConditions(db, mart, reference);
  const [row] = await db.all<Row>(`SELECT * FROM marts.${mart} WHERE reference = $1${narrowed.where}`, [reference, ...narrowed.values]);
  if (row === undefined) throw notFound(reference, `a row of marts.${mart}`);
  /** A value of the row as text; null where it is unknown. */
  const value = (column: string) => (row[column] === null || row[column] === undefined ? null : String(row[column]));
  const sources: ExplainedSource[] = [];
  for (const query of MART_SOURCES[mart]!) {
    const { sql, values } = narrowSource(query.sql, mart, reference, narrowed);
    // The row's instants as constants (SourceQuery.instants); an unknown one matches nothing, as its column would.
    for (const column of query.instants ?? []) await db.run(`SET VARIABLE explain_${column} = CAST($1 AS TIMESTAMPTZ)`, [value(column)]);
    const summed = query.sums.filter((sum) => sum.column !== 'count');
    const [totals] = await db.all<Record<string, string | null>>(
      `SELECT count(*) AS n${summed.map((sum, at) => `, CAST(sum(${sum.column}) AS VARCHAR) AS s${at}`).join('')} FROM (${sql})`,
      values,
    );
    const count = Number(totals?.n ?? 0);
    if (count === 0) continue;
    const rows = await db.all<Row>(`SELECT * FROM (${sql}) ORDER BY ${query.orderBy} LIMIT ${SOURCE_ROW_LIMIT}`, values);
    sources.push({
      title: query.title,
      model: query.model,
      count,
      rows,
      totals: query.sums.map((sum) => ({ figure: sum.figure, column: sum.column, value: value(sum.figure), total: sum.column === 'count' ? String(count) : (totals?.[`s${summed.indexOf(sum)}`] ?? null) })),
    });
  }
  return { kind: 'mart', reference, mart: `marts.${mart}`, row, sources };
}

/**
 * A source query (MART_SOURCES) whose mart row `m` is read as the row itself was found: by the
 * reference and the key conditions beside it, so that DuckDB skips the row groups they exclude
 * instead of comparing every row's reference (twice per kind of source: counted, then listed).
 * The reference alone still decides (`m.reference = $1` stays).
 */
export function narrowSource(sql: string, mart: string, reference: string, narrowed: { where: string; values: (string | null)[] }): { sql: string; values: (string | null)[] } {
  const from = `FROM marts.${mart} AS m`;
  if (narrowed.where === '' || !sql.includes(from)) return { sql, values: [reference] };
  return { sql: sql.replaceAll(from, `FROM (SELECT * FROM marts.${mart} WHERE reference = $1${narrowed.where}) AS m`), values: [reference, ...narrowed.values] };
}

/**
 * The row's text key columns compared with their values in the reference (sql/macros/references.sql:
 * `<mart>/<key values>` in the declared key's order, '%' and '/' escaped, NULL as nothing), beside
 * `reference = $1`, which alone decides: DuckDB skips the row groups whose ranges of those columns
 * cannot hold them, where the reference, different on every row, is read and compared row by row
 * (a lot match of marts.spot_lot_matches' 39.7M rows on the 10M benchmark history: 0.03 s, against
 * 0.5 s by the reference alone, 4.9 s with its column not yet in memory, on 2026-12-01's database;
 * 0.38 s against 0.50 s warm on 2026-12-02's, after nine nights, the difference not understood:
 * DuckDB keeps only a text column's first 8 characters as a row group's range, and the benchmark's
 * fill ids all begin 10000000; docs/benchmarks.md). Other key columns (days, months, instants) are
 * left to the reference.
 */
async function keyConditions(db: Database, mart: string, reference: string): Promise<{ where: string; values: (string | null)[] }> {
  const key = MARTS_DECLARATIONS.models.find((model) => model.name === mart)?.key ?? [];
  const parts = reference.split('/').slice(1);
  if (parts.length !== key.length) return { where: '', values: [] };
  const text = new Set(
    (
      await db.all<{ column_name: string }>(
        "SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = 'marts' AND table_name = $1 AND data_type = 'VARCHAR'",
        [mart],
      )
    ).map((column) => column.column_name),
  );
  let where = '';
  const values: (string | null)[] = [];
  key.forEach((column, at) => {
    if (!text.has(column)) return;
    const part = parts[at]!;
    if (part === '') {
      where += ` AND "${column}" IS NULL`;
      return;
    }
    values.push(part.replace(/%2F/g, '/').replace(/%25/g, '%'));
    where += ` AND "${column}" = $${values.length + 1}`;
  });
  return { where, values };
}

/** A reference that names nothing of the database (explainReference tries it again trimmed). */
class ReferenceNotFound extends ConfigError {}

/** The reference quoted with its control characters escaped (a CR, a tab), which a terminal would not show. */
const notFound = (reference: string, what: string) => new ReferenceNotFound('<reference>', `${JSON.stringify(reference)} is not ${what} of this database`, { hint: `give ${REFERENCE_FORMS}` });

async function journalMethod(db: Database): Promise<CostMethod> {
  const [row] = await db.all<{ cost_method: CostMethod }>('SELECT any_value(cost_method) AS cost_method FROM settings.journal');
  return row?.cost_method ?? 'fifo';
}

async function explainEntry(db: Database, reference: string): Promise<Explanation> {
  const [entry] = await db.all<Row>('SELECT * FROM marts.journal_sources WHERE entry_id = $1', [reference]);
  let lines = await db.all<Row>('SELECT line_no, ledger_account, coin, debit, credit, coin_amount, kind, adjusted_period, adjusted_entry_id FROM marts.journal_entries WHERE entry_id = $1 ORDER BY line_no', [reference]);
  // Posted summed (models.journal.posting summary): its own lines, and the summary entry they are in.
  const [summed] = entry === undefined || lines.length > 0 ? [] : await db.all<{ posted_entry_id: string }>("SELECT posted_entry_id(posting, $1, $2, $3, CAST($4 AS DATE), $5) AS posted_entry_id FROM settings.journal WHERE posting = 'summary'", [reference, String(entry.account), String(entry.kind), String(entry.entry_date).slice(0, 10), String(entry.coin)]);
  if (summed !== undefined) {
    lines = await db.all<Row>('SELECT line_no, ledger_account, coin, debit, credit, coin_amount, kind FROM marts.journal_lines_live WHERE entry_id = $1 ORDER BY line_no', [reference]);
    entry!.posted_entry_id = summed.posted_entry_id;
  }
  if (entry === undefined) {
    // An adjusting entry has no source record of its own: its lines name the entry it adjusts.
    if (lines.length > 0) return { kind: 'entry', reference, entry: { entry_id: reference, kind: 'adjustment', description: `adjusts ${String(lines[0]!.adjusted_entry_id)} of ${String(lines[0]!.adjusted_period)}` }, source: [], legs: [], lines };
    throw notFound(reference, 'a journal entry');
  }
  const source = await sourceRows(db, String(entry.source_model), String(entry.source_key));
  const method = await journalMethod(db);
  const legs = await db.all<Row>(
    `SELECT e.pool, e.coin, e.event_seq, e.leg, e.kind, e.direction, exact_qty(e.units_e18) AS units, exact_money(e.value_e12) AS value, e.value_basis,
            e.value_coin, e.value_price, e.value_price_source, e.counterpart, e.transfer_ref,
            exact_money(l.cost_e12) AS cost, l.cost_known, exact_money(l.proceeds_e12) AS proceeds, exact_money(l.gain_e12) AS gain, exact_qty(l.unmatched_e18) AS unmatched
     FROM intermediate.int_coin_events AS e
     JOIN intermediate.int_coin_lots AS l USING (pool, coin, event_seq)
     WHERE e.entry_ref = $1 AND l.cost_method = $2 ORDER BY e.leg`,
    [reference, method],
  );
  const explained: ExplainedLeg[] = [];
  for (const leg of legs) explained.push({ leg, lots: leg.direction === 'out' ? await lotsOf(db, method, String(leg.pool), String(leg.coin), BigInt(String(leg.event_seq)), leg.cost_known === true) : [] });
  return { kind: 'entry', reference, entry, source, legs: explained, lines };
}

/** The source record(s) a source_key names (`col=value; col=value`, NULL for a null value). */
async function sourceRows(db: Database, model: string, key: string): Promise<Row[]> {
  if (!/^[a-z_]+\.[a-z_]+$/.test(model)) return [];
  const pairs = key.split('; ').map((pair) => {
    const at = pair.indexOf('=');
    return [pair.slice(0, at), pair.slice(at + 1)] as const;
  });
  if (pairs.some(([column]) => !/^[a-z_][a-z0-9_]*$/.test(column))) return [];
  // Instants in keys are written 2026-10-03T08:00:00.000Z: compared as such; other values as text.
  const values: string[] = [];
  const where = pairs.map(([column, value]) => {
    if (value === 'NULL') return `${column} IS NULL`;
    values.push(value);
    return `${column.endsWith('_at') ? `strftime(${column}, '%Y-%m-%dT%H:%M:%S.%gZ')` : `CAST(${column} AS VARCHAR)`} = $${values.length}`;
  });
  try {
    return await db.all<Row>(`SELECT * FROM ${model} WHERE ${where.join(' AND ')} LIMIT 20`, values);
  } catch {
    return [];
  }
}

/** The lots a disposal took: matched again on its pool and coin, as int_coin_lots matched them. */
async function lotsOf(db: Database, method: CostMethod, pool: string, coin: string, seq: bigint, costKnown: boolean): Promise<Row[]> {
  // Read as a stream up to the disposal (uk looks 30 days ahead for its matches: read on until
  // then), never the pool's whole history at once.
  const events = async function* (): AsyncGenerator<CoinEvent[]> {
    const sql = `SELECT e.event_seq, datediff('day', DATE '1970-01-01', e.event_date) AS day, e.direction, e.units_e18, l.cost_e12
      FROM intermediate.int_coin_events AS e JOIN intermediate.int_coin_lots AS l USING (pool, coin, event_seq)
      WHERE e.pool = $1 AND e.coin = $2 AND l.cost_method = $3 AND (e.event_seq <= $4 OR l.cost_method = 'uk') ORDER BY e.event_seq`;
    for await (const rows of db.streamCommitted(sql, [pool, coin, method, seq])) {
      yield rows.map((row) => ({
        seq: row[0] as bigint,
        day: Number(row[1]),
        direction: row[2] === 'out' ? 'out' : 'in',
        units: row[3] as bigint,
        // A lot's cost as int_coin_lots has it (a carried deposit's resolved), a disposal's proceeds unused.
        value: row[2] === 'in' ? (row[4] as bigint | null) : null,
        basis: 'market',
      }));
    }
  };
  const segments = await lotsTaken(method, events(), seq);
  const lotSeqs = [...new Set(segments.flatMap((segment) => (segment.lotSeq === null ? [] : [segment.lotSeq])))];
  const lots = new Map(
    lotSeqs.length === 0
      ? []
      : (
          await db.all<{ event_seq: string; cost_e12: string | null; entry_ref: string; event_date: string }>(
            `SELECT e.event_seq, l.cost_e12, e.entry_ref, CAST(e.event_date AS VARCHAR) AS event_date
             FROM intermediate.int_coin_events AS e JOIN intermediate.int_coin_lots AS l USING (pool, coin, event_seq)
             WHERE e.pool = $1 AND e.coin = $2 AND l.cost_method = $3 AND e.event_seq IN (${lotSeqs.map(String).join(', ')})`,
            [pool, coin, method],
          )
        ).map((row) => [row.event_seq, row] as const),
  );
  const money = (value: bigint | null) => (value === null ? null : formatUnits(value, 12));
  return segments.map((segment) => {
    const lot = segment.lotSeq === null ? undefined : lots.get(String(segment.lotSeq));
    // A lot's share is known when the lot's cost is; a pool's when the disposal's whole cost is (a
    // pool holding a lot of unknown cost is unknown); units beyond what was held never.
    const known = segment.rule !== 'unmatched' && (segment.lotSeq === null ? costKnown : lot !== undefined && lot.cost_e12 !== null);
    return {
      rule: segment.rule,
      lot_entry: lot?.entry_ref ?? (segment.rule === 'unmatched' ? 'nothing held (before the history)' : method === 'average' ? 'the average pool' : 'the section 104 pool'),
      lot_date: lot?.event_date ?? null,
      units: formatUnits(segment.quantity, 18),
      cost: known ? money(segment.cost) : null,
    };
  });
}

/** Integer units of 10^-scale as a plain decimal without trailing zeros. */
const formatUnits = (value: bigint, scale: number): string => unitsText(value, scale).replace(/\.?0+$/, '');

async function explainHolding(db: Database, reference: string): Promise<Explanation> {
  const match = /^holdings\/(.+)\/([A-Z0-9]+)\/(fifo|average|lifo|hifo|uk)\/(\d{4}-\d{2})$/.exec(reference);
  if (match === null) throw notFound(reference, 'a roll-forward row');
  const [, account, coin, method, month] = match;
  const [row] = await db.all<Row>("SELECT * FROM marts.holdings_rollforward WHERE account = $1 AND coin = $2 AND cost_method = $3 AND strftime(period_month, '%Y-%m') = $4", [account!, coin!, method!, month!]);
  if (row === undefined) throw notFound(reference, 'a roll-forward row');
  const events = await db.all<Row>(
    `SELECT e.entry_ref, CAST(e.event_date AS VARCHAR) AS day, e.kind, e.direction, exact_qty(e.units_e18) AS units, exact_money(l.cost_e12) AS cost, l.cost_known,
            exact_money(l.proceeds_e12) AS proceeds, exact_money(l.gain_e12) AS gain
     FROM intermediate.int_coin_events AS e JOIN intermediate.int_coin_lots AS l USING (pool, coin, event_seq)
     WHERE e.pool = $1 AND e.coin = $2 AND l.cost_method = $3 AND strftime(e.event_date, '%Y-%m') = $4 ORDER BY e.event_seq`,
    [account!, coin!, method!, month!],
  );
  return { kind: 'holding', reference, row, events };
}
