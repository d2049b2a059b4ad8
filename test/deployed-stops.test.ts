import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, runCli, startCli, waitForSignalHandler, type CliResult } from './support/cli-process.ts';
import { INSTALLED_AT, processesUsing, unitSection } from './support/deploy-files.ts';
import { startSandboxProcess, type SandboxProcess } from './support/sandbox-process.ts';

/**
 * Stops as a scheduler makes them (issue 25): `systemctl stop` sends SIGTERM to the process the
 * unit started, Ctrl-C sends SIGINT. deploy/exledger.service's ExecStart is run as written (only
 * /srv/exledger is this checkout), in a folder of its own, with no terminal, against the sandbox
 * in another process, and signalled while its sync is reading: whatever it was doing (a request in
 * flight, requests waiting for the rate budget), it ends with exit 130, one `error:` line saying
 * it was interrupted, no stack trace anywhere (stdout, stderr, the run's log), no process and no
 * lock left behind, and `exledger status` says `interrupted by SIGTERM` for the stream it was
 * reading, not a library's message.
 *
 * The client's budget binds (referral totals weigh 20; 60 per second leaves room for 3 a second,
 * while the sync reads 8 windows ahead), so when the signal comes requests are waiting in the
 * rate limiter: the moment that printed bottleneck's "This limiter has been stopped" before.
 * Each test takes two starts of exledger and a second or two of sync; on a loaded machine a start
 * takes many seconds, hence the long timeouts (nothing here is timed).
 */

/** systemd's PATH for services, with the folder of this node in front when it is elsewhere (as the unit's node would be found). */
function servicePath(): string {
  const paths = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin'];
  const nodeFolder = path.dirname(process.execPath);
  return (paths.includes(nodeFolder) ? paths : [nodeFolder, ...paths]).join(':');
}

const CONFIG = {
  db: './data/exledger.duckdb',
  reports: { outDir: './out' },
  logDir: './logs',
  sync: { startDate: '2026-08-01' },
  budget: { spot: { quota: 60, windowMs: 1000 }, contract: { quota: 60, windowMs: 1000 } },
  retry: { retries: 8, minTimeoutMs: 50, maxTimeoutMs: 500 },
};

/** The unit's ExecStart, as written, with this checkout for /srv/exledger. */
function execStart(): string[] {
  const service = unitSection('exledger.service', 'Service');
  expect(service.ExecStart).toHaveLength(1);
  const command = service.ExecStart![0]!;
  // The installed executable itself: nothing (npm, npx, a shell) between systemd and the work.
  expect(command).not.toMatch(/\bnpx?\b|\bsh\b/);
  return command.replaceAll(INSTALLED_AT, REPO).split(/\s+/);
}

/** Starts the unit's command as systemd would: in `folder`, stdin /dev/null, stdout and stderr pipes, the unit's environment. */
function startUnit(folder: string, settings: Record<string, string>): { child: ChildProcess; done: Promise<CliResult> } {
  const [file, ...args] = execStart();
  const child = spawn(file!, args, { cwd: folder, env: { PATH: servicePath(), LANG: 'C.UTF-8', ...settings }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done };
}

/** Resolves once the sandbox has answered requests for the referral totals since `since` (the sync is reading, its budget binding). */
async function whenReading(exchange: SandboxProcess, since: number, done: Promise<unknown>): Promise<void> {
  let ended = false;
  void done.then(() => (ended = true));
  for (;;) {
    const requests = await exchange.requests();
    if (requests.filter((request) => request.at >= since && request.endpoint === 'rebate.referrals').length >= 3) return;
    if (ended) throw new Error('the command ended before it read the referral totals');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The text of every run log in `folder`/logs. */
function runLogs(folder: string): string {
  let names: string[];
  try {
    names = readdirSync(path.join(folder, 'logs')).filter((name) => name.startsWith('run-'));
  } catch {
    return '';
  }
  return names.map((name) => readFileSync(path.join(folder, 'logs', name), 'utf8')).join('\n');
}

/** Files named *.lock anywhere under `folder`. */
function locks(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.lock'));
}

/** What every clean stop shows: exit 130, one error line naming the signal, no stack, nothing left. */
async function expectCleanStop(folder: string, result: CliResult, signal: 'SIGTERM' | 'SIGINT', env: Record<string, string>): Promise<void> {
  const all = `${result.stdout}\n${result.stderr}`;
  const log = runLogs(folder);
  expect(result.signal, all).toBeNull();
  expect(result.code, all).toBe(130);
  expect(all.split('\n').filter((line) => line.startsWith('error:')), all).toEqual([expect.stringMatching(new RegExp(`^error: interrupted by ${signal}\\b`))]);
  for (const [where, text] of [['stdout', result.stdout], ['stderr', result.stderr], ['run log', log]] as const) {
    expect(text, where).not.toMatch(/^\s+at /m);
    expect(text, where).not.toMatch(/limiter|unexpected|Error:/);
  }
  expect(processesUsing(folder)).toEqual([]);
  expect(locks(folder)).toEqual([]);
  // `exledger status` afterwards: the stream that was reading was interrupted by that signal.
  const status = await runCli(['status'], { cwd: folder, env });
  expect(status.code, status.stderr).toBe(0);
  expect(status.stdout).toMatch(new RegExp(`^main +affiliate_referrals +.* interrupted +interrupted by ${signal}$`, 'm'));
  for (const line of status.stdout.split('\n').filter((candidate) => / interrupted /.test(candidate))) expect(line).toMatch(new RegExp(`interrupted by ${signal}$`));
}

describe('stops are clean: the systemd unit as written, and a sync, stopped while reading', () => {
  let exchange: SandboxProcess;
  const folders: string[] = [];
  const workFolder = () => {
    const folder = mkdtempSync(path.join(os.tmpdir(), 'exledger-stop-'));
    writeFileSync(path.join(folder, 'exledger.config.json'), JSON.stringify(CONFIG));
    folders.push(folder);
    return folder;
  };

  beforeAll(async () => {
    // The exchange itself never says 429: the client's own budget is what binds.
    exchange = await startSandboxProcess(['--window-ms', '1000', '--spot-quota', '1000000', '--futures-quota', '1000000']);
  });
  afterAll(async () => {
    expect(await exchange?.stop()).toBe(0);
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  });

  it('the unit file starts the executable, which git keeps executable', () => {
    const service = unitSection('exledger.service', 'Service');
    expect(service.Type).toEqual(['oneshot']);
    expect(service.WorkingDirectory).toEqual([INSTALLED_AT]);
    const [file] = execStart();
    expect(file).toBe(path.join(REPO, 'src/cli/exledger.js'));
    expect(readFileSync(file!, 'utf8').split('\n')[0]).toBe('#!/usr/bin/env node');
    expect(statSync(file!).mode & 0o111).toBe(0o111);
    expect(unitSection('exledger.timer', 'Timer').OnCalendar).toEqual(['*-*-* 02:15:00']);
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal} to the unit's ExecStart (exledger run) while its sync reads: exit 130, one error line, no stack, no process or lock left, status says interrupted by ${signal}`, async () => {
      const folder = workFolder();
      const since = Date.now();
      const unit = startUnit(folder, exchange.settings);
      await waitForSignalHandler(unit.child.pid!, signal);
      await whenReading(exchange, since, unit.done);
      unit.child.kill(signal);
      const result = await unit.done;
      // The run said where it stopped: the sync step interrupted, the later steps skipped.
      expect(result.stdout).toMatch(/^sync +interrupted .* interrupted: .*main affiliate_referrals/m);
      expect(result.stdout).toMatch(/^run: INTERRUPTED \(exit 130\)/m);
      expect(runLogs(folder)).toMatch(new RegExp(` error: interrupted by ${signal}: the run stopped; what was committed stays\\n`));
      await expectCleanStop(folder, result, signal, exchange.settings);
    }, 180_000);
  }

  it('SIGTERM to exledger sync while requests wait for the rate budget: the same clean stop', async () => {
    const folder = workFolder();
    const since = Date.now();
    const sync = startCli(['sync'], { cwd: folder, env: exchange.settings });
    await waitForSignalHandler(sync.child.pid!, 'SIGTERM');
    await whenReading(exchange, since, sync.done);
    sync.child.kill('SIGTERM');
    const result = await sync.done;
    expect(result.stdout).toMatch(/^main +affiliate_referrals +interrupted /m);
    expect(result.stderr).toMatch(/^error: interrupted by SIGTERM: the sync stopped; what it read is committed\n {2}fix: /m);
    await expectCleanStop(folder, result, 'SIGTERM', exchange.settings);
  }, 180_000);
});
