import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listJob } from '../src/jobs/list-job.ts';
import type { Database } from '../src/store/database.ts';
import { buildAll, insertHistory, openModelDb, queryRows, spotFill } from './support/model-db.ts';

/**
 * A model declared `materialized: 'view'` (marts.spot_lot_matches): created as a view, left as it
 * is by a night, which hands on what its inputs changed as its own changes; a database that still
 * has its table (built before it became a view) gets the view, with the same rows.
 */

const COST_METHODS = ['fifo', 'lifo', 'hifo', 'uk'] as const;
const LOTS = 'marts.spot_lot_matches';
const ROWS = `SELECT * FROM ${LOTS} ORDER BY ALL`;

let db: Database;
beforeAll(async () => {
  db = await openModelDb();
  await insertHistory(db, 'spot_fills', [
    spotFill('BTCUSDT_SPBL', '1', '2026-03-01T10:00:00.000Z', 'buy', '1.0', '60000'),
    spotFill('BTCUSDT_SPBL', '2', '2026-03-02T10:00:00.000Z', 'buy', '0.5', '62000'),
    spotFill('BTCUSDT_SPBL', '3', '2026-03-03T10:00:00.000Z', 'sell', '0.8', '65000'),
  ]);
});
afterAll(() => db.close());

async function kind(): Promise<string | undefined> {
  const [row] = await queryRows<{ table_type: string }>(db, "SELECT table_type FROM information_schema.tables WHERE table_schema = 'marts' AND table_name = 'spot_lot_matches'");
  return row?.table_type;
}

describe("a model kept as a view (materialized: 'view')", () => {
  it('is listed and built as a view, its rows computed when read', async () => {
    expect(listJob({ select: [LOTS] }).models.map((model) => model.materialization)).toEqual(['view']);
    const results = await buildAll(db, { costMethods: [...COST_METHODS] });
    const built = results.find((result) => result.id === LOTS)!;
    expect(built).toMatchObject({ materialization: 'view', status: 'ok', how: 'whole' });
    // A view's rows are not counted by the build (a count would compute every row).
    expect(built.rows).toBeUndefined();
    expect(await kind()).toBe('VIEW');
    // fifo: the sell takes 0.8 of the first lot; lifo and hifo 0.5 of the second and 0.3 of the first.
    const sold = await queryRows(db, `SELECT cost_method, buy_fill_id, CAST(quantity AS VARCHAR) AS quantity FROM ${LOTS} ORDER BY ALL`);
    expect(sold.filter((row) => row.cost_method === 'fifo')).toEqual([{ cost_method: 'fifo', buy_fill_id: '1', quantity: '0.800000000000000000' }]);
    expect(sold.filter((row) => row.cost_method === 'lifo')).toEqual([
      { cost_method: 'lifo', buy_fill_id: '1', quantity: '0.300000000000000000' },
      { cost_method: 'lifo', buy_fill_id: '2', quantity: '0.500000000000000000' },
    ]);
  });

  it('a night leaves the view as it is and hands on what its inputs changed, as its own change', async () => {
    const before = await queryRows(db, "SELECT sql FROM duckdb_views() WHERE schema_name = 'marts' AND view_name = 'spot_lot_matches'");
    await insertHistory(db, 'spot_fills', [spotFill('BTCUSDT_SPBL', '4', '2026-03-04T10:00:00.000Z', 'sell', '0.2', '66000')]);
    const results = await buildAll(db, { costMethods: [...COST_METHODS] });
    expect(results.find((result) => result.id === LOTS)).toMatchObject({ status: 'ok', how: 'incremental' });
    expect(await queryRows(db, "SELECT sql FROM duckdb_views() WHERE schema_name = 'marts' AND view_name = 'spot_lot_matches'")).toEqual(before);
    // The night's sell is there (read live), and the change recorded is the segments' (from the new sell on), not "everything".
    expect(await queryRows(db, `SELECT DISTINCT cost_method FROM ${LOTS} WHERE sell_fill_id = '4' ORDER BY ALL`)).toEqual(COST_METHODS.map((method) => ({ cost_method: method })).sort((a, b) => a.cost_method.localeCompare(b.cost_method)));
    const recorded = await queryRows(
      db,
      `SELECT account, symbol, strftime(from_at AT TIME ZONE 'UTC', '%Y-%m-%d %H:%M') AS from_at FROM settings.model_changes
       WHERE model = '${LOTS}' AND change_seq = (SELECT max(change_seq) FROM settings.model_changes WHERE model = '${LOTS}')`,
    );
    expect(recorded).toEqual([{ account: 'main', symbol: 'BTCUSDT_SPBL', from_at: '2026-03-04 10:00' }]);
    // Nothing new: unchanged.
    const again = await buildAll(db, { costMethods: [...COST_METHODS] });
    expect(again.find((result) => result.id === LOTS)).toMatchObject({ status: 'ok', how: 'unchanged' });
  });

  it('replaces the table of a database built before it became a view, with the same rows', async () => {
    const rows = await queryRows(db, ROWS);
    // The database as the build before left it: a table by that name, of those rows.
    await db.run(`CREATE TABLE marts.lots_then AS SELECT * FROM ${LOTS}; DROP VIEW ${LOTS}; ALTER TABLE marts.lots_then RENAME TO spot_lot_matches`);
    expect(await kind()).toBe('BASE TABLE');
    const results = await buildAll(db, { costMethods: [...COST_METHODS] });
    expect(results.find((result) => result.id === LOTS)).toMatchObject({ status: 'ok', how: 'whole', why: 'it is now kept as a view' });
    expect(await kind()).toBe('VIEW');
    expect(await queryRows(db, ROWS)).toEqual(rows);
  });
});
