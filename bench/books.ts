/**
 * The books (a reporting currency) on a benchmark history: the benchmarks of bench/ratios.ts
 * configure none, so they build no books. This one builds the 1M (or 10M) history of
 * bench/build-data.ts with `models.reportingCurrency` USD and a prices file pricing USDT at 1 on
 * every day (the other coins' prices derived from each day's fills), then one more day
 * (bench/nightly-day.ts) and the night's build, each a command in a child process, measured as the
 * other benchmarks are (wall, peak RSS, the load it started under), and prints where each build's
 * time went, books models first.
 *
 *   npm run bench -- books-1m [cost methods…]     (default: fifo)
 *   npm run bench -- books-10m [cost methods…]
 *
 * The history's WXTUSDT fills (80 per 1M: notionals up to 1e21 USDT) are removed from the copy:
 * the books hold coin amounts below 1.7e20, and a build refuses such a fill by name.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { runBuild, type BuildRun } from './build.ts';
import { withDatabase } from './cached-database.ts';
import { BENCH_DATA_DIR, BENCH_END_MS, BENCH_START_MS, cachedBuildData, copyBuildData, removeDatabaseFiles } from './build-data.ts';
import { appendNightlyDay } from './nightly-day.ts';
import { COST_METHODS } from '../src/models/settings.ts';

const DAY_MS = 86_400_000;
const GB = 1024 ** 3;
const TIMEOUT_SECONDS = 3600;
/** The books' models (and the marts that read them), printed first. */
const BOOKS_MODELS = /int_coin_|journal_|holdings_|period_adjustments|needs_price|futures_positions_valued/;

export async function benchBooks(spotFills: number, methods: readonly string[]): Promise<void> {
  const costMethods = methods.length === 0 ? ['fifo'] : methods;
  const unknown = costMethods.filter((method) => !(COST_METHODS as readonly string[]).includes(method));
  if (unknown.length > 0) throw new Error(`bench books: unknown cost method ${unknown.join(', ')}; the methods are ${COST_METHODS.join(', ')}`);
  const name = `books-${spotFills / 1_000_000}m`;
  console.log(`\n== the books (reporting currency USD), ${spotFills.toLocaleString('en-US')} spot fills, ${costMethods.join(' ')}: full build, then a night`);
  const data = await cachedBuildData({ spotFills, futuresFills: 1_000_000, fundingBills: 100_000 });
  if (data.seconds !== undefined) console.log(`${name}: generated ${path.basename(data.path)} in ${data.seconds.toFixed(1)} s (not measured)`);
  const dir = path.join(BENCH_DATA_DIR, `run-${name}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const work = path.join(dir, 'exledger.duckdb');
  copyBuildData(data.path, work);
  const removed = await withDatabase(work, async (db) => {
    const [row] = await db.all<{ n: string }>(`SELECT count(*) AS n FROM raw.spot_fills WHERE _partition = 'symbol=WXTUSDT_SPBL'`);
    await db.run(`DELETE FROM raw.spot_fills WHERE _partition = 'symbol=WXTUSDT_SPBL'`);
    return Number(row?.n ?? 0);
  });
  console.log(`${name}: removed ${removed} WXTUSDT fills (beyond what the books hold)`);
  const lines = ['date,coin,currency,price'];
  for (let day = BENCH_START_MS - 7 * DAY_MS; day <= BENCH_END_MS + 60 * DAY_MS; day += DAY_MS) lines.push(`${new Date(day).toISOString().slice(0, 10)},USDT,USD,1`);
  writeFileSync(path.join(dir, 'prices.csv'), `${lines.join('\n')}\n`);
  const config = path.join(dir, 'exledger.config.json');
  writeFileSync(config, JSON.stringify({ models: { reportingTimeZone: 'UTC', costMethods, reportingCurrency: 'USD', pricesFile: './prices.csv' } }, null, 2));

  const flags = ['--config', config];
  const full = await measured(name, 'full build', () => runBuild(work, flags, TIMEOUT_SECONDS));
  if (full.exitCode !== 0) return;
  const added = await withDatabase(work, (db) => appendNightlyDay(db));
  console.log(`${name}: appended a day: ${added.spotFills.toLocaleString('en-US')} spot and ${added.futuresFills.toLocaleString('en-US')} futures fills, ${added.snapshots} snapshot(s)`);
  await measured(name, 'night: build', () => runBuild(work, flags, TIMEOUT_SECONDS));
  if (process.env.EXLEDGER_BENCH_KEEP === '1') console.log(`${name}: kept ${dir}`);
  else removeDatabaseFiles(work);
}

async function measured(name: string, title: string, build: () => Promise<BuildRun>): Promise<BuildRun> {
  const load = loadavg()[0] as number;
  const run = await build();
  const books = run.results.filter((result) => BOOKS_MODELS.test(result.id)).reduce((sum, result) => sum + result.ms, 0);
  console.log(
    `${name}: ${title}: ${run.wallSeconds.toFixed(1)} s, peak ${run.peakBytes === undefined ? '?' : `${(run.peakBytes / GB).toFixed(2)} GB`} (load ${load.toFixed(1)} at the start), exit ${run.exitCode ?? 'killed'}; the books' models ${(books / 1000).toFixed(1)} s`,
  );
  if (run.exitCode !== 0) console.log(run.stdout.slice(-1500), run.stderrTail);
  const slowest = [...run.results].sort((a, b) => Number(BOOKS_MODELS.test(b.id)) - Number(BOOKS_MODELS.test(a.id)) || b.ms - a.ms).filter((result) => result.ms >= 500);
  console.table(slowest.map((result) => ({ model: result.id, books: BOOKS_MODELS.test(result.id) ? 'yes' : '', s: (result.ms / 1000).toFixed(2), rows: result.rows?.toLocaleString('en-US') ?? '', how: result.how ?? '' })));
  return run;
}
