/**
 * Issue 16's benchmark table, from one run: every build beside a baseline measured in the same run
 * (bench/sort-baseline.ts: DuckDB reading, casting and sorting the same spot fills, the floor no
 * build can beat), the ratio, the target and met / not met.
 *
 *   npm run bench -- ratios          everything below, one table
 *   npm run bench -- ratios-1m       build-1m and its baseline
 *   npm run bench -- ratios-10m      build-10m and its baseline, then the nightly build
 *   npm run bench -- ratios-export   the 1M-row sheet export (no baseline)
 *   npm run bench -- ratios-night-10m  the nightly job step by step, five cost methods, 10M (bench/nightly-job.ts)
 *   npm run bench -- ratios-night-30m  the same on 30M (compared with a 10M night only when run together)
 *   npm run bench -- ratios-nights     both: then the 10M history is held after its nights, and nights run in
 *                                      turn on the two (EXLEDGER_BENCH_NIGHTS_IN_TURN pairs, 3 by default)
 *                                      give the ratio of their build and check (a cross-check)
 *
 * EXLEDGER_BENCH_KEEP=1 leaves the nightly job's databases (and their published copies) under
 * data/bench, to time more nights on them by hand (bench/nightly-day.ts); EXLEDGER_BENCH_KEEP=night-30m
 * (or night-10m) keeps that part's alone, since the disk may not hold both.
 *
 * Under each full build, its write floor (bench/write-floor.ts): the time DuckDB takes only to
 * write the tables that build kept, with nothing to compute, beside the same baseline, and whether
 * that floor alone is above the build's target (then no build keeping those tables can meet it).
 *
 * The nightly row: what `exledger build` costs after one more day of fills and the day's futures
 * account snapshot (bench/nightly-day.ts, logged as a sync logs them) is appended to the 10M
 * history already built by the build-10m row: an incremental build. Its baselines: reading,
 * casting and sorting the new day's spot fills (what an incremental build must at least do), and
 * the whole history's.
 *
 * Inputs are the cached raw databases of bench/build-data.ts (generated once, not measured); every
 * measured command gets a fresh copy (both the build and the baseline write into theirs). The load
 * average at the start of each measurement is printed beside it: the machine is shared.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { BUILD_SCENARIOS, runBuild, type BuildRun, type BuildScenario } from './build.ts';
import { withDatabase } from './cached-database.ts';
import { BENCH_DATA_DIR, cachedBuildData, copyBuildData, removeDatabaseFiles, REPO } from './build-data.ts';
import { measureExport } from './export.ts';
import { appendNightlyDay, NIGHTLY_DAY_START_MS } from './nightly-day.ts';
import { ABOVE_LIMIT_BYTES, MEMORY_LIMIT_BYTES, benchNights, benchNightsInTurn, measureNightlyJob, removeWork, type HeldHistory } from './nightly-job.ts';
import { BENCHMARKS_PAGE, describeTarget, figureOf, formatRatioBlock, formatRatioTable, replaceRatioBlock, wallRatio, type Figure, type RatioRow } from './ratio-table.ts';
import { measureSortBaseline, type SortBaselineRun } from './sort-baseline.ts';
import { floorFailure, measureWriteFloorProcess } from './write-floor.ts';

/** The parts of the table, in the order they run. */
export const RATIO_PARTS = ['1m', '10m', 'export', 'night-10m', 'night-30m'] as const;
export type RatioPart = (typeof RATIO_PARTS)[number];

/** A nightly build is stopped after this many seconds. */
const NIGHTLY_TIMEOUT_SECONDS = 900;

/** Whether EXLEDGER_BENCH_KEEP asks to keep this part's database: `1` keeps every part's, else a comma-separated list of parts. */
function keepsPart(part: RatioPart): boolean {
  const keep = process.env.EXLEDGER_BENCH_KEEP ?? '';
  return keep === '1' || keep.split(',').map((name) => name.trim()).includes(part);
}

/** Runs the parts (all by default), prints the table, then each build's slowest models. */
export async function benchRatios(parts: readonly RatioPart[] = RATIO_PARTS): Promise<void> {
  console.log(`\n== builds beside their baselines (issues 16 and 28), one run: ${parts.join(', ')}`);
  // (A wrong number of nights is told now, not after the builds before the nightly parts.)
  if (parts.includes('night-10m') || parts.includes('night-30m')) benchNights();
  if (parts.includes('night-10m') && parts.includes('night-30m')) benchNightsInTurn();
  const started = new Date();
  const rows: RatioRow[] = [];
  const builds: Array<{ name: string; run: BuildRun }> = [];
  if (parts.includes('1m')) {
    const { row, run, work } = await measureFullBuild(scenarioNamed('build-1m'));
    const floor = await measureFloor(row, work);
    removeDatabaseFiles(work);
    rows.push(withFloorTarget(row, floor), floor);
    builds.push({ name: 'build-1m', run });
  }
  if (parts.includes('10m')) {
    const scenario = scenarioNamed('build-10m');
    const { row, run, work } = await measureFullBuild(scenario);
    builds.push({ name: 'build-10m', run });
    const nightly = await measureNightly(scenario, work);
    // The floor after the night (it then holds the day too): writing 40M rows first would push
    // the built database out of the page cache, and the night would read it back from disk.
    const floor = await measureFloor(row, work);
    // The built databases are not kept (the nightly job's parts below need the disk).
    removeDatabaseFiles(work);
    rows.push(withFloorTarget(row, floor), floor, ...nightly.rows);
    builds.push({ name: 'nightly', run: nightly.run });
  }
  if (parts.includes('export')) {
    const measured = await measureExport();
    rows.push({
      benchmark: 'export',
      what: `\`exledger report pnl\`, a ${measured.detailRows?.toLocaleString('en-US') ?? '?'}-row detail sheet${measured.lines === undefined ? '' : `, rolled up to ${measured.lines.toLocaleString('en-US')} lines, its rows beside the workbook as Parquet and CSV`}`,
      measured: figureOf({ ...measured.run, exitCode: measured.found ? measured.run.exitCode : 1 }, measured.load, measured.scenario.timeoutSeconds),
      target: { seconds: measured.scenario.targetSeconds, peakBytes: measured.scenario.targetPeakBytes },
    });
  }
  // The nightly job step by step with the five cost methods (bench/nightly-job.ts); the 30M
  // history's night is compared with the 10M one's of this run.
  // With both, the 10M history is held after its nights for nights run in turn with the 30M one's
  // (bench/nightly-job.ts nightsInTurn: a cross-check of the ratio, without a target).
  let of10m: { night?: Figure; fullBuildPeakBytes?: number; daySpotFills?: number } | undefined;
  let held: HeldHistory | undefined;
  const inTurn = parts.includes('night-10m') && parts.includes('night-30m');
  for (const [part, spotFills] of [['night-10m', 10_000_000], ['night-30m', 30_000_000]] as const) {
    if (!parts.includes(part)) continue;
    const keep = keepsPart(part);
    const job = await measureNightlyJob(spotFills, part === 'night-30m' ? { of10m: of10m ?? {}, keep, ...(held === undefined ? {} : { inTurnWith: held }) } : { keep, hold: inTurn });
    if (part === 'night-10m') held = job.held;
    else if (held !== undefined) {
      if (keepsPart('night-10m')) console.log(`nightly-10M: kept ${held.work} (nights 1 to ${held.nights} and those in turn appended; its published copies removed)`);
      else removeWork(held.work);
      held = undefined;
    }
    rows.push(...job.rows);
    if (job.fullBuild !== undefined) builds.push({ name: `${part} full build`, run: job.fullBuild });
    if (job.nightBuild !== undefined) builds.push({ name: `${part} night's build`, run: job.nightBuild });
    if (part === 'night-10m') {
      of10m = {
        ...(job.night === undefined ? {} : { night: job.night }),
        ...(job.rows[0]?.measured.peakBytes === undefined ? {} : { fullBuildPeakBytes: job.rows[0].measured.peakBytes }),
        ...(job.daySpotFills === undefined ? {} : { daySpotFills: job.daySpotFills }),
      };
    }
  }
  const finished = new Date();
  const minute = (date: Date) => date.toISOString().slice(0, 16).replace('T', ' ');
  console.log(`\nmeasured ${minute(started)} to ${minute(finished)} UTC\n`);
  console.log(formatRatioTable(rows, cpus().length));
  for (const { name, run } of builds) printSlowestModels(name, run);
  // Only a whole run replaces the page's table: a part alone would drop the other rows.
  if (RATIO_PARTS.every((part) => parts.includes(part))) {
    const page = path.join(REPO, BENCHMARKS_PAGE);
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).trim();
    writeFileSync(page, replaceRatioBlock(readFileSync(page, 'utf8'), formatRatioBlock(rows, cpus().length, { from: started, to: finished, commit })));
    console.log(`\nthe table is written into ${BENCHMARKS_PAGE}; its notes are written by hand`);
  } else {
    console.log(`\n${BENCHMARKS_PAGE} is left as it is: only \`npm run bench -- ratios\` (every part) replaces its table`);
  }
}

function scenarioNamed(name: string): BuildScenario {
  const scenario = BUILD_SCENARIOS.find((candidate) => candidate.name === name);
  if (scenario === undefined) throw new Error(`unknown build scenario "${name}"`);
  return scenario;
}

/** A full build's time at most this many times its baseline and its write floor together (issue 28, item 4). */
export const FULL_BUILD_OVER_FLOOR = 1.2;

/**
 * A full build's row with its target (issue 28; issue 16's fixed ones were withdrawn): at most
 * FULL_BUILD_OVER_FLOOR × (its baseline + its write floor), both measured in the same run, and a
 * peak below memoryLimit + 1.5e9 bytes (item 3). Without a floor measured, no target: said.
 */
export function withFloorTarget(build: RatioRow, floor: RatioRow): RatioRow {
  if (!floor.measured.ok) return { ...build, verdict: 'no write floor measured: no target' };
  return { ...build, target: { timesBaselineAndFloor: FULL_BUILD_OVER_FLOOR, floorSeconds: floor.measured.wallSeconds, peakBytes: MEMORY_LIMIT_BYTES + ABOVE_LIMIT_BYTES } };
}

/** Builds a fresh copy of the scenario's raw database, then runs the baseline on another copy. */
async function measureFullBuild(scenario: BuildScenario): Promise<{ row: RatioRow; run: BuildRun; work: string }> {
  const data = await cachedBuildData(scenario.spec);
  if (data.seconds !== undefined) console.log(`${scenario.name}: generated ${path.relative(REPO, data.path)} in ${data.seconds.toFixed(1)} s (not measured)`);
  const work = path.join(BENCH_DATA_DIR, `run-ratios-${scenario.name}.duckdb`);
  copyBuildData(data.path, work);
  const load = currentLoad();
  const run = await runBuild(work, scenario.flags ?? [], scenario.timeoutSeconds);
  console.log(`${scenario.name}: build ${run.wallSeconds.toFixed(1)} s (load ${load.toFixed(1)})`);
  const baseline = await measureBaseline(data.path, `run-ratios-${scenario.name}-baseline.duckdb`, undefined, scenario.timeoutSeconds);
  const fills = scenario.spec.spotFills.toLocaleString('en-US');
  return {
    row: {
      benchmark: scenario.name,
      what: `\`exledger build\`: ${fills} spot fills, ${scenario.spec.futuresFills.toLocaleString('en-US')} futures fills, ${scenario.spec.fundingBills.toLocaleString('en-US')} bills`,
      measured: figureOf(run, load, scenario.timeoutSeconds),
      baseline: { what: `read, cast, sort the ${fills} spot fills${baselineRows(baseline.run)}`, figure: baseline.figure },
    },
    run,
    work,
  };
}

/**
 * The write floor under a full build (bench/write-floor.ts): only writing the tables the build
 * kept, read back from `built`, into a new file. Shown beside the same baseline, with whether the
 * floor alone already misses the build's target (then no build that keeps those tables meets it).
 */
async function measureFloor(build: RatioRow, built: string): Promise<RatioRow> {
  const load = currentLoad();
  const run = await measureWriteFloorProcess(built, path.join(BENCH_DATA_DIR, `${path.basename(built, '.duckdb')}-write-floor.duckdb`), NIGHTLY_TIMEOUT_SECONDS);
  const { output } = run;
  if (output === undefined) console.log(`write floor of ${path.basename(built)} gave no result (exit ${run.exitCode ?? 'killed'}):\n${run.stderrTail}`);
  else console.log(`${build.benchmark}: write floor ${(output.totalMs / 1000).toFixed(1)} s for ${output.tables.length} tables, ${output.rows.toLocaleString('en-US')} rows (load ${load.toFixed(1)})`);
  const measured: Figure = output === undefined ? figureOf({ ...run, exitCode: 1 }, load, NIGHTLY_TIMEOUT_SECONDS) : { ...figureOf(run, load, NIGHTLY_TIMEOUT_SECONDS), wallSeconds: output.totalMs / 1000 };
  const floorRow: RatioRow = {
    benchmark: `${build.benchmark} write floor`,
    what:
      output === undefined
        ? `only writing the tables the build keeps: ${floorFailure(run)}`
        : `only writing the ${output.tables.length} tables the build keeps (${output.rows.toLocaleString('en-US')} rows) from memory into a new file, as the build writes them: no SQL, the writes' time alone (the peak holds a whole table in memory)`,
    measured,
    ...(build.baseline === undefined ? {} : { baseline: build.baseline }),
  };
  return { ...floorRow, verdict: floorVerdict(floorRow, build.target) };
}

/** Whether a floor alone misses the target of its build ("above the build's target") or not. */
export function floorVerdict(floor: RatioRow, target: RatioRow['target']): string {
  // (A target of the floor itself and the baseline: the floor is below it by construction.)
  if (target === undefined || 'timesBaselineAndFloor' in target || !floor.measured.ok) return '';
  let above: boolean;
  if ('timesBaseline' in target) {
    const ratio = wallRatio(floor);
    if (ratio === undefined) return '';
    above = ratio > target.timesBaseline;
  } else {
    above = floor.measured.wallSeconds > target.seconds;
  }
  // Only the time: the floor's own peak holds whole tables in memory, which no build does.
  const time = describeTarget('timesBaseline' in target ? target : { seconds: target.seconds });
  return above ? `**above** the build's ${time}` : `below the build's ${time}`;
}

/**
 * Appends a day to the history `built` holds (already built by the build-10m row, as a nightly
 * finds it) and builds again; the baselines read a fresh copy of the raw history with the same day.
 */
async function measureNightly(scenario: BuildScenario, built: string): Promise<{ rows: RatioRow[]; run: BuildRun }> {
  const added = await withDatabase(built, appendNightlyDay);
  console.log(`nightly: appended ${added.spotFills.toLocaleString('en-US')} spot and ${added.futuresFills.toLocaleString('en-US')} futures fills (one day) and ${added.snapshots} futures account snapshot(s) to the built 10M history`);
  const load = currentLoad();
  const run = await runBuild(built, scenario.flags ?? [], NIGHTLY_TIMEOUT_SECONDS);
  console.log(`nightly: build ${run.wallSeconds.toFixed(1)} s (load ${load.toFixed(1)})`);
  const measured = figureOf(run, load, NIGHTLY_TIMEOUT_SECONDS);

  // The baselines' input: the raw history plus the same day (not measured).
  const data = await cachedBuildData(scenario.spec);
  const input = path.join(BENCH_DATA_DIR, 'run-ratios-nightly-input.duckdb');
  copyBuildData(data.path, input);
  await withDatabase(input, appendNightlyDay);
  const day = await measureBaseline(input, 'run-ratios-nightly-baseline-day.duckdb', NIGHTLY_DAY_START_MS, NIGHTLY_TIMEOUT_SECONDS);
  const full = await measureBaseline(input, 'run-ratios-nightly-baseline-full.duckdb', undefined, NIGHTLY_TIMEOUT_SECONDS);
  removeDatabaseFiles(input);
  const what = `\`exledger build\` after one more day of fills and a futures account snapshot on the built 10M history (incremental)`;
  return {
    rows: [
      {
        benchmark: 'nightly incremental',
        what,
        measured,
        baseline: { what: `the new day: read, cast, sort its ${added.spotFills.toLocaleString('en-US')} spot fills${baselineRows(day.run)}`, figure: day.figure },
        target: { seconds: 5 },
      },
      {
        benchmark: 'nightly incremental',
        what: 'the same build, beside the full history',
        measured,
        baseline: { what: `the full history: read, cast, sort all its spot fills${baselineRows(full.run)}`, figure: full.figure },
      },
    ],
    run,
  };
}

/** Runs the sort baseline on a fresh copy (named `copyName` under data/bench) of `source`. */
async function measureBaseline(source: string, copyName: string, sinceMs: number | undefined, timeoutSeconds: number): Promise<{ run: SortBaselineRun; figure: Figure }> {
  const work = path.join(BENCH_DATA_DIR, copyName);
  copyBuildData(source, work);
  const load = currentLoad();
  const run = await measureSortBaseline(work, 'bench_sort_baseline', sinceMs, timeoutSeconds);
  // The copy is only the raw history and the baseline's table: not kept.
  removeDatabaseFiles(work);
  if (run.output === undefined) console.log(`baseline on ${copyName} gave no result (exit ${run.exitCode ?? 'killed'}):\n${run.stderrTail}`);
  else console.log(`baseline on ${copyName}: ${run.output.rows.toLocaleString('en-US')} rows, ${run.wallSeconds.toFixed(1)} s, of which the statement ${(run.output.ms / 1000).toFixed(1)} s (load ${load.toFixed(1)})`);
  return { run, figure: figureOf({ ...run, exitCode: run.output === undefined ? 1 : run.exitCode }, load, timeoutSeconds) };
}

/** " (N rows)" as the baseline counted them, so the reader sees it read the same rows. */
function baselineRows(run: SortBaselineRun): string {
  return run.output === undefined ? '' : ` (${run.output.rows.toLocaleString('en-US')} rows)`;
}


// Other processes on the machine slow every command down: the load each started under is shown beside it.
function currentLoad(): number {
  return loadavg()[0] as number;
}

/** The slowest models of a build, to see where its time goes beside the baseline. */
function printSlowestModels(name: string, run: BuildRun): void {
  const total = run.results.reduce((sum, result) => sum + result.ms, 0);
  console.log(`\n${name}: slowest models (of ${(total / 1000).toFixed(1)} s in models; exit ${run.exitCode ?? 'killed'})`);
  if (run.results.length === 0) {
    console.log(run.stderrTail);
    return;
  }
  console.table(
    [...run.results]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 6)
      .map((result) => ({ model: result.id, status: result.status, s: (result.ms / 1000).toFixed(2), share: `${((100 * result.ms) / Math.max(total, 1)).toFixed(0)}%`, rows: result.rows?.toLocaleString('en-US') ?? '' })),
  );
}
