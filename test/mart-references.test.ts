import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { explainReference, narrowSource, SOURCE_ROW_LIMIT, type Explanation } from '../src/jobs/explain-job.ts';
import { MART_SOURCES } from '../src/jobs/mart-sources.ts';
import MARTS from '../sql/marts/_models.ts';
import { openDemoLikeDatabase, type DemoLikeDatabase } from './support/demo-like-db.ts';
import { add, cmp, parseDecimal, ZERO, type Rational } from './support/spot-reference.ts';
import { Database } from '../src/store/database.ts';

/** Marts whose rows have no `reference` column, and why (their key names the row as explain takes it). */
const WITHOUT_REFERENCE: Readonly<Record<string, string>> = {
  journal_entries: 'entry_id is the reference of its lines (the journal workbook\'s Reference column)',
  journal_lines_live: 'entry_id is the reference of its lines',
  journal_sources: 'entry_id is the reference of its source record',
};

/** Marts with a reference explained otherwise than by MART_SOURCES. */
const EXPLAINED_OTHERWISE: Readonly<Record<string, string>> = {
  holdings_rollforward: 'its movements (explain-job.ts explainHolding)',
  period_adjustments: 'its reference is the adjusted figure\'s: the row of the mart it names',
};

describe('every mart row a person traces carries a reference explain resolves', () => {
  it('every declared mart has a reference column, or is exempt with a reason; every one with a reference has its sources', () => {
    for (const model of MARTS.models) {
      const hasReference = model.columns.some((column) => column.name === 'reference');
      expect(hasReference || model.name in WITHOUT_REFERENCE, `marts.${model.name}: declare a reference column (sql/macros/references.sql) or exempt it here with a reason`).toBe(true);
      expect(hasReference && model.name in WITHOUT_REFERENCE, `marts.${model.name} has a reference: remove its exemption`).toBe(false);
      if (hasReference && !(model.name in EXPLAINED_OTHERWISE)) expect(Object.keys(MART_SOURCES), `marts.${model.name}: name its sources in src/jobs/mart-sources.ts`).toContain(model.name);
    }
    for (const mart of Object.keys(MART_SOURCES)) expect(MARTS.models.find((model) => model.name === mart)?.columns.some((column) => column.name === 'reference'), `MART_SOURCES.${mart}`).toBe(true);
  });

  it('every source query reads its mart row as `FROM marts.<mart> AS m`, which explain narrows to the row found by its key', () => {
    for (const [mart, queries] of Object.entries(MART_SOURCES)) {
      for (const query of queries) {
        expect(query.sql, `MART_SOURCES.${mart}: ${query.title}`).toContain(`FROM marts.${mart} AS m`);
        const narrowed = narrowSource(query.sql, mart, `${mart}/k`, { where: ' AND "account" = $2', values: ['main'] });
        expect(narrowed.sql).not.toContain(`FROM marts.${mart} AS m`);
        expect(narrowed.sql).toContain(`FROM (SELECT * FROM marts.${mart} WHERE reference = $1 AND "account" = $2) AS m`);
        expect(narrowed.values).toEqual([`${mart}/k`, 'main']);
      }
    }
    // No key condition (a reference of another shape): the query as it is, the reference alone.
    expect(narrowSource('SELECT 1 FROM marts.fees_daily AS m WHERE m.reference = $1', 'fees_daily', 'r', { where: '', values: [] })).toEqual({ sql: 'SELECT 1 FROM marts.fees_daily AS m WHERE m.reference = $1', values: ['r'] });
  });
});

describe("a reference's values (sql/macros/references.sql)", () => {
  it("write '%' as %25 and '/' as %2F, wherever they are and only them, and NULL as nothing", async () => {
    const db = await Database.open(':memory:', { bookkeeping: false });
    try {
      await db.run(readFileSync(new URL('../sql/macros/references.sql', import.meta.url), 'utf8'));
      const [row] = await db.all<Record<string, string>>(
        `SELECT ref_part('BTCUSDT_SPBL') AS plain, ref_part('a/b') AS slash, ref_part('50%') AS percent, ref_part('%2F/x%/') AS both,
                ref_part(NULL) AS missing, ref_part(1234567890123456789012) AS number, ref_part(DATE '2026-01-31') AS day`,
      );
      expect(row).toEqual({ plain: 'BTCUSDT_SPBL', slash: 'a%2Fb', percent: '50%25', both: '%252F%2Fx%25%2F', missing: '', number: '1234567890123456789012', day: '2026-01-31' });
    } finally {
      db.close();
    }
  });
});

describe('explain finds a row by its reference, reading only the row groups its key values can be in', () => {
  it("compares the reference's text key values, unescaped, and its empty ones as NULL: the row it names, and only that one", async () => {
    const db = await Database.open(':memory:', { bookkeeping: false });
    try {
      await db.run(readFileSync(new URL('../sql/macros/references.sql', import.meta.url), 'utf8'));
      // A lot match's key, the account holding both escaped characters; the two rows differ only in lot_account (one NULL).
      // (Their instants, which explain's source query joins the fills by, are unknown here: no fill is listed.)
      const key = MARTS.models.find((model) => model.name === 'spot_lot_matches')!.key;
      await db.run(`CREATE SCHEMA marts; CREATE SCHEMA staging;
        CREATE TABLE staging.spot_fills (account VARCHAR, symbol VARCHAR, fill_id VARCHAR, side VARCHAR, c_time_at TIMESTAMPTZ, fill_quantity DECIMAL(38, 18), fill_price DECIMAL(38, 18), fill_total_amount DECIMAL(38, 18), fees DECIMAL(38, 18), order_id VARCHAR);
        CREATE TABLE marts.spot_lot_matches AS
          SELECT *, CAST(NULL AS TIMESTAMPTZ) AS sell_at, CAST(NULL AS TIMESTAMPTZ) AS buy_at, 'spot_lot_matches/' || concat_ws('/', ${key.map((column) => `ref_part(${column})`).join(', ')}) AS reference
          FROM (VALUES ('a/b%2F', 'fifo', 'BTCUSDT_SPBL', '7', 'unmatched', NULL, NULL, 1), ('a/b%2F', 'fifo', 'BTCUSDT_SPBL', '7', 'unmatched', 'x', NULL, 2))
            AS t(${key.join(', ')}, n)`);
      const references = await db.all<{ reference: string; n: number }>('SELECT reference, n FROM marts.spot_lot_matches ORDER BY n');
      expect(references.map((row) => row.reference)).toEqual(['spot_lot_matches/a%2Fb%252F/fifo/BTCUSDT_SPBL/7/unmatched//', 'spot_lot_matches/a%2Fb%252F/fifo/BTCUSDT_SPBL/7/unmatched/x/']);
      for (const { reference, n } of references) {
        const explanation = await explainReference(db, reference);
        expect(explanation.kind === 'mart' && explanation.row).toMatchObject({ account: 'a/b%2F', n });
      }
      await expect(explainReference(db, 'spot_lot_matches/a%2Fb%2F/fifo/BTCUSDT_SPBL/7/unmatched//')).rejects.toThrow(/is not a row of marts\.spot_lot_matches/);
    } finally {
      db.close();
    }
  });
});

/** The decimal text of a value as DuckDB gives it, exact; null stays null. */
const exact = (value: string | boolean | null | undefined): Rational | null => (value === null || value === undefined ? null : parseDecimal(String(value)));

/** Rows to explain per mart: up to three of each kind (a product, funding or contract rows, a cost method, a lot source, a needing mart). */
const KIND: Readonly<Record<string, string>> = {
  fees_daily: 'product',
  fees_monthly: 'product',
  futures_pnl_daily: 'symbol IS NULL',
  futures_pnl_monthly: 'symbol IS NULL',
  spot_realized_pnl_daily: 'cost_method, quantity_sold > 0',
  spot_realized_pnl_monthly: 'cost_method',
  spot_lot_matches: 'lot_source',
  needs_price: 'mart',
};

describe('explain on a synced and built history: each mart row\'s sources add up to its figures', () => {
  let demo: DemoLikeDatabase;
  beforeAll(async () => {
    demo = await openDemoLikeDatabase();
  }, 300_000);
  afterAll(async () => demo?.close());

  for (const mart of Object.keys(MART_SOURCES)) {
    it(mart, async () => {
      const references = await demo.db.all<{ reference: string }>(
        `SELECT reference FROM marts.${mart} QUALIFY row_number() OVER (PARTITION BY ${KIND[mart] ?? '1'} ORDER BY hash(reference)) <= 3 ORDER BY reference`,
      );
      // balance_chain_breaks is empty on an unbroken chain: nothing to explain.
      if (mart !== 'balance_chain_breaks') expect(references.length, `marts.${mart} has rows`).toBeGreaterThan(0);
      let checked = 0;
      for (const { reference } of references) {
        const explanation: Explanation = await explainReference(demo.db, reference);
        expect(explanation.kind).toBe('mart');
        if (explanation.kind !== 'mart') continue;
        expect(explanation.row.reference).toBe(reference);
        for (const source of explanation.sources) {
          expect(source.rows.length).toBe(Math.min(source.count, SOURCE_ROW_LIMIT));
          for (const total of source.totals) {
            const where = `${reference}: ${total.figure} against ${source.title}`;
            if (total.column === 'count') {
              expect(total.value, where).toBe(String(source.count));
            } else if (total.value === null) {
              expect(total.total, where).toBeNull();
            } else {
              expect(cmp(exact(total.total) ?? ZERO, exact(total.value)!), `${where}: ${total.total} summed, ${total.value} in the mart`).toBe(0);
              // Summed again here, exactly, from the listed records when all are listed.
              if (source.count <= SOURCE_ROW_LIMIT) {
                const listed = source.rows.map((row) => exact(row[total.column])).filter((value): value is Rational => value !== null);
                expect(cmp(listed.reduce(add, ZERO), exact(total.value)!), where).toBe(0);
              }
            }
            checked += 1;
          }
        }
      }
      const sums = MART_SOURCES[mart]!.some((query) => query.sums.length > 0);
      if (sums && references.length > 0) expect(checked, `a figure of marts.${mart} checked against its sources`).toBeGreaterThan(0);
    }, 60_000);
  }
});
