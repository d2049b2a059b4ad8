import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, watch } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAMS } from '../pipelines/index.ts';
import { toRawRecords } from '../src/extract/records.ts';
import type { HistoryStream } from '../src/extract/stream.ts';
import { modelPlacements } from '../src/jobs/publish-job.ts';
import type { CostMethod } from '../src/models/settings.ts';
import { Database } from '../src/store/database.ts';
import { resetStream } from '../src/store/meta-store.ts';
import { publishDatabase, publishedSlots, type PublishResult } from '../src/store/publish.ts';
import { recordRawChange, writeHistoryWindow } from '../src/store/raw-store.ts';
import { startAnalyst } from './support/analyst-process.ts';
import { buildAll, futuresAccountRecord, futuresFill, insertSnapshot, openModelDb, spotFill } from './support/model-db.ts';
import { copyDifferences, startPublishProcess } from './support/published-copy.ts';

/**
 * The incremental publish (docs/plans/incremental-publish.md): two copies behind the published
 * name, the standby brought up to date with what changed since its state. After every night the
 * published copy must hold exactly what the database holds (every table of every schema, row for
 * row with EXCEPT ALL both ways, and the catalog: comments, macros, sequences); an analyst in
 * another process keeps the copy they opened; a publish killed at any instant leaves the published
 * copy as it was; where the incremental way cannot be used the whole file is copied, saying why.
 */

const DAY_MS = 86_400_000;
const BASE_MS = Date.UTC(2025, 0, 1);
const DECLARATIONS = new Map(STREAMS.map((stream) => [stream.name, stream as HistoryStream]));
const COST_METHODS: CostMethod[] = ['fifo', 'average', 'lifo', 'hifo', 'uk'];
/**
 * Days cut in New York, so the date placements are not UTC's. No reporting currency: the books'
 * models, rebuilt whole on every change, would hold most of the rows of so small a ledger (and
 * the publish would rightly copy the file instead).
 */
const SETTINGS = { costMethods: COST_METHODS, reportingTimeZone: 'America/New_York' } as const;
const ACCOUNTS = ['main', 'alt'] as const;
const SYMBOLS = ['BTCUSDT_SPBL', 'ETHUSDT_SPBL'] as const;

const at = (day: number, hour: number) => new Date(BASE_MS + day * DAY_MS + hour * 3_600_000).toISOString();

/** Spot buys and sells of each symbol a day and account: enough that the night's partitions, not the small tables, hold most rows. */
const FILLS_A_DAY = 8;

/** A day of one account's trading: buys and sells of each spot symbol, futures round trips and a deposit; ids from the day and account. */
function dayOf(day: number, account: number): { spot: Map<string, object[]>; futures: object[]; bills: object[] } {
  const id = (n: number) => `${day + 100}${account}${String(n).padStart(3, '0')}`;
  const spot = new Map<string, object[]>();
  SYMBOLS.forEach((symbol, index) => {
    const price = symbol.startsWith('BTC') ? 30_000 + day * 150 + index : 2_000 + day * 9;
    spot.set(
      symbol,
      Array.from({ length: FILLS_A_DAY }, (_, n) =>
        n % 2 === 0
          ? spotFill(symbol, id(100 * index + n), at(day, 1 + n), 'buy', `${1 + ((day + n) % 3)}.5`, `${price + n}`, '0.001')
          : spotFill(symbol, id(100 * index + n), at(day, 12 + n), 'sell', `${1 + ((day + n) % 2)}.25`, `${price + 75 + n}.5`, '0.75'),
      ),
    );
  });
  const futures = Array.from({ length: FILLS_A_DAY / 2 }, (_, n) => [
    futuresFill(id(300 + 2 * n), 'BTCUSDT_UMCBL', at(day, 2 + n), 'OPEN_LONG', '0.5', `${15_000 + n}`, '-1.5', '0'),
    futuresFill(id(301 + 2 * n), 'BTCUSDT_UMCBL', at(day, 14 + n), 'CLOSE_LONG', '0.5', `${15_100 + n}`, '-1.5', `${100 + n}`),
  ]).flat();
  const bills = [{ billId: id(400), coinId: 2, coinName: 'USDT', bizType: 'deposit', deltaAmount: '100', afterAmount: `${100 * (day + 1)}`, fees: '0', cTime: String(BASE_MS + day * DAY_MS + 3_600_000) }];
  return { spot, futures, bills };
}

/** Writes days [from, to) as one sync's windows (writeHistoryWindow: the rows and their change log), plus `extra` fills of the first day. */
async function syncDays(db: Database, from: number, to: number, runId: string, extra: { account: string; symbol: string; fill: object }[] = []): Promise<void> {
  const window = { startMs: BASE_MS + from * DAY_MS, endMs: BASE_MS + to * DAY_MS };
  const write = (table: string, account: string, partition: string, records: readonly object[]) =>
    writeHistoryWindow(db, { table, account, partition, stream: table, runId, records: toRawRecords(DECLARATIONS.get(table)!, records as Record<string, unknown>[], window.startMs), window });
  for (const [index, account] of ACCOUNTS.entries()) {
    const days = Array.from({ length: to - from }, (_, offset) => dayOf(from + offset, index));
    for (const symbol of SYMBOLS) {
      const late = extra.filter((record) => record.account === account && record.symbol === symbol).map((record) => record.fill);
      await write('spot_fills', account, `symbol=${symbol}`, [...days.flatMap((day) => day.spot.get(symbol)!), ...late]);
    }
    await write('futures_fills', account, '', days.flatMap((day) => day.futures));
    await write('funding_bills', account, '', days.flatMap((day) => day.bills));
  }
}

async function withDb<T>(file: string, work: (db: Database) => Promise<T>): Promise<T> {
  const db = await openModelDb(file);
  try {
    return await work(db);
  } finally {
    db.close();
  }
}

describe('nights of a ledger built by the real runner: the published copy equals the database after each', () => {
  let dir: string;
  let file: string;
  const publish = () => publishDatabase(file, { placements: modelPlacements() });
  /** Publishes and checks the copy: it equals the database, catalog and every table, row for row. */
  const night = async (): Promise<PublishResult> => {
    const result = await publish();
    if (process.env.PUBLISH_DEBUG !== undefined) console.log(`night: ${result.how} ${result.why ?? ''}`);
    expect(await copyDifferences(file, result.path)).toEqual([]);
    expect(statSync(result.path).mode & 0o222).toBe(0);
    return result;
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'exledger-publish-nights-'));
    file = path.join(dir, 'ledger.duckdb');
    await withDb(file, async (db) => {
      await syncDays(db, 0, 6, 'night-0');
      await insertSnapshot(db, 'futures_accounts', at(6, 0), [futuresAccountRecord('1')]);
      await buildAll(db, SETTINGS);
    });
  }, 300_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the first two nights copy the whole file (one copy each); from the third on, the standby takes only what changed', async () => {
    expect(await night()).toMatchObject({ how: 'full', why: 'the first publish: no copy to bring up to date yet' });
    // The night's sync re-reads the last day (its lookback) and finds a fill it had not seen.
    await withDb(file, async (db) => {
      await syncDays(db, 5, 7, 'night-1', [{ account: 'main', symbol: 'BTCUSDT_SPBL', fill: spotFill('BTCUSDT_SPBL', '5990', at(5, 23), 'sell', '0.75', '30800') }]);
      await buildAll(db, SETTINGS);
    });
    expect(await night()).toMatchObject({ how: 'full', why: 'the second copy is made (the first publishes make both)' });

    await withDb(file, async (db) => {
      await syncDays(db, 7, 8, 'night-2');
      await insertSnapshot(db, 'futures_accounts', at(8, 0), [futuresAccountRecord('2.5')]);
      await buildAll(db, SETTINGS);
    });
    const third = await night();
    expect(third).toMatchObject({ how: 'incremental' });
    // Only what the night changed: the small tables, the night's partitions, not every table.
    expect(third.tables!.changed).toBeLessThan(third.tables!.of);
    const [a, b] = publishedSlots(third.path);
    expect([statSync(a).ino, statSync(b).ino]).toContain(statSync(third.path).ino);
    // Nothing beside the copies: no WAL, no temporary file.
    expect(readdirSync(dir).filter((name) => /\.wal$|\.tmp-/.test(name))).toEqual([]);
  }, 300_000);

  it('a late record in an old partition (a backfill of day 2) reaches the published copy: the spot models from that day on', async () => {
    const late = spotFill('BTCUSDT_SPBL', '2990', at(2, 23), 'sell', '0.4', '31234.5');
    await withDb(file, async (db) => {
      await syncDays(db, 8, 9, 'night-3');
      await syncDays(db, 2, 3, 'backfill', [{ account: 'main', symbol: 'BTCUSDT_SPBL', fill: late }]);
      await buildAll(db, SETTINGS);
    });
    const result = await night();
    expect(result).toMatchObject({ how: 'incremental' });
    const db = await Database.open(result.path, { readOnly: true });
    try {
      expect(await db.all("SELECT fill_id, CAST(fill_quantity AS VARCHAR) AS q FROM staging.spot_fills WHERE fill_id = '2990'")).toEqual([{ fill_id: '2990', q: '0.400000000000000000' }]);
      // Every method that matches lots matched the late sell (the average has no lots), from lots of days 0 to 2.
      expect(await db.all("SELECT DISTINCT cost_method FROM marts.spot_lot_matches WHERE sell_fill_id = '2990' ORDER BY ALL")).toEqual(['fifo', 'hifo', 'lifo', 'uk'].map((method) => ({ cost_method: method })));
    } finally {
      db.close();
    }
  }, 300_000);

  it('a stream synced again from the start for one account (sync --full-refresh) is published incrementally too', async () => {
    await withDb(file, async (db) => {
      await resetStream(db, 'alt', 'futures_fills', 'futures_fills');
      await syncDays(db, 0, 10, 'refresh');
      await buildAll(db, SETTINGS);
    });
    expect(await night()).toMatchObject({ how: 'incremental' });
  }, 300_000);

  it('a full rebuild of the models (build --full-refresh) is published as a whole copy, saying why', async () => {
    await withDb(file, (db) => buildAll(db, SETTINGS, { fullRefresh: true }));
    const result = await night();
    expect(result.how).toBe('full');
    expect(result.why).toMatch(/^most of the database changed: [\d,]+ of its [\d,]+ rows are in tables rebuilt whole \(/);
  }, 300_000);

  it('a schema change (a new column) is published as a whole copy naming it, twice (one per copy); then incremental again', async () => {
    await withDb(file, async (db) => {
      await db.run('ALTER TABLE settings.model_builds ADD COLUMN IF NOT EXISTS published_test VARCHAR');
      await syncDays(db, 10, 11, 'night-5');
      await buildAll(db, SETTINGS);
    });
    const changed = await night();
    expect(changed.how).toBe('full');
    expect(changed.why).toMatch(/^the schema changed \(only in the database: column settings\.model_builds\.published_test VARCHAR/);
    await withDb(file, async (db) => {
      await syncDays(db, 11, 12, 'night-6');
      await buildAll(db, SETTINGS);
    });
    expect(await night()).toMatchObject({ how: 'full', why: expect.stringMatching(/^the schema changed/) });
    await withDb(file, async (db) => {
      await syncDays(db, 12, 13, 'night-7');
      await buildAll(db, SETTINGS);
    });
    expect(await night()).toMatchObject({ how: 'incremental' });
  }, 300_000);

  it('a database put in its place (another history under the same name) is copied whole: the copies are not its past', async () => {
    const other = path.join(dir, 'other.duckdb');
    await withDb(other, async (db) => {
      // The same schema as the database it replaces (the column added above): only its history differs.
      await db.run('CREATE SCHEMA IF NOT EXISTS settings; ALTER TABLE settings.model_builds ADD COLUMN IF NOT EXISTS published_test VARCHAR').catch(() => undefined);
      await syncDays(db, 0, 3, 'other-0');
      await buildAll(db, SETTINGS);
      await db.run('ALTER TABLE settings.model_builds ADD COLUMN IF NOT EXISTS published_test VARCHAR');
    });
    rmSync(file);
    copyFileSync(other, file);
    rmSync(other);
    const result = await night();
    expect(result.how).toBe('full');
    expect(result.why).toMatch(/^(the other copy is not a past state of this database|the other copy's last build record)/);
  }, 300_000);
});

/**
 * A raw history of `rows` spot fills over days [0, days), stored as a sync stores them (one
 * logged window per day), in SQL: enough rows that a publish takes a while.
 */
async function writeRawDays(db: Database, fromDay: number, toDay: number, perDay: number): Promise<void> {
  for (let day = fromDay; day < toDay; day += 1) {
    const start = BASE_MS + day * DAY_MS;
    const rows = await db.run(
      `INSERT INTO raw.spot_fills
       SELECT 'main', 'symbol=BTCUSDT_SPBL', CAST(${day} * 1000000 + i AS VARCHAR), ${start} + i * 1000,
         json_object('fillId', CAST(${day} * 1000000 + i AS VARCHAR), 'symbol', 'BTCUSDT_SPBL', 'cTime', CAST(${start} + i * 1000 AS VARCHAR), 'note', md5(CAST(i AS VARCHAR))),
         'raw-${day}', now()
       FROM range(${perDay}) AS t(i)`,
    );
    await recordRawChange(db, { account: 'main', table: 'spot_fills', kind: 'window', minEventMs: start, maxEventMs: start + DAY_MS - 1, rows, runId: `raw-${day}` });
  }
}

function sha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** The answer an analyst checks: how many rows of each night, and a digest of them all. */
const NIGHTS = "SELECT count(*)::INTEGER AS n, max(_event_ms)::VARCHAR AS last, md5(string_agg(_key, ',' ORDER BY _key)) AS digest FROM raw.spot_fills";

describe('analysts in other processes, and a publish killed outright (SIGKILL)', () => {
  let dir: string;
  let file: string;
  let day = 0;
  const nextNight = async (perDay = 20_000) => {
    await withDb(file, (db) => writeRawDays(db, day, day + 1, perDay));
    day += 1;
  };
  const publish = () => publishDatabase(file);
  const answer = async (copy: string) => {
    const db = await Database.open(copy, { readOnly: true });
    try {
      return await db.all(NIGHTS);
    } finally {
      db.close();
    }
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'exledger-publish-analysts-'));
    file = path.join(dir, 'exledger.duckdb');
    await withDb(file, (db) => writeRawDays(db, 0, 30, 10_000));
    day = 30;
    expect(await publish()).toMatchObject({ how: 'full' });
    await nextNight();
    expect(await publish()).toMatchObject({ how: 'full' });
  }, 300_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('an analyst holding the copy across a night keeps its state, a new opener sees the night; across two nights the held copy is not touched (a whole copy, saying so)', async () => {
    await nextNight();
    const first = await publish();
    expect(first).toMatchObject({ how: 'incremental' });
    const before = await answer(first.path);
    const analyst = startAnalyst(first.path);
    try {
      await analyst.ready;
      expect(await analyst.query(NIGHTS)).toEqual(before);

      // Night 1: the other copy is brought up to date and published; the analyst's is not touched.
      await nextNight();
      const second = await publish();
      expect(second).toMatchObject({ how: 'incremental' });
      expect(await analyst.query(NIGHTS)).toEqual(before);
      const afterFirst = await answer(second.path);
      expect(afterFirst).not.toEqual(before);
      expect(await copyDifferences(file, second.path)).toEqual([]);

      // Night 2: the standby is the analyst's copy, still open: a whole copy under another inode.
      await nextNight();
      const third = await publish();
      expect(third.how).toBe('full');
      expect(third.why).toMatch(new RegExp(`^an analyst still has the other copy published \\S+ open \\(process ${analyst.child.pid}\\)$`));
      expect(await analyst.query(NIGHTS)).toEqual(before);
      expect(await copyDifferences(file, third.path)).toEqual([]);
    } finally {
      expect(await analyst.quit()).toBe(0);
    }
    // The analyst gone, the next nights are incremental again.
    await nextNight();
    expect(await publish()).toMatchObject({ how: 'incremental' });
    await nextNight();
    const last = await publish();
    expect(last).toMatchObject({ how: 'incremental' });
    expect(await copyDifferences(file, last.path)).toEqual([]);
  }, 300_000);

  it('a publish killed at any instant leaves the published copy whole (the old night or the new), and the next publish completes it', async () => {
    const published = path.join(dir, 'exledger.published.duckdb');
    // How long a publish takes in a process of its own on this machine (a night's, uncut): the kill
    // points are shares of it, so they fall inside the publish on a fast machine and a slow one
    // alike (fixed milliseconds fell after its end on a faster one).
    await nextNight();
    const timed = await startPublishProcess(file).done;
    expect(timed, timed.stderr).toMatchObject({ code: 0, result: { how: 'incremental' } });
    const publishMs = timed.publishMs!;
    // Kill points: these shares of it after the publish starts (the attach, the plan, the rows, the
    // commit, the checkpoint, the swap), and as the standby's write-ahead log appears (its
    // transaction commits).
    const shares: (number | 'wal')[] = [0, 0.04, 0.1, 'wal', 0.18, 0.27, 0.36, 0.48, 0.6, 0.75, 0.9];
    const points = shares.map((share) => (share === 'wal' ? share : Math.round(share * publishMs)));
    const killedAt: string[] = [];
    for (const point of points) {
      await nextNight();
      const before = { hash: sha256(published), answer: await answer(published) };
      const slots = publishedSlots(published);
      const run = startPublishProcess(file, point === 'wal' ? undefined : point);
      const watcher =
        point === 'wal'
          ? watch(dir, (_event, name) => {
              if (name !== null && slots.some((slot) => name === `${path.basename(slot)}.wal`)) run.child.kill('SIGKILL');
            })
          : undefined;
      const ended = await run.done;
      watcher?.close();
      killedAt.push(ended.signal === 'SIGKILL' ? `killed at ${point}` : `ended before ${point} (${ended.result?.how ?? ended.stderr})`);
      // The published copy is the previous night's, byte for byte, or, if the kill came after
      // its rename, this night's: whole either way.
      if (sha256(published) !== before.hash) expect(await answer(published), `after a kill at ${point}`).toEqual(await answer(file));
      else expect(await answer(published)).toEqual(before.answer);
      // The next publish completes, saying how, and leaves nothing of the killed one.
      const next = await publish();
      expect(['incremental', 'full']).toContain(next.how);
      expect(await answer(published)).toEqual(await answer(file));
      expect(readdirSync(dir).filter((name) => /\.tmp-|\.wal$/.test(name))).toEqual([]);
    }
    // The sweep killed publishes mid-way (one that had ended first holds the assertions too).
    expect(killedAt.filter((text) => text.startsWith('killed')).length, `a publish took ${Math.round(publishMs)} ms; ${killedAt.join(', ')}`).toBeGreaterThan(points.length / 2);
    expect(await copyDifferences(file, published)).toEqual([]);
  }, 600_000);

  it('a bookkeeping table gets only its rows that differ, as often as the database holds each: a row held twice, a null, a changed row', async () => {
    const night = async () => {
      const result = await publish();
      expect(await copyDifferences(file, result.path)).toEqual([]);
      return result;
    };
    await withDb(file, (db) => db.run("CREATE TABLE meta.publish_test_rows (n INTEGER, note VARCHAR); INSERT INTO meta.publish_test_rows VALUES (1, 'a'), (1, 'a'), (2, NULL), (3, 'c')"));
    // A new table changes the schema: both copies are made whole once.
    expect(await night()).toMatchObject({ how: 'full' });
    expect(await night()).toMatchObject({ how: 'full' });
    // One copy of the doubled row goes (by its rowid: the two are alike), the null row is held
    // three times, a row changes.
    await withDb(file, (db) =>
      db.run(
        "DELETE FROM meta.publish_test_rows WHERE rowid = (SELECT min(rowid) FROM meta.publish_test_rows WHERE n = 1); INSERT INTO meta.publish_test_rows VALUES (2, NULL), (2, NULL); UPDATE meta.publish_test_rows SET note = 'c2' WHERE n = 3",
      ),
    );
    expect(await night()).toMatchObject({ how: 'incremental' });
    // The other copy, two nights behind (both rows of 1, one null row): then the doubled row is
    // doubled again and the null rows go.
    await withDb(file, (db) => db.run("INSERT INTO meta.publish_test_rows VALUES (1, 'a'); DELETE FROM meta.publish_test_rows WHERE n = 2"));
    expect(await night()).toMatchObject({ how: 'incremental' });
    await withDb(file, (db) => db.run('DELETE FROM meta.publish_test_rows WHERE n = 3'));
    const last = await night();
    expect(last).toMatchObject({ how: 'incremental' });
    const copy = await Database.open(last.path, { readOnly: true });
    try {
      expect(await copy.all('SELECT n, note, count(*) AS held FROM meta.publish_test_rows GROUP BY ALL ORDER BY ALL')).toEqual([{ n: 1, note: 'a', held: '2' }]);
    } finally {
      copy.close();
    }
  }, 300_000);
});
