/** `npm run bench`: every benchmark, one after another; each prints its own table. */
import { benchBudget } from './budget.ts';
import { benchGenerate } from './sandbox-generate.ts';
import { benchSoak } from './soak.ts';
import { benchSync, budgetUse, efficiency, speed } from './sync.ts';

const only = process.argv[2];
const benches: Record<string, () => Promise<void>> = {
  generate: async () => benchGenerate(),
  budget: benchBudget,
  sync: benchSync,
  soak: () => benchSoak(10),
  // Parts of `sync`, to run one alone: npm run bench -- sync-budget
  'sync-efficiency': () => efficiency('medium'),
  'sync-budget': budgetUse,
  'sync-speed': () => speed('large'),
};
if (only !== undefined && !(only in benches)) throw new Error(`unknown benchmark "${only}"; the benchmarks are ${Object.keys(benches).join(', ')}`);
for (const [name, bench] of Object.entries(benches)) {
  if (only === undefined ? name.startsWith('sync-') : only !== name) continue;
  await bench();
}
