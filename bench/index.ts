/** `npm run bench`: every benchmark, one after another; each prints its own table. */
import { benchBudget } from './budget.ts';

const only = process.argv[2];
const benches: Record<string, () => Promise<void>> = { budget: benchBudget };
for (const [name, bench] of Object.entries(benches)) {
  if (only !== undefined && only !== name) continue;
  await bench();
}
