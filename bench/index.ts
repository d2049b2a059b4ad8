/** `npm run bench`: every benchmark, one after another; each prints its own table. */
import { benchBudget } from './budget.ts';
import { benchBuild } from './build.ts';
import { benchExport } from './export.ts';
import { benchGenerate } from './sandbox-generate.ts';
import { benchSoak } from './soak.ts';
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
  build: () => benchBuild(),
  'spot-pnl': () => benchSpotPnl(),
  export: benchExport,
};
// Parts of a benchmark, to run one alone (npm run bench -- sync-budget); `npm run bench` runs them through their benchmark.
const parts: Record<string, () => Promise<void>> = {
  'sync-efficiency': () => efficiency('medium'),
  'sync-budget': budgetUse,
  'sync-speed': () => speed('large'),
  'sync-kill': () => benchSyncKill(),
  'run-kill': () => benchRunKill(process.argv[3] === undefined ? undefined : Number(process.argv[3])),
  'build-1m': () => benchBuild(['build-1m']),
  'build-10m': () => benchBuild(['build-10m']),
  'build-1m-both': () => benchBuild(['build-1m-both']),
};
const all = { ...benches, ...parts };
if (only !== undefined && !(only in all)) throw new Error(`unknown benchmark "${only}"; the benchmarks are ${Object.keys(all).join(', ')}`);
for (const [name, bench] of Object.entries(only === undefined ? benches : all)) {
  if (only !== undefined && only !== name) continue;
  await bench();
}
