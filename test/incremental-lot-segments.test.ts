import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import INT_SPOT_LOT_SEGMENTS, { CHECKPOINT_LOTS_SQL, CHECKPOINTS_KEPT, lotState, RECENT_DAYS } from '../sql/intermediate/int_spot_lot_segments.ts';
import type { ModelSettings, Pooling } from '../src/models/settings.ts';
import type { Database } from '../src/store/database.ts';
import { buildAll, openModelDb, queryRows, spotFill } from './support/model-db.ts';
import { spotLedgerArbitrary, type SpotLedger } from './support/spot-reference.ts';

/**
 * The incremental step of intermediate.int_spot_lot_segments (lifo, hifo, uk), called as the
 * build will call it (docs/plans/incremental-builds.md, "The contract"): fills F1 built whole;
 * fills F2 inserted and int_spot_trades rebuilt; temp.main.model_pending set to what
 * int_spot_trades leaves its children (per pool and symbol touched by F2, the earliest F2 fill's
 * instant, NULL where that is not after the partition's first fill); the step run in a
 * transaction. Its table (and its checkpoints, settings.spot_lot_state) must then equal a whole
 * rebuild on F1 + F2, row for row and digit for digit, for every cost method and both poolings.
 */

/** uk counts the calendar days of the reporting zone. */
const TIME_ZONE = 'Europe/London';
const COST_METHODS = ['fifo', 'average', 'lifo', 'hifo', 'uk'] as const;
const UPSTREAM = ['+intermediate.int_spot_trades'];
const WHOLE = ['+intermediate.int_spot_lot_segments'];

let db: Database;
beforeAll(async () => {
  db = await openModelDb();
});
afterAll(() => db?.close());

/** A fill of one account: its raw record (spotFill's) and when it happened (ms). */
interface AccountFill {
  account: string;
  symbol: string;
  record: Record<string, string>;
}

const fillOf = (account: string, symbol: string, id: string, at: string, side: 'buy' | 'sell', quantity: string, price: string): AccountFill => ({
  account,
  symbol,
  record: spotFill(symbol, id, at, side, quantity, price) as Record<string, string>,
});

/** Fills into raw.spot_fills, in one statement. */
async function insertFills(fills: readonly AccountFill[]): Promise<void> {
  if (fills.length === 0) return;
  const rows: string[] = [];
  const values: string[] = [];
  for (const fill of fills) {
    const at = values.length;
    values.push(fill.account, `${fill.account}/${fill.symbol}/${fill.record.fillId}`, fill.record.cTime!, JSON.stringify(fill.record));
    rows.push(`($${at + 1}, '', $${at + 2}, CAST($${at + 3} AS BIGINT), CAST($${at + 4} AS JSON), 'test-run', now())`);
  }
  await db.run(`INSERT INTO raw.spot_fills VALUES ${rows.join(', ')}`, values);
}

interface PendingRow {
  account: string | null;
  symbol: string | null;
  /** ISO instant, or null: from the beginning. */
  fromAt: string | null;
}

const sqlText = (text: string | null) => (text === null ? 'NULL' : `'${text.replace(/'/g, "''")}'`);

/**
 * What int_spot_trades leaves for its children after F2: per pool and symbol touched by F2, the
 * earliest F2 fill's instant, NULL where that is not after the partition's first fill.
 */
async function pendingOf(f2: readonly AccountFill[], pooling: Pooling): Promise<PendingRow[]> {
  const earliest = new Map<string, { pool: string; symbol: string; ms: number }>();
  for (const fill of f2) {
    const pool = pooling === 'universal' ? '*' : fill.account;
    const ms = Number(fill.record.cTime);
    const key = `${pool}|${fill.symbol}`;
    if ((earliest.get(key)?.ms ?? Infinity) > ms) earliest.set(key, { pool, symbol: fill.symbol, ms });
  }
  if (earliest.size === 0) return [];
  const values = [...earliest.values()].map(({ pool, symbol, ms }) => `(${sqlText(pool)}, ${sqlText(symbol)}, make_timestamptz(${ms}::BIGINT * 1000))`).join(', ');
  return queryRows<PendingRow>(
    db,
    `SELECT c.account, c.symbol, CASE WHEN c.from_at > f.first_at THEN strftime(c.from_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%gZ') END AS "fromAt"
     FROM (VALUES ${values}) AS c (account, symbol, from_at)
     LEFT JOIN (SELECT pool, symbol, min(event_at) AS first_at FROM intermediate.int_spot_trades WHERE lot_source = 'fill' GROUP BY ALL) AS f
       ON f.pool = c.account AND f.symbol = c.symbol`,
  );
}

async function setPending(rows: readonly PendingRow[]): Promise<void> {
  await db.run('CREATE OR REPLACE TEMP TABLE model_pending (account VARCHAR, symbol VARCHAR, from_at TIMESTAMPTZ)');
  for (const row of rows) {
    await db.run(`INSERT INTO temp.main.model_pending VALUES (${sqlText(row.account)}, ${sqlText(row.symbol)}, ${row.fromAt === null ? 'NULL' : `CAST('${row.fromAt}' AS TIMESTAMPTZ)`})`);
  }
}

/** What the step leaves in model_pending for its children. */
const pendingLeft = () =>
  queryRows<PendingRow>(
    db,
    `SELECT account, symbol, strftime(from_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%SZ') AS "fromAt", strftime(to_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%SZ') AS "toAt" FROM temp.main.model_pending ORDER BY account, symbol, from_at NULLS FIRST`,
  );

/** Inserts F2, rebuilds int_spot_trades, hands the step `pending` (by default what int_spot_trades leaves) and runs it. */
async function runIncremental(settings: Partial<ModelSettings>, f2: readonly AccountFill[], pending?: (exact: PendingRow[]) => PendingRow[]): Promise<void> {
  await insertFills(f2);
  await buildAll(db, settings, { select: UPSTREAM });
  const exact = await pendingOf(f2, settings.pooling ?? 'account');
  await setPending(pending === undefined ? exact : pending(exact));
  await db.run('CREATE OR REPLACE TEMP TABLE segments_before AS SELECT * FROM intermediate.int_spot_lot_segments');
  await db.transaction(() => INT_SPOT_LOT_SEGMENTS.incremental!(db));
}

/**
 * The segments the step added or removed that no row it hands on covers (its pool or every one,
 * its symbol or every one, at or after from_at and, for a bounded row, at or before to_at): what
 * a reader would miss. Empty when the pending rows are sound.
 */
const uncoveredChanges = () =>
  queryRows(
    db,
    `SELECT d.pool, d.symbol, d.cost_method, d.sell_seq::VARCHAR AS sell_seq, strftime(d.sell_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%SZ') AS sell_at
     FROM (
       (SELECT * FROM temp.main.segments_before EXCEPT ALL SELECT * FROM intermediate.int_spot_lot_segments)
       UNION ALL
       (SELECT * FROM intermediate.int_spot_lot_segments EXCEPT ALL SELECT * FROM temp.main.segments_before)
     ) AS d
     WHERE NOT EXISTS (
       SELECT 1 FROM temp.main.model_pending AS p
       WHERE (p.account IS NULL OR p.account = '*' OR p.account = d.pool) AND (p.symbol IS NULL OR p.symbol = d.symbol)
           AND (p.from_at IS NULL OR d.sell_at >= p.from_at) AND (p.to_at IS NULL OR d.sell_at <= p.to_at)
     )
     ORDER BY ALL LIMIT 20`,
  );

/**
 * The rows in which the incremental table and checkpoints differ from a whole rebuild (which
 * then replaces them), each side's; and how many segment rows there are (so that an empty
 * difference is not that of two empty tables).
 */
async function differencesFromWhole(settings: Partial<ModelSettings>): Promise<{ differences: unknown[]; segments: number; checkpoints: number }> {
  await db.run('CREATE OR REPLACE TEMP TABLE incremental_segments AS SELECT * FROM intermediate.int_spot_lot_segments');
  await db.run('CREATE OR REPLACE TEMP TABLE incremental_state AS SELECT * FROM settings.spot_lot_state');
  await db.run(`CREATE OR REPLACE TEMP TABLE incremental_lots AS ${CHECKPOINT_LOTS_SQL}`);
  // No lot's row is kept that no kept checkpoint needs: at or before the first one, a lot has at
  // most one row, and not a gone one (a whole build writes none such either).
  const unneeded = await queryRows(
    db,
    `SELECT 'unneeded lot rows' AS side, v.pool, v.symbol, v.cost_method, v.lot_seq, count(*)::VARCHAR AS rows
     FROM settings.spot_lot_open AS v
     LEFT JOIN (SELECT pool, symbol, cost_method, min(next_seq) AS first_kept FROM settings.spot_lot_state GROUP BY ALL) AS o
         ON o.pool = v.pool AND o.symbol = v.symbol AND o.cost_method = v.cost_method
     WHERE o.first_kept IS NULL OR v.from_seq <= o.first_kept
     GROUP BY ALL
     HAVING any_value(o.first_kept) IS NULL OR count(*) > 1 OR arg_max(v.gone, v.from_seq)
     ORDER BY ALL LIMIT 20`,
  );
  await buildAll(db, settings, { select: ['intermediate.int_spot_lot_segments'] });
  const differences = await queryRows(
    db,
    `SELECT 'incremental only' AS side, * FROM (SELECT * FROM temp.main.incremental_segments EXCEPT ALL SELECT * FROM intermediate.int_spot_lot_segments)
     UNION ALL SELECT 'whole only', * FROM (SELECT * FROM intermediate.int_spot_lot_segments EXCEPT ALL SELECT * FROM temp.main.incremental_segments)
     ORDER BY ALL LIMIT 20`,
  );
  const stateDifferences = await queryRows(
    db,
    `SELECT 'incremental only' AS side, pool, symbol, cost_method, next_seq FROM (SELECT * FROM temp.main.incremental_state EXCEPT ALL SELECT * FROM settings.spot_lot_state)
     UNION ALL SELECT 'whole only', pool, symbol, cost_method, next_seq FROM (SELECT * FROM settings.spot_lot_state EXCEPT ALL SELECT * FROM temp.main.incremental_state)
     ORDER BY ALL LIMIT 20`,
  );
  // lifo's and hifo's states are their open lots at each checkpoint (the rows they are stored as
  // may differ: a whole build has no row of an older checkpoint than those kept).
  const lotDifferences = await queryRows(
    db,
    `SELECT 'incremental only' AS side, pool, symbol, cost_method, next_seq, lot_seq FROM (SELECT * FROM temp.main.incremental_lots EXCEPT ALL ${CHECKPOINT_LOTS_SQL})
     UNION ALL SELECT 'whole only', pool, symbol, cost_method, next_seq, lot_seq FROM (${CHECKPOINT_LOTS_SQL} EXCEPT ALL SELECT * FROM temp.main.incremental_lots)
     ORDER BY ALL LIMIT 20`,
  );
  const [counts] = await queryRows<{ segments: string; checkpoints: string }>(
    db,
    'SELECT (SELECT count(*) FROM intermediate.int_spot_lot_segments) AS segments, (SELECT count(*) FROM settings.spot_lot_state) AS checkpoints',
  );
  return { differences: [...unneeded, ...differences, ...stateDifferences, ...lotDifferences], segments: Number(counts!.segments), checkpoints: Number(counts!.checkpoints) };
}

async function resetDb(): Promise<void> {
  await db.run('DELETE FROM raw.spot_fills');
}

const settingsFor = (pooling: Pooling, openingPositions: ModelSettings['openingPositions'] = []): Partial<ModelSettings> => ({
  costMethods: COST_METHODS,
  reportingTimeZone: TIME_ZONE,
  pooling,
  openingPositions,
});

// Symbol A of accounts main and alt (one pool under universal pooling), over five months: the
// checkpoints of (main, A) fall before the fills of 10 Feb, 10 Mar, 5 Apr and 5 May; the latest
// three (Mar, Apr, May) are kept.
const A = 'AAAUSD_SPBL';
const F1_A = [
  fillOf('main', A, '1', '2025-01-10T10:00:00Z', 'buy', '10', '100'),
  fillOf('alt', A, '101', '2025-01-15T10:00:00Z', 'buy', '5', '110'),
  fillOf('main', A, '2', '2025-02-10T10:00:00Z', 'buy', '10', '120'),
  fillOf('main', A, '3', '2025-02-20T10:00:00Z', 'sell', '5', '130'),
  fillOf('alt', A, '102', '2025-03-01T10:00:00Z', 'sell', '3', '100'),
  fillOf('main', A, '4', '2025-03-10T10:00:00Z', 'buy', '10', '90'),
  fillOf('main', A, '5', '2025-03-25T10:00:00Z', 'sell', '8', '110'),
  fillOf('main', A, '6', '2025-04-05T10:00:00Z', 'buy', '5', '150'),
  fillOf('main', A, '7', '2025-04-20T10:00:00Z', 'sell', '6', '140'),
  fillOf('main', A, '8', '2025-05-05T10:00:00Z', 'buy', '4', '100'),
  fillOf('main', A, '9', '2025-05-12T10:00:00Z', 'sell', '10', '125'),
];
// Late: a buy of 25 Apr (before the May checkpoint), and a sell at the very instant of fill 7.
const F2_LATE = [fillOf('main', A, '10', '2025-04-25T10:00:00Z', 'buy', '3', '80'), fillOf('main', A, '12', '2025-04-20T10:00:00Z', 'sell', '2', '145')];
// A new day after everything, and a new symbol.
const F3_NEW_DAY = [
  fillOf('main', A, '13', '2025-05-20T09:00:00Z', 'sell', '3', '130'),
  fillOf('main', A, '14', '2025-05-20T10:00:00Z', 'buy', '1', '120'),
  fillOf('alt', 'NEWUSD_SPBL', '201', '2025-05-20T11:00:00Z', 'buy', '2', '5'),
  fillOf('alt', 'NEWUSD_SPBL', '202', '2025-05-21T11:00:00Z', 'sell', '1', '6'),
];

// Buys on three days of June, then a sell later on the last of them.
const B = 'UKBUSD_SPBL';
const F1_B = [
  fillOf('main', B, '1', '2025-06-02T10:00:00Z', 'buy', '4', '100'),
  fillOf('main', B, '2', '2025-06-03T10:00:00Z', 'buy', '2', '110'),
  fillOf('main', B, '3', '2025-06-04T10:00:00Z', 'buy', '1', '120'),
];
const F2_B = [fillOf('main', B, '4', '2025-06-04T15:00:00Z', 'sell', '3', '130')];

// uk: a sell of 25 Jan matched with the pool and, by the 30-day rule, with the buy of 3 Feb.
// A buy of 14 Feb (20 days after the sell) moves part of that sell's match from the pool to it.
const U = 'UKXUSD_SPBL';
const F1_U = [
  fillOf('main', U, '1', '2024-11-05T12:00:00Z', 'buy', '10', '100'),
  fillOf('main', U, '2', '2024-12-03T12:00:00Z', 'buy', '2', '90'),
  // A sell matched in full by a buy of its own day: replayed with the sells after it, its segments come out the same.
  fillOf('main', U, '7', '2025-01-20T10:00:00Z', 'buy', '1', '110'),
  fillOf('main', U, '8', '2025-01-20T12:00:00Z', 'sell', '1', '115'),
  fillOf('main', U, '3', '2025-01-25T12:00:00Z', 'sell', '4', '120'),
  fillOf('main', U, '4', '2025-02-03T12:00:00Z', 'buy', '1', '95'),
];
const F2_U = [fillOf('main', U, '5', '2025-02-14T12:00:00Z', 'buy', '2', '80')];
// 35 days after the checkpoint of 3 Feb, whose state holds what the sell of 25 Jan took of the
// buys of 3 and 14 Feb: the step resumes from it and must not pool those units again.
const F3_U = [fillOf('main', U, '6', '2025-03-20T12:00:00Z', 'sell', '1', '100')];

// Another symbol: a sell beyond what is held (its part unmatched, the pool empty), a day matched
// in full by its own buy after it, then (F2) a buy 12 days after the sell: the 30-day rule gives
// the sell's units its cost, though the day before the buy's is unchanged.
const V = 'UKYUSD_SPBL';
const F1_V = [
  fillOf('main', V, '20', '2024-12-01T12:00:00Z', 'buy', '1', '100'),
  fillOf('main', V, '22', '2024-12-02T12:00:00Z', 'sell', '1', '105'),
  fillOf('main', V, '21', '2025-01-10T12:00:00Z', 'sell', '2', '120'),
  fillOf('main', V, '24', '2025-01-12T10:00:00Z', 'buy', '1', '110'),
  fillOf('main', V, '25', '2025-01-12T12:00:00Z', 'sell', '1', '112'),
];
const F2_V = [fillOf('main', V, '23', '2025-01-22T12:00:00Z', 'buy', '2', '90')];

/** uk segments of (main, symbol)'s sell `fillId`: rule, lot fill id (null: the pool), quantity. */
const ukMatchesOf = (fillId: string, symbol = U) =>
  queryRows(
    db,
    `SELECT s.match_rule AS rule, b.fill_id AS lot, s.quantity_e18::VARCHAR AS quantity
     FROM intermediate.int_spot_lot_segments AS s
     JOIN intermediate.int_spot_trades AS t ON t.pool = s.pool AND t.symbol = s.symbol AND t.event_seq = s.sell_seq
     LEFT JOIN intermediate.int_spot_trades AS b ON b.pool = s.pool AND b.symbol = s.symbol AND b.event_seq = s.lot_seq
     WHERE s.symbol = '${symbol}' AND s.cost_method = 'uk' AND t.fill_id = '${fillId}' AND t.account = 'main'
     ORDER BY ALL`,
  );

const E18 = '000000000000000000';

describe.each(['account', 'universal'] as const)('int_spot_lot_segments incremental, pooling %s', (pooling) => {
  const settings = settingsFor(pooling);

  it('a late fill before the last checkpoint, a fill at the instant of another, then a new day and a new symbol: as a whole build', async () => {
    await resetDb();
    await insertFills(F1_A);
    await buildAll(db, settings, { select: WHOLE });
    const pool = pooling === 'universal' ? '*' : 'main';
    // Checkpoints of (pool, A) per method: the latest CHECKPOINTS_KEPT month starts (Mar, Apr, May),
    // the day starts of the last RECENT_DAYS days before the last fill (12 May): lifo and hifo
    // (7 days) 12 May; uk (40 days, from 2 Apr) 20 Apr and 12 May (5 Apr and 5 May are month
    // starts); and the end state, after the last fill (of 12 May).
    const kept = await queryRows(db, `SELECT cost_method, kind, strftime(DATE '1970-01-01' + next_day, '%d %b') AS day FROM settings.spot_lot_state WHERE pool = '${pool}' AND symbol = '${A}' ORDER BY cost_method, next_seq`);
    const months = (method: string) => (pooling === 'universal' ? ['01 Mar', '05 Apr', '05 May'] : ['10 Mar', '05 Apr', '05 May']).map((day) => ({ cost_method: method, kind: 'month', day }));
    expect(CHECKPOINTS_KEPT).toBe(3);
    expect(RECENT_DAYS).toEqual({ lifo: 7, hifo: 7, uk: 40 });
    const end = (method: string) => ({ cost_method: method, kind: 'end', day: '12 May' });
    expect(kept).toEqual([
      ...months('hifo'), { cost_method: 'hifo', kind: 'day', day: '12 May' }, end('hifo'),
      ...months('lifo'), { cost_method: 'lifo', kind: 'day', day: '12 May' }, end('lifo'),
      ...months('uk').slice(0, 2), { cost_method: 'uk', kind: 'day', day: '20 Apr' }, months('uk')[2], { cost_method: 'uk', kind: 'day', day: '12 May' }, end('uk'),
    ]);

    // lifo's and hifo's open lots are stored as what changed at each checkpoint: the day state
    // (12 May) adds only the buy of 5 May (its units, nothing taken) to the month state before it
    // (5 May), which holds more than one open lot.
    const [fill8] = await queryRows<{ seq: string; units: string }>(
      db,
      `SELECT event_seq::VARCHAR AS seq, units_in_e18::VARCHAR AS units FROM intermediate.int_spot_trades WHERE symbol = '${A}' AND account = 'main' AND fill_id = '8'`,
    );
    for (const method of ['lifo', 'hifo']) {
      const states = await queryRows<{ kind: string; next_seq: string; base_seq: string | null; lots: string }>(
        db,
        `SELECT c.kind, c.next_seq::VARCHAR AS next_seq, c.base_seq::VARCHAR AS base_seq, (SELECT count(*) FROM (${CHECKPOINT_LOTS_SQL}) AS l WHERE l.pool = c.pool AND l.symbol = c.symbol AND l.cost_method = c.cost_method AND l.next_seq = c.next_seq)::VARCHAR AS lots
         FROM settings.spot_lot_state AS c
         WHERE c.pool = '${pool}' AND c.symbol = '${A}' AND c.cost_method = '${method}' AND c.next_day >= datediff('day', DATE '1970-01-01', DATE '2025-05-05') ORDER BY c.next_seq`,
      );
      const [month, day] = states;
      expect(month).toMatchObject({ kind: 'month', base_seq: null });
      expect(Number(month!.lots)).toBeGreaterThan(1);
      expect(day).toMatchObject({ kind: 'day', base_seq: null });
      const written = await queryRows(
        db,
        `SELECT lot_seq::VARCHAR AS seq, gone, units::VARCHAR AS units, taken::VARCHAR AS taken FROM settings.spot_lot_open
         WHERE pool = '${pool}' AND symbol = '${A}' AND cost_method = '${method}' AND from_seq = ${day!.next_seq}`,
      );
      expect(written).toEqual([{ seq: fill8!.seq, gone: false, units: fill8!.units, taken: '0' }]);
    }

    await runIncremental(settings, F2_LATE);
    // lifo and hifo leave from_at as it was.
    const late = await differencesFromWhole(settings);
    expect(late.differences).toEqual([]);
    expect(late.segments).toBeGreaterThan(20);

    // A new day resumes lifo and hifo from the end state (after the sell of 12 May): it matches its
    // own events alone, and the segments of the sells before it stay as they were, not deleted and
    // written again (from the day start of 12 May, the sell of 12 May was matched again).
    const stackRows = (where: string) =>
      queryRows(
        db,
        `SELECT rowid::VARCHAR AS row, cost_method, sell_seq::VARCHAR AS sell FROM intermediate.int_spot_lot_segments
         WHERE pool = '${pool}' AND symbol = '${A}' AND cost_method IN ('lifo', 'hifo')${where} ORDER BY ALL`,
      );
    const stackBefore = await stackRows('');
    expect(stackBefore.length).toBeGreaterThan(8);
    await runIncremental(settings, F3_NEW_DAY);
    expect(await stackRows(" AND sell_at < TIMESTAMPTZ '2025-05-20 00:00:00+00'")).toEqual(stackBefore);
    const newDay = await differencesFromWhole(settings);
    expect(newDay.differences).toEqual([]);
    expect(newDay.segments).toBeGreaterThan(late.segments);
  });

  it('the same with a wider pending set: every pool and symbol (account *, symbol NULL), earlier from_at, or from the beginning', async () => {
    for (const widen of [
      (exact: PendingRow[]): PendingRow[] => [...exact, { account: '*', symbol: null, fromAt: '2025-03-02T00:00:00Z' }],
      (): PendingRow[] => [{ account: '*', symbol: null, fromAt: null }],
      (exact: PendingRow[]): PendingRow[] => exact.map((row) => ({ ...row, symbol: null })),
    ]) {
      await resetDb();
      await insertFills(F1_A);
      await buildAll(db, settings, { select: WHOLE });
      await runIncremental(settings, [...F2_LATE, ...F3_NEW_DAY], widen);
      const result = await differencesFromWhole(settings);
      expect(result.differences).toEqual([]);
      expect(result.segments).toBeGreaterThan(20);
    }
  });

  it('uk: a buy 20 days after a sell moves that sell\'s match from the pool to it, and the children redo that sell (a bounded change), not every sell since', async () => {
    await resetDb();
    await insertFills(F1_U);
    await buildAll(db, settings, { select: WHOLE });
    // 25 Jan: 1 unit from the buy of 3 Feb (30-day rule), 3 from the pool.
    expect(await ukMatchesOf('3')).toEqual([
      { rule: 'pool', lot: null, quantity: `3${E18}` },
      { rule: 'thirty_day', lot: '4', quantity: `1${E18}` },
    ]);

    await runIncremental(settings, F2_U);
    // The sell of 25 Jan is the earliest whose uk segments changed (the replay went back to the
    // checkpoint before 15 Jan, 30 days before 14 Feb, and made those of 20 Jan again, the same):
    // the children redo that sell (a bounded change: only it, up to its instant, changed before
    // the new fills of 14 Feb), not every sell from 15 or 20 Jan, nor from it on.
    expect(await pendingLeft()).toEqual([
      { account: pooling === 'universal' ? '*' : 'main', symbol: U, fromAt: '2025-01-25T12:00:00Z', toAt: '2025-01-25T12:00:00Z' },
      { account: pooling === 'universal' ? '*' : 'main', symbol: U, fromAt: '2025-02-14T12:00:00Z', toAt: null },
    ]);
    expect(await ukMatchesOf('3')).toEqual([
      { rule: 'pool', lot: null, quantity: `1${E18}` },
      { rule: 'thirty_day', lot: '4', quantity: `1${E18}` },
      { rule: 'thirty_day', lot: '5', quantity: `2${E18}` },
    ]);
    expect(await uncoveredChanges()).toEqual([]);
    expect((await differencesFromWhole(settings)).differences).toEqual([]);

    // Resumed from the checkpoint of 3 Feb: the pool holds 12 - 1 = 11 units for 10*100 + 2*90 =
    // 1180 less 1/12 of it; the buys of 3 and 14 Feb went to the sell of 25 Jan, not to the pool.
    await runIncremental(settings, F3_U);
    const resumed = await differencesFromWhole(settings);
    expect(resumed.differences).toEqual([]);
    const [sell] = await queryRows(
      db,
      `SELECT s.cost_e12::VARCHAR AS cost FROM intermediate.int_spot_lot_segments AS s JOIN intermediate.int_spot_trades AS t ON t.pool = s.pool AND t.symbol = s.symbol AND t.event_seq = s.sell_seq
       WHERE s.cost_method = 'uk' AND t.fill_id = '6' AND t.symbol = '${U}'`,
    );
    // Pool after 25 Jan: 12 units for 1180 minus 1 unit (1180/12 = 98.333333333333); 11 for 1081.666666666667; one unit: 98.333333333333.
    expect(sell).toEqual({ cost: '98333333333333' });
  });

  it("uk: a fill later on the last day resumes from that day's start, not the day before's; lifo and hifo from the end state: as a whole build", async () => {
    await resetDb();
    await insertFills(F1_B);
    await buildAll(db, settings, { select: WHOLE });
    const pool = pooling === 'universal' ? '*' : 'main';
    // (rowid: a state deleted and saved again is a new row)
    const states = () =>
      queryRows<{ row: string; method: string; kind: string; day: string }>(
        db,
        `SELECT rowid::VARCHAR AS row, cost_method AS method, kind, strftime(DATE '1970-01-01' + next_day, '%d %b') AS day FROM settings.spot_lot_state
         WHERE pool = '${pool}' AND symbol = '${B}' ORDER BY cost_method, next_seq`,
      );
    const before = await states();
    // Day starts of 3 and 4 Jun (2 Jun's first event is the partition's), then the end state.
    expect(before.filter((state) => state.method === 'uk').map(({ kind, day }) => `${kind} ${day}`)).toEqual(['day 03 Jun', 'day 04 Jun', 'end 04 Jun']);
    await runIncremental(settings, F2_B);
    // The sell of 4 Jun changes that day's uk matches (one day, one disposal), and no disposal of
    // the 30 days before took from the pool: uk replays 4 Jun from its start, whose state stays as
    // it was (resumed from the day start of 3 Jun, the replay saved it again). lifo and hifo resume
    // from the end state: their day starts stay too. Each end state is new.
    const after = await states();
    expect(after.filter((state) => state.kind !== 'end')).toEqual(before.filter((state) => state.kind !== 'end'));
    expect(after.filter((state) => state.kind === 'end').map(({ method, row }) => before.some((old) => old.method === method && old.kind === 'end' && old.row === row))).toEqual([false, false, false]);
    expect(await ukMatchesOf('4', B)).toEqual([{ rule: 'pool', lot: null, quantity: `2${E18}` }, { rule: 'same_day', lot: '3', quantity: `1${E18}` }]);
    expect((await differencesFromWhole(settings)).differences).toEqual([]);
  });

  it('uk: a sell beyond what is held takes its units from a buy 12 days later, found by its unmatched part, past a day matched in full', async () => {
    await resetDb();
    await insertFills(F1_V);
    await buildAll(db, settings, { select: WHOLE });
    expect(await ukMatchesOf('21', V)).toEqual([{ rule: 'unmatched', lot: null, quantity: `2${E18}` }]);
    expect(await ukMatchesOf('25', V)).toEqual([{ rule: 'same_day', lot: '24', quantity: `1${E18}` }]);

    await runIncremental(settings, F2_V);
    expect(await ukMatchesOf('21', V)).toEqual([{ rule: 'thirty_day', lot: '23', quantity: `2${E18}` }]);
    expect(await pendingLeft()).toEqual([
      { account: pooling === 'universal' ? '*' : 'main', symbol: V, fromAt: '2025-01-10T12:00:00Z', toAt: '2025-01-10T12:00:00Z' },
      { account: pooling === 'universal' ? '*' : 'main', symbol: V, fromAt: '2025-01-22T12:00:00Z', toAt: null },
    ]);
    expect((await differencesFromWhole(settings)).differences).toEqual([]);
  });
});

/**
 * Random ledgers split into F1 and F2: F2 takes a random tail of each ledger (new days), random
 * fills of the few before it (late fills, fills at the instant of others) and sometimes whole
 * ledgers (new symbols); the pending set is sometimes wider than needed. Long ledgers (20 to 60
 * fills over months: checkpoints, and 30-day matches across them) share symbols across accounts;
 * short ones (spotLedgerArbitrary: the amounts' edge cases), their times stretched, have their own.
 */
const LONG_LEDGERS = 6;
const SHORT_LEDGERS = 4;
const RUNS = 5;

/** Hundredths as a decimal text: 12345 is '123.45'. */
const hundredths = (n: number) => `${Math.floor(n / 100)}.${String(n % 100).padStart(2, '0')}`;

/** Fills of one account and symbol every few days (or hours, or the same millisecond) from 2025. */
function longLedgerArbitrary(account: string, symbol: string, idSuffix: number): fc.Arbitrary<SpotLedger> {
  const day = 86_400_000;
  const fill = fc.record({
    side: fc.constantFrom('buy', 'buy', 'buy', 'sell', 'sell'),
    quantity: fc.integer({ min: 1, max: 5_000 }),
    price: fc.integer({ min: 100, max: 1_000_000 }),
    gap: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 3 * day }), fc.integer({ min: 3 * day, max: 15 * day })),
  });
  return fc.array(fill, { minLength: 20, maxLength: 60 }).map((drawn) => {
    let at = Date.UTC(2025, 0, 1);
    return {
      account,
      symbol,
      baseCoin: symbol.replace(/USDT_SPBL$/, ''),
      quoteCoin: 'USDT',
      fills: drawn.map(({ side, quantity, price, gap }, index) => {
        at += gap;
        return { fillId: String((index + 1) * 100 + idSuffix), side, fillPrice: hundredths(price), fillQuantity: hundredths(quantity), fillTotalAmount: '0', fees: '0', cTime: String(at) };
      }),
    };
  });
}

interface Drawn {
  ledger: SpotLedger;
  /** This many fills at the end go to F2 (99: the whole ledger, a new symbol). */
  tail: number;
  /** How many fills before the tail may be late ones: those whose draw in `late` is 0 go to F2. */
  lateWindow: number;
  late: number[];
  /** Its times are stretched by this factor (a short ledger's, from days to months between fills). */
  stretch: number;
}

const splitArbitrary = (ledger: fc.Arbitrary<SpotLedger>, stretch: fc.Arbitrary<number>): fc.Arbitrary<Drawn> =>
  fc.record({
    ledger,
    tail: fc.oneof({ weight: 5, arbitrary: fc.integer({ min: 0, max: 8 }) }, { weight: 1, arbitrary: fc.constant(99) }),
    lateWindow: fc.integer({ min: 0, max: 12 }),
    late: fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 60, maxLength: 60 }),
    stretch,
  });

const drawnArbitrary = fc.tuple(
  ...Array.from({ length: LONG_LEDGERS }, (_, index) => splitArbitrary(longLedgerArbitrary(`acct${index % 3}`, `L${index % 4}USDT_SPBL`, index), fc.constant(1))),
  ...Array.from({ length: SHORT_LEDGERS }, (_, index) => splitArbitrary(spotLedgerArbitrary(`acct${index % 3}`, `S${index}USDT_SPBL`, 50 + index), fc.constantFrom(4, 12, 30))),
);
const wideningArbitrary = fc.constantFrom('exact', 'exact', 'earlier', 'everything');

function split(drawn: readonly Drawn[]): { f1: AccountFill[]; f2: AccountFill[]; openings: ModelSettings['openingPositions'] } {
  const f1: AccountFill[] = [];
  const f2: AccountFill[] = [];
  const openings: { account: string; symbol: string; quantity: string; cost: string }[] = [];
  for (const { ledger, tail, lateWindow, late, stretch } of drawn) {
    const start = Number(ledger.fills[0]!.cTime);
    ledger.fills.forEach((fill, index) => {
      const record = { accountId: '1', symbol: ledger.symbol, baseCoin: ledger.baseCoin, quoteCoin: ledger.quoteCoin, orderId: `o${fill.fillId}`, orderType: fill.fillPrice === '' ? '' : 'limit', ...fill };
      record.cTime = String(start + (Number(fill.cTime) - start) * stretch);
      const fromTail = ledger.fills.length - index;
      const target = fromTail <= tail || (fromTail <= tail + lateWindow && late[index] === 0) ? f2 : f1;
      target.push({ account: ledger.account, symbol: ledger.symbol, record });
    });
    // One opening position per (account, symbol).
    if (ledger.opening !== undefined && !openings.some((opening) => opening.account === ledger.account && opening.symbol === ledger.symbol)) {
      openings.push({ account: ledger.account, symbol: ledger.symbol, ...ledger.opening });
    }
  }
  return { f1, f2, openings };
}

describe('int_spot_lot_segments incremental, week after week across month starts', () => {
  it("keeps no lot row that no kept checkpoint needs, when the first kept checkpoint moves past rows written at day checkpoints since dropped", async () => {
    await resetDb();
    const settings = settingsFor('account');
    // A buy every day and a sell of half of it; every fourth day a sell of 2.5, which reaches back
    // into the lots of the days before (lifo: the latest; hifo: the dearest, the price cycling
    // over a week). So lots change at the day checkpoints of the nights they are sold from.
    const day = (index: number, hour: number) => new Date(Date.UTC(2026, 0, 1 + index, hour)).toISOString();
    const fillsOf = (from: number, to: number) => {
      const fills: AccountFill[] = [];
      for (let index = from; index < to; index++) {
        fills.push(fillOf('main', A, `b${index}`, day(index, 9), 'buy', '1', String(100 + (index % 7) * 3)));
        fills.push(fillOf('main', A, `s${index}`, day(index, 15), 'sell', index % 4 === 3 ? '2.5' : '0.5', '110'));
      }
      return fills;
    };
    await insertFills(fillsOf(0, 31));
    await buildAll(db, settings, { select: WHOLE });
    // A night a week, 1 Feb to 9 May: the day checkpoints of each night's week are dropped the week
    // after, their lots' rows stay (later checkpoints hold them), and at each new month the first
    // kept checkpoint moves on past some of them.
    for (let from = 31; from < 129; from += 7) await runIncremental(settings, fillsOf(from, from + 7));
    const months = await queryRows(db, `SELECT strftime(DATE '1970-01-01' + next_day, '%d %b') AS day FROM settings.spot_lot_state WHERE symbol = '${A}' AND cost_method = 'lifo' AND kind = 'month' ORDER BY next_seq`);
    expect(months).toEqual([{ day: '01 Mar' }, { day: '01 Apr' }, { day: '01 May' }]);
    const result = await differencesFromWhole(settings);
    expect(result.differences).toEqual([]);
    expect(result.segments).toBeGreaterThan(500);
  }, 120_000);
});

describe('int_spot_lot_segments incremental on random ledgers', () => {
  it(`equals a whole build for lifo, hifo and uk, both poolings, on ${RUNS} random splits of ${LONG_LEDGERS + SHORT_LEDGERS} ledgers`, async () => {
    await fc.assert(
      fc.asyncProperty(drawnArbitrary, wideningArbitrary, async (drawn, widening) => {
        const { f1, f2, openings } = split(drawn);
        for (const pooling of ['account', 'universal'] as const) {
          const settings = settingsFor(pooling, openings);
          await resetDb();
          await insertFills(f1);
          await buildAll(db, settings, { select: WHOLE });
          await runIncremental(settings, f2, (exact) => {
            if (widening === 'everything') return [{ account: '*', symbol: null, fromAt: null }];
            if (widening === 'earlier') return exact.map((row) => ({ ...row, fromAt: row.fromAt === null ? null : new Date(Date.parse(row.fromAt) - 17 * 86_400_000).toISOString() }));
            return exact;
          });
          // What it hands on covers every segment it changed (uk's sells before the new fills by
          // bounded rows), and the table is a whole rebuild's.
          expect(await uncoveredChanges()).toEqual([]);
          const result = await differencesFromWhole(settings);
          expect(result.differences).toEqual([]);
        }
      }),
      // A failure is reported as found: shrinking ledgers this long takes minutes.
      { numRuns: RUNS, endOnFailure: true },
    );
  }, 120_000);
});

// One buy of 1 unit a day over 20 days of January, the earlier the dearer (unit cost 200 - day),
// then a sell in February: the checkpoint before it holds 20 open lots.
const D = 'DEEPUSD_SPBL';
const F1_D = [
  ...Array.from({ length: 20 }, (_, index) => fillOf('main', D, String(300 + index), `2025-01-${String(index + 1).padStart(2, '0')}T10:00:00Z`, 'buy', '1', String(199 - index))),
  fillOf('main', D, '399', '2025-02-03T10:00:00Z', 'sell', '1', '150'),
];

describe('int_spot_lot_segments resumes with only the open lots its sells can reach', () => {
  it('lifo: the latest lots holding the units sold; hifo: the dearest; none sold: the first; more than held: all', async () => {
    await resetDb();
    await insertFills(F1_D);
    await buildAll(db, settingsFor('account'), { select: WHOLE });
    const [checkpoint] = await queryRows<{ next_seq: string }>(
      db,
      `SELECT next_seq::VARCHAR AS next_seq FROM settings.spot_lot_state WHERE symbol = '${D}' AND cost_method = 'lifo' AND kind = 'month'`,
    );
    const buys = await queryRows<{ fill_id: string; seq: string }>(db, `SELECT fill_id, event_seq::VARCHAR AS seq FROM intermediate.int_spot_trades WHERE symbol = '${D}' AND side = 'buy'`);
    const fillOfSeq = new Map(buys.map((buy) => [buy.seq, buy.fill_id]));
    const reached = async (method: 'lifo' | 'hifo', units: number) => {
      const { held, removed } = await lotState(db, 'main', D, method, BigInt(checkpoint!.next_seq), units);
      expect(removed).toEqual([]);
      for (const lot of held) expect(lot.baseTaken).toBe(lot.taken);
      return held.map((lot) => fillOfSeq.get(String(lot.seq))).sort();
    };
    // 2.5 units: three lots of 1 (the third in part).
    expect(await reached('lifo', 2.5e18)).toEqual(['317', '318', '319']);
    expect(await reached('hifo', 2.5e18)).toEqual(['300', '301', '302']);
    expect(await reached('lifo', 0)).toEqual(['319']);
    expect(await reached('hifo', 0)).toEqual(['300']);
    expect(await reached('lifo', 1e30)).toHaveLength(20);
    expect(await reached('hifo', 1e30)).toHaveLength(20);

    // lifo reads the lots of the last 262,144 events first, and from further back while those hold
    // fewer units than are sold: the same lots, numbered 100,000 events apart.
    const SPREAD = 100_000n;
    await db.run(`INSERT INTO settings.spot_lot_open SELECT pool, 'SPREAD', cost_method, lot_seq * ${SPREAD}, from_seq * ${SPREAD}, gone, units, cost, taken FROM settings.spot_lot_open WHERE symbol = '${D}'`);
    const spread = async (units: number) => {
      const { held } = await lotState(db, 'main', 'SPREAD', 'lifo', BigInt(checkpoint!.next_seq) * SPREAD, units);
      return held.map((lot) => fillOfSeq.get(String(lot.seq / SPREAD))).sort();
    };
    expect(await spread(0)).toEqual(['319']);
    expect(await spread(2.5e18)).toEqual(['317', '318', '319']);
    expect(await spread(1e30)).toHaveLength(20);
    await db.run("DELETE FROM settings.spot_lot_open WHERE symbol = 'SPREAD'");

    // A night selling 2.5 units matches as a whole build would, without the lots it cannot reach:
    // they are unreadable while it runs (a cost of null fails the matcher), then put back.
    const deep = `symbol = '${D}' AND lot_seq IN (SELECT event_seq FROM intermediate.int_spot_trades WHERE symbol = '${D}' AND fill_id BETWEEN '304' AND '315')`;
    await db.run(`CREATE OR REPLACE TEMP TABLE deep_lots AS SELECT * FROM settings.spot_lot_open WHERE ${deep}`);
    expect(Number((await queryRows<{ n: string }>(db, 'SELECT count(*)::VARCHAR AS n FROM temp.main.deep_lots'))[0]!.n)).toBe(24);
    await db.run(`UPDATE settings.spot_lot_open SET cost = NULL, units = NULL, taken = NULL WHERE ${deep}`);
    await runIncremental(settingsFor('account'), [fillOf('main', D, '400', '2025-02-10T10:00:00Z', 'sell', '1.5', '150')]);
    await db.run(`UPDATE settings.spot_lot_open AS v SET cost = d.cost, units = d.units, taken = d.taken FROM temp.main.deep_lots AS d
      WHERE v.pool = d.pool AND v.symbol = d.symbol AND v.cost_method = d.cost_method AND v.lot_seq = d.lot_seq AND v.from_seq = d.from_seq`);
    const night = await differencesFromWhole(settingsFor('account'));
    expect(night.differences).toEqual([]);
    expect(night.segments).toBeGreaterThan(4);
  });
});

describe('int_spot_lot_segments on a database built before settings.spot_lot_open', () => {
  it("replays lifo and hifo from each partition's first event once (their old states are dropped unread), and equals a whole build", async () => {
    const settings = settingsFor('account');
    await resetDb();
    await insertFills(F1_A);
    await buildAll(db, settings, { select: WHOLE });
    // The states as they were stored before: every open lot as JSON in the state (here unreadable), no lots table.
    await db.run("DROP TABLE settings.spot_lot_open; UPDATE settings.spot_lot_state SET state = 'not what this build reads'::BLOB WHERE cost_method IN ('lifo', 'hifo')");
    await runIncremental(settings, F3_NEW_DAY);
    const result = await differencesFromWhole(settings);
    expect(result.differences).toEqual([]);
    expect(result.segments).toBeGreaterThan(20);
    const [lots] = await queryRows<{ n: string }>(db, `SELECT count(*)::VARCHAR AS n FROM (${CHECKPOINT_LOTS_SQL})`);
    expect(Number(lots!.n)).toBeGreaterThan(0);
  });
});
