import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig, type Config } from '../src/config/config.ts';
import { checkJob, type CheckRecord } from '../src/jobs/check-job.ts';
import { readCheckResults } from '../src/models/check-results.ts';
import { expandChanged, mergePartitions, parseChangedConditions, readChangeLog, type ChangedPartition } from '../src/models/check-scope.ts';
import type { CheckScope, TestResult } from '../src/models/check.ts';
import { COST_METHODS } from '../src/models/settings.ts';
import { Database } from '../src/store/database.ts';
import { splitStatements } from '../src/store/sql-text.ts';
import { runCli } from './support/cli-process.ts';
import { buildAll, futuresFill, insertHistory, insertSnapshot, openModelDb, queryRows, spotFill } from './support/model-db.ts';

/**
 * The incremental check (docs/architecture.md "The incremental check"): after an incremental build,
 * `exledger check --changed` (the run's check) reads only what the build changed, as it recorded it
 * (settings.model_changes), and still fails on exactly the data that is wrong there. A real DuckDB
 * file, a history of two symbols over three months built with all five cost methods; each night
 * adds fills (late ones into an old month of one symbol) and builds incrementally.
 */

let folder: string;
let config: Readonly<Config>;

/** A spot history: BTC and ETH, a buy and a sell every other day of January to March 2026 (each sell takes half of what is held). */
function history(): { btc: object[]; eth: object[] } {
  const btc: object[] = [];
  const eth: object[] = [];
  for (let day = 0; day < 90; day += 2) {
    const at = (hour: number) => new Date(Date.UTC(2026, 0, 1 + day, hour)).toISOString();
    btc.push(spotFill('BTCUSDT_SPBL', `b${day}a`, at(9), 'buy', '0.4', String(60000 + day * 100)), spotFill('BTCUSDT_SPBL', `b${day}b`, at(15), 'sell', '0.3', String(60500 + day * 100)));
    eth.push(spotFill('ETHUSDT_SPBL', `e${day}a`, at(10), 'buy', '2', String(3000 + day)), spotFill('ETHUSDT_SPBL', `e${day}b`, at(16), 'sell', '1.5', String(3010 + day)));
  }
  return { btc, eth };
}

async function withDb<T>(work: (db: Database) => Promise<T>): Promise<T> {
  return withDbAt(config.db, work);
}

async function withDbAt<T>(file: string, work: (db: Database) => Promise<T>): Promise<T> {
  const db = await Database.open(file);
  try {
    return await work(db);
  } finally {
    db.close();
  }
}

/** A night: these fills synced (logged as a sync logs them), then an incremental build with every cost method. */
async function night(fills: readonly object[]): Promise<void> {
  await withDb(async (db) => {
    if (fills.length > 0) await insertHistory(db, 'spot_fills', fills);
    const [before] = await queryRows<{ seq: string }>(db, 'SELECT max(change_seq) AS seq FROM settings.model_changes');
    const results = await buildAll(db, { costMethods: COST_METHODS });
    // The build after the first is incremental: the spot models took the changes, not the whole history.
    expect(results.find((result) => result.id === 'intermediate.int_spot_trades')?.how).not.toBe('whole');
    // Each model brought up to date recorded what it changed (in its own transaction), once; an unchanged one nothing;
    // a whole rebuild "everything".
    const recorded = await queryRows<{ model: string; seqs: string; everything: boolean }>(
      db,
      `SELECT model, count(DISTINCT change_seq) AS seqs, bool_or(account IS NULL) AS everything FROM settings.model_changes WHERE change_seq > ${before!.seq} GROUP BY model`,
    );
    const how = new Map(results.map((result) => [result.id, result.how]));
    // (An incremental step whose inputs came out as they were, a staging window read again, records no row.)
    for (const row of recorded) expect(['whole', 'incremental'], row.model).toContain(how.get(row.model));
    const rows = new Map(results.map((result) => [result.id, result.rows]));
    for (const [model] of [...how].filter(([, built]) => built === 'whole')) {
      const record = recorded.find((row) => row.model === model);
      // A table empty before and after its rebuild changed nothing: it records nothing.
      if (rows.get(model) === 0 && record === undefined) continue;
      expect(record?.everything, model).toBe(true);
    }
    // The books are empty without a reporting currency: int_coin_events' step leaves it empty and records nothing.
    expect(how.get('intermediate.int_coin_events')).toBe('incremental');
    expect(recorded.find((row) => row.model === 'intermediate.int_coin_events')).toBeUndefined();
    expect(recorded.every((row) => row.seqs === '1')).toBe(true);
    expect(recorded.find((row) => row.model === 'intermediate.int_spot_trades')?.everything).toBe(false);
  });
}

async function check(changed: boolean): Promise<{ results: TestResult[]; scope: CheckScope }> {
  let scope: CheckScope | undefined;
  let recorded: CheckRecord | undefined;
  const results = await checkJob(config, { changed, onScope: (told) => (scope = told), onRecorded: (record) => (recorded = record) });
  // Each check records its results beside the database: the next check of what changed builds on them.
  expect(recorded?.error).toBeUndefined();
  return { results, scope: scope! };
}

const failing = (results: readonly TestResult[]) => results.filter((result) => result.status !== 'pass').map((result) => result.id);
const named = (results: readonly TestResult[], id: string) => results.find((result) => result.id === id)!;

beforeAll(async () => {
  folder = mkdtempSync(path.join(tmpdir(), 'exledger-check-incremental-'));
  config = resolveConfig({ db: path.join(folder, 'exledger.duckdb') }, {}, folder);
  const db = await openModelDb(config.db);
  try {
    const { btc, eth } = history();
    await insertHistory(db, 'spot_fills', [...btc, ...eth]);
    await buildAll(db, { costMethods: COST_METHODS });
  } finally {
    db.close();
  }
});
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe('the check of what changed (exledger check --changed)', () => {
  it('checks everything when no test has passed on this database, and records what each result covered', async () => {
    const { results, scope } = await check(true);
    expect(failing(results)).toEqual([]);
    expect(scope).toMatchObject({ asked: 'changed', tests: { changed: 0, unchanged: 0, whole: results.length } });
    expect(new Set(results.map((result) => result.why))).toEqual(new Set(['no earlier result on this database']));
    const recorded = readCheckResults(config.db);
    if (recorded.kind !== 'recorded') throw new Error(recorded.kind);
    // Every result says up to which build change it covers (the record's last one), and what it read.
    const [last] = await withDb((db) => queryRows<{ seq: string }>(db, 'SELECT max(change_seq) AS seq FROM settings.model_changes'));
    expect(new Set(recorded.results.results.map((result) => result.through?.seq))).toEqual(new Set([Number(last!.seq)]));
    expect(recorded.results.results.every((result) => result.scope === 'whole' && typeof result.fingerprint === 'string')).toBe(true);
  });

  it('passes a night whose new rows are all fine, reading only the changed partitions from the changed instant', async () => {
    // A new day of both symbols, and a late BTC buy and sell in January (an old month of one symbol).
    await night([
      spotFill('BTCUSDT_SPBL', 'n1a', '2026-04-01T09:00:00.000Z', 'buy', '0.1', '70000'),
      spotFill('ETHUSDT_SPBL', 'n1b', '2026-04-01T10:00:00.000Z', 'buy', '1', '3500'),
      spotFill('BTCUSDT_SPBL', 'late1', '2026-01-20T12:00:00.000Z', 'buy', '0.2', '61000'),
      spotFill('BTCUSDT_SPBL', 'late2', '2026-01-20T13:00:00.000Z', 'sell', '0.1', '61100'),
    ]);
    const { results, scope } = await check(true);
    expect(failing(results)).toEqual([]);
    expect(scope.asked).toBe('changed');
    // From the late record's month: the monthly marts changed from its start (a month's row changes as a whole).
    expect(scope.from).toBe('2026-01-01T00:00:00Z');
    // The partitions the build changed: BTC and ETH of the account (and the marts' accounts and days).
    expect(scope.partitions).toBeGreaterThanOrEqual(2);
    for (const id of ['intermediate/int_spot_lot_segments_quantities', 'intermediate/int_spot_fifo_segments_quantities', 'intermediate/int_spot_average_cost_consistent', 'marts/spot_lot_matches_unique', 'marts/spot_lot_matches_consistent', 'marts/fees_match_sources', 'intermediate/int_spot_trades_numbered', 'intermediate/int_spot_average_cost_unique', 'marts/spot_lot_matches_accepted_values_cost_method', 'staging/spot_fills_unique']) {
      expect(named(results, id).scope, id).toBe('changed');
    }
    // Nothing the futures tests read changed: their passes stand.
    expect(named(results, 'marts/futures_pnl_totals_agree').scope).toBe('unchanged');
    // The books are empty without a reporting currency: rebuilt whole, int_coin_events came out empty
    // again and told its readers nothing, so the journal's tests' passes stand (a test of a model
    // rebuilt whole reads everything: below, after --full-refresh).
    expect(named(results, 'marts/journal_entries_balance').scope).toBe('unchanged');
  });

  it('records its results when called without any hook too (runJob from a benchmark): the next check builds on them', async () => {
    const before = readCheckResults(config.db);
    if (before.kind !== 'recorded') throw new Error(before.kind);
    const results = await checkJob(config, { changed: true });
    expect(failing(results)).toEqual([]);
    const after = readCheckResults(config.db);
    if (after.kind !== 'recorded') throw new Error(after.kind);
    expect(after.results.startedAt > before.results.startedAt).toBe(true);
    const [last] = await withDb((db) => queryRows<{ seq: string }>(db, 'SELECT max(change_seq) AS seq FROM settings.model_changes'));
    expect(new Set(after.results.results.map((result) => result.through?.seq))).toEqual(new Set([Number(last!.seq)]));
    // Nothing changed since: every pass stands (but a test that reads no model, checked whole each time).
    const { results: again, scope } = await check(true);
    expect(scope.tests.changed).toBe(0);
    expect(again.filter((result) => result.scope === 'whole').map((result) => result.why)).toEqual(['it reads no model']);
  });

  it('fails on a derived row the night changed in an old partition, with the rows the full check reports', async () => {
    await night([spotFill('BTCUSDT_SPBL', 'late3', '2026-01-10T12:00:00.000Z', 'sell', '0.05', '60800')]);
    // The lifo segment of the first BTC sell after the late record (rebuilt by the night) is made to take
    // one BTC more than it did: more than its sell sold, and than its lot (0.4 BTC or less) held.
    await withDb((db) =>
      db.run(`UPDATE intermediate.int_spot_lot_segments SET quantity_e18 = quantity_e18 + 1000000000000000000
              WHERE (pool, symbol, cost_method, sell_seq, match_rule, coalesce(lot_seq, -1)) = (
                SELECT (pool, symbol, cost_method, sell_seq, match_rule, coalesce(lot_seq, -1)) FROM intermediate.int_spot_lot_segments
                WHERE symbol = 'BTCUSDT_SPBL' AND cost_method = 'lifo' AND sell_at > TIMESTAMPTZ '2026-01-10 12:00:00+00' AND lot_seq IS NOT NULL
                ORDER BY sell_at, lot_seq LIMIT 1)`),
    );
    const nightly = await check(true);
    expect(nightly.scope.from).toBe('2026-01-01T00:00:00Z');
    const test = 'intermediate/int_spot_lot_segments_quantities';
    expect(failing(nightly.results)).toEqual([test]);
    expect(named(nightly.results, test).scope).toBe('changed');
    const full = await check(false);
    expect(full.scope.asked).toBe('everything');
    expect(failing(full.results)).toEqual([test]);
    // The same failure: the sell whose parts no longer add up, and the lot that gave more than it held.
    expect(named(nightly.results, test).offending).toBe(named(full.results, test).offending);
    expect(named(nightly.results, test).sample).toEqual(named(full.results, test).sample);
    expect(named(full.results, test).sample.map((row) => row.kind).sort()).toEqual(['lot', 'sell']);
  });

  it('checks a test whole after its last result was a failure, and passes again once the data is right', async () => {
    await withDb(async (db) => {
      // Rebuilt whole (--full-refresh): right again, and a record of "everything" for every model.
      await buildAll(db, { costMethods: COST_METHODS }, { fullRefresh: true });
    });
    const { results } = await check(true);
    expect(failing(results)).toEqual([]);
    expect(named(results, 'intermediate/int_spot_lot_segments_quantities').why).toBe('its last result was a failure');
    expect(named(results, 'marts/spot_lot_matches_consistent').why).toBe('marts.spot_lot_matches was rebuilt whole');
  });

  it('leaves a wrong row outside what the night changed to the full check', async () => {
    // A night that changes BTC only, from April on; then an ETH row of January is made wrong by hand.
    await night([spotFill('BTCUSDT_SPBL', 'n2a', '2026-04-02T09:00:00.000Z', 'sell', '0.05', '70500')]);
    await withDb((db) =>
      db.run(`UPDATE marts.spot_lot_matches SET realized_pnl = realized_pnl + 1
              WHERE symbol = 'ETHUSDT_SPBL' AND sell_at < TIMESTAMPTZ '2026-02-01 00:00:00+00' AND cost_method = 'fifo'`),
    );
    const night2 = await check(true);
    expect(night2.scope.from).toBe('2026-04-01T00:00:00Z');
    // Not the night's business: nothing of ETH changed, and nothing of BTC before April.
    expect(failing(night2.results)).toEqual([]);
    expect(named(night2.results, 'marts/spot_lot_matches_consistent').scope).toBe('changed');
    // The full check finds it.
    const full = await check(false);
    expect(failing(full.results)).toEqual(['marts/spot_lot_matches_consistent']);
    expect(named(full.results, 'marts/spot_lot_matches_consistent').sample.every((row) => row.symbol === 'ETHUSDT_SPBL')).toBe(true);
  });

  it('fails on a raw record that breaks an invariant, arriving late into an old partition, as the full check does', async () => {
    // A late buy whose fee (in BTC, the base coin) is as large as its quantity: it adds no units (int_spot_trades_inventory).
    await night([spotFill('BTCUSDT_SPBL', 'late-fee', '2026-02-03T08:00:00.000Z', 'buy', '0.01', '62000', '0.01')]);
    const test = 'intermediate/int_spot_trades_inventory';
    const night1 = await check(true);
    // (spot_lot_matches_consistent still fails on the row made wrong by hand before: checked whole.)
    expect(failing(night1.results)).toEqual([test, 'marts/spot_lot_matches_consistent']);
    expect(named(night1.results, test)).toMatchObject({ scope: 'changed', offending: 1 });
    const full = await check(false);
    expect(failing(full.results)).toEqual([test, 'marts/spot_lot_matches_consistent']);
    expect(named(full.results, test).sample).toEqual(named(night1.results, test).sample);
    expect(named(full.results, test).sample[0]).toMatchObject({ fill_id: 'late-fee', side: 'buy', units_in_e18: '0' });
  });

  it('checks, checking everything, what the check of what changed reads by: a lot is sold after it was bought, an average row has its trade\'s instant', async () => {
    // The check of what changed reads a lot's segments, its trade and the moving average's rows from
    // a constant instant (set by each test's first statement); the full check fails where the rows
    // break what that rests on. A lifo and a fifo segment moved to 40 days before their lot, and an
    // average row to a day before its trade; put back after.
    const [lifo, fifo] = await withDb(async (db) => [
      (await queryRows<{ sell_seq: string }>(db, "SELECT sell_seq FROM intermediate.int_spot_lot_segments WHERE symbol = 'ETHUSDT_SPBL' AND cost_method = 'lifo' AND lot_seq IS NOT NULL AND sell_at > TIMESTAMPTZ '2026-03-01 00:00:00+00' ORDER BY sell_seq LIMIT 1"))[0]!.sell_seq,
      (await queryRows<{ sell_seq: string }>(db, "SELECT sell_seq FROM intermediate.int_spot_fifo_segments WHERE symbol = 'ETHUSDT_SPBL' AND lot_seq IS NOT NULL AND sell_at > TIMESTAMPTZ '2026-03-01 00:00:00+00' ORDER BY sell_seq LIMIT 1"))[0]!.sell_seq,
    ]);
    const moved = async (sign: '-' | '+') =>
      withDb((db) =>
        db.run(`UPDATE intermediate.int_spot_lot_segments SET sell_at = sell_at ${sign} INTERVAL 40 DAY
                WHERE symbol = 'ETHUSDT_SPBL' AND cost_method = 'lifo' AND lot_seq IS NOT NULL AND sell_seq = ${lifo};
                UPDATE intermediate.int_spot_fifo_segments SET sell_at = sell_at ${sign} INTERVAL 40 DAY
                WHERE symbol = 'ETHUSDT_SPBL' AND lot_seq IS NOT NULL AND sell_seq = ${fifo};
                UPDATE intermediate.int_spot_average_cost SET event_at = event_at ${sign} INTERVAL 1 DAY WHERE symbol = 'BTCUSDT_SPBL' AND event_seq = 20`),
      );
    const before = failing((await check(false)).results);
    await moved('-');
    const { results } = await check(false);
    const invariants = ['intermediate/int_spot_average_cost_consistent', 'intermediate/int_spot_fifo_segments_quantities', 'intermediate/int_spot_lot_segments_quantities'];
    expect(failing(results).sort()).toEqual([...before, ...invariants].sort());
    for (const id of invariants.slice(1)) expect(named(results, id).sample.map((row) => row.kind), id).toContain('sold_before_lot');
    expect(named(results, invariants[0]!).sample).toEqual([expect.objectContaining({ symbol: 'BTCUSDT_SPBL', event_seq: '20', moved: true })]);
    await moved('+');
    expect(failing((await check(false)).results)).toEqual(before);
  });

  it("fails, checking everything, a FIFO segment whose lot_at is not its lot's instant: the check of what changed reads older lots' segments by it", async () => {
    const moved = (sign: '-' | '+') =>
      withDb((db) =>
        db.run(`UPDATE intermediate.int_spot_fifo_segments SET lot_at = lot_at ${sign} INTERVAL 1 DAY
                WHERE (pool, symbol, sell_seq, lot_seq) = (SELECT (pool, symbol, sell_seq, lot_seq) FROM intermediate.int_spot_fifo_segments
                  WHERE symbol = 'ETHUSDT_SPBL' AND lot_seq IS NOT NULL AND sell_at > TIMESTAMPTZ '2026-02-01 00:00:00+00' ORDER BY sell_seq, lot_seq LIMIT 1)`),
      );
    const test = 'intermediate/int_spot_fifo_segments_quantities';
    expect(named((await check(false)).results, test).status).toBe('pass');
    await moved('-');
    const { results } = await check(false);
    expect(named(results, test)).toMatchObject({ status: 'fail', offending: 1 });
    expect(named(results, test).sample).toEqual([expect.objectContaining({ kind: 'lot_at', symbol: 'ETHUSDT_SPBL' })]);
    await moved('+');
    expect(named((await check(false)).results, test).status).toBe('pass');
  });

  it("selects a part of a test by the changes of the tables it compares (of: …): a day's row and its matches by theirs, not by the month's", async () => {
    const test = 'marts/spot_realized_pnl_agrees';
    const dayRow = (date: string) => `symbol = 'BTCUSDT_SPBL' AND cost_method = 'fifo' AND sell_date = DATE '${date}'`;
    // A lot match of April 2 made wrong by hand; then a night that sells on April 3. The monthly
    // mart changed from April 1 (a month's row changes as a whole), the days and the matches from
    // April 3: the days' part reads from April 3, and leaves April 2 to the full check.
    await withDb((db) => db.run(`UPDATE marts.spot_lot_matches SET cost = cost + 1 WHERE ${dayRow('2026-04-02')}`));
    await night([spotFill('BTCUSDT_SPBL', 'n3a', '2026-04-03T09:00:00.000Z', 'sell', '0.01', '70600')]);
    const nightly = await check(true);
    expect(nightly.scope.from).toBe('2026-04-01T00:00:00Z');
    expect(named(nightly.results, test)).toMatchObject({ scope: 'changed', status: 'pass' });
    const full = await check(false);
    expect(named(full.results, test).status).toBe('fail');
    expect(named(full.results, test).sample).toEqual([expect.objectContaining({ check_name: 'day vs lot matches', symbol: 'BTCUSDT_SPBL', period: '2026-04-02' })]);
    // Put back (the full check passes the test again); then a night that sells on April 4, whose
    // day row is made wrong after the build: the check of what changed fails it as the full check does.
    await withDb((db) => db.run(`UPDATE marts.spot_lot_matches SET cost = cost - 1 WHERE ${dayRow('2026-04-02')}`));
    expect(named((await check(false)).results, test).status).toBe('pass');
    await night([spotFill('BTCUSDT_SPBL', 'n4a', '2026-04-04T09:00:00.000Z', 'sell', '0.01', '70700')]);
    await withDb((db) => db.run("UPDATE marts.spot_realized_pnl_daily SET cost = cost + 1 WHERE symbol = 'BTCUSDT_SPBL' AND cost_method = 'lifo' AND trade_date = DATE '2026-04-04'"));
    const night4 = await check(true);
    expect(named(night4.results, test)).toMatchObject({ scope: 'changed', status: 'fail', offending: 1 });
    const full4 = await check(false);
    expect(named(full4.results, test).sample).toEqual(named(night4.results, test).sample);
    expect(named(full4.results, test).sample).toEqual([expect.objectContaining({ check_name: 'day vs lot matches', symbol: 'BTCUSDT_SPBL', period: '2026-04-04' })]);
    // Put back, for the tests after this one.
    await withDb((db) => db.run("UPDATE marts.spot_realized_pnl_daily SET cost = cost - 1 WHERE symbol = 'BTCUSDT_SPBL' AND cost_method = 'lifo' AND trade_date = DATE '2026-04-04'"));
  });

  it("reads a lot bought long before the night by its keys, every segment of it: a wrong old segment of a lot the night sells from fails the check of what changed as the full check", async () => {
    // A new symbol: one lot in January, a sell of part of it two days later; checked. Then a night in
    // April sells from the same lot: more than 40 days after it, so it is one of the older lots.
    await night([spotFill('SOLUSDT_SPBL', 's1a', '2026-01-05T09:00:00.000Z', 'buy', '1', '150'), spotFill('SOLUSDT_SPBL', 's1b', '2026-01-07T09:00:00.000Z', 'sell', '0.5', '160')]);
    await check(false);
    await night([spotFill('SOLUSDT_SPBL', 's2b', '2026-04-06T09:00:00.000Z', 'sell', '0.3', '170')]);
    // The January sell's segments (not the night's) made to take 0.5 more of the lot: 1.3 taken of 1.
    await withDb((db) =>
      db.run(`UPDATE intermediate.int_spot_lot_segments SET quantity_e18 = quantity_e18 + 500000000000000000 WHERE symbol = 'SOLUSDT_SPBL' AND cost_method = 'hifo' AND sell_at < TIMESTAMPTZ '2026-02-01 00:00:00+00';
              UPDATE intermediate.int_spot_fifo_segments SET quantity_e18 = quantity_e18 + 500000000000000000 WHERE symbol = 'SOLUSDT_SPBL' AND sell_at < TIMESTAMPTZ '2026-02-01 00:00:00+00'`),
    );
    const nightly = await check(true);
    const full = await check(false);
    for (const test of ['intermediate/int_spot_lot_segments_quantities', 'intermediate/int_spot_fifo_segments_quantities']) {
      expect(named(nightly.results, test), test).toMatchObject({ scope: 'changed', status: 'fail' });
      // The lot's row as the full check gives it (the full check also fails the January sell, which the night did not change).
      const lotRows = (result: TestResult) => result.sample.filter((row) => row.kind === 'lot' && row.symbol === 'SOLUSDT_SPBL');
      expect(lotRows(named(nightly.results, test)), test).toEqual(lotRows(named(full.results, test)));
      expect(lotRows(named(nightly.results, test)), test).toEqual([expect.objectContaining({ expected_e18: '1000000000000000000', found_e18: '1300000000000000000' })]);
    }
    // Put back.
    await withDb((db) =>
      db.run(`UPDATE intermediate.int_spot_lot_segments SET quantity_e18 = quantity_e18 - 500000000000000000 WHERE symbol = 'SOLUSDT_SPBL' AND cost_method = 'hifo' AND sell_at < TIMESTAMPTZ '2026-02-01 00:00:00+00';
              UPDATE intermediate.int_spot_fifo_segments SET quantity_e18 = quantity_e18 - 500000000000000000 WHERE symbol = 'SOLUSDT_SPBL' AND sell_at < TIMESTAMPTZ '2026-02-01 00:00:00+00'`),
    );
  });

  it("fails, checking what changed, a night's FIFO segment of an older lot whose lot_at is not the lot's instant: its trade is not found at it", async () => {
    // A lot in January, checked; a night in April sells from it: one of the older lots, read by its instant.
    await night([spotFill('DOTUSDT_SPBL', 'd1a', '2026-01-05T09:00:00.000Z', 'buy', '1', '5')]);
    await check(false);
    await night([spotFill('DOTUSDT_SPBL', 'd2b', '2026-04-06T09:00:00.000Z', 'sell', '0.3', '6')]);
    const moved = (sign: '-' | '+') =>
      withDb((db) => db.run(`UPDATE intermediate.int_spot_fifo_segments SET lot_at = lot_at ${sign} INTERVAL 1 DAY WHERE symbol = 'DOTUSDT_SPBL' AND sell_at > TIMESTAMPTZ '2026-04-01 00:00:00+00'`));
    const test = 'intermediate/int_spot_fifo_segments_quantities';
    await moved('-');
    const nightly = await check(true);
    expect(named(nightly.results, test)).toMatchObject({ scope: 'changed', status: 'fail' });
    expect(named(nightly.results, test).sample).toEqual([expect.objectContaining({ kind: 'lot_at', symbol: 'DOTUSDT_SPBL' })]);
    expect(named((await check(false)).results, test).sample).toEqual([expect.objectContaining({ kind: 'lot_at', symbol: 'DOTUSDT_SPBL' })]);
    await moved('+');
    expect(named((await check(false)).results, test).status).toBe('pass');
  });

  it("numbers a changed partition's rows on from the last number before them, found in the days before the change or, for a partition idle longer, by its keys: a gap where the night's numbers start fails the check of what changed as the full check", async () => {
    const test = 'intermediate/int_spot_trades_numbered';
    // The night's rows of a partition numbered one too far: a gap between the kept rows and the night's.
    const shifted = (symbol: string, from: string, by: 1 | -1) =>
      withDb((db) => db.run(`UPDATE intermediate.int_spot_trades SET event_seq = event_seq + ${by} WHERE symbol = '${symbol}' AND event_at >= TIMESTAMPTZ '${from}'`));
    const symbols = (result: TestResult) => result.sample.map((row) => row.symbol);
    // ADA: a new symbol bought on March 1; its sells come weeks apart, so the last number before a
    // night's sell is read by the partition's keys. BTC: late sells in February, with fills of the
    // partition in the two days before them.
    await night([spotFill('ADAUSDT_SPBL', 'a0', '2026-03-01T09:00:00.000Z', 'buy', '100', '0.5')]);
    for (const [symbol, fine, wrong] of [
      ['ADAUSDT_SPBL', ['a1', '2026-03-20T09:00:00.000Z', '0.6'], ['a2', '2026-04-15T09:00:00.000Z', '0.7']],
      ['BTCUSDT_SPBL', ['late4', '2026-02-12T12:00:00.000Z', '62500'], ['late5', '2026-02-14T12:00:00.000Z', '62600']],
    ] as const) {
      await night([spotFill(symbol, fine[0], fine[1], 'sell', '1', fine[2])]);
      expect(named((await check(true)).results, test), symbol).toMatchObject({ scope: 'changed', status: 'pass' });
      await night([spotFill(symbol, wrong[0], wrong[1], 'sell', '1', wrong[2])]);
      await shifted(symbol, wrong[1], 1);
      const nightly = await check(true);
      expect(named(nightly.results, test), symbol).toMatchObject({ scope: 'changed', status: 'fail' });
      const full = await check(false);
      expect(named(full.results, test).status, symbol).toBe('fail');
      expect(symbols(named(nightly.results, test)), symbol).toEqual([symbol]);
      expect(symbols(named(full.results, test)), symbol).toEqual([symbol]);
      await shifted(symbol, wrong[1], -1);
      // Right again: a pass the next night's check of what changed builds on.
      expect(named((await check(false)).results, test).status, symbol).toBe('pass');
    }
  });
});

describe('{{ changed }} and {{ changed_keys }} in a test', () => {
  const partition: ChangedPartition = {
    account: 'main',
    symbol: 'BTCUSDT_SPBL',
    fromAt: '2026-01-10 12:00:00+00',
    fromUs: Date.UTC(2026, 0, 10, 12) * 1000,
    dayStart: '2026-01-10 00:00:00+00',
    monthStart: '2026-01-01 00:00:00+00',
    fromDate: '2026-01-10',
    fromMonth: '2026-01-01',
  };
  const sql = `select * from t where {{ changed(account: t.pool, symbol: t.symbol, at: t.sell_at) }} and x
{{ changed_keys(table: intermediate.int_spot_lot_segments, alias: s, key: pool lot_seq, account: pool, at: sell_at, cut: day) }}`;

  it('checking everything, is the query it always was', () => {
    expect(expandChanged(sql, 'everything')).toBe('select * from t where true and x\n');
  });

  it('checking what changed, selects the changed partitions from their instant, with the earliest as a constant', () => {
    const older = { ...partition, account: '*', symbol: 'ETHUSDT_SPBL', fromAt: '2026-01-05 00:00:00+00', fromUs: Date.UTC(2026, 0, 5) * 1000, dayStart: '2026-01-05 00:00:00+00' };
    expect(expandChanged(sql, [partition, older])).toBe(
      "select * from t where (t.sell_at >= TIMESTAMPTZ '2026-01-05 00:00:00+00' AND ((t.pool = 'main' OR t.pool = '*' OR t.pool IS NULL) AND (t.symbol = 'BTCUSDT_SPBL' OR t.symbol IS NULL) AND t.sell_at >= TIMESTAMPTZ '2026-01-10 12:00:00+00' OR (t.symbol = 'ETHUSDT_SPBL' OR t.symbol IS NULL) AND t.sell_at >= TIMESTAMPTZ '2026-01-05 00:00:00+00')) and x\n" +
        "SEMI JOIN (SELECT DISTINCT _changed.pool, _changed.lot_seq FROM intermediate.int_spot_lot_segments AS _changed WHERE _changed.sell_at >= TIMESTAMPTZ '2026-01-05 00:00:00+00' AND ((_changed.pool = 'main' OR _changed.pool = '*' OR _changed.pool IS NULL) AND _changed.sell_at >= TIMESTAMPTZ '2026-01-10 00:00:00+00' OR _changed.sell_at >= TIMESTAMPTZ '2026-01-05 00:00:00+00')) AS _changed_keys ON _changed_keys.pool = s.pool AND _changed_keys.lot_seq = s.lot_seq",
    );
    // Nothing changed: no row.
    expect(expandChanged('where {{ changed(account: a) }}', [])).toBe('where (false)');
  });

  it('a bounded change (a sell uk matched again, to_at) selects its rows from its instant to its end only, beside the open-ended one; one an earlier open-ended change covers is dropped', () => {
    const sellAt = { fromAt: '2026-01-02 08:00:00+00', fromUs: Date.UTC(2026, 0, 2, 8) * 1000, dayStart: '2026-01-02 00:00:00+00', monthStart: '2026-01-01 00:00:00+00', fromDate: '2026-01-02', fromMonth: '2026-01-01' };
    const bounded: ChangedPartition = {
      ...partition,
      ...sellAt,
      toAt: '2026-01-02 09:30:00+00',
      toUs: Date.UTC(2026, 0, 2, 9, 30) * 1000,
      dayEnd: '2026-01-03 00:00:00+00',
      monthEnd: '2026-02-01 00:00:00+00',
      toDate: '2026-01-02',
      toMonthEnd: '2026-02-01',
    };
    const merged = mergePartitions([partition, bounded, bounded]);
    expect(merged).toEqual([partition, bounded]);
    expect(expandChanged('where {{ changed(account: t.pool, symbol: t.symbol, at: t.sell_at) }}', merged)).toBe(
      "where (t.sell_at >= TIMESTAMPTZ '2026-01-02 08:00:00+00' AND ((t.pool = 'main' OR t.pool = '*' OR t.pool IS NULL) AND (t.symbol = 'BTCUSDT_SPBL' OR t.symbol IS NULL) AND t.sell_at >= TIMESTAMPTZ '2026-01-10 12:00:00+00' OR (t.pool = 'main' OR t.pool = '*' OR t.pool IS NULL) AND (t.symbol = 'BTCUSDT_SPBL' OR t.symbol IS NULL) AND t.sell_at >= TIMESTAMPTZ '2026-01-02 08:00:00+00' AND t.sell_at <= TIMESTAMPTZ '2026-01-02 09:30:00+00'))",
    );
    // Cut to days or months, and on dates: to the end of its day or month.
    expect(expandChanged('where {{ changed(account: p, at: i, cut: day) }} and {{ changed(account: p, date: d, cut: month) }} and {{ changed(account: p, date: d) }}', [bounded])).toBe(
      "where (i >= TIMESTAMPTZ '2026-01-02 00:00:00+00' AND ((p = 'main' OR p = '*' OR p IS NULL) AND i >= TIMESTAMPTZ '2026-01-02 00:00:00+00' AND i < TIMESTAMPTZ '2026-01-03 00:00:00+00')) and (d >= DATE '2026-01-01' AND ((p = 'main' OR p = '*' OR p IS NULL) AND d >= DATE '2026-01-01' AND d < DATE '2026-02-01')) and (d >= DATE '2026-01-02' AND ((p = 'main' OR p = '*' OR p IS NULL) AND d >= DATE '2026-01-02' AND d <= DATE '2026-01-02'))",
    );
    // An open-ended change from before it covers it: only that one is left.
    const earlier = { ...partition, fromAt: '2026-01-01 00:00:00+00', fromUs: Date.UTC(2026, 0, 1) * 1000 };
    expect(mergePartitions([bounded, earlier])).toEqual([earlier]);
  });

  it("reads the change record of a database from before the bounded changes (no to_at column) as open-ended, and one with it as it says", async () => {
    const db = await Database.open(':memory:', { bookkeeping: false });
    try {
      await db.run(`CREATE SCHEMA settings;
        CREATE TABLE settings.model_changes (change_seq BIGINT NOT NULL, model VARCHAR NOT NULL, account VARCHAR, symbol VARCHAR, from_at TIMESTAMPTZ, recorded_at TIMESTAMPTZ NOT NULL);
        INSERT INTO settings.model_changes VALUES (1, 'marts.m', 'main', 'BTCUSDT_SPBL', '2026-01-02 08:00:00+00', now())`);
      const before = (await readChangeLog(db, [{ seq: 0, at: '' }])).after(0, ['marts.m']);
      expect(before.map(({ fromAt, toAt }) => ({ fromAt, toAt }))).toEqual([{ fromAt: '2026-01-02 08:00:00+00', toAt: null }]);
      await db.run(`ALTER TABLE settings.model_changes ADD COLUMN to_at TIMESTAMPTZ;
        INSERT INTO settings.model_changes VALUES (2, 'marts.m', 'main', 'BTCUSDT_SPBL', '2026-01-03 08:00:00+00', now(), '2026-01-03 09:30:00+00')`);
      const after = (await readChangeLog(db, [{ seq: 0, at: '' }])).after(0, ['marts.m']);
      expect(after.map(({ fromAt, toAt, dayEnd, toDate }) => ({ fromAt, toAt, dayEnd, toDate }))).toEqual([
        { fromAt: '2026-01-02 08:00:00+00', toAt: null, dayEnd: null, toDate: null },
        { fromAt: '2026-01-03 08:00:00+00', toAt: '2026-01-03 09:30:00+00', dayEnd: '2026-01-04 00:00:00+00', toDate: '2026-01-03' },
      ]);
    } finally {
      db.close();
    }
  });

  it('with of: …, selects by the changes of the models it names only; without, by those of every model the test reads', () => {
    const month = { ...partition, fromAt: '2026-01-01 00:00:00+00', fromUs: Date.UTC(2026, 0, 1) * 1000, dayStart: '2026-01-01 00:00:00+00', fromDate: '2026-01-01' };
    const byModel = new Map([
      ['marts.days', [partition]],
      ['marts.months', [month]],
    ]);
    const text = 'where {{ changed(account: a, date: d, of: marts.days) }} or {{ changed(account: a, date: d) }} or {{ changed(account: a, date: d, of: marts.other) }}';
    expect(expandChanged(text, byModel)).toBe(
      "where (d >= DATE '2026-01-10' AND ((a = 'main' OR a = '*' OR a IS NULL) AND d >= DATE '2026-01-10')) or (d >= DATE '2026-01-01' AND ((a = 'main' OR a = '*' OR a IS NULL) AND d >= DATE '2026-01-01')) or (false)",
    );
    // Checking everything, it is true as any other.
    expect(expandChanged(text, 'everything')).toBe('where true or true or true');
  });

  it('a test may set constants first: its statements split at each ; outside strings, quoted names and comments', () => {
    const text = `-- a header; with a semicolon
set variable x = (select ';' || 'it''s;' as "a;b" /* ; */);
-- the query; last
select getvariable('x');
-- trailing; comment
`;
    expect(splitStatements(text)).toEqual([
      `-- a header; with a semicolon\nset variable x = (select ';' || 'it''s;' as "a;b" /* ; */)`,
      "-- the query; last\nselect getvariable('x')",
    ]);
    expect(splitStatements('select 1')).toEqual(['select 1']);
    // A long header of comments before a statement (the line-by-line test of a statement of comments
    // only: a pattern backtracking in the number of lines took minutes at 25 lines, and would never end at 60).
    const header = Array.from({ length: 60 }, (_, line) => `-- line ${line} of the header`).join('\n');
    expect(splitStatements(`${header}\nset variable x = 1;\n${header}\nselect 1;\n${header}\n`)).toEqual([`${header}\nset variable x = 1`, `${header}\nselect 1`]);
  });

  it('refuses a malformed one, naming the file', () => {
    expect(() => parseChangedConditions('{{ changed(acount: a) }}', 'sql/marts/tests/x.sql')).toThrow(/x\.sql.*"acount: a" is not one of account/);
    expect(() => parseChangedConditions('{{ changed(at: a, date: b) }}', 'x.sql')).toThrow(/not both/);
    expect(() => parseChangedConditions('{{ changed_keys(table: marts.x, key: a) }}', 'x.sql')).toThrow(/table, alias and key are required/);
    expect(() => parseChangedConditions('{{ changed(cut: week) }}', 'x.sql')).toThrow(/cut is row, day or month/);
    expect(() => parseChangedConditions('{{ changed(of: marts.a days) }}', 'x.sql')).toThrow(/of lists models \(<layer>\.<name>\) separated by spaces, not "days"/);
  });
});

describe('the check of what changed, the books against the exchange (a reporting currency)', () => {
  let books: Readonly<Config>;
  const settings = { reportingCurrency: 'USDT', reportingTimeZone: 'Europe/London' } as const;
  /** A futures fill closing a long position that realized `pnl` USDT, at a fee of 0.1. */
  const pnlFill = (tradeId: string, at: string, pnl: string) => futuresFill(tradeId, 'cmt_btcusdt', at, 'CLOSE_LONG', '1', '100', '0.1', pnl);
  const assets = (equity: string) => [{ coinId: 2, coinName: 'USDT', available: equity, frozen: '0', equity }];
  /** A night: a futures fill and a sync's spot assets snapshot, then an incremental build. */
  async function booksNight(day: string, pnl: string): Promise<void> {
    const db = await Database.open(books.db);
    try {
      await insertHistory(db, 'futures_fills', [pnlFill(`f${day}`, `2026-01-${day}T03:00:00Z`, pnl)]);
      await insertSnapshot(db, 'spot_assets', `2026-01-${day}T12:00:00Z`, assets('1000'), { runId: `r${day}` });
      const results = await buildAll(db, settings);
      expect(results.find((result) => result.id === 'marts.holdings_vs_exchange')?.how).toBe('incremental');
    } finally {
      db.close();
    }
  }
  const checkBooks = (changed: boolean) => checkJob(books, { changed });
  const test = 'marts/holdings_vs_exchange_lots';

  beforeAll(async () => {
    books = resolveConfig({ db: path.join(folder, 'books.duckdb') }, {}, folder);
    const db = await openModelDb(books.db);
    try {
      await insertSnapshot(db, 'futures_contracts', '2026-01-01T00:00:00Z', [{ symbol: 'cmt_btcusdt', underlying_index: 'BTC', quote_currency: 'USDT', coin: 'USDT', contract_val: '0.0001', forwardContractFlag: true }], { runId: 'r01' });
      await insertHistory(db, 'funding_bills', [{ billId: '11', coinId: 2, coinName: 'USDT', bizType: 'deposit', deltaAmount: '1000', afterAmount: '1000', fees: '0', cTime: String(Date.parse('2026-01-01T10:00:00Z')) }]);
      for (const day of ['02', '03', '04']) {
        await insertHistory(db, 'futures_fills', [pnlFill(`f${day}`, `2026-01-${day}T03:00:00Z`, '5')]);
        await insertSnapshot(db, 'spot_assets', `2026-01-${day}T12:00:00Z`, assets('1000'), { runId: `r${day}` });
      }
      await buildAll(db, settings);
    } finally {
      db.close();
    }
    expect(failing(await checkBooks(false))).toEqual([]);
  });

  it("checks the night's instants, reading the fills of their days: a books quantity the night made wrong fails it as the full check", async () => {
    await booksNight('05', '7');
    // The night's instant is made wrong: the lots no longer hold what the books say.
    await withDbAt(books.db, (db) => db.run("UPDATE marts.holdings_vs_exchange SET books_quantity = books_quantity + 1 WHERE snapshot_at = TIMESTAMPTZ '2026-01-05 12:00:00+00'"));
    const wrong = await checkBooks(true);
    expect(failing(wrong)).toEqual([test]);
    expect(named(wrong, test).scope).toBe('changed');
    const full = await checkBooks(false);
    expect(failing(full)).toEqual([test]);
    expect(named(wrong, test).sample).toEqual(named(full, test).sample);
    expect(named(full, test).sample).toEqual([expect.objectContaining({ pool: 'main', coin: 'USDT', snapshot_at: '2026-01-05 12:00:00+00' })]);
  });

  it('leaves a wrong instant before what the night changed to the full check', async () => {
    // Put right by a whole rebuild, checked whole; then a night, and an older instant made wrong by hand.
    await withDbAt(books.db, (db) => buildAll(db, settings, { fullRefresh: true }));
    expect(failing(await checkBooks(true))).toEqual([]);
    await booksNight('06', '3');
    await withDbAt(books.db, (db) => db.run("UPDATE marts.holdings_vs_exchange SET books_quantity = books_quantity + 1 WHERE snapshot_at = TIMESTAMPTZ '2026-01-03 12:00:00+00'"));
    // The night's instants are right: the test passes on them.
    const nightly = await checkBooks(true);
    expect(named(nightly, test)).toMatchObject({ status: 'pass', scope: 'changed' });
    const full = await checkBooks(false);
    expect(failing(full)).toEqual([test]);
    expect(named(full, test).sample).toEqual([expect.objectContaining({ snapshot_at: '2026-01-03 12:00:00+00' })]);
  });
});

describe('exledger check, as deployed', () => {
  it('checks everything by default and what changed with --changed, saying which in its last line', async () => {
    const full = await runCli(['check', '--db', config.db]);
    expect(full.code).toBe(1);
    expect(full.stdout).toMatch(/^check: 2 failed \(intermediate\/int_spot_trades_inventory, marts\/spot_lot_matches_consistent\), [\d,]+ passed; checked everything$/m);
    const changed = await runCli(['check', '--db', config.db, '--changed']);
    // The failures are checked whole (their last result was a failure): they fail again, and say why.
    // Nothing changed since: every other test's pass stands but the one that reads no model (the catalog).
    expect(changed.code).toBe(1);
    expect(changed.stdout).toMatch(/^FAIL {2}marts\/spot_lot_matches_consistent +\d+\.\d\d s {2}whole \(its last result was a failure\) {2}\d+ offending rows?$/m);
    expect(changed.stdout).toMatch(/^check: 2 failed \(.*\), [\d,]+ passed; checked what changed since the last check: nothing \(0 tests on those rows, 3 whole, [\d,]+ unchanged since their last pass\)$/m);
    const both = await runCli(['check', '--db', config.db, '--changed', '--full']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--changed and --full cannot be given together');
  });
});
