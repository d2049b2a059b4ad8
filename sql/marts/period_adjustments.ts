// Prior-period adjustments (docs/workbooks.md "Closing a period"): for every mart a close freezes
// (its declaration's `closing`), per account, key, day or month of a closed period and measure,
// the difference between its figure now and its figure as closed (the rows frozen in closed.<mart>
// plus the adjustments already frozen by later closes, closed.period_adjustments), booked in the
// first open period (status pending), and the adjustments booked in closed periods, as their
// closes froze them (status closed). A key only one side has counts 0 on the other. A figure
// unknown now (NULL: e.g. its price is gone) makes the adjustment unknown (NULL), never 0; a
// figure unknown when closed was booked as nothing (the journal posts no line without a price):
// once known, all of it is the adjustment (as_closed shows it unknown). So, exactly, over any
// range of days, wherever the live figures are known:
//   frozen (unknown as 0) + every adjustment of its days + the open periods' live figures = live.
// Without a reporting currency, the measures valued in it are left out (nothing is valued).
// Key: (account, mart, key_json, adjusted_date, measure, booked_from). Inputs: the frozen marts,
// settings.closed_periods, closed.<mart>, closed.period_adjustments. Empty while no period is closed.
import { closingSpec, type ClosingSpec } from '../../src/models/declaration.ts';
import { declareProgramModel } from '../../src/models/program-model.ts';
import type { Database } from '../../src/store/database.ts';
import { hasClosedTable, periodAfter, readClosedPeriods } from '../../src/store/period-closes.ts';
import { postedLiveLines } from './_journal_columns.ts';
import MARTS from './_models.ts';

/** The columns of an adjustment as frozen (closed.period_adjustments), without its status (reference: none in a table frozen before rows had references, until the next close adds it). */
export const ADJUSTMENT_COLUMNS = 'account, mart, figure_key, key_json, adjusted_date, closed_period, measure, coin, as_closed, live, adjustment, booked_from, booked_period, reference';

/** The marts a close freezes, with how (their declarations' `closing`). */
export const CLOSING_SPECS: readonly ClosingSpec[] = MARTS.models.flatMap((model) => closingSpec(`marts.${model.name}`, model) ?? []);

/** A mart's closing without the measures valued in the reporting currency (none is set: they are all NULL). */
export function withoutValuation(spec: ClosingSpec): ClosingSpec {
  return { ...spec, measures: spec.measures.filter((measure) => spec.coinColumns.get(measure) !== 'reporting_currency') };
}

/** An amount as DECIMAL(38,18); NULL beyond its range (|x| >= 1e20: a spot PnL exact only in its mart). */
function decimal18(column: string): string {
  // The bound compared at a scale that holds it, whatever the column's own (DECIMAL(38,18) cannot).
  return `CASE WHEN abs(CAST(${column} AS DECIMAL(38, 2))) < CAST('100000000000000000000' AS DECIMAL(38, 2)) THEN CAST(${column} AS DECIMAL(38, 18)) END`;
}

/**
 * The columns of a mart's rows up to the last closed day, one row per measure (UNPIVOT keeps NULLs),
 * with each row's reference (`reference`: the mart's reference column, the journal's entry_id; NULL
 * where a table frozen before rows had references has none).
 */
function longRows(spec: ClosingSpec, relation: string, where: string, reference: string): string {
  const keyJson = spec.key.length === 0 ? "'{}'" : `CAST(json_object(${spec.key.map((column) => `'${column}', ${column}`).join(', ')}) AS VARCHAR)`;
  const keyText = spec.key.length === 0 ? "''" : `concat_ws('; ', ${spec.key.map((column) => `'${column}=' || coalesce(CAST(${column} AS VARCHAR), 'NULL')`).join(', ')})`;
  const coins = [...new Set([...spec.coinColumns.values()].filter((coin): coin is string => coin !== null))];
  const coin = `CASE measure ${spec.measures.map((measure) => `WHEN '${measure}' THEN ${spec.coinColumns.get(measure) === null ? 'CAST(NULL AS VARCHAR)' : `coin_${spec.coinColumns.get(measure)}`}`).join(' ')} END`;
  return `(SELECT account, key_json, figure_key, adjusted_date, measure, ${coin} AS coin, value, reference FROM (
      SELECT account, ${keyJson} AS key_json, ${keyText} AS figure_key, ${spec.period} AS adjusted_date, ${reference} AS reference,
        ${coins.map((column) => `CAST(${column} AS VARCHAR) AS coin_${column}`).join(', ')}${coins.length === 0 ? '' : ','}
        ${spec.measures.map((measure) => `${decimal18(measure)} AS ${measure}`).join(', ')}
      FROM ${relation} WHERE ${spec.period} <= CAST($1 AS DATE) AND (${where})
    ) UNPIVOT INCLUDE NULLS (value FOR measure IN (${spec.measures.join(', ')})))`;
}

/** The column holding a mart row's reference: `reference`, or the journal's entry_id (journal_sources, journal_entries). */
function referenceColumn(spec: ClosingSpec): string {
  const declared = MARTS.models.find((model) => `marts.${model.name}` === spec.mart);
  return declared?.columns.some((column) => column.name === 'reference') === true ? 'reference' : 'entry_id';
}

/**
 * The live rows of the journal: its lines now at the grain posted (models.journal.posting:
 * postedLiveLines), and an entry as closed one of whose source records was posted then and now
 * lacks a price, with unknown figures (never a reversal to 0).
 */
function journalLive(frozen: boolean, posting: string): string {
  const lines = `SELECT account, entry_id, ledger_account, entry_date, currency, net_amount FROM (${postedLiveLines(posting)})`;
  if (!frozen) return `(${lines})`;
  // A summary entry as closed is unknown when any record it summed is.
  const unpriced = posting === 'summary'
    ? `SELECT posted_entry_id('summary', s.entry_id, s.account, s.kind, s.entry_date, s.coin) AS entry_id FROM marts.journal_sources AS s
       INNER JOIN closed.journal_sources AS c ON c.entry_id = s.entry_id WHERE s.status = 'no_price' AND c.status IN ('posted', 'suspense')`
    : "SELECT entry_id FROM marts.journal_sources WHERE status = 'no_price'";
  return `(${lines}
    UNION ALL
    SELECT f.account, f.entry_id, f.ledger_account, f.entry_date, f.currency, CAST(NULL AS DECIMAL(38, 12))
    FROM closed.journal_entries AS f
    WHERE f.adjusted_entry_id IS NULL AND f.entry_id IN (${unpriced}))`;
}

/**
 * The adjustments of one mart, as rows of marts.period_adjustments ($1 last closed day, $2 first open
 * day, $3 its period's label). `posting`: the journal's grain (models.journal.posting).
 * `frozenReference`/`priorReference`: whether closed.<mart> and closed.period_adjustments have a
 * reference column (tables frozen before rows had references: not until the next close adds it).
 */
export function adjustmentsSql(spec: ClosingSpec, frozen: boolean, priorAdjustments: boolean, posting = 'detail', frozenReference = true, priorReference = true): string {
  const name = spec.mart.slice('marts.'.length);
  const live = spec.mart === 'marts.journal_entries' ? journalLive(frozen, posting) : spec.live;
  const reference = referenceColumn(spec);
  // The journal's adjusting lines are compared through closed.period_adjustments, not as lines of their own.
  const frozenWhere = spec.mart === 'marts.journal_entries' ? 'adjusted_entry_id IS NULL' : 'true';
  const sides = [
    `SELECT *, 'live' AS side FROM ${longRows(spec, live, 'true', reference)}`,
    ...(frozen ? [`SELECT *, 'closed' AS side FROM ${longRows(spec, `closed.${name}`, frozenWhere, frozenReference ? reference : 'CAST(NULL AS VARCHAR)')}`] : []),
    ...(priorAdjustments
      ? [`SELECT account, key_json, figure_key, adjusted_date, measure, coin, adjustment AS value, ${priorReference ? 'reference' : 'CAST(NULL AS VARCHAR)'}, 'closed' AS side FROM closed.period_adjustments WHERE mart = '${spec.mart}'`]
      : []),
  ];
  return `
    WITH sides AS (
      ${sides.join('\n      UNION ALL\n      ')}
    ),
    figures AS (
      SELECT account, key_json, adjusted_date, measure,
        arg_max(figure_key, side = 'live') AS figure_key,
        arg_max(coin, side = 'live') AS coin,
        -- The figure's reference as its row has it now, else as frozen.
        coalesce(max(reference) FILTER (WHERE side = 'live'), max(reference)) AS reference,
        CASE WHEN bool_or(side = 'live' AND value IS NULL) THEN NULL ELSE coalesce(sum(value) FILTER (WHERE side = 'live'), 0) END AS live,
        -- What was booked: an unknown figure was booked as nothing (the journal posts no line without a price).
        coalesce(sum(value) FILTER (WHERE side = 'closed'), 0) AS booked,
        bool_or(side = 'closed' AND value IS NULL) AND sum(value) FILTER (WHERE side = 'closed') IS NULL AS closed_unknown
      FROM sides
      GROUP BY account, key_json, adjusted_date, measure
    )
    SELECT
      f.account, '${spec.mart}' AS mart, f.figure_key, f.key_json, f.adjusted_date,
      (SELECT period_label FROM settings.closed_periods AS c WHERE c.period_to >= f.adjusted_date ORDER BY c.period_to LIMIT 1) AS closed_period,
      f.measure, f.coin,
      CASE WHEN f.closed_unknown THEN NULL ELSE f.booked END AS as_closed,
      f.live,
      f.live - f.booked AS adjustment,
      CAST($2 AS DATE) AS booked_from, $3 AS booked_period, 'pending' AS status, f.reference
    FROM figures AS f
    -- A change, or a figure unknown now that was known (or absent) when closed; unknown then and now is no news.
    WHERE f.live - f.booked <> 0 OR (f.live IS NULL AND NOT f.closed_unknown)`;
}

export default declareProgramModel({
  name: 'period_adjustments',
  layer: 'marts',
  references: [...new Set([...CLOSING_SPECS.map((spec) => spec.live), ...CLOSING_SPECS.map((spec) => spec.mart).filter((mart) => mart !== 'marts.journal_entries'), 'marts.journal_sources'])],
  columns: `account VARCHAR NOT NULL, mart VARCHAR NOT NULL, figure_key VARCHAR NOT NULL, key_json VARCHAR NOT NULL, adjusted_date DATE NOT NULL, closed_period VARCHAR NOT NULL,
    measure VARCHAR NOT NULL, coin VARCHAR, as_closed DECIMAL(38, 18), live DECIMAL(38, 18), adjustment DECIMAL(38, 18), booked_from DATE NOT NULL, booked_period VARCHAR NOT NULL,
    status VARCHAR NOT NULL, reference VARCHAR`,
  async build(db: Database): Promise<void> {
    // settings.closed_periods: the closes in force (written by exledger close and reopen).
    const closes = await readClosedPeriods(db);
    const latest = closes.at(-1);
    if (latest === undefined) return;
    const booked = periodAfter(latest.kind, latest.to);
    const prior = await hasClosedTable(db, 'period_adjustments');
    const priorReference = prior && (await hasClosedColumn(db, 'period_adjustments', 'reference'));
    const [reporting] = await db.all<{ reporting_currency: string | null }>('SELECT reporting_currency FROM settings.reporting');
    // settings.journal: the grain the journal posts at, that of its lines as closed (the build refuses another while periods are closed).
    const [journal] = await db.all<{ posting: string }>('SELECT any_value(posting) AS posting FROM settings.journal');
    for (const declared of CLOSING_SPECS) {
      const spec = reporting?.reporting_currency === null || reporting === undefined ? withoutValuation(declared) : declared;
      if (spec.measures.length === 0) continue;
      const name = spec.mart.slice('marts.'.length);
      const frozen = await hasClosedTable(db, name);
      const frozenReference = frozen && (await hasClosedColumn(db, name, referenceColumn(spec)));
      await db.run(`INSERT INTO marts.period_adjustments ${adjustmentsSql(spec, frozen, prior, journal?.posting ?? 'detail', frozenReference, priorReference)}`, [latest.to, booked.from, booked.label]);
    }
    // The adjustments booked in closed periods, as those closes froze them.
    const columns = priorReference ? ADJUSTMENT_COLUMNS : ADJUSTMENT_COLUMNS.replace(/reference$/, 'CAST(NULL AS VARCHAR) AS reference');
    if (prior) await db.run(`INSERT INTO marts.period_adjustments BY NAME SELECT ${columns}, 'closed' AS status FROM closed.period_adjustments`);
  },
});

/** Whether closed.<name> has the column (a table frozen before the column existed has not). */
async function hasClosedColumn(db: Database, name: string, column: string): Promise<boolean> {
  return (await db.all("SELECT 1 FROM information_schema.columns WHERE table_catalog = current_database() AND table_schema = 'closed' AND table_name = $1 AND column_name = $2", [name, column])).length > 0;
}
