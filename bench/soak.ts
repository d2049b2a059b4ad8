/**
 * Soak: full syncs of many generated histories (seeds, history ends, bound and cursor modes,
 * faults), each compared record for record with what the sandbox holds. Prints one line per
 * case and a total; exits non-zero on any mismatch. `npm run bench -- soak` (or tsx bench/soak.ts N).
 */
import type { SandboxOptions } from '../src/sandbox/server.ts';
import { expectedRecordTexts } from '../test/support/expected-records.ts';
import { startTestSandbox } from '../test/support/sandbox.ts';
import { createWorkspace, queryWorkspace, syncOnce } from '../test/support/sync-harness.ts';

const STREAMS = ['spot_fills', 'funding_bills', 'transfer_records', 'futures_fills', 'affiliate_commissions'] as const;
const MODES: SandboxOptions[] = [{}, { bounds: 'exclusive' }, { bounds: 'half-open' }, { transferCursor: 'reversed' }, { faults: 'light', slowFaultMs: [50, 200] }];

export async function benchSoak(cases = 10): Promise<void> {
  console.log(`\n== soak: ${cases} full syncs of generated small histories, each compared record for record`);
  let failures = 0;
  for (let index = 0; index < cases; index += 1) {
    const seed = 100 + index;
    const endMs = Date.UTC(2026, index % 12, 1 + (index % 28));
    const mode = MODES[index % MODES.length]!;
    const sandbox = await startTestSandbox({ seed, endMs, spotQuota: 10_000_000, futuresQuota: 10_000_000, ...mode });
    try {
      const workspace = createWorkspace(sandbox);
      const outcome = await syncOnce(workspace, sandbox);
      const failed = outcome.results.filter((result) => result.status !== 'ok').map((result) => `${result.stream}: ${result.errorMessage}`);
      const expected = expectedRecordTexts(sandbox.exchange.accounts[0]!);
      const mismatched: string[] = [];
      for (const stream of STREAMS) {
        const stored = (await queryWorkspace<{ r: string }>(workspace, `SELECT _record::VARCHAR AS r FROM raw.${stream}`)).map((row) => row.r).sort();
        if (JSON.stringify(stored) !== JSON.stringify(expected[stream])) mismatched.push(`${stream} (${stored.length} stored, ${expected[stream]!.length} expected)`);
      }
      const ok = failed.length === 0 && mismatched.length === 0;
      if (!ok) failures += 1;
      console.log(`seed ${seed} end ${new Date(endMs).toISOString().slice(0, 10)} ${JSON.stringify(mode)}: ${ok ? 'ok' : `FAILED ${[...failed, ...mismatched].join('; ')}`}`);
    } finally {
      await sandbox.close();
    }
  }
  console.log(`${cases - failures} of ${cases} cases exact`);
  if (failures > 0) process.exitCode = 1;
}

if (import.meta.url === `file://${process.argv[1]}`) await benchSoak(Number(process.argv[2] ?? 10));
