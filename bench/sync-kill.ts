/**
 * Killed syncs: `exledger sync` as a child process against an exchange stricter than its
 * documentation (futures 500 weight per 10 s where the client assumes 1000), SIGKILLed after a
 * few seconds, as a crashing cron job would be. Prints what each killed run left committed:
 * - each on a fresh database (one exchange window apart, so no run is refused for another's
 *   requests);
 * - one after another on one database, back to back, with the 429s each run met and the rates
 *   remembered for the next.
 */
import type { RunningSandbox } from '../src/sandbox/server.ts';
import { startTestSandbox } from '../test/support/sandbox.ts';
import { createWorkspace, isoDay, queryWorkspace, type SyncWorkspace } from '../test/support/sync-harness.ts';
import { runSyncProcess, type SyncProcessRun } from '../test/support/sync-process.ts';
import { table } from './sync.ts';

const HISTORY = ['futures_fills', 'spot_fills', 'funding_bills', 'transfer_records', 'affiliate_commissions', 'affiliate_referrals'] as const;
const WINDOW_MS = 10_000;
/** The quotas the client assumes: the documented ones. */
const CLIENT_BUDGET = { spot: { quota: 500, windowMs: WINDOW_MS }, contract: { quota: 1000, windowMs: WINDOW_MS } };

async function committedRows(workspace: SyncWorkspace): Promise<string[]> {
  return Promise.all(
    HISTORY.map(async (stream) => {
      const [row] = await queryWorkspace<{ n: string }>(workspace, `SELECT count(*)::VARCHAR AS n FROM raw.${stream}`).catch(() => [{ n: '-' }]);
      return row!.n;
    }),
  );
}

/** Rows the sandbox served for futures fills in this run, and when the first request came (s after spawn). */
function futuresServed(sandbox: RunningSandbox, run: SyncProcessRun): [number, string] {
  const futures = sandbox.requestLog.filter((entry) => entry.endpoint === 'futures.fills');
  const rows = futures.filter((entry) => entry.status === 200).reduce((sum, entry) => sum + (entry.rows ?? 0), 0);
  return [rows, futures.length === 0 ? '-' : `${((Math.min(...futures.map((entry) => entry.at)) - run.startedAtMs) / 1000).toFixed(1)} s`];
}

export async function benchSyncKill(futuresQuota = 500): Promise<void> {
  const sandbox = await startTestSandbox({ scale: 'medium', spotQuota: 500, futuresQuota, windowMs: WINDOW_MS });
  const until = isoDay(sandbox.exchange.endMs);
  const title = `(medium history; the exchange allows futures ${futuresQuota} weight per 10 s, the client assumes 1000)`;
  try {
    const fresh: (string | number)[][] = [];
    for (const seconds of [7, 10, 15, 25]) {
      await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
      const workspace = createWorkspace(sandbox, { budget: CLIENT_BUDGET });
      sandbox.clearRequestLog();
      const run = await runSyncProcess(workspace, until, seconds * 1000);
      const [served, first] = futuresServed(sandbox, run);
      fresh.push([run.killed ? `${seconds} s` : `ended ${((run.endedAtMs - run.startedAtMs) / 1000).toFixed(0)} s`, first, served, ...(await committedRows(workspace))]);
    }
    table(`killed syncs, each on a fresh database ${title}: rows committed`, ['killed after', 'first futures request', 'futures rows served', ...HISTORY], fresh);

    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
    const workspace = createWorkspace(sandbox, { budget: CLIENT_BUDGET });
    const sequence: (string | number)[][] = [];
    for (const [index, seconds] of [7, 15, 35].entries()) {
      sandbox.clearRequestLog();
      const run = await runSyncProcess(workspace, until, seconds * 1000);
      const [served, first] = futuresServed(sandbox, run);
      const learned = await queryWorkspace<{ rates: string | null }>(
        workspace,
        "SELECT string_agg(account || ' ' || value, ', ' ORDER BY account) AS rates FROM meta.facts WHERE fact = 'learned_rate:futures.fills'",
      ).catch(() => [{ rates: null }]);
      sequence.push([
        index + 1,
        run.killed ? `${seconds} s` : `ended ${((run.endedAtMs - run.startedAtMs) / 1000).toFixed(0)} s`,
        first,
        served,
        ...(await committedRows(workspace)),
        sandbox.requestLog.filter((entry) => entry.status === 429).length,
        learned[0]?.rates ?? '-',
      ]);
    }
    table(
      `killed syncs, one after another on one database ${title}: rows committed after each run`,
      ['run', 'killed after', 'first futures request', 'futures rows served', ...HISTORY, '429s in run', 'futures.fills rate remembered (weight/s)'],
      sequence,
    );
  } finally {
    await sandbox.close();
  }
}
