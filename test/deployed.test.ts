import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../src/store/database.ts';
import { BIN, cronEnvironment, REPO, runCli, startCli, waitForSignalHandler } from './support/cli-process.ts';
import { crontabJob, INSTALLED_AT } from './support/deploy-files.ts';
import { startSandboxProcess, type SandboxProcess, type SandboxRequest } from './support/sandbox-process.ts';

/**
 * exledger the way it is deployed (issue 11): the `exledger` executable in a process of its
 * own, stdin closed, stdout and stderr pipes (no terminal), the environment reduced to PATH,
 * HOME and the settings, against `exledger sandbox` started as another process. Nothing of the
 * exchange or of the command runs inside this test's process, so nothing here keeps a command's
 * event loop alive: a command that stops waiting for its own work shows as it would under cron.
 *
 * The sandbox counts weight over 1-second windows at the real quotas (500 per endpoint on
 * /api/v2, 1000 on /capi/v2) and the client is told the same: ten times the real rate, so the
 * suite stays short, while a year of daily referral totals (weight 20 each) is several times one
 * window's quota, so the client must wait for its budget to refill.
 */

const QUOTA = { spot: 500, futures: 1000, windowMs: 1000 };
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const STAMPED = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z \S/;
const HISTORY_STREAMS = ['funding_bills', 'spot_fills', 'transfer_records', 'futures_fills', 'affiliate_commissions', 'affiliate_referrals'];

/** A folder and every folder above it. */
function ancestors(folder: string): string[] {
  const parent = path.dirname(folder);
  return parent === folder ? [folder] : [folder, ...ancestors(parent)];
}

/** The month before today's, in UTC (the reporting zone by default): what `exledger run` reports. */
function lastClosedMonth(): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)).toISOString().slice(0, 7);
}

/**
 * A folder set up as an operator would: the checkout exledger runs from (src/ of this one, so
 * `src/cli/exledger.js` is the installed executable, as deploy/crontab starts it), a config file,
 * and a home of its own for the service user.
 */
function createInstallFolder(settings: object): { dir: string; home: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'exledger-deployed-'));
  symlinkSync(path.join(REPO, 'src'), path.join(dir, 'src'));
  writeFileSync(path.join(dir, 'exledger.config.json'), JSON.stringify(settings, null, 2));
  const home = path.join(dir, 'home');
  mkdirSync(home);
  return { dir, home };
}

const CONFIG = {
  budget: { spot: { quota: QUOTA.spot, windowMs: QUOTA.windowMs }, contract: { quota: QUOTA.futures, windowMs: QUOTA.windowMs } },
  retry: { retries: 8, minTimeoutMs: 50, maxTimeoutMs: 500 },
  timeoutMs: 10_000,
  // The sandbox's history starts a year before its end (2026-11-01); three months keep the suite short.
  sync: { startDate: '2026-08-01' },
};

/** The largest weight any `windowMs` sliding window saw for one endpoint (per IP). */
function peakWindowWeight(requests: readonly SandboxRequest[], endpoint: string, windowMs: number): number {
  const times = requests.filter((request) => request.endpoint === endpoint && request.status !== 429);
  let peak = 0;
  let start = 0;
  let sum = 0;
  for (let end = 0; end < times.length; end += 1) {
    sum += times[end]!.ipWeight;
    while (times[end]!.at - times[start]!.at >= windowMs) sum -= times[start++]!.ipWeight;
    peak = Math.max(peak, sum);
  }
  return peak;
}

describe('exledger deployed: its own process, no terminal, the exchange in another process', () => {
  let exchange: SandboxProcess;
  let dir: string;
  let home: string;
  let env: Record<string, string>;
  const cli = (args: string[], input?: string) => runCli(args, { cwd: dir, env, input });

  beforeAll(async () => {
    exchange = await startSandboxProcess(['--end', '2026-11-01', '--window-ms', String(QUOTA.windowMs), '--spot-quota', String(QUOTA.spot), '--futures-quota', String(QUOTA.futures)]);
    ({ dir, home } = createInstallFolder({ ...CONFIG, db: './data/exledger.duckdb', reports: { outDir: './out' }, logDir: './logs' }));
    env = { HOME: home, ...exchange.settings };
  });
  afterAll(async () => {
    expect(await exchange?.stop()).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  });

  it('sync: a backfill that waits for the budget to refill, with timestamped progress on stderr; then a nightly rerun finds nothing new', async () => {
    const backfill = await cli(['sync']);
    expect(backfill.stderr.split('\n').filter((line) => !STAMPED.test(line) && line !== '')).toEqual([]);
    expect(backfill.code).toBe(0);
    expect(backfill.stdout).toMatch(/^sync \d{8}T\d{6}-[0-9a-f]{6}: ok$/m);
    // Progress without a terminal: a plain stamped line per stream as it starts, moves and ends.
    expect(backfill.stderr).toMatch(/^\S+Z sync main\/affiliate_referrals: started, [\d,]+ windows to read$/m);
    expect(backfill.stderr).toMatch(/^\S+Z sync main\/affiliate_referrals: \d+\/\d+ windows \(\d+%\), \d+ rows, \d+ s$/m);
    expect(backfill.stderr).toMatch(/^\S+Z sync main\/affiliate_referrals: ([\d,]+)\/\1 windows \(100%\), [\d,]+ rows?, \d+ s: done, [\d,]+ new rows?$/m);

    // The budget bound: the referral totals weighed several windows' quota, so the client had to
    // wait for refills, and the exchange never had to say 429 (no window over its quota).
    const requests = await exchange.requests();
    const referrals = requests.filter((request) => request.endpoint === 'rebate.referrals');
    const weight = referrals.reduce((sum, request) => sum + request.ipWeight, 0);
    expect(weight).toBeGreaterThan(3 * QUOTA.spot);
    expect(requests.filter((request) => request.status === 429)).toEqual([]);
    expect(peakWindowWeight(requests, 'rebate.referrals', QUOTA.windowMs)).toBeLessThanOrEqual(QUOTA.spot);
    // Spent over at least the time the refills take: (weight - one window's quota) / quota per window.
    expect(referrals.at(-1)!.at - referrals[0]!.at).toBeGreaterThanOrEqual(((weight - QUOTA.spot) / QUOTA.spot) * QUOTA.windowMs);

    // The nightly rerun: re-reads the lookback day, stores nothing new; --json in the one shape.
    const nightly = await cli(['sync', '--json']);
    expect(nightly.code).toBe(0);
    const result = JSON.parse(nightly.stdout) as { command: string; ok: boolean; exitCode: number; startedAt: string; finishedAt: string; status: string; results: { stream: string; status: string; rowsInserted: number; startedAt: string }[] };
    expect(result).toMatchObject({ command: 'sync', ok: true, exitCode: 0, status: 'ok' });
    expect([result.startedAt, result.finishedAt, ...result.results.map((stream) => stream.startedAt)].every((time) => ISO.test(time))).toBe(true);
    for (const stream of HISTORY_STREAMS) expect(result.results.find((candidate) => candidate.stream === stream), stream).toMatchObject({ status: 'ok', rowsInserted: 0 });
  });

  it('status: a line per stream, times in ISO 8601 UTC; --json in the one shape', async () => {
    const table = await cli(['status']);
    expect(table).toMatchObject({ code: 0, stderr: '' });
    expect(table.stdout).toMatch(/^main +affiliate_referrals +[\d,]+ +1 +\d{4}-\d{2}-\d{2}T00:00:00\.000Z +\S+Z +ok/m);
    const json = await cli(['status', '--json']);
    const status = JSON.parse(json.stdout) as { command: string; exitCode: number; streams: { stream: string; lastRunAt: string; lastStatus: string; rows: number }[] };
    expect(status).toMatchObject({ command: 'status', exitCode: 0 });
    expect(status.streams.map((stream) => stream.stream)).toEqual(expect.arrayContaining(HISTORY_STREAMS));
    for (const stream of status.streams) {
      expect(stream.lastRunAt, stream.stream).toMatch(ISO);
      expect(stream.lastStatus, stream.stream).toBe('ok');
    }
  });

  it('deploy/crontab, as written: exit 0, the four workbooks, the published copy, a run log, an empty cron-errors.log and no lock', async () => {
    const job = crontabJob();
    expect(job.command).toMatch(new RegExp(`^cd ${INSTALLED_AT} && exec src/cli/exledger\\.js run >/dev/null 2>>logs/cron-errors\\.log$`));
    // No npm between cron and exledger: nothing resolves the name, nothing stands between a signal and the work.
    expect(job.command).not.toMatch(/\bnpx?\b/);
    mkdirSync(path.join(dir, 'logs'), { recursive: true });
    const command = job.command.replaceAll(INSTALLED_AT, dir);
    // The crontab's own settings as cron passes them to the job (its PATH, with node's folder if
    // node is elsewhere, as the crontab's comment asks), and the user's own HOME.
    expect(Object.keys(job.environment)).toEqual(['PATH']);
    const paths = job.environment.PATH!.split(':');
    const nodeFolder = path.dirname(process.execPath);
    const PATH = (paths.includes(nodeFolder) ? paths : [nodeFolder, ...paths]).join(':');
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn('/bin/sh', ['-c', command], { env: { ...env, HOME: os.homedir(), PATH }, stdio: 'ignore' });
      child.on('error', reject);
      child.on('close', resolve);
    });
    expect(readFileSync(path.join(dir, 'logs', 'cron-errors.log'), 'utf8')).toBe('');
    expect(code).toBe(0);
    const month = lastClosedMonth();
    expect(readdirSync(path.join(dir, 'out')).sort()).toEqual(['balances', 'fees', 'pnl', 'rebates'].map((name) => `${name}-${month}.xlsx`));
    expect(statSync(path.join(dir, 'data', 'exledger.published.duckdb')).mode & 0o777).toBe(0o444);
    const logs = readdirSync(path.join(dir, 'logs')).filter((name) => name.startsWith('run-'));
    expect(logs).toHaveLength(1);
    const log = readFileSync(path.join(dir, 'logs', logs[0]!), 'utf8');
    expect(log).toMatch(/ run: ok\n$/);
    // The log shows the sync moving (progress lines go there, not to cron's stderr).
    expect(log).toMatch(/ sync main\/futures_fills: started, \d+ windows? to read\n/);
    expect(readdirSync(path.join(dir, 'data')).filter((name) => name.endsWith('.lock') || name.endsWith('.wal'))).toEqual([]);
    for (const secret of [exchange.account.apiKey, exchange.account.secret, exchange.account.passphrase]) expect(log.includes(secret)).toBe(false);
  });

  it('report and sql: workbooks for a period; a query from the argument or from stdin; a reader that stops early ends it quietly', async () => {
    // Half-written workbooks: one of a writer killed mid-write (its pid is gone), one of a writer
    // still running in another process (this test's own pid stands for it).
    const september = path.join(dir, 'september');
    mkdirSync(september);
    const deadPid = await new Promise<number>((resolve) => {
      const child = spawn(process.execPath, ['-e', '0']);
      child.on('exit', () => resolve(child.pid!));
    });
    writeFileSync(path.join(september, `.pnl-2026-08.xlsx.tmp-${deadPid}`), 'half a workbook');
    writeFileSync(path.join(september, `.fees-2026-09.xlsx.tmp-${process.pid}`), 'being written');
    const report = await cli(['report', 'pnl', 'fees', '--period', '2026-09', '--out', 'september']);
    expect(report).toMatchObject({ code: 0, stderr: '' });
    expect(readdirSync(september).sort()).toEqual([`.fees-2026-09.xlsx.tmp-${process.pid}`, 'fees-2026-09.xlsx', 'pnl-2026-09.xlsx']);
    expect(report.stdout).toMatch(/^pnl +2026-09 +september\/pnl-2026-09\.xlsx {2}\d+ sheets, [\d,]+ rows/m);

    const query = 'select count(*) as fills from raw.spot_fills';
    const fromArgument = await cli(['sql', query, '--csv']);
    expect(fromArgument).toMatchObject({ code: 0, stderr: '' });
    expect(fromArgument.stdout).toMatch(/^fills\r\n[1-9]\d*\r\n$/);
    const fromStdin = await cli(['sql', '-', '--csv'], `${query};\n`);
    expect(fromStdin).toEqual(fromArgument);
    // Instants as every output shows them: ISO 8601 UTC, DuckDB's microseconds kept.
    const instant = await cli(['sql', "select max(started_at) as at, timestamptz '2026-10-31 23:59:59.999999+00' as fixed from meta.runs", '--csv']);
    expect(instant.stdout).toMatch(/^at,fixed\r\n\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z,2026-10-31T23:59:59\.999999Z\r\n$/);

    // `exledger sql … | head -1`: 10 MB of rows, and the reader leaves after the first chunk.
    const { child, done } = startCli(['sql', 'select range as n, repeat(\'x\', 40) as pad from range(200000)'], { cwd: dir, env });
    child.stdout!.once('data', () => child.stdout!.destroy());
    const ended = await done;
    expect(ended.stderr).toBe('');
    expect(ended.signal).toBeNull();
    expect(ended.code).toBe(0);

    // A command with nothing to commit stops at once on SIGTERM, and says so: exit 130.
    const long = startCli(['sql', 'select count(*) from range(100000000000)'], { cwd: dir, env });
    await waitForSignalHandler(long.child.pid!, 'SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 500));
    long.child.kill('SIGTERM');
    expect(await long.done).toMatchObject({ code: 130, stdout: '', stderr: 'error: interrupted by SIGTERM: stopped; what was committed stays\n' });
  });

  it('--json gives one object of the same shape for every command (its error too); --quiet leaves the summary', async () => {
    // build writes the database; the readers then run side by side (read-only); run last.
    const build = await cli(['build', '--json']);
    const [check, report, bad] = await Promise.all([
      cli(['check', '--quiet']),
      cli(['report', 'balances', '--period', '2026-10', '--out', 'json-out', '--json']),
      cli(['report', 'nope', '--period', '2026-10', '--json']),
    ]);
    const run = await cli(['run', '--json', '--quiet', '--period', '2026-10', '--out', 'json-run']);
    const envelopeOf = (result: { stdout: string }) => JSON.parse(result.stdout) as Record<string, unknown>;
    for (const [name, result] of [['build', build], ['report', report], ['run', run]] as const) {
      const object = envelopeOf(result);
      expect(Object.keys(object).slice(0, 5), name).toEqual(['command', 'ok', 'exitCode', 'startedAt', 'finishedAt']);
      expect(object, name).toMatchObject({ command: name, ok: true, exitCode: 0 });
      expect(object.startedAt as string, name).toMatch(ISO);
      expect(object.finishedAt as string, name).toMatch(ISO);
    }
    expect((envelopeOf(build).results as { status: string }[]).every((model) => model.status === 'ok')).toBe(true);
    expect(envelopeOf(report).reports).toEqual([expect.objectContaining({ report: 'balances', file: path.join(dir, 'json-out', 'balances-2026-10.xlsx') })]);
    // The run's details: its steps and what it wrote; with --quiet and --json nothing else on stdout or stderr.
    expect(run.stderr).toBe('');
    const ran = envelopeOf(run) as { status: string; steps: { step: string; status: string }[]; reports: { file: string }[]; published: { path: string }; log: string };
    expect(ran.status).toBe('ok');
    expect(ran.steps.map((step) => `${step.step} ${step.status}`)).toEqual(['sync ok', 'archive skipped', 'build ok', 'check ok', 'reports ok', 'publish ok']);
    expect(ran.reports.map((written) => path.basename(written.file)).sort()).toEqual(['balances-2026-10.xlsx', 'fees-2026-10.xlsx', 'pnl-2026-10.xlsx', 'rebates-2026-10.xlsx']);
    expect(ran.published.path).toBe(path.join(dir, 'data', 'exledger.published.duckdb'));
    expect(existsSync(ran.log)).toBe(true);
    // --quiet: no line per test, only the verdict.
    expect(check).toMatchObject({ code: 0, stderr: '' });
    expect(check.stdout).toMatch(/^check: \d+ passed; checked everything\n$/);
    // An error: exit 2, the error line on stderr, and the same object with the error as its details.
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: report: "nope" is not a report/);
    expect(envelopeOf(bad)).toMatchObject({ command: 'report', ok: false, exitCode: 2, error: { type: 'ConfigError', message: expect.stringMatching(/^report: "nope" is not a report/) } });
  });

  it('--version prints the version; a bare exledger prints the command list its error refers to', async () => {
    const version = await cli(['--version']);
    expect(version).toEqual({ code: 0, signal: null, stdout: `${(JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string }).version}\n`, stderr: '' });
    const bare = await cli([]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/Commands:\n(.*\n)*.*exledger run .*\n(.*\n)*error: no command given: name one of the commands listed above\n {2}fix: .*\n$/);
  });
});

describe('exledger deployed: a database in use, and runs stopped by a signal or killed', () => {
  let exchange: SandboxProcess;
  let dir: string;
  let env: Record<string, string>;
  const cli = (args: string[]) => runCli(args, { cwd: dir, env });

  beforeAll(async () => {
    // A slow budget (100 weight per second on /api/v2): a sync is still reading referral totals
    // many seconds in, while the other commands try the database.
    exchange = await startSandboxProcess(['--end', '2026-11-01', '--window-ms', '1000', '--spot-quota', '100', '--futures-quota', '200']);
    dir = mkdtempSync(path.join(os.tmpdir(), 'exledger-signals-'));
    writeFileSync(path.join(dir, 'exledger.config.json'), JSON.stringify({ ...CONFIG, budget: { spot: { quota: 100, windowMs: 1000 }, contract: { quota: 200, windowMs: 1000 } }, db: './ledger.duckdb' }));
    env = exchange.settings;
  });
  afterAll(async () => {
    expect(await exchange?.stop()).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts a sync and resolves once it is reading referral totals (its progress line says so). */
  async function startSyncReading(): Promise<ReturnType<typeof startCli>> {
    const sync = startCli(['sync'], { cwd: dir, env });
    await new Promise<void>((resolve, reject) => {
      let seen = '';
      sync.child.stderr!.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        if (/affiliate_referrals: \d+\/\d+ windows/.test(seen)) resolve();
      });
      void sync.done.then((result) => reject(new Error(`the sync ended first: ${result.stderr}`)));
    });
    return sync;
  }

  /** meta.runs of the database, read after every process let go of it. */
  async function runsTable(): Promise<{ stream: string; status: string; error_message: string | null }[]> {
    const db = await Database.open(path.join(dir, 'ledger.duckdb'), { readOnly: true });
    try {
      return await db.all('SELECT stream, status, error_message FROM meta.runs ORDER BY started_at, stream');
    } finally {
      db.close();
    }
  }

  it('while a sync runs, build says the database is in use (exit 4) and status what the sync is doing (exit 0); SIGTERM stops the sync with exit 130, its streams interrupted, not running', async () => {
    const sync = await startSyncReading();
    const [build, status] = await Promise.all([cli(['build']), cli(['status'])]);
    expect(build.code).toBe(4);
    expect(build.stdout).toBe('');
    expect(build.stderr).toMatch(/^error: \S+ledger\.duckdb: is (in use by another exledger sync \(pid \d+, since \S+Z\)|open in another process[^\n]*)\n {2}fix: wait for (it|the other exledger) to finish/);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`^now: exledger sync \\(pid ${sync.child.pid}, since \\S+Z\\), holding the database\n`));

    sync.child.kill('SIGTERM');
    const stopped = await sync.done;
    expect(stopped.code).toBe(130);
    expect(stopped.stderr).toMatch(/exledger: SIGTERM received: stopping/);
    expect(stopped.stderr).toMatch(/\nerror: interrupted by SIGTERM: the sync stopped; what it read is committed\n {2}fix: run exledger sync again/);
    expect(stopped.stdout).toMatch(/^sync \S+: interrupted$/m);
    expect(stopped.stdout).toMatch(/^main +affiliate_referrals +interrupted /m);
    const runs = await runsTable();
    expect(runs.find((run) => run.stream === 'affiliate_referrals')?.status).toBe('interrupted');
    expect(runs.filter((run) => run.status === 'running')).toEqual([]);
    expect(readdirSync(dir).filter((name) => name.endsWith('.lock'))).toEqual([]);
  });

  it('a sync killed outright (SIGKILL) shows as interrupted in status, and the next sync records it so', async () => {
    const sync = await startSyncReading();
    sync.child.kill('SIGKILL');
    expect((await sync.done).signal).toBe('SIGKILL');
    // The process could not say how it ended: meta.runs still says running, and status reads it as interrupted.
    expect((await runsTable()).filter((run) => run.status === 'running').length).toBeGreaterThan(0);
    const status = JSON.parse((await cli(['status', '--json'])).stdout) as { streams: { stream: string; lastStatus: string }[] };
    expect(status.streams.find((stream) => stream.stream === 'affiliate_referrals')?.lastStatus).toBe('interrupted');

    // The next sync (the stale lock of the killed one is taken over) marks them interrupted.
    const next = await cli(['sync', '--streams', 'currencies', '--json']);
    expect(next.code).toBe(0);
    expect((JSON.parse(next.stdout) as { recoveredRuns: number }).recoveredRuns).toBeGreaterThan(0);
    const runs = await runsTable();
    expect(runs.filter((run) => run.status === 'running')).toEqual([]);
    expect(runs.filter((run) => run.status === 'interrupted' && /killed or crashed/.test(run.error_message ?? '')).length).toBeGreaterThan(0);
  });
});

describe('exledger deployed: bad paths are one error line naming the path and the fix, exit 2, nothing created or overwritten', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'exledger-paths-'));
    writeFileSync(path.join(dir, 'a-file'), 'not a folder');
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('a --db that does not exist: build, check, report, status and sql refuse and create nothing', async () => {
    const typo = path.join(dir, 'data', 'exledgr.duckdb');
    const commands = [['build'], ['check'], ['report', 'all', '--period', '2026-10', '--out', path.join(dir, 'out')], ['status'], ['sql', 'select 1']];
    const results = await Promise.all(commands.map((args) => runCli([...args, '--db', typo], { cwd: dir })));
    results.forEach((result, index) => {
      const name = commands[index]![0]!;
      expect(result.code, name).toBe(2);
      expect(result.stdout, name).toBe('');
      const [line, fix, rest] = result.stderr.split('\n');
      expect(line, name).toMatch(new RegExp(`^error: ${dir}/data/exledgr\\.(published\\.)?duckdb: no (published copy of the )?database here$`));
      expect(fix, name).toMatch(/^ {2}fix: .*(--db|exledger run)/);
      expect(rest, name).toBe('');
    });
    expect(readdirSync(dir)).toEqual(['a-file']);
  });

  it('an output folder that is a file, or sits under a file; a database under a file', async () => {
    const file = path.join(dir, 'a-file');
    const cases: [string[], RegExp][] = [
      [['sync', '--db', path.join(file, 'x.duckdb')], new RegExp(`^error: ${file} \\(for the database ${file}/x\\.duckdb\\): is a file, not a folder$`)],
      [['run', '--db', path.join(file, 'x', 'y.duckdb')], new RegExp(`^error: ${file}/x \\(for the database ${file}/x/y\\.duckdb\\): cannot be created: ${file} is a file, not a folder$`)],
      [['run', '--db', path.join(dir, 'db', 'x.duckdb'), '--out', file], new RegExp(`^error: ${file}: is a file, not a folder$`)],
      [['run', '--db', path.join(dir, 'db', 'x.duckdb'), '--out', path.join(file, 'out')], new RegExp(`^error: ${file}/out: cannot be created: ${file} is a file, not a folder$`)],
    ];
    // The sync and the run need an exchange to get that far: an address nothing answers on
    // (the paths are checked before anything is asked of it).
    const env = { EXLEDGER_SPOT_BASE_URL: 'http://127.0.0.1:9', EXLEDGER_CONTRACT_BASE_URL: 'http://127.0.0.1:9', EXLEDGER_API_KEY: 'k', EXLEDGER_API_SECRET: 's', EXLEDGER_API_PASSPHRASE: 'p' };
    const results = await Promise.all(cases.map(([args]) => runCli(args, { cwd: dir, env })));
    results.forEach((result, index) => {
      const [args, message] = cases[index]!;
      expect(result.code, args.join(' ')).toBe(2);
      const [line, fix] = result.stderr.split('\n');
      expect(line, args.join(' ')).toMatch(message);
      expect(fix, args.join(' ')).toMatch(/^ {2}fix: choose another folder \((--db|--out)/);
      expect(result.stderr, args.join(' ')).not.toMatch(/unexpected|stack|at .*\.ts:/);
    });
    expect(readdirSync(dir)).toEqual(['a-file']);
    expect(readFileSync(path.join(dir, 'a-file'), 'utf8')).toBe('not a folder');
  });

  it('a read-only output folder: the report is refused before anything is read, and the workbook already there is untouched', async (context) => {
    // A read-only folder stops only a user who is not root: run the commands as `nobody` when
    // this test runs as root (as CI does), else as this user. `nobody` must be able to reach the
    // checkout: a clone inside a private folder (`mktemp -d` makes it 0700) is out of its reach.
    const asRoot = process.getuid?.() === 0;
    const closed = asRoot ? ancestors(REPO).find((folder) => (statSync(folder).mode & 0o001) === 0) : undefined;
    if (closed !== undefined) context.skip(`${closed} is not searchable by other users, so \`nobody\` cannot run exledger from this checkout`);
    const work = mkdtempSync(path.join(os.tmpdir(), 'exledger-readonly-'));
    chmodSync(work, 0o777);
    const db = path.join(work, 'ledger.duckdb');
    const readonly = path.join(work, 'readonly');
    try {
      // A database to read (the report is refused before it is opened).
      (await Database.open(db)).close();
      mkdirSync(readonly);
      writeFileSync(path.join(readonly, 'pnl-2026-10.xlsx'), 'the signed workbook');
      chmodSync(readonly, 0o555);
      chmodSync(db, 0o644);
      const result = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
        const child = spawn(process.execPath, [BIN, 'report', 'pnl', '--period', '2026-10', '--db', db, '--out', readonly], {
          cwd: work,
          env: cronEnvironment({ HOME: work }),
          stdio: ['ignore', 'pipe', 'pipe'],
          ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
        });
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stderr }));
      });
      expect(result.stderr).toBe(`error: ${readonly}: is not writable (read-only)\n  fix: make it writable for this user, or choose another folder (--out or "reports.outDir" in the config file)\n`);
      expect(result.code).toBe(2);
      expect(readdirSync(readonly)).toEqual(['pnl-2026-10.xlsx']);
      expect(readFileSync(path.join(readonly, 'pnl-2026-10.xlsx'), 'utf8')).toBe('the signed workbook');
    } finally {
      chmodSync(work, 0o755);
      if (existsSync(readonly)) chmodSync(readonly, 0o755);
      rmSync(work, { recursive: true, force: true });
    }
  });
});

describe('exledger deployed: no silent exit', () => {
  it('a command that stops with work still pending ends with one "error: internal" line naming it, exit 1 (never 13)', async () => {
    // The launcher with a command whose promise nothing will ever settle, and one piece of
    // registered pending work: Node runs out of things to wait for while it is unfinished.
    const script = `
      import { register } from 'tsx/esm/api';
      register();
      const { launch } = await import('./src/cli/launch.ts');
      const { holdPending } = await import('./src/pending-work.ts');
      holdPending(() => 'report: writing the pnl workbook');
      launch([], () => new Promise(() => {}));
    `;
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO, env: cronEnvironment(), stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    expect(result.stdout).toBe('');
    expect(result.stderr.split('\n')[0]).toBe('error: internal: exledger stopped before the command finished, with nothing left to wait for (pending: report: writing the pnl workbook)');
    expect(result.code).toBe(1);
  });
});
