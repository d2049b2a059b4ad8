import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeBuildData } from '../bench/build-data.ts';
import { appendNightlyDay, NIGHTLY_DAY_START_MS } from '../bench/nightly-day.ts';
import {
  BENCHMARKS_PAGE,
  describeTarget,
  formatRatioBlock,
  formatRatioTable,
  RATIO_BLOCK_END,
  RATIO_BLOCK_START,
  replaceRatioBlock,
  targetMet,
  wallRatio,
  type Figure,
  type RatioRow,
} from '../bench/ratio-table.ts';
import { floorVerdict, FULL_BUILD_OVER_FLOOR, withFloorTarget } from '../bench/ratios.ts';
import { runSortBaseline } from '../bench/sort-baseline.ts';
import { floorFailure, measureWriteFloor } from '../bench/write-floor.ts';
import { refreshStaging } from '../src/models/build.ts';
import type { Database } from '../src/store/database.ts';
import { WRITE_DISABLED_COMPRESSION } from '../src/store/storage-settings.ts';
import { buildAll, openModelDb, queryRows } from './support/model-db.ts';

const GB = 1024 ** 3;
const figure = (wallSeconds: number, more: Partial<Figure> = {}): Figure => ({ wallSeconds, peakBytes: 2 * GB, load: 1.5, ok: true, ...more });
const row = (measured: Figure, baseline?: Figure, target?: RatioRow['target']): RatioRow => ({
  benchmark: 'build-1m',
  what: 'a build',
  measured,
  ...(baseline === undefined ? {} : { baseline: { what: 'read, cast, sort', figure: baseline } }),
  ...(target === undefined ? {} : { target }),
});

describe('npm run bench (bench/index.ts)', () => {
  it('loads every benchmark outside vitest, and an unknown name lists them with exit code 2', () => {
    // Every benchmark module is imported before the name is looked up: one that runs test-only
    // code at import (vitest's hooks throw outside a test run) fails here, not at the next npm run bench.
    const child = spawnSync(process.execPath, ['--import', 'tsx', 'bench/index.ts', 'no-such-bench'], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, VITEST: undefined } });
    expect(child.stderr).toContain('bench: unknown benchmark "no-such-bench"; the benchmarks are generate, budget, sync, soak, ratios');
    expect(child.status).toBe(2);
  });
});

describe('the ratio table (bench/ratio-table.ts)', () => {
  it('the ratio is wall over baseline wall, and none without a successful baseline', () => {
    expect(wallRatio(row(figure(15), figure(10)))).toBe(1.5);
    expect(wallRatio(row(figure(15)))).toBeUndefined();
    expect(wallRatio(row(figure(15), figure(10, { ok: false })))).toBeUndefined();
  });

  it('a ratio target is met up to its multiple, never without a baseline', () => {
    const target = { timesBaseline: 1.5 };
    expect(targetMet(row(figure(15), figure(10), target))).toBe(true);
    expect(targetMet(row(figure(15.1), figure(10), target))).toBe(false);
    expect(targetMet(row(figure(1), undefined, target))).toBe(false);
  });

  it('a full build\'s target (issue 28): 1.2 × (its baseline + its write floor) of the same run, and a peak below memoryLimit + 1.5e9 bytes', () => {
    // A build of 90 s beside a baseline of 25 s and a floor of 50 s: 1.2 × 75 = 90 s, met up to and including.
    const floor = row(figure(50));
    const build = withFloorTarget(row(figure(90, { peakBytes: 5e9 }), figure(25)), floor);
    expect(FULL_BUILD_OVER_FLOOR).toBe(1.2);
    expect(build.target).toEqual({ timesBaselineAndFloor: 1.2, floorSeconds: 50, peakBytes: 5.5e9 });
    expect(targetMet(build)).toBe(true);
    expect(targetMet({ ...build, measured: figure(90.01, { peakBytes: 5e9 }) })).toBe(false);
    expect(targetMet({ ...build, measured: figure(60, { peakBytes: 5.5e9 }) })).toBe(false);
    expect(targetMet({ ...build, baseline: undefined })).toBe(false);
    expect(describeTarget(build.target)).toBe('≤ 1.2 × (baseline + write floor 50.0 s), < 5.12 GB');
    // The floor row has no verdict against it (it is part of the target); a floor that failed leaves the build without a target, said.
    expect(floorVerdict(floor, build.target)).toBe('');
    expect(withFloorTarget(row(figure(90), figure(25)), row(figure(50, { ok: false })))).toMatchObject({ verdict: 'no write floor measured: no target' });
    expect(withFloorTarget(row(figure(90), figure(25)), row(figure(50, { ok: false }))).target).toBeUndefined();
  });

  it('limits: seconds up to and including, memory strictly below; a failed or stopped run never meets them', () => {
    const target = { seconds: 45, peakBytes: 6 * GB };
    expect(targetMet(row(figure(45), undefined, target))).toBe(true);
    expect(targetMet(row(figure(45.01), undefined, target))).toBe(false);
    expect(targetMet(row(figure(10, { peakBytes: 6 * GB }), undefined, target))).toBe(false);
    expect(targetMet(row(figure(10, { peakBytes: undefined }), undefined, target))).toBe(false);
    expect(targetMet(row(figure(10, { peakBytes: undefined }), undefined, { seconds: 45 }))).toBe(true);
    expect(targetMet(row(figure(10, { ok: false }), undefined, target))).toBe(false);
    expect(targetMet(row(figure(10, { stoppedAfterSeconds: 900 }), undefined, target))).toBe(false);
    expect(targetMet(row(figure(10)))).toBeUndefined();
  });

  it('prints one Markdown row per row: figures, loads, baseline, ratio, target and result', () => {
    expect(describeTarget({ seconds: 45, peakBytes: 6 * GB })).toBe('≤ 45 s, < 6.00 GB');
    expect(describeTarget({ timesBaseline: 1.5 })).toBe('≤ 1.5 × baseline');
    const table = formatRatioTable(
      [
        row(figure(12.34, { load: 3.25 }), figure(8.2, { peakBytes: 600 * 1024 ** 2, load: 2.5 }), { timesBaseline: 1.5 }),
        row(figure(80, { stoppedAfterSeconds: 60 }), undefined, { seconds: 5 }),
        { ...row(figure(3)), what: 'a | b' },
      ],
      2,
    );
    const lines = table.split('\n');
    expect(lines[0]).toBe('| benchmark | what | wall | peak RSS | load | baseline (same run) | wall | peak RSS | load | ratio | target | result |');
    expect(lines[2]).toBe('| `build-1m` | a build | 12.3 s | 2.00 GB | 3.3 | read, cast, sort | 8.2 s | 600 MB | 2.5 | 1.50 × | ≤ 1.5 × baseline | **not met** |');
    expect(lines[3]).toBe('| `build-1m` | a build | >60 s (stopped) | 2.00 GB | 1.5 | — |  |  |  |  | ≤ 5 s | **not met** |');
    expect(lines[4]).toBe('| `build-1m` | a \\| b | 3.0 s | 2.00 GB | 1.5 | — |  |  |  |  |  |  |');
    expect(table).toContain('(2 cores)');
  });

  it('a floor row says whether the floor alone is above its build\'s target, in the result column', () => {
    const floor = (wallSeconds: number, baseline?: Figure) => row(figure(wallSeconds), baseline);
    expect(floorVerdict(floor(53.1), { seconds: 45, peakBytes: 6 * GB })).toBe("**above** the build's ≤ 45 s");
    expect(floorVerdict(floor(44), { seconds: 45 })).toBe("below the build's ≤ 45 s");
    expect(floorVerdict(floor(7.4, figure(2.8)), { timesBaseline: 1.5 })).toBe("**above** the build's ≤ 1.5 × baseline");
    expect(floorVerdict(floor(4.1, figure(2.8)), { timesBaseline: 1.5 })).toBe("below the build's ≤ 1.5 × baseline");
    expect(floorVerdict(floor(4.1), { timesBaseline: 1.5 })).toBe('');
    expect(floorVerdict(row(figure(1, { ok: false })), { seconds: 45 })).toBe('');
    expect(floorVerdict(floor(1), undefined)).toBe('');
    const [, , line] = formatRatioTable([{ ...floor(53.1), verdict: floorVerdict(floor(53.1), { seconds: 45 }) }], 2).split('\n');
    expect(line?.endsWith("| **above** the build's ≤ 45 s |")).toBe(true);
  });
});

describe('the table in docs/benchmarks.md (written by npm run bench -- ratios)', () => {
  const rows = [row(figure(12.34, { load: 0.7 }), figure(8.2, { load: 1.9 }), { timesBaseline: 1.5 })];
  const block = formatRatioBlock(rows, 2, { from: new Date('2026-11-24T06:52:10Z'), to: new Date('2026-11-24T06:57:50Z'), commit: 'b87c40c' });

  it('says when, on which commit and under which load it was measured, then the table', () => {
    expect(block.split('\n')[0]).toBe('Measured 2026-11-24, 06:52 to 06:57 UTC, one run of `npm run bench -- ratios` on commit b87c40c (load average 0.7 to 1.9 at the starts, 2 cores):');
    expect(block.endsWith(formatRatioTable(rows, 2))).toBe(true);
  });

  it('replaces what is between the markers and nothing else; refuses a page without them', () => {
    const page = `# Benchmarks\n\nbefore\n${RATIO_BLOCK_START}\nold table\n${RATIO_BLOCK_END}\n\nnotes\n`;
    expect(replaceRatioBlock(page, block)).toBe(`# Benchmarks\n\nbefore\n${RATIO_BLOCK_START}\n${block}\n${RATIO_BLOCK_END}\n\nnotes\n`);
    expect(() => replaceRatioBlock('# Benchmarks\n', block)).toThrow(BENCHMARKS_PAGE);
    expect(() => replaceRatioBlock(`${RATIO_BLOCK_END}\n${RATIO_BLOCK_START}\n`, block)).toThrow('in that order');
    expect(() => replaceRatioBlock(`${page}${RATIO_BLOCK_START}\n`, block)).toThrow('once each');
  });

  it(`${BENCHMARKS_PAGE} holds the markers, and between them a table as the writer formats it`, () => {
    const page = readFileSync(new URL(`../${BENCHMARKS_PAGE}`, import.meta.url), 'utf8');
    const inside = page.slice(page.indexOf(RATIO_BLOCK_START) + RATIO_BLOCK_START.length, page.indexOf(RATIO_BLOCK_END));
    expect(replaceRatioBlock(page, 'x')).toContain(`${RATIO_BLOCK_START}\nx\n${RATIO_BLOCK_END}`);
    expect(inside.trimStart().startsWith('Measured ')).toBe(true);
    const [header, rule] = formatRatioTable([], 2).split('\n');
    expect(inside).toContain(`\n${header}\n${rule}\n`);
    expect(inside.trimEnd().split('\n').at(-1)).toBe(formatRatioTable([], 2).split('\n').at(-1));
  });
});

describe('the write floor (bench/write-floor.ts)', () => {
  it('writes every model table that has rows into the new file, as many rows as the table holds, then removes the file', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'exledger-floor-'));
    const db = await openModelDb(path.join(dir, 'built.duckdb'));
    try {
      await writeBuildData(db, { spotFills: 2_000, futuresFills: 500, fundingBills: 100 });
      expect((await buildAll(db)).filter((result) => result.status !== 'ok')).toEqual([]);
      const target = path.join(dir, 'floor.duckdb');
      const before = await queryRows<{ compression: string; ordered: string }>(db, "SELECT current_setting('disabled_compression_methods') AS compression, current_setting('preserve_insertion_order')::VARCHAR AS ordered");
      expect(before).toEqual([{ compression: '', ordered: 'true' }]);
      const floor = await measureWriteFloor(db, target);
      // It wrote as the build writes: without bitpacking, insertion order not kept.
      const during = await queryRows<{ compression: string; ordered: string }>(db, "SELECT current_setting('disabled_compression_methods') AS compression, current_setting('preserve_insertion_order')::VARCHAR AS ordered");
      // (DuckDB names the method its own way: BitPacking.)
      expect(during.map((setting) => ({ ...setting, compression: setting.compression.toLowerCase() }))).toEqual([{ compression: WRITE_DISABLED_COMPRESSION, ordered: 'false' }]);
      const expected = await queryRows<{ name: string; rows: string }>(
        db,
        `SELECT schema_name || '.' || table_name AS name, estimated_size AS rows FROM duckdb_tables()
         WHERE database_name = current_database() AND schema_name IN ('staging', 'intermediate', 'marts')`,
      );
      const counted = await Promise.all(expected.map(async ({ name }) => ({ name, rows: (await queryRows<{ n: string }>(db, `SELECT count(*) AS n FROM ${name}`))[0]!.n })));
      expect(floor.tables.map((table) => [table.table, String(table.rows)]).sort()).toEqual(
        counted.filter((table) => table.rows !== '0').map((table) => [table.name, table.rows]).sort(),
      );
      expect(floor.tables.find((table) => table.table === 'staging.spot_fills')?.rows).toBe(2_000);
      expect(floor.totalMs).toBeCloseTo(floor.tables.reduce((sum, table) => sum + table.ms, 0));
      expect(existsSync(target)).toBe(false);
      // A table too large to hold in memory: nothing measured, said with the table's name, the file removed.
      const largest = Math.max(...counted.map((table) => Number(table.rows)));
      const largestNames = counted.filter((table) => Number(table.rows) === largest).map((table) => table.name);
      const refused = await measureWriteFloor(db, target, largest - 1).then(() => '', (error: Error) => error.message);
      const [, name, rows] = /^write floor not measured: (\S+) has ([\d,]+) rows, more than the [\d,]+ a table may have/.exec(refused) ?? [];
      expect(largestNames).toContain(name);
      expect(rows).toBe(largest.toLocaleString('en-US'));
      expect(existsSync(target)).toBe(false);
      expect((await measureWriteFloor(db, target, largest)).tables.length).toBe(floor.tables.length);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a floor that gave no result says why: the child\'s own reason, a timeout, or its exit code', () => {
    const run = (stderrTail: string, exitCode: number | null, timedOut = false) =>
      ({ stdout: '', stderr: stderrTail, stderrTail, exitCode, timedOut, wallSeconds: 1, peakSource: '/usr/bin/time -v' });
    expect(floorFailure(run('write floor not measured: marts.spot_lot_matches has 117,025,523 rows, more than the 50,000,000 a table may have\nCommand exited with non-zero status 1', 1))).toBe(
      'not measured: marts.spot_lot_matches has 117,025,523 rows, more than the 50,000,000 a table may have',
    );
    expect(floorFailure(run('', null, true))).toBe('failed: timed out');
    expect(floorFailure(run('Error: disk full', 1))).toBe('failed (exit 1)');
    expect(floorFailure(run('', null))).toBe('failed (exit killed)');
  });
});

describe('the sort baseline (bench/sort-baseline.ts) and the nightly day (bench/nightly-day.ts)', () => {
  let db: Database;
  let added: { spotFills: number; futuresFills: number; snapshots: number };

  beforeAll(async () => {
    db = await openModelDb();
    await writeBuildData(db, { spotFills: 3_000, futuresFills: 1_000, fundingBills: 100 });
    added = await appendNightlyDay(db);
    await refreshStaging(db);
  });
  afterAll(() => db.close());

  it('the new day copies the last day one day later, with keys and ids of its own', async () => {
    const [counts] = await queryRows<Record<string, string>>(
      db,
      `SELECT
         (SELECT count(*) FROM raw.spot_fills WHERE _event_ms >= ${NIGHTLY_DAY_START_MS}) AS spot_new,
         (SELECT count(*) FROM raw.spot_fills WHERE _event_ms >= ${NIGHTLY_DAY_START_MS - 86_400_000} AND _event_ms < ${NIGHTLY_DAY_START_MS}) AS spot_last_day,
         (SELECT count(*) - count(DISTINCT _key) FROM raw.spot_fills) AS spot_repeated_keys,
         (SELECT count(*) - count(DISTINCT fill_id) FROM staging.spot_fills) AS repeated_fill_ids,
         (SELECT count(*) FROM staging.spot_fills WHERE c_time_at >= make_timestamptz(${NIGHTLY_DAY_START_MS} * 1000)) AS staged_new,
         (SELECT count(*) FROM raw.futures_fills WHERE _event_ms >= ${NIGHTLY_DAY_START_MS}) AS futures_new,
         (SELECT count(*) - count(DISTINCT trade_id) FROM staging.futures_fills) AS repeated_trade_ids`,
    );
    expect(added.spotFills).toBeGreaterThan(0);
    expect(added.futuresFills).toBeGreaterThan(0);
    expect(counts).toEqual({
      spot_new: String(added.spotFills),
      spot_last_day: String(added.spotFills),
      spot_repeated_keys: '0',
      repeated_fill_ids: '0',
      staged_new: String(added.spotFills),
      futures_new: String(added.futuresFills),
      repeated_trade_ids: '0',
    });
    // A futures account snapshot at the end of the day, one that differs from the latest (as a sync stores one).
    expect(added.snapshots).toBe(1);
    const snapshots = await queryRows<{ taken_ms: string; updated_time: string; changes: string }>(
      db,
      `SELECT epoch_ms(_snapshot_at) AS taken_ms, _record->'account'->>'updated_time' AS updated_time,
         (SELECT count(*) FROM meta.raw_changes WHERE raw_table = 'futures_accounts' AND kind = 'snapshot' AND min_event_ms = epoch_ms(s._snapshot_at)) AS changes
       FROM raw.futures_accounts AS s ORDER BY _snapshot_at DESC LIMIT 2`,
    );
    expect(snapshots[0]).toEqual({ taken_ms: String(NIGHTLY_DAY_START_MS + 86_400_000), updated_time: String(NIGHTLY_DAY_START_MS + 86_400_000), changes: '1' });
    expect(Number(snapshots[1]!.taken_ms)).toBeLessThan(NIGHTLY_DAY_START_MS);
  });

  it('a day of at most N spot fills copies N of the last day\'s (the same night on a larger history), the futures fills all', async () => {
    const small = await openModelDb();
    try {
      await writeBuildData(small, { spotFills: 3_000, futuresFills: 1_000, fundingBills: 100 });
      const atMost = Math.floor(added.spotFills / 3);
      expect(atMost).toBeGreaterThan(0);
      const sampled = await appendNightlyDay(small, 1, atMost);
      expect(sampled).toEqual({ spotFills: atMost, futuresFills: added.futuresFills, snapshots: 1 });
      const [counts] = await queryRows<Record<string, string>>(
        small,
        `SELECT
           (SELECT count(*) FROM raw.spot_fills WHERE _event_ms >= ${NIGHTLY_DAY_START_MS}) AS spot_new,
           (SELECT count(*) - count(DISTINCT _key) FROM raw.spot_fills) AS spot_repeated_keys,
           (SELECT max(_event_ms) - 86400000 FROM raw.spot_fills WHERE _event_ms >= ${NIGHTLY_DAY_START_MS}) AS latest_copied,
           (SELECT max(_event_ms) FROM (SELECT _event_ms FROM raw.spot_fills WHERE _event_ms >= ${NIGHTLY_DAY_START_MS - 86_400_000} AND _event_ms < ${NIGHTLY_DAY_START_MS} ORDER BY _event_ms LIMIT ${atMost})) AS first_n_end`,
      );
      expect(counts).toMatchObject({ spot_new: String(atMost), spot_repeated_keys: '0' });
      // Spread over the day, not its first fills in time.
      expect(BigInt(counts!.latest_copied!)).toBeGreaterThan(BigInt(counts!.first_n_end!));
      await expect(appendNightlyDay(small, 2, 0)).rejects.toThrow(/spotFillsAtMost must be a whole number from 1, not 0/);
    } finally {
      small.close();
    }
  });

  it('reads the same rows with the same types and values as staging, in int_spot_trades order', async () => {
    const full = await runSortBaseline(db, 'baseline_full');
    const day = await runSortBaseline(db, 'baseline_day', NIGHTLY_DAY_START_MS);
    expect(full.rows).toBe(3_000 + added.spotFills);
    expect(day.rows).toBe(added.spotFills);
    const staged = `SELECT account, symbol, base_coin, quote_coin, fill_id, lower(side) AS side, c_time_at, fill_price_e18, fill_quantity_e18, fill_total_amount_e16, fees_e18 FROM staging.spot_fills`;
    const types = async (sql: string) => (await queryRows<{ column_type: string }>(db, `DESCRIBE ${sql}`)).map((column) => column.column_type);
    expect(await types('SELECT * FROM baseline_full')).toEqual(await types(staged));
    const [differences] = await queryRows<Record<string, string>>(
      db,
      `SELECT
         (SELECT count(*) FROM (SELECT * FROM baseline_full EXCEPT ALL (${staged}))) AS only_baseline,
         (SELECT count(*) FROM ((${staged}) EXCEPT ALL SELECT * FROM baseline_full)) AS only_staging,
         (SELECT count(*) FROM (SELECT * FROM baseline_day EXCEPT ALL (${staged} WHERE c_time_at >= make_timestamptz(${NIGHTLY_DAY_START_MS} * 1000)))) AS day_only_baseline`,
    );
    expect(differences).toEqual({ only_baseline: '0', only_staging: '0', day_only_baseline: '0' });
    // The stored order is the sort's: rowid follows account, symbol, time, fill id by length then text.
    const [order] = await queryRows<{ out_of_order: string }>(
      db,
      `SELECT count(*) AS out_of_order FROM (
         SELECT rowid, row_number() OVER (ORDER BY account, symbol, c_time_at, length(fill_id), fill_id) - 1 AS expected FROM baseline_full
       ) WHERE rowid <> expected`,
    );
    expect(order!.out_of_order).toBe('0');
  });
});
