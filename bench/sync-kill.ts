/**
 * Killed syncs: `exledger sync` as a child process against an exchange stricter than its
 * documentation (futures 500 weight per 10 s where the client assumes 1000), SIGKILLed after a
 * few seconds, again and again on the same database, as a crashing cron job would be. Prints what
 * each killed run left committed, and how many 429s each run met.
 */
import { startTestSandbox } from '../test/support/sandbox.ts';
import { createWorkspace, isoDay, queryWorkspace } from '../test/support/sync-harness.ts';
import { runSyncProcess } from '../test/support/sync-process.ts';
import { table } from './sync.ts';

const HISTORY = ['futures_fills', 'spot_fills', 'funding_bills', 'transfer_records', 'affiliate_commissions', 'affiliate_referrals'] as const;

export async function benchSyncKill(killAfterSeconds: readonly number[] = [7, 15, 35], futuresQuota = 500): Promise<void> {
  const sandbox = await startTestSandbox({ scale: 'medium', spotQuota: 500, futuresQuota, windowMs: 10_000 });
  try {
    const workspace = createWorkspace(sandbox, { budget: { spot: { quota: 500, windowMs: 10_000 }, contract: { quota: 1000, windowMs: 10_000 } } });
    const until = isoDay(sandbox.exchange.endMs);
    const rows: (string | number)[][] = [];
    for (const [index, seconds] of killAfterSeconds.entries()) {
      sandbox.clearRequestLog();
      const run = await runSyncProcess(workspace, until, seconds * 1000);
      const log = sandbox.requestLog;
      const counts = await Promise.all(
        HISTORY.map(async (stream) => {
          const [row] = await queryWorkspace<{ n: string }>(workspace, `SELECT count(*)::VARCHAR AS n FROM raw.${stream}`).catch(() => [{ n: '-' }]);
          return row!.n;
        }),
      );
      const [covered] = await queryWorkspace<{ until: string | null }>(
        workspace,
        "SELECT max(make_timestamp(covered_until_ms * 1000))::DATE::VARCHAR AS until FROM meta.cursors WHERE stream = 'futures_fills'",
      ).catch(() => [{ until: null }]);
      const learned = await queryWorkspace<{ n: string }>(workspace, "SELECT count(*)::VARCHAR AS n FROM meta.facts WHERE fact LIKE 'learned_rate:%'").catch(() => [{ n: '0' }]);
      const futures = log.filter((entry) => entry.endpoint === 'futures.fills');
      rows.push([
        index + 1,
        run.killed ? `${seconds} s` : `ended ${((run.endedAtMs - run.startedAtMs) / 1000).toFixed(0)} s`,
        futures.length === 0 ? '-' : `${((Math.min(...futures.map((entry) => entry.at)) - run.startedAtMs) / 1000).toFixed(1)} s`,
        log.filter((entry) => entry.endpoint === 'futures.fills' && entry.status === 200).reduce((sum, entry) => sum + (entry.rows ?? 0), 0),
        ...counts,
        covered?.until ?? '-',
        log.filter((entry) => entry.status === 429).length,
        learned[0]!.n,
      ]);
    }
    table(
      `killed syncs, one after another on one database (medium history; the exchange allows futures ${futuresQuota} weight per 10 s, the client assumes 1000): rows committed after each run`,
      ['run', 'killed after', 'first futures request', 'futures rows served', ...HISTORY, 'futures covered until', '429s in run', 'learned rates stored'],
      rows,
    );
  } finally {
    await sandbox.close();
  }
}
