/**
 * The nightly check, test by test: a build benchmark's raw history (bench/build-data.ts, 1M spot
 * fills by default) built whole with all five cost methods and checked whole (`exledger check`,
 * which records each test's pass), then one more day appended as a sync would
 * (bench/nightly-day.ts) and built again (incremental), then checked as the nightly run checks
 * (`exledger check --changed`: what the build changed) and whole (`exledger check`), each command
 * a child process, each check three (whole: two) times from the same recorded results, keeping each
 * test's least time. Prints each test's seconds in both, what the incremental check read (changed
 * rows, whole and why, unchanged), and each command's wall time and peak memory.
 *
 *   npx tsx bench/nightly-check.ts [spot fills, default 1000000] [--reuse]
 *
 * --reuse: start from the built history of an earlier run (data/bench/nightly-check-s<n>-built.duckdb)
 * instead of building it again (5 minutes on 1M); made anew when this checkout's models differ from
 * the ones it was built with (the night's build would then rebuild them whole).
 * Not part of `npm run bench`: the machine is shared, run it by hand. The load average is printed.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import type { TestResult } from '../src/models/check.ts';
import { checkResultsPath } from '../src/models/check-results.ts';
import { Database } from '../src/store/database.ts';
import { BENCH_DATA_DIR, cachedBuildData, copyBuildData, type BuildDataSpec } from './build-data.ts';
import { measureCommand, type MeasuredRun } from './measure-command.ts';
import { appendNightlyDay } from './nightly-day.ts';

const METHODS = ['--cost-method', 'fifo', 'average', 'lifo', 'hifo', 'uk'];
const TIMEOUT_SECONDS = 1800;
const GB = 1024 ** 3;

const reuse = process.argv.includes('--reuse');
const spotFills = Number(process.argv.slice(2).find((argument) => !argument.startsWith('--')) ?? 1_000_000);
const spec: BuildDataSpec = { spotFills, futuresFills: 1_000_000, fundingBills: 100_000, seed: 1 };

/** Runs an exledger command, failing the benchmark when it exits otherwise than expected. */
async function command(label: string, args: readonly string[], expectedExit = 0): Promise<MeasuredRun> {
  const load = loadavg()[0]!;
  const run = await measureCommand(args, TIMEOUT_SECONDS);
  if (run.exitCode !== expectedExit) throw new Error(`${label}: exit ${run.exitCode}\n${run.stdout.slice(-2000)}\n${run.stderrTail}`);
  console.log(`${label.padEnd(44)} ${run.wallSeconds.toFixed(1).padStart(7)} s  peak ${run.peakBytes === undefined ? '?' : (run.peakBytes / GB).toFixed(2)} GB  (load ${load.toFixed(1)})`);
  return run;
}

function checkResults(run: MeasuredRun): TestResult[] {
  return (JSON.parse(run.stdout) as { results: TestResult[] }).results;
}

// The commands are measured as `npm ci` leaves them: started from the bundle of the current sources.
execFileSync(process.execPath, ['scripts/bundle.mjs'], { stdio: 'inherit' });
const data = await cachedBuildData(spec);
const built = path.join(BENCH_DATA_DIR, `nightly-check-s${spotFills}-built.duckdb`);
const work = path.join(BENCH_DATA_DIR, `run-nightly-check-s${spotFills}.duckdb`);
if (!reuse || !existsSync(built)) {
  copyBuildData(data.path, built);
  await command('build, whole (five cost methods)', ['build', '--db', built, ...METHODS]);
} else {
  // Brought up to date with this checkout's models (nothing to do when they are the same).
  await command('build of the reused history (to this checkout)', ['build', '--db', built, ...METHODS]);
}
copyBuildData(built, work);
rmSync(checkResultsPath(work), { force: true });

const before = checkResults(await command('check, whole, before the night', ['check', '--db', work, '--json']));
if (before.some((result) => result.status !== 'pass')) throw new Error(`a check fails on the built history: ${before.filter((result) => result.status !== 'pass').map((result) => result.id).join(', ')}`);
const db = await Database.open(work);
try {
  const added = await appendNightlyDay(db);
  console.log(`appended one day: ${added.spotFills.toLocaleString('en-US')} spot and ${added.futuresFills.toLocaleString('en-US')} futures fills, ${added.snapshots} futures account snapshot(s)`);
} finally {
  db.close();
}
await command('build, the night (incremental)', ['build', '--db', work, ...METHODS]);

// Each check is run several times, each from the same recorded results (those of the check before the
// night), and each test's least time kept: the machine is shared, and a neighbour's burst would
// otherwise be taken for a test's cost.
const results = checkResultsPath(work);
const beforeNight = `${results}.before-night`;
copyFileSync(results, beforeNight);
const runs = async (label: string, args: readonly string[], times: number): Promise<{ results: TestResult[]; wall: number; scope: unknown }> => {
  let best: { results: TestResult[]; wall: number; scope: unknown } | undefined;
  for (let run = 1; run <= times; run += 1) {
    copyFileSync(beforeNight, results);
    const measured = await command(`${label} (${run} of ${times})`, args);
    const parsed = JSON.parse(measured.stdout) as { results: TestResult[]; scope: unknown };
    if (best === undefined) best = { results: parsed.results, wall: measured.wallSeconds, scope: parsed.scope };
    else {
      best.wall = Math.min(best.wall, measured.wallSeconds);
      for (const result of best.results) result.ms = Math.min(result.ms, parsed.results.find((other) => other.id === result.id)!.ms);
    }
  }
  return best!;
};
const changed = await runs("check --changed (the night's check)", ['check', '--db', work, '--changed', '--json'], 3);
const whole = await runs('check, whole, after the night', ['check', '--db', work, '--json'], 2);

console.log(`\nthe night's check: ${JSON.stringify(changed.scope)}`);
console.log(`least wall time: whole ${whole.wall.toFixed(1)} s, the night's ${changed.wall.toFixed(1)} s (the command: start, every test, the results recorded)`);
const rows = whole.results
  .map((result) => ({ whole: result, changed: changed.results.find((candidate) => candidate.id === result.id)! }))
  .sort((a, b) => b.whole.ms - a.whole.ms);
console.log(`\n${'test'.padEnd(62)} ${'whole s'.padStart(8)} ${'night s'.padStart(8)}  night read`);
for (const { whole: full, changed: night } of rows) {
  const read = night.scope === 'whole' ? `whole (${night.why ?? ''})` : night.scope ?? '';
  console.log(`${full.id.padEnd(62)} ${(full.ms / 1000).toFixed(2).padStart(8)} ${(night.ms / 1000).toFixed(2).padStart(8)}  ${night.status === 'pass' ? '' : `${night.status.toUpperCase()} `}${read}`);
}
const sum = (list: readonly TestResult[]) => list.reduce((total, result) => total + result.ms, 0) / 1000;
console.log(`${'sum of the tests'.padEnd(62)} ${sum(whole.results).toFixed(2).padStart(8)} ${sum(changed.results).toFixed(2).padStart(8)}`);
