/**
 * Benchmark of `exledger build`: the whole model build over generated raw tables (build-data.ts),
 * run as a child process so its wall time and peak memory are those of the real command.
 *
 *   npm run bench -- build        both scenarios
 *   npm run bench -- build-1m     1M spot fills, 1M futures fills, 100k funding bills (target 15 s)
 *   npm run bench -- build-10m    10M spot fills (and the same futures and bills) (target 90 s, 6 GB)
 *   npm run bench -- build-1m-both  build-1m with both cost methods (fifo and average, as the demo
 *                                   builds); not part of `build`: the targets are for the defaults
 *
 * Each scenario's raw database is generated once and cached under data/bench/ (generation is not
 * measured); every run builds a fresh copy of it, so no model starts from a previous build.
 * Prints a summary row per scenario (met / not met) and the time of each model, slowest first.
 */
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ModelResult } from '../src/models/build.ts';
import { BENCH_DATA_DIR, cachedBuildData, copyBuildData, type BuildDataSpec } from './build-data.ts';
import { measureCommand, type MeasuredRun } from './measure-command.ts';

/** A measured build. */
export interface BuildScenario {
  name: string;
  spec: BuildDataSpec;
  /** Wall seconds of `exledger build` (process start to exit) that meet the target. */
  targetSeconds: number;
  /** Peak resident memory that meets the target, bytes; undefined: not a target. */
  targetPeakBytes?: number;
  /** The build is stopped after this many seconds (a build that never ends still gets a row). */
  timeoutSeconds: number;
  /** Extra flags of `exledger build`. @default none */
  flags?: readonly string[];
  /** Run only when named, not by `npm run bench -- build`. @default false */
  onlyWhenNamed?: boolean;
}

const GB = 1024 ** 3;

export const BUILD_SCENARIOS: readonly BuildScenario[] = [
  { name: 'build-1m', spec: { spotFills: 1_000_000, futuresFills: 1_000_000, fundingBills: 100_000 }, targetSeconds: 15, timeoutSeconds: 300 },
  {
    name: 'build-10m',
    spec: { spotFills: 10_000_000, futuresFills: 1_000_000, fundingBills: 100_000 },
    targetSeconds: 90,
    targetPeakBytes: 6 * GB,
    timeoutSeconds: 900,
  },
  {
    name: 'build-1m-both',
    spec: { spotFills: 1_000_000, futuresFills: 1_000_000, fundingBills: 100_000 },
    targetSeconds: 15,
    timeoutSeconds: 300,
    flags: ['--cost-method', 'fifo', 'average'],
    onlyWhenNamed: true,
  },
];

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** What one child run of `exledger build` gave. */
export interface BuildRun extends MeasuredRun {
  /** The command's own total, from its summary line. */
  buildMs?: number;
  /** One per model line printed (so a build stopped at the timeout still shows what it finished). */
  results: ModelResult[];
}

/** Runs the named scenarios (all by default) and prints their tables. */
export async function benchBuild(names: readonly string[] = BUILD_SCENARIOS.filter((scenario) => scenario.onlyWhenNamed !== true).map((scenario) => scenario.name)): Promise<void> {
  const scenarios = names.map((name) => {
    const scenario = BUILD_SCENARIOS.find((candidate) => candidate.name === name);
    if (scenario === undefined) throw new Error(`unknown build scenario "${name}"`);
    return scenario;
  });
  console.log('\n== exledger build: wall time and peak memory of the command (child process), per scenario');
  const summary: Array<Record<string, string | number>> = [];
  const details: Array<{ scenario: BuildScenario; run: BuildRun }> = [];
  for (const scenario of scenarios) {
    const { spec } = scenario;
    const data = await cachedBuildData(spec);
    if (data.seconds !== undefined) console.log(`${scenario.name}: generated ${path.relative(REPO, data.path)} in ${data.seconds.toFixed(1)} s (not measured)`);
    const work = path.join(BENCH_DATA_DIR, `run-${scenario.name}.duckdb`);
    copyBuildData(data.path, work);
    // Other processes on the machine slow the build down: the load it started under is shown beside it.
    const load = loadavg()[0] as number;
    const run = await runBuild(work, scenario.flags ?? [], scenario.timeoutSeconds);
    details.push({ scenario, run });
    const failed = run.results.filter((result) => result.status !== 'ok');
    const timeMet = !run.timedOut && run.exitCode === 0 && run.wallSeconds <= scenario.targetSeconds;
    const memoryMet = scenario.targetPeakBytes === undefined || (run.peakBytes !== undefined && run.peakBytes < scenario.targetPeakBytes);
    summary.push({
      scenario: `${scenario.name}${scenario.flags === undefined ? '' : ` (${scenario.flags.join(' ')})`}`,
      'spot fills': spec.spotFills.toLocaleString('en-US'),
      'futures fills': spec.futuresFills.toLocaleString('en-US'),
      'funding bills': spec.fundingBills.toLocaleString('en-US'),
      models: `${run.results.length - failed.length} ok${failed.length > 0 ? `, ${failed.length} not` : ''}`,
      'wall s': run.timedOut ? `>${scenario.timeoutSeconds} (stopped)` : run.wallSeconds.toFixed(1),
      'build s': run.buildMs === undefined ? '' : (run.buildMs / 1000).toFixed(1),
      'peak RSS GB': run.peakBytes === undefined ? '?' : (run.peakBytes / GB).toFixed(2),
      'load at start': `${load.toFixed(1)} / ${cpus().length} cores`,
      target: `${scenario.targetSeconds} s${scenario.targetPeakBytes === undefined ? '' : `, < ${scenario.targetPeakBytes / GB} GB`}`,
      result: timeMet && memoryMet ? 'met' : 'NOT MET',
    });
  }
  console.table(summary);
  for (const { scenario, run } of details) {
    console.log(`\n${scenario.name}: time per model, slowest first (peak from ${run.peakSource}; database ${path.relative(REPO, path.join(BENCH_DATA_DIR, `run-${scenario.name}.duckdb`))})`);
    if (run.timedOut) console.log(`stopped at the timeout; the model after ${run.results.at(-1)?.id ?? 'the macros'} was running (order: exledger build's lines)`);
    if (run.results.length === 0) {
      console.log(`no model results (exit ${run.exitCode ?? 'killed'}):\n${run.stderrTail}`);
      continue;
    }
    const total = run.results.reduce((sum, result) => sum + result.ms, 0);
    console.table(
      [...run.results]
        .sort((a, b) => b.ms - a.ms)
        .map((result) => ({
          model: result.id,
          status: result.status,
          s: (result.ms / 1000).toFixed(2),
          share: `${((100 * result.ms) / Math.max(total, 1)).toFixed(0)}%`,
          rows: result.rows?.toLocaleString('en-US') ?? '',
          message: result.message?.slice(0, 100) ?? '',
        })),
    );
  }
}

/**
 * Runs `node src/cli/exledger.js build --db <file>` as a child and measures it: wall time
 * here, peak RSS from GNU time's "Maximum resident set size" when /usr/bin/time exists, else
 * from the child's VmHWM in /proc, read until it exits.
 */
export async function runBuild(database: string, flags: readonly string[], timeoutSeconds: number): Promise<BuildRun> {
  // The line output rather than --json: its lines come as each model finishes, so a build stopped
  // at the timeout still tells which models it had built and how long they took.
  const run = await measureCommand(['build', '--db', database, ...flags], timeoutSeconds);
  const { results, buildMs } = parseBuildLines(run.stdout);
  return { ...run, buildMs, results };
}

/**
 * The results in `exledger build`'s lines (src/cli/build-command.ts formatModelResult):
 * `[ 3/33] ok      intermediate.x     table     1.23 s  1,000 rows`, a failed model's message on the
 * next, indented line, and `build: … in 12.34 s` at the end.
 */
export function parseBuildLines(stdout: string): { results: ModelResult[]; buildMs?: number } {
  const results: ModelResult[] = [];
  let buildMs: number | undefined;
  for (const line of stdout.split('\n')) {
    const model = /^\[\s*\d+\/\d+\]\s+(ok|failed|skipped)\s+(\S+)\s+(view|table|macro)\b\s*(?:([\d.]+) s)?\s*(?:([\d,]+) rows)?\s*(whole|incremental|unchanged)?/.exec(line);
    if (model !== null) {
      const [, status, id, materialization, seconds, rows, how] = model;
      results.push({
        id: id as string,
        status: status as ModelResult['status'],
        materialization: materialization as ModelResult['materialization'],
        ms: seconds === undefined ? 0 : Number(seconds) * 1000,
        ...(rows === undefined ? {} : { rows: Number(rows.replaceAll(',', '')) }),
        ...(how === undefined ? {} : { how: how as NonNullable<ModelResult['how']> }),
      });
      continue;
    }
    const last = results.at(-1);
    if (/^\s{4,}\S/.test(line) && last !== undefined && last.message === undefined) {
      last.message = line.trim();
      continue;
    }
    const summary = /^build: .* \(([\d.]+) s\)$/.exec(line);
    if (summary !== null) buildMs = Number(summary[1]) * 1000;
  }
  return { results, buildMs };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const names = process.argv.slice(2);
  await benchBuild(names.length > 0 ? names : undefined);
}
