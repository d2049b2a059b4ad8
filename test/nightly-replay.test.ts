import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../src/store/database.ts';
import { runCli } from './support/cli-process.ts';
import { startSandboxProcess, type SandboxProcess } from './support/sandbox-process.ts';

/**
 * Issue 16 checked the way it will be checked: nightly runs replayed over a growing history, each
 * incremental build compared with a whole build of the same data. Everything runs as deployed:
 * `exledger sandbox` in a process of its own, each `exledger sync --until <night>` and `exledger
 * build` in another, no terminal. After every night the database file is copied and the copy built
 * again with --full-refresh; every table of staging, intermediate and marts must hold the same
 * rows in both, digit for digit. Besides new days: late records (the exchange publishes one spot
 * fill in ten LATE_MS after its time, so each night's sync misses the late fills of its last 2.5
 * days, and the next nights' lookback finds them: the earliest change moves back into what was
 * built), a
 * backfill of an older month (back past everything built), and a build that finds nothing new.
 * All five cost methods, in a reporting zone away from UTC (days and months are London's).
 */

const NIGHTS = ['2026-10-02', '2026-10-03'];
const BUILD_FLAGS = ['--cost-method', 'fifo', 'average', 'lifo', 'hifo', 'uk', '--time-zone', 'Europe/London'];
/** The models over the whole history: each must be carried forward, not rebuilt, for a new night. */
const CARRIED_FORWARD = [
  'staging.spot_fills', 'staging.funding_bills', 'staging.futures_fills',
  'intermediate.int_spot_trades', 'intermediate.int_spot_fifo_segments', 'intermediate.int_spot_average_cost', 'intermediate.int_spot_lot_segments',
  'intermediate.int_fees_legs', 'intermediate.int_futures_fill_days',
  'marts.spot_lot_matches', 'marts.spot_realized_pnl_daily', 'marts.spot_realized_pnl_monthly', 'marts.fees_daily', 'marts.futures_pnl_daily',
];
/** How late the late spot fills are published; inside the sync's lookback, so the next night finds them. */
const LATE_MS = 2.5 * 86_400_000;
const CONFIG = {
  budget: { spot: { quota: 500, windowMs: 1000 }, contract: { quota: 1000, windowMs: 1000 } },
  retry: { retries: 8, minTimeoutMs: 50, maxTimeoutMs: 500 },
  timeoutMs: 10_000,
  sync: { startDate: '2026-09-01', lookbackDays: 3 },
};

describe('nightly runs replayed (issue 16): sync and build as deployed, each build equal to a whole build', () => {
  let exchange: SandboxProcess;
  let dir: string;
  let env: Record<string, string>;
  const file = () => path.join(dir, 'ledger.duckdb');

  beforeAll(async () => {
    exchange = await startSandboxProcess(['--end', '2026-11-01', '--scale', 'medium', '--window-ms', '1000', '--late-spot-fills-ms', String(LATE_MS)]);
    dir = mkdtempSync(path.join(os.tmpdir(), 'exledger-nightly-replay-'));
    writeFileSync(path.join(dir, 'exledger.config.json'), JSON.stringify(CONFIG, null, 2));
    env = exchange.settings;
  });
  afterAll(async () => {
    expect(await exchange?.stop()).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  });

  async function cli(args: string[]): Promise<string> {
    const result = await runCli([...args, '--db', file()], { cwd: dir, env });
    if (result.code !== 0) throw new Error(`exledger ${args.join(' ')}: exit ${result.code}\n${result.stdout}${result.stderr}`);
    return `${result.stdout}${result.stderr}`;
  }

  /** `exledger sync --until night` when the exchange's clock is that night: what is published by then. */
  async function syncUntil(night: string, flags: string[] = []): Promise<void> {
    const moved = await fetch(`${exchange.url}/__sandbox/visible-until`, { method: 'POST', body: JSON.stringify({ ms: Date.parse(`${night}T00:00:00Z`) }) });
    expect(moved.status).toBe(200);
    await cli(['sync', ...flags, '--until', night]);
  }

  /** The models' tables that differ between the file and a copy of it built with --full-refresh. */
  async function differencesFromWhole(): Promise<{ tables: number; differences: string[] }> {
    const whole = path.join(dir, 'whole.duckdb');
    rmSync(whole, { force: true });
    copyFileSync(file(), whole);
    const result = await runCli(['build', '--full-refresh', ...BUILD_FLAGS, '--db', whole], { cwd: dir, env });
    if (result.code !== 0) throw new Error(`exledger build --full-refresh: exit ${result.code}\n${result.stdout}${result.stderr}`);
    const db = await Database.open(file());
    try {
      await db.run(`ATTACH '${whole}' AS whole (READ_ONLY)`);
      const tables = await db.all<{ t: string }>(
        "select table_schema || '.' || table_name as t from information_schema.tables where table_catalog = 'whole' and table_schema in ('staging', 'intermediate', 'marts') order by 1",
      );
      const differences: string[] = [];
      for (const { t } of tables) {
        const [counts] = await db.all<{ only_incremental: string; only_whole: string }>(
          `select (select count(*) from (select * from ${t} except all select * from whole.${t})) as only_incremental,
                  (select count(*) from (select * from whole.${t} except all select * from ${t})) as only_whole`,
        );
        if (counts!.only_incremental !== '0' || counts!.only_whole !== '0') differences.push(`${t}: ${counts!.only_incremental} rows only incremental, ${counts!.only_whole} only whole`);
      }
      return { tables: tables.length, differences };
    } finally {
      db.close();
      rmSync(whole, { force: true });
    }
  }

  const count = async (sql: string) => {
    const db = await Database.open(file());
    try {
      return Number((await db.all<{ n: string }>(sql))[0]!.n);
    } finally {
      db.close();
    }
  };
  /** How the build's progress line for `model` says it was built: whole, incremental or unchanged. */
  const howBuilt = (output: string, model: string) => new RegExp(`^\\[\\d+/\\d+\\] ok +${model.replace('.', '\\.')} .*\\b(whole|incremental|unchanged)\\b`, 'm').exec(output)?.[1];

  it('a month, then night after night, then a backfill of the month before: every build equals a whole one', async () => {
    await syncUntil('2026-10-01');
    await cli(['build', ...BUILD_FLAGS]);
    const first = await differencesFromWhole();
    expect(first.tables).toBeGreaterThan(30);
    expect(first.differences).toEqual([]);
    const sellsBefore = await count("select count(*) as n from marts.spot_lot_matches where cost_method = 'uk'");
    expect(sellsBefore).toBeGreaterThan(0);

    let fills = await count('select count(*) as n from staging.spot_fills');
    let previousNight = '2026-10-01';
    for (const night of NIGHTS) {
      const before = `select count(*) as n from staging.spot_fills where c_time_at < '${previousNight}T00:00:00Z'::timestamptz`;
      const builtBefore = await count(before);
      await syncUntil(night);
      const output = await cli(['build', ...BUILD_FLAGS]);
      // Late fills of the days already built arrived with this night's lookback.
      expect(await count(before), `${night}: late fills before ${previousNight}`).toBeGreaterThan(builtBefore);
      previousNight = night;
      // A night's build carries the history's models forward: none of them is rebuilt whole for one new day.
      expect(CARRIED_FORWARD.filter((model) => howBuilt(output, model) === 'whole'), `${night}\n${output}`).toEqual([]);
      expect(CARRIED_FORWARD.filter((model) => howBuilt(output, model) === 'incremental').length, night).toBeGreaterThan(5);
      const now = await count('select count(*) as n from staging.spot_fills');
      expect(now, `${night}: new fills`).toBeGreaterThan(fills);
      fills = now;
      expect((await differencesFromWhole()).differences, night).toEqual([]);
    }

    // Nothing new since the last build: every model says unchanged, and still equals a whole build.
    const idle = await cli(['build', ...BUILD_FLAGS]);
    expect(idle).toMatch(/^build: (\d+) models: \1 unchanged \(/m);

    // A backfill of the month before the configured start: fills older than every one built.
    const earliest = async () => count("select epoch(min(c_time_at)) as n from staging.spot_fills");
    const before = await earliest();
    await syncUntil(NIGHTS.at(-1)!, ['--since', '2026-08-01']);
    expect(await earliest()).toBeLessThan(before);
    await cli(['build', ...BUILD_FLAGS]);
    expect((await differencesFromWhole()).differences).toEqual([]);
  }, 600_000);
});
