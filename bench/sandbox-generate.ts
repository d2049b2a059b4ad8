/**
 * Benchmark of the sandbox generator: records per stream and generation time per scale.
 *
 *   npx tsx bench/sandbox-generate.ts [small|medium|large ...] [--seed N]
 *
 * Prints one row per scale (one account each). Times are wall clock of generateExchange only;
 * the heap column is what the generated sandbox occupies afterwards.
 */
import { generateExchange, summarizeExchange } from '../src/sandbox/generate.ts';
import type { SandboxAccount, SandboxScale } from '../src/sandbox/model.ts';

const endMs = Date.UTC(2026, 10, 22);

/** Generates each scale once and prints a table of counts, seconds and heap. */
export function benchGenerate(scales: readonly SandboxScale[] = ['small', 'medium', 'large'], seed = 1): void {
console.log('\n== sandbox generation: records per stream and seconds, one account per scale');
const rows: Array<Record<string, string | number>> = [];
for (const scale of scales) {
  globalThis.gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  const started = performance.now();
  const exchange = generateExchange({ seed, scale, endMs });
  const seconds = (performance.now() - started) / 1000;
  const heapMb = Math.round((process.memoryUsage().heapUsed - heapBefore) / 1e6);
  const { counts } = summarizeExchange(exchange)[0] as ReturnType<typeof summarizeExchange>[number];
  const account = exchange.accounts[0] as SandboxAccount;
  const probes = Array.from({ length: 500 }, (_, i) => exchange.startMs + Math.floor(((i + 0.5) / 500) * (exchange.endMs - exchange.startMs)));
  const assetsMicros = timePerCall(probes, (ms) => account.assetsAt(ms));
  const futuresMicros = timePerCall(probes, (ms) => account.futuresAccountAt(ms));
  rows.push({
    scale,
    'spot fills': counts.spotFills,
    'funding bills': counts.fundingBills,
    transfers: counts.transferRecords,
    'futures fills': counts.futuresFills,
    commissions: counts.commissions,
    referral: counts.referralActivity,
    history: counts.history,
    'futures orders': counts.futuresOrders,
    seconds: seconds.toFixed(2),
    'heap MB': heapMb,
    'assetsAt µs': assetsMicros,
    'futuresAccountAt µs': futuresMicros,
  });
}
console.table(rows);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const seedIndex = args.indexOf('--seed');
  const seed = seedIndex >= 0 ? Number(args[seedIndex + 1]) : 1;
  const scales = args.filter((_, i) => seedIndex < 0 || (i !== seedIndex && i !== seedIndex + 1)) as SandboxScale[];
  benchGenerate(scales.length > 0 ? scales : undefined, seed);
}

/** Mean microseconds per call of a snapshot function over the probe times. */
function timePerCall(probes: number[], snapshot: (ms: number) => unknown): string {
  const started = performance.now();
  for (const ms of probes) snapshot(ms);
  return (((performance.now() - started) * 1000) / probes.length).toFixed(0);
}
