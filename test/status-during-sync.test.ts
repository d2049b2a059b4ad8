import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishDatabase } from '../src/store/publish.ts';
import { runCli, startCli } from './support/cli-process.ts';
import { startSandboxProcess, type SandboxProcess } from './support/sandbox-process.ts';

/**
 * `exledger status` while a sync holds the database (issue 25): the one moment an operator wants
 * it is during the first long backfill. DuckDB lets no other process open a database one process
 * writes, so the sync keeps what it is doing in `<db>.sync-state.json`, and status reads the
 * per-stream table from the last published copy, said as such. The sandbox, the sync and status
 * each run in a process of their own (stdin closed, no terminal).
 *
 * The sandbox and the client count 100 weight per second on /api/v2: three months of daily
 * referral totals (weight 20 each) take the sync many seconds, while status runs. The sync is
 * then killed, not waited for.
 */
describe('exledger status during a sync', () => {
  let exchange: SandboxProcess;
  let dir: string;
  const db = () => path.join(dir, 'ledger.duckdb');

  beforeAll(async () => {
    exchange = await startSandboxProcess(['--end', '2026-11-01', '--window-ms', '1000', '--spot-quota', '100', '--futures-quota', '200']);
    dir = mkdtempSync(path.join(os.tmpdir(), 'exledger-status-sync-'));
    writeFileSync(
      path.join(dir, 'exledger.config.json'),
      JSON.stringify({ db: './ledger.duckdb', budget: { spot: { quota: 100, windowMs: 1000 }, contract: { quota: 200, windowMs: 1000 } }, retry: { retries: 8, minTimeoutMs: 50, maxTimeoutMs: 500 }, sync: { startDate: '2026-08-01' } }),
    );
  });
  afterAll(async () => {
    expect(await exchange?.stop()).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers (exit 0) with the holder, what its streams are doing, and the table of the published copy, said as such; after a kill, the state left is said to be stale', { timeout: 300_000 }, async () => {
    // Yesterday's night: three streams synced (a year of funding bills: thousands of rows), and published.
    const first = await runCli(['sync', '--streams', 'currencies,spot_assets,funding_bills', '--since', '2025-11-01'], { cwd: dir, env: exchange.settings });
    expect(first.code, first.stderr).toBe(0);
    const published = await publishDatabase(db());

    // Tonight's sync, reading referral totals for many seconds.
    const sync = startCli(['sync'], { cwd: dir, env: exchange.settings });
    await new Promise<void>((resolve, reject) => {
      let seen = '';
      sync.child.stderr!.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        if (/affiliate_referrals: \d+\/\d+ windows/.test(seen)) resolve();
      });
      void sync.done.then((result) => reject(new Error(`the sync ended first: ${result.stderr}`)));
    });
    const pid = sync.child.pid!;
    try {
      const [status, json] = await Promise.all([runCli(['status'], { cwd: dir }), runCli(['status', '--json'], { cwd: dir })]);
      expect(status.code, status.stderr).toBe(0);
      expect(status.stderr).toBe('');
      const lines = status.stdout.split('\n');
      // Who holds the database, and what its sync is doing (from its state file).
      expect(lines[0]).toMatch(new RegExp(`^now: exledger sync \\(pid ${pid}, since \\d{4}-\\d{2}-\\d{2}T\\S+Z\\), holding the database$`));
      expect(lines[1]).toMatch(new RegExp(`^sync \\S+ \\(pid ${pid}, started \\S+Z\\): \\d+ of \\d+ streams done, as of \\S+Z$`));
      expect(lines[2]).toMatch(/^account +stream +status +windows +rows read +committed until$/);
      expect(status.stdout).toMatch(/^main +affiliate_referrals +running +\d+\/\d+ +[\d,]+ +(2026-\S+Z|-)$/m);
      // The per-stream table, from the published copy, said as such.
      expect(status.stdout).toMatch(/\nPer stream, from the published copy of \d{4}-\d{2}-\d{2}T\S+Z \(\S*ledger\.published\.duckdb\), not the database \(it is held\):\naccount +stream +rows +partitions +synced until/);
      expect(status.stdout).toMatch(/^main +currencies +[\d,]+ +1 +2026-\S+Z /m);
      // Counts with thousands separators, as the sync's progress lines print them.
      expect(status.stdout).toMatch(/^main +funding_bills +\d{1,3}(,\d{3})+ +\d+ +2026-\S+Z /m);
      // The published copy had no referral totals yet.
      expect(status.stdout).toMatch(/^main +affiliate_referrals +0 +0 +- +- +-$/m);

      expect(json.code).toBe(0);
      const details = JSON.parse(json.stdout) as { source: { kind: string; file: string }; holders: { pid: number; purpose: string }[]; sync: { pid: number; running: boolean; streams: { stream: string; status: string }[] } };
      expect(details.source).toMatchObject({ kind: 'published copy', file: published.path });
      expect(details.holders).toEqual([expect.objectContaining({ pid, purpose: 'sync', lock: 'database' })]);
      expect(details.sync).toMatchObject({ pid, running: true });
      expect(details.sync.streams.find((stream) => stream.stream === 'affiliate_referrals')?.status).toBe('running');
    } finally {
      sync.child.kill('SIGKILL');
      await sync.done;
    }

    // Killed outright: the state file is left; status reads the database again and says the file is stale.
    expect(existsSync(`${db()}.sync-state.json`)).toBe(true);
    const after = await runCli(['status'], { cwd: dir });
    expect(after.code, after.stderr).toBe(0);
    expect(after.stdout).toMatch(new RegExp(`^note: a sync \\(pid ${pid}, run \\S+, started \\S+Z\\) ended without finishing \\(it was killed\\); \\S*ledger\\.duckdb\\.sync-state\\.json is left from it`));
    expect(after.stdout).toMatch(/\naccount +stream +rows +partitions /);
    expect(after.stdout).not.toMatch(/published copy/);
  });
});
