import { loadProject } from '../src/models/project.ts';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateExchange } from '../src/sandbox/generate.ts';
import type { SandboxAccount } from '../src/sandbox/model.ts';
import type { RunningSandbox } from '../src/sandbox/server.ts';
import { Database } from '../src/store/database.ts';
import { publishedPath } from '../src/store/publish.ts';
import { startAnalyst } from './support/analyst-process.ts';
import { REPO, runCli } from './support/cli-process.ts';
import { startTestSandbox, TEST_END_MS } from './support/sandbox.ts';

/**
 * `exledger run` end to end: the CLI's own entry (`main`, or the `exledger` bin in a child
 * process) against the sandbox exchange on 127.0.0.1, a real DuckDB file and real workbooks,
 * in a temp folder per test. The sandbox's history ends on 2026-11-01; the run syncs it whole.
 */

const LIFTED = { spotQuota: 1_000_000, futuresQuota: 1_000_000 };
const REPORT_NAMES = ['balances', 'fees', 'pnl', 'rebates'];

/** A folder with a config file naming the database, the log folder and the workbooks' folder. */
interface RunWorkspace {
  dir: string;
  config: string;
  db: string;
  logDir: string;
  outDir: string;
}

function createRunWorkspace(url: string, account: SandboxAccount, overrides: { passphrase?: string } = {}): RunWorkspace {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'exledger-run-'));
  const workspace = { dir, config: path.join(dir, 'exledger.config.json'), db: path.join(dir, 'exledger.duckdb'), logDir: path.join(dir, 'logs'), outDir: path.join(dir, 'out') };
  writeFileSync(
    workspace.config,
    JSON.stringify({
      db: workspace.db,
      spotBaseUrl: url,
      contractBaseUrl: url,
      accounts: [{ name: 'acct0', apiKey: account.apiKey, secret: account.secret, passphrase: overrides.passphrase ?? account.passphrase }],
      budget: { spot: { quota: 1_000_000, windowMs: 1000 }, contract: { quota: 1_000_000, windowMs: 1000 } },
      retry: { retries: 12, minTimeoutMs: 10, maxTimeoutMs: 200 },
      timeoutMs: 5_000,
      // The sandbox's whole history (it starts a year before its end).
      sync: { startDate: '2025-11-01' },
      reports: { outDir: workspace.outDir },
      logDir: workspace.logDir,
    }),
  );
  return workspace;
}

/** Runs the `exledger` bin in a child process, as cron would: no terminal, stdin closed, PATH and HOME only (the config file says the rest). */
async function cli(args: string[], cwd = REPO): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { code, stdout, stderr } = await runCli(args, { cwd });
  return { code, stdout, stderr };
}

/** A sync's progress line, which `exledger run` writes to its log only (no terminal). */
const PROGRESS = /^sync [\w-]+\/\w+: /;

interface SummaryLine {
  step: string;
  status: string;
  detail: string;
}

/** The run's closing table (after `== summary`): a line per step, the load info block (label, text), then the verdict. */
function summaryOf(stdout: string): { steps: SummaryLine[]; loadInfo: Record<string, string>; verdict: string } {
  const lines = stdout.split('\n');
  const start = lines.lastIndexOf('== summary');
  expect(start, 'a summary was printed').toBeGreaterThan(0);
  const rest = lines.slice(start + 1).filter((line) => line !== '');
  const info = rest.indexOf('load info:');
  const end = info === -1 ? rest.length - 1 : info;
  const loadInfo = Object.fromEntries(
    rest.slice(end + 1, -1).map((line) => {
      const match = /^ {2}(\w+(?: \w+)?) {2,}(\S.*)$/.exec(line);
      expect(match, line).not.toBeNull();
      return [match![1]!, match![2]!];
    }),
  );
  const steps = rest.slice(0, end).map((line) => {
    const match = /^(\w+) +(\w+) +\d+\.\d s {2}(.*)$/.exec(line);
    expect(match, line).not.toBeNull();
    return { step: match![1]!, status: match![2]!, detail: match![3]! };
  });
  return { steps, loadInfo, verdict: rest.at(-1)! };
}

/** The log file the run names on its first line. */
function logFileOf(stdout: string, workspace: RunWorkspace): string {
  const first = stdout.split('\n')[0]!;
  const match = /^exledger run: database (.+), log (.+)$/.exec(first);
  expect(match, first).not.toBeNull();
  expect(match![1]).toBe(workspace.db);
  expect(path.dirname(match![2]!)).toBe(workspace.logDir);
  expect(path.basename(match![2]!)).toMatch(/^run-\d{8}T\d{6}\.\d{3}Z-\d+\.log$/);
  return match![2]!;
}

/** The log's lines without their time stamps, after checking each line has one. */
function logLines(file: string): string[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  expect(lines.pop()).toBe('');
  return lines.map((line) => {
    expect(line).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z /);
    return line.slice(25);
  });
}

/**
 * The log holds every line the run printed, in order, and besides them only the detail the
 * output leaves out: progress, each step's heading (stdout shows it over something only), a line
 * per model and per passed check, and the build's and check's own closing lines.
 */
function expectLogHolds(log: readonly string[], stdout: string): void {
  const printed = stdout.split('\n');
  expect(printed.pop()).toBe('');
  const detail = [PROGRESS, /^$/, /^== \w+$/, /^\[\s*\d+\/\d+\] ok /, /^pass {2}/, /^build: /, /^check: /];
  let next = 0;
  for (const line of log) {
    if (next < printed.length && line === printed[next]) next += 1;
    else expect(detail.some((pattern) => pattern.test(line)), `a log line the run did not print: ${line}`).toBe(true);
  }
  expect(printed.slice(next), 'printed lines missing from the log').toEqual([]);
}

function expectNoCredentials(text: string, account: SandboxAccount, what: string): void {
  for (const [name, secret] of Object.entries({ apiKey: account.apiKey, secret: account.secret, passphrase: account.passphrase })) {
    expect(text.includes(secret), `${what} holds the ${name}`).toBe(false);
  }
}

/** The month before `now`'s (the reporting time zone is UTC by default). */
function lastClosedMonth(now: Date): { label: string; from: string; to: string } {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 0));
  return { label: start.toISOString().slice(0, 7), from: start.toISOString().slice(0, 10), to: end.toISOString().slice(0, 10) };
}

/** The Summary sheet's rows as arrays of cell values (column A first; a merged cell once, by its first column). */
async function summarySheet(file: string): Promise<{ sheets: string[]; rows: unknown[][] }> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.readFile(file);
  const rows: unknown[][] = [];
  workbook.worksheets[0]!.eachRow((row) => {
    // exceljs reads a merged value into every cell of the merge.
    // A key figure's name is a link to the rows it sums: read as the text a person sees.
    const values = (row.values as unknown[])
      .slice(1)
      .map((value, index) => (row.getCell(index + 1).isMerged && row.getCell(index + 1).master !== row.getCell(index + 1) ? undefined : typeof value === 'object' && value !== null && 'hyperlink' in value ? row.getCell(index + 1).text : value));
    while (values.length > 0 && values[values.length - 1] === undefined) values.pop();
    rows.push(values);
  });
  return { sheets: workbook.worksheets.map((sheet) => sheet.name), rows };
}

const workspaces: RunWorkspace[] = [];
afterAll(() => {
  for (const workspace of workspaces) {
    // The published copy is 0444; its folder is ours, so removing it is allowed.
    rmSync(workspace.dir, { recursive: true, force: true });
  }
});

describe('exledger run against the sandbox', () => {
  let sandbox: RunningSandbox;
  let account: SandboxAccount;
  beforeAll(async () => {
    sandbox = await startTestSandbox(LIFTED);
    account = sandbox.exchange.accounts[0]!;
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  // The clean run is also the first publish of the concurrency test after it (one run fewer).
  let workspace: RunWorkspace;
  let firstRunId: string | undefined;

  it('a clean run: exit 0, every step ok, the four workbooks of the last closed month, one log file of what it printed and no credential', async () => {
    workspace = createRunWorkspace(sandbox.url, account);
    workspaces.push(workspace);
    const month = lastClosedMonth(new Date());

    const run = await cli(['run', '--config', workspace.config]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const summary = summaryOf(run.stdout);
    expect(summary.steps.map(({ step, status }) => [step, status])).toEqual([
      ['sync', 'ok'],
      // Said once, not an error: the run is ok without an archive (docs/operating.md "Archive and restore").
      ['archive', 'skipped'],
      ['build', 'ok'],
      ['check', 'ok'],
      ['reports', 'ok'],
      ['publish', 'ok'],
    ]);
    expect(summary.steps[1]!.detail).toBe('archive.dir is not set: the raw history is not archived (docs/operating.md "Archive and restore")');
    expect(summary.steps[4]!.detail).toBe(`4 workbooks for ${month.label} in ${workspace.outDir}`);
    // The first publish copies the whole file, and says so (docs/operating.md "The published copy").
    expect(summary.steps[5]!.detail).toMatch(
      new RegExp(`^${publishedPath(workspace.db).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(\\d+\\.\\d MB\\): full copy \\(the first publish: no copy to bring up to date yet\\)$`),
    );
    expect(summary.verdict).toBe('run: ok');
    // The load info: the first sync brings rows into the histories, every model is brought up to date, the four workbooks by name.
    expect(summary.loadInfo['new rows']).toMatch(/\bacct0\/spot_fills [\d,]+\b/);
    // Staging was brought up to date by the sync; every other model is built whole the first time.
    // Models only: the macro files are loaded too, and not counted.
    const layers = loadProject().models.map((model) => model.layer);
    const staging = layers.filter((layer) => layer === 'staging').length;
    expect(summary.steps[2]!.detail).toBe(`${layers.length} models: ${layers.length - staging} rebuilt whole, ${staging} unchanged`);
    expect(summary.loadInfo.models).toBeUndefined();
    // The checks as a count; not a line each. The run's check reads what changed since each test last
    // passed (exledger check --changed): on a new database, everything.
    expect(summary.steps[3]!.detail).toMatch(/^\d+ passed; checked everything \(no earlier pass to build on\)$/);
    expect(run.stdout).not.toMatch(/^pass /m);
    expect(run.stdout).not.toMatch(/^\[\s*\d+\/\d+\] /m);
    // A heading only over something: the build, check and publish print nothing on a good run.
    expect([...run.stdout.matchAll(/^== (\w+)$/gm)].map((match) => match[1])).toEqual(['sync', 'reports', 'summary']);
    expect(summary.loadInfo.reports?.split(', ').map((file) => path.basename(file)).sort()).toEqual(REPORT_NAMES.map((name) => `${name}-${month.label}.xlsx`).sort());

    // The workbooks: the configured folder, `<report>-<period>.xlsx`, nothing half-written beside them.
    expect(readdirSync(workspace.outDir).sort()).toEqual(REPORT_NAMES.map((name) => `${name}-${month.label}.xlsx`));
    const pnl = await summarySheet(path.join(workspace.outDir, `pnl-${month.label}.xlsx`));
    expect(pnl.sheets[0]).toBe('Summary');
    expect(pnl.rows[0]).toEqual([`Realized profit and loss: ${month.label}`]);
    expect(pnl.rows).toContainEqual(['Period', `${month.from} to ${month.to} (both included)`]);

    // One log file, in the configured folder, named on the run's first line: every line stamped,
    // what the run printed (summary included) and the detail: every step's heading, a line per model and check.
    const log = logFileOf(run.stdout, workspace);
    expect(readdirSync(workspace.logDir)).toEqual([path.basename(log)]);
    const lines = logLines(log);
    expect(lines.filter((line) => /^\[\s*\d+\/\d+\] ok /.test(line))).toHaveLength(loadProject().models.length + loadProject().macros.length);
    expect(lines.filter((line) => line.startsWith('pass  ')).length).toBe(Number(summary.steps[3]!.detail.split(' ')[0]));
    // Without a terminal the sync's progress goes to the log only: a line as each stream starts and ends.
    const progress = lines.filter((line) => PROGRESS.test(line));
    expect(progress).toContain('sync acct0/futures_fills: started, 5 windows to read');
    expect(progress.some((line) => /^sync acct0\/futures_fills: 5\/5 windows \(100%\), [\d,]+ rows, \d+ s: done, [\d,]+ new rows$/.test(line))).toBe(true);
    expect(run.stdout).not.toMatch(PROGRESS);
    expectLogHolds(lines, run.stdout);
    for (const header of ['== sync', '== build', '== check', '== reports', '== publish', '== summary', 'run: ok']) expect(lines).toContain(header);
    // Which rows the check read, said before its tests: on a new database, everything.
    expect(lines[lines.indexOf('== check') + 1]).toBe('check: checked everything (no earlier pass to build on)');
    expectNoCredentials(readFileSync(log, 'utf8'), account, 'the log');
    expectNoCredentials(run.stdout, account, 'the output');

    // Beside the database: the published copy (a hard link to the first of the two copies kept,
    // docs/plans/incremental-publish.md), the check's results (for exledger docs) and their copy
    // beside the published copy, and no lock, WAL or temporary file.
    expect(readdirSync(workspace.dir).sort()).toEqual(['.exledger.published.duckdb.a', 'exledger.check-results.json', 'exledger.config.json', 'exledger.duckdb', 'exledger.published.check-results.json', 'exledger.published.duckdb', 'logs', 'out']);
    const checked = JSON.parse(readFileSync(path.join(workspace.dir, 'exledger.check-results.json'), 'utf8')) as { database: string; results: { status: string }[] };
    expect(checked.database).toBe(path.resolve(workspace.db));
    expect(checked.results.length).toBeGreaterThan(0);
    expect(checked.results.every((result) => result.status === 'pass')).toBe(true);
    firstRunId = syncRunIdOf(run.stdout);
  });

  it('publishes while an analyst in another process holds the published copy open: the analyst keeps reading the old copy, a fresh open sees the new run', async () => {
    expect(firstRunId, 'the clean run above published').toBeDefined();
    const published = publishedPath(workspace.db);
    // The bytes the analyst is about to open, kept aside: what every later answer of theirs must be.
    const keptDir = mkdtempSync(path.join(os.tmpdir(), 'exledger-run-kept-'));
    const kept = path.join(keptDir, 'kept.duckdb');
    copyFileSync(published, kept);

    const analyst = startAnalyst(published);
    try {
      await analyst.ready;
      const before = await analyst.query(RUNS);
      expect(before).toEqual([{ runs: 1, last_run: firstRunId }]);

      const second = await cli(['run', '--config', workspace.config]);
      expect(second.stderr).toBe('');
      expect(second.code).toBe(0);
      const summary = summaryOf(second.stdout);
      expect(summary.steps.find((line) => line.step === 'publish')).toMatchObject({ status: 'ok' });
      expect(summary.verdict).toBe('run: ok');
      const secondRunId = syncRunIdOf(second.stdout);
      expect(secondRunId).not.toBe(firstRunId);

      // The held connection still answers, from the copy it opened: the same answer as before,
      // and tables it had not read before the swap are those of the kept bytes, whole.
      expect(await analyst.query(RUNS)).toEqual(before);
      for (const sql of UNREAD) expect(await analyst.query(sql), sql).toEqual(await rowsOf(kept, sql));

      // A fresh open (exledger sql reads the published copy) sees the second run.
      const fresh = await cli(['sql', RUNS, '--json', '--config', workspace.config]);
      expect(fresh).toMatchObject({ code: 0, stderr: '' });
      expect((JSON.parse(fresh.stdout) as { rows: unknown }).rows).toEqual([{ runs: 2, last_run: secondRunId }]);
      // The cursors moved on in the new copy, so the analyst's unchanged answer was the old copy's.
      expect(await rowsOf(published, UNREAD[0]!)).not.toEqual(await rowsOf(kept, UNREAD[0]!));
    } finally {
      expect(await analyst.quit()).toBe(0);
      rmSync(keptDir, { recursive: true, force: true });
    }

    // One log per run; nothing left beside the database; the copy is read-only.
    expect(readdirSync(workspace.logDir)).toHaveLength(2);
    expect(readdirSync(workspace.dir).sort()).toEqual([
      '.exledger.published.duckdb.a',
      '.exledger.published.duckdb.b',
      'exledger.check-results.json',
      'exledger.config.json',
      'exledger.duckdb',
      'exledger.published.check-results.json',
      'exledger.published.duckdb',
      'logs',
      'out',
    ]);
    expect(statSync(published).mode & 0o777).toBe(0o444);
  });

  it('an unreachable exchange: exit 1, the sync failed and every later step skipped, nothing created but the log', async () => {
    // A port nothing listens on: taken from the system, then released.
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const address = server.address() as { port: number };
        server.close(() => resolve(address.port));
      });
    });
    const workspace = createRunWorkspace(`http://127.0.0.1:${port}`, account);
    workspaces.push(workspace);

    // The bin in its own process: the exit code is the one cron sees.
    const run = await cli(['run', '--config', workspace.config], workspace.dir);
    // One error line on stderr, so cron's mail says the run failed.
    expect(run.stderr).toBe('error: the run failed: spot.assets (GET /api/v2/account/assets): cannot reach the exchange (ECONNREFUSED)\n');
    expect(run.code).toBe(1);
    const summary = summaryOf(run.stdout);
    expect(summary.steps).toEqual([
      { step: 'sync', status: 'failed', detail: 'spot.assets (GET /api/v2/account/assets): cannot reach the exchange (ECONNREFUSED)' },
      ...['archive', 'build', 'check', 'reports', 'publish'].map((step) => ({ step, status: 'skipped', detail: 'the sync failed for every stream' })),
    ]);
    expect(summary.verdict).toBe('run: FAILED (exit 1): see the steps above');

    const log = logFileOf(run.stdout, workspace);
    expect(logLines(log).join('\n') + '\n').toBe(run.stdout + run.stderr);
    expectNoCredentials(readFileSync(log, 'utf8'), account, 'the log');
    // No database, no published copy, no workbooks, no lock left.
    expect(readdirSync(workspace.dir).sort()).toEqual(['exledger.config.json', 'logs']);
  });

  it('refused credentials: exit 2 with one error line and its fix, logged, the run stopped before the database', async () => {
    const wrong = 'not-the-passphrase-9f3c';
    const workspace = createRunWorkspace(sandbox.url, account, { passphrase: wrong });
    workspaces.push(workspace);

    const run = await cli(['run', '--config', workspace.config]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      'error: spot.assets (GET /api/v2/account/assets) was refused: the API key or passphrase is wrong (exchange code 40012: "Incorrect API key or passphrase")\n' +
        '  fix: check EXLEDGER_API_KEY and EXLEDGER_API_PASSPHRASE\n',
    );
    // Bad input stops the run: no summary, no later step.
    expect(run.stdout).not.toContain('== summary');
    expect(run.stdout).not.toContain('== build');

    const log = logFileOf(run.stdout, workspace);
    const lines = logLines(log);
    // The log ends with the error and its fix, as the CLI printed them.
    expect(lines.slice(-2)).toEqual(run.stderr.split('\n').slice(0, 2));
    const text = readFileSync(log, 'utf8');
    expectNoCredentials(text, account, 'the log');
    expect(text).not.toContain(wrong);
    expect(readdirSync(workspace.dir).sort()).toEqual(['exledger.config.json', 'logs']);
  });
});

describe('exledger run when one stream fails', () => {
  let sandbox: RunningSandbox;
  let account: SandboxAccount;
  beforeAll(async () => {
    // The exchange breaks its contract in one stream: the last funding bill has no deltaAmount,
    // so funding_bills fails (a DataError, not retried) and every other stream syncs.
    const exchange = generateExchange({ seed: 7, scale: 'small', endMs: TEST_END_MS });
    delete (exchange.accounts[0]!.fundingBills.at(-1)!.wire as Record<string, unknown>).deltaAmount;
    sandbox = await startTestSandbox({ ...LIFTED, exchange });
    account = sandbox.exchange.accounts[0]!;
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it('exit 3: the summary names the failed stream, the later steps still run, the workbooks of --period land in --out and say the stream failed', async () => {
    const workspace = createRunWorkspace(sandbox.url, account);
    workspaces.push(workspace);
    const out = path.join(workspace.dir, 'elsewhere');

    const run = await cli(['run', '--config', workspace.config, '--period', '2026-09', '--out', out]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(3);
    const summary = summaryOf(run.stdout);
    expect(summary.steps.map(({ step, status }) => [step, status])).toEqual([
      ['sync', 'partial'],
      ['archive', 'skipped'],
      ['build', 'ok'],
      // The missing bills are the sync's failure; nothing synced is wrong, so every check passes. The bills
      // now disagree with the assets snapshot: that is a reconciliation in the balances workbook, not a check.
      ['check', 'ok'],
      ['reports', 'ok'],
      ['publish', 'ok'],
    ]);
    expect(summary.steps[0]!.detail).toBe('failed: acct0 funding_bills');
    // The load info: the workbooks written in --out.
    expect(summary.loadInfo.reports?.split(', ').map((file) => path.resolve(REPO, file)).sort()).toEqual(REPORT_NAMES.map((name) => path.join(out, `${name}-2026-09.xlsx`)).sort());
    expect(summary.steps[4]!.detail).toBe(`4 workbooks for 2026-09 in ${out}`);
    expect(summary.verdict).toBe('run: partly done (exit 3): see the steps above');
    // The sync's own table says why.
    expect(run.stdout).toMatch(/^error in acct0\/funding_bills: funding_bills: the record with billId \d+ from spot\.fundingBills: has no "deltaAmount" \(a required field\); nothing of the window \S+ to \S+ was stored/m);

    // --out and --period win over the configured folder and the last closed month.
    expect(existsSync(workspace.outDir)).toBe(false);
    expect(readdirSync(out).sort()).toEqual(REPORT_NAMES.map((name) => `${name}-2026-09.xlsx`));
    const balances = await summarySheet(path.join(out, 'balances-2026-09.xlsx'));
    expect(balances.rows).toContainEqual(['Period', '2026-09-01 to 2026-09-30 (both included)']);
    const failed = balances.rows.find((row) => row[0] === 'funding_bills');
    expect(failed?.[5]).toBe('FAILED');
    expect(balances.rows.some((row) => typeof row[0] === 'string' && row[0].startsWith('Warning: 1 stream(s) stale or incomplete'))).toBe(true);
    const differing = balances.rows.find((row) => row[0] === 'Coins whose bills differ from the assets (reconciliation)');
    expect(differing?.[2]).toBeGreaterThan(0);
    expect(existsSync(publishedPath(workspace.db))).toBe(true);

    const log = logFileOf(run.stdout, workspace);
    expectLogHolds(logLines(log), run.stdout);
    expectNoCredentials(readFileSync(log, 'utf8'), account, 'the log');
  });
});

/** How many sync runs the database has seen, and the latest one. */
const RUNS = 'SELECT count(DISTINCT run_id)::INTEGER AS runs, max(run_id) AS last_run FROM meta.runs';
/** Read by the analyst only after the swap: from the file, not from what DuckDB had cached. */
const UNREAD = [
  'SELECT count(*)::INTEGER AS n, sum(hash(c))::VARCHAR AS h FROM meta.cursors c',
  'SELECT count(*)::INTEGER AS n, sum(hash(r._key, r._record::VARCHAR))::VARCHAR AS h FROM raw.spot_fills r',
  'SELECT count(*)::INTEGER AS n, sum(hash(m))::VARCHAR AS h FROM marts.fees_daily m',
];

/** The `sync <id>: <status>` line the sync prints. */
function syncRunIdOf(stdout: string): string {
  const match = /^sync (\d{8}T\d{6}-[0-9a-f]{6}): \w+$/m.exec(stdout);
  expect(match, 'the sync printed its run id').not.toBeNull();
  return match![1]!;
}

async function rowsOf(file: string, sql: string): Promise<Record<string, unknown>[]> {
  const db = await Database.open(file, { readOnly: true });
  try {
    return await db.all(sql);
  } finally {
    db.close();
  }
}

