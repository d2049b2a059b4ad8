/**
 * Benchmark of `exledger report all` at volume (issue 28): the last month of the build-1m history
 * (1M spot fills over 2025, 1M futures fills, 100k bills: build-data.ts) built with all five cost
 * methods, so December's lot detail holds some 330,000 matches of the four lot-based ones.
 *
 *   npm run bench -- report-all
 *
 * The built database is cached under data/bench/ (the build, ~4 minutes on 2 cores, is measured
 * once, when it is made); each run reports into a new folder, three times: with
 * reports.detailRowLimit at its largest (every sheet whole, as before the roll-up), as configured
 * (rolled up, the full detail beside the workbook), and again with nothing changed (every
 * workbook "unchanged since …: not written again"). Without a reporting currency, `all` is pnl,
 * fees, rebates and balances. Prints a row per run: wall, CPU, peak RSS, load at start.
 */
import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { MAX_DETAIL_ROW_LIMIT } from '../src/export/roll-up.ts';
import { BENCH_DATA_DIR, cachedBuildData, copyBuildData, removeDatabaseFiles } from './build-data.ts';
import { measureCommand } from './measure-command.ts';

const SPEC = { spotFills: 1_000_000, futuresFills: 1_000_000, fundingBills: 100_000 };
const PERIOD = '2025-12';
const METHODS = ['fifo', 'average', 'lifo', 'hifo', 'uk'];
const MB = 1024 ** 2;

/** The build-1m history built with every cost method, made once (under a temporary name, renamed when built). */
async function builtDatabase(): Promise<string> {
  const built = path.join(BENCH_DATA_DIR, `report-all-s${SPEC.spotFills}-${METHODS.join('-')}.duckdb`);
  if (existsSync(built)) return built;
  const input = await cachedBuildData(SPEC);
  const partial = `${built}.partial`;
  removeDatabaseFiles(partial);
  copyBuildData(input.path, partial);
  const load = loadavg()[0]!;
  const build = await measureCommand(['build', '--db', partial, '--cost-method', ...METHODS, '--quiet'], 3600);
  if (build.exitCode !== 0) throw new Error(`exledger build exited ${build.exitCode ?? 'killed'}:\n${build.stderrTail}`);
  console.log(`built ${path.basename(built)} (${METHODS.join(', ')}) in ${build.wallSeconds.toFixed(1)} s, peak ${Math.round((build.peakBytes ?? 0) / MB)} MB, load ${load.toFixed(1)} (not part of the table)`);
  renameSync(partial, built);
  return built;
}

/** Runs the benchmark and prints its table. */
export async function benchReportAll(): Promise<void> {
  console.log(`\n== exledger report all --period ${PERIOD}: build-1m with ${METHODS.length} cost methods, whole sheets, rolled up, unchanged`);
  const database = await builtDatabase();
  const folder = mkdtempSync(path.join(tmpdir(), 'exledger-bench-report-all-'));
  try {
    const whole = path.join(folder, 'whole.json');
    writeFileSync(whole, JSON.stringify({ reports: { detailRowLimit: MAX_DETAIL_ROW_LIMIT } }));
    const configured = path.join(folder, 'configured.json');
    writeFileSync(configured, '{}');
    const rows = [];
    for (const [run, config, out] of [
      [`whole sheets (limit ${MAX_DETAIL_ROW_LIMIT.toLocaleString('en-US')})`, whole, 'whole'],
      ['rolled up (the default)', configured, 'rolled'],
      ['again, nothing changed', configured, 'rolled'],
    ] as const) {
      const load = loadavg()[0]!;
      const measured = await measureCommand(['report', 'all', '--period', PERIOD, '--db', database, '--out', path.join(folder, out), '--config', config, '--quiet'], 1800);
      const lines = measured.stdout.split('\n').filter((line) => /^\S+ +\d{4}-\d{2} /.test(line));
      rows.push({
        run,
        exit: measured.exitCode,
        'wall s': measured.wallSeconds.toFixed(1),
        'CPU s': measured.cpuSeconds?.toFixed(1) ?? '?',
        'peak RSS MB': measured.peakBytes === undefined ? '?' : Math.round(measured.peakBytes / MB),
        'load at start': `${load.toFixed(1)} / ${cpus().length} cores`,
        pnl: lines.find((line) => line.startsWith('pnl '))?.replace(/^pnl +\S+ +\S+ {2}/, '') ?? '?',
      });
    }
    console.table(rows);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchReportAll();
