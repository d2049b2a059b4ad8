import { describe, expect, it } from 'vitest';
import { startTestSandbox } from './support/sandbox.ts';
import { createWorkspace, fingerprint, syncOnce } from './support/sync-harness.ts';
import { runSyncProcess } from './support/sync-process.ts';

/** A small deterministic PRNG, so a failing kill schedule can be replayed. */
function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('crash safety', () => {
  it('a sync killed with SIGKILL at random moments, rerun each time, ends identical to an uninterrupted one', async () => {
    const sandbox = await startTestSandbox({ scale: 'medium', spotQuota: 1_000_000, futuresQuota: 1_000_000 });
    try {
      const until = new Date(sandbox.exchange.endMs).toISOString().slice(0, 10);
      const reference = createWorkspace(sandbox);
      const startedAt = Date.now();
      await syncOnce(reference, sandbox);
      const referenceMs = Date.now() - startedAt;
      const expected = await fingerprint(reference);

      const crashed = createWorkspace(sandbox);
      const random = mulberry32(20261122);
      let kills = 0;
      let completed = 0;
      for (let attempt = 0; kills < 10 && attempt < 40; attempt += 1) {
        // Anywhere from process start-up (~0.6 s) to a few seconds into the sync: each run gets
        // a little further, so the kills land all along the backfill.
        const delay = 300 + Math.floor(random() * 2_500);
        const run = await runSyncProcess(crashed, until, delay);
        if (run.killed) kills += 1;
        else {
          expect(run.code, run.output).toBe(0);
          completed += 1;
        }
      }
      console.log(`reference sync ${referenceMs} ms; ${kills} runs killed, ${completed} ran to the end before their kill`);
      expect(kills).toBe(10);
      const final = await runSyncProcess(crashed, until, null);
      expect(final.code, final.output).toBe(0);
      expect(await fingerprint(crashed)).toEqual(expected);
    } finally {
      await sandbox.close();
    }
  }, 240_000);
});
