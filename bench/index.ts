/**
 * `npm run bench`: every benchmark, one after another; each prints its own table.
 * `npm run bench -- <name>` runs one benchmark or one part of one (the names below; an unknown
 * name lists them). `ratios` is issue 16's table: build-1m, build-10m and the nightly build, each
 * beside a baseline measured in the same run, each full build's write floor, and the 1M-row export; `build` (each build's
 * models in detail) is a part, so that `npm run bench` builds each history once.
 */
import { execFileSync } from 'node:child_process';
import { benchBooks } from './books.ts';
import { benchBudget } from './budget.ts';
import { benchBuild } from './build.ts';
import { benchExport } from './export.ts';
import { benchReportAll } from './report-all.ts';
import { benchPublish } from './publish.ts';
import { benchGenerate } from './sandbox-generate.ts';
import { benchSoak } from './soak.ts';
import { benchRatios } from './ratios.ts';
import { benchSpotPnl } from './spot-pnl.ts';
import { benchSync, budgetUse, efficiency, speed } from './sync.ts';
import { benchRunKill } from './run-kill.ts';
import { benchSyncKill } from './sync-kill.ts';

const only = process.argv[2];
const benches: Record<string, () => Promise<void>> = {
  generate: async () => benchGenerate(),
  budget: benchBudget,
  sync: benchSync,
  soak: () => benchSoak(10),
  ratios: () => benchRatios(),
  'spot-pnl': () => benchSpotPnl(),
  books: () => benchBooks(1_000_000, []),
};
// Parts of a benchmark, to run one alone (npm run bench -- sync-budget); `npm run bench` runs them through their benchmark.
const parts: Record<string, () => Promise<void>> = {
  'sync-efficiency': () => efficiency('medium'),
  'sync-budget': budgetUse,
  'sync-speed': () => speed('large'),
  'sync-kill': () => benchSyncKill(),
  'run-kill': () => benchRunKill(process.argv[3] === undefined ? undefined : Number(process.argv[3])),
  build: () => benchBuild(),
  export: benchExport,
  'report-all': benchReportAll,
  'ratios-1m': () => benchRatios(['1m']),
  'ratios-10m': () => benchRatios(['10m']),
  'ratios-export': () => benchRatios(['export']),
  'ratios-night-10m': () => benchRatios(['night-10m']),
  'ratios-night-30m': () => benchRatios(['night-30m']),
  'ratios-nights': () => benchRatios(['night-10m', 'night-30m']),
  'build-1m': () => benchBuild(['build-1m']),
  'build-10m': () => benchBuild(['build-10m']),
  'build-1m-both': () => benchBuild(['build-1m-both']),
  'publish-1m': () => benchPublish(1_000_000, process.argv.slice(3)),
  'books-1m': () => benchBooks(1_000_000, process.argv.slice(3)),
  'books-10m': () => benchBooks(10_000_000, process.argv.slice(3)),
  'publish-300k': () => benchPublish(300_000, process.argv.slice(3)),
};
const all = { ...benches, ...parts };
if (only !== undefined && !(only in all)) {
  console.error(`bench: unknown benchmark "${only}"; the benchmarks are ${Object.keys(all).join(', ')}`);
  process.exit(2);
}
// The commands are measured as `npm ci` leaves them: started from the bundle of the current sources.
execFileSync(process.execPath, ['scripts/bundle.mjs'], { stdio: 'inherit' });
for (const [name, bench] of Object.entries(only === undefined ? benches : all)) {
  if (only !== undefined && only !== name) continue;
  await bench();
}
