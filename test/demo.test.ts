import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadProject } from '../src/models/project.ts';
import { Database } from '../src/store/database.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cronEnvironment, runCli, type CliResult } from './support/cli-process.ts';

/**
 * `exledger demo` (what `npm start` runs) in a folder that already holds a real job: its config
 * file, database, workbooks and logs. The demo (one run, shared by the tests below: about 30 s)
 * is the `exledger` executable in a process of its own, stdin closed, no terminal; it starts
 * the sandbox exchange as another process. It must leave every file of the real job as it was,
 * write only under `demo/`, print a short summary, and end with commands that work as printed.
 */

/** What the demo's build did: staging was brought up to date by the sync; every other model is built whole the first time. */
const MODELS = loadProject().models;
const STAGING = MODELS.filter((model) => model.layer === 'staging').length;
const BUILT = `${MODELS.length} models: ${MODELS.length - STAGING} rebuilt whole, ${STAGING} unchanged`;

/** Every file under `dir` (relative paths) with the SHA-256 of its bytes. */
function hashes(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const file = path.join(folder, entry.name);
      if (entry.isDirectory()) walk(file);
      else files.set(path.relative(dir, file), createHash('sha256').update(readFileSync(file)).digest('hex'));
    }
  };
  walk(dir);
  return files;
}

/** A real job's files, as an operator's folder holds them after a few nights. */
const REAL_JOB: Record<string, string> = {
  'exledger.config.json': JSON.stringify({ db: './data/exledger.duckdb', reports: { outDir: './out' }, logDir: './logs' }),
  'data/exledger.duckdb': 'the real database (any bytes: the demo must not open it)',
  'data/exledger.published.duckdb': 'the real published copy',
  'data/exledger.check-results.json': '{"results":[]}',
  'out/pnl-2026-10.xlsx': 'the real pnl workbook of October',
  'out/fees-2026-10.xlsx': 'the real fees workbook of October',
  'out/journal-2026-10.csv': 'date,account,debit,credit\n',
  'logs/run-20261101T021500.000Z-4242.log': '2026-11-01T02:15:00.000Z exledger run: database ./data/exledger.duckdb\n',
};

/** Runs a printed command line as the user would, through the shell, with `npx exledger` the executable itself (npx would resolve it from the project folder). */
function runPrinted(line: string, cwd: string): Promise<CliResult> {
  const command = line.replace(/^npx exledger /, `'${process.execPath}' '${BIN}' `);
  const child = spawn('sh', ['-c', command], { cwd, env: cronEnvironment(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

describe('exledger demo in a folder with a real job', () => {
  let dir: string;
  let before: Map<string, string>;
  let demo: CliResult;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'exledger-demo-'));
    for (const [file, text] of Object.entries(REAL_JOB)) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), text);
    }
    before = hashes(dir);
    demo = await runCli(['demo'], { cwd: dir });
  }, 240_000);

  afterAll(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  /**
   * The month the demo reports: the last whole month before the sandbox's history ends (today,
   * UTC), read from the banner so the tests hold on any day they run.
   */
  const demoPeriod = () => {
    const until = /^sandbox exchange on .*: \d{4}-\d{2}-\d{2} to (\d{4})-(\d{2})-\d{2}$/m.exec(demo.stdout);
    expect(until, demo.stdout).not.toBeNull();
    return new Date(Date.UTC(Number(until![1]), Number(until![2]) - 2, 1)).toISOString().slice(0, 7);
  };

  /** The real job's files are byte-identical and every other file is under demo/. */
  const expectRealJobUntouched = () => {
    const after = hashes(dir);
    for (const [file, hash] of before) expect(after.get(file), `${file} changed`).toBe(hash);
    const added = [...after.keys()].filter((file) => !before.has(file));
    expect(added.filter((file) => !file.startsWith(`demo${path.sep}`))).toEqual([]);
    return added;
  };

  it('exits 0 and writes only under demo/: its database and published copy, prices, config file, workbooks and log; the real job is byte-identical', () => {
    expect(demo.stderr).toBe('');
    expect(demo.code, demo.stdout).toBe(0);
    const added = expectRealJobUntouched().map((file) => file.split(path.sep).join('/'));
    const period = demoPeriod();
    for (const file of ['demo/demo.duckdb', 'demo/demo.published.duckdb', 'demo/demo-prices.csv', 'demo/exledger.config.json', `demo/out/pnl-${period}.xlsx`, `demo/out/journal-${period}.csv`]) {
      expect(added, file).toContain(file);
    }
    expect(added.filter((file) => file.startsWith('demo/logs/'))).toHaveLength(1);
    // It says so at its start and at its end.
    const lines = demo.stdout.split('\n');
    expect(lines[0]).toBe('exledger demo: everything it writes goes into demo/ (recreated on every demo); nothing outside it is touched');
    expect(lines).toContain('The demo wrote only into demo/ (nothing outside it was touched):');
  });

  it('its config file holds its settings and no credentials or exchange address (the sandbox has stopped)', () => {
    const settings = JSON.parse(readFileSync(path.join(dir, 'demo/exledger.config.json'), 'utf8')) as Record<string, unknown>;
    expect(Object.keys(settings).sort()).toEqual(['db', 'logDir', 'models', 'reports', 'sync']);
    expect(settings.db).toBe(path.join(dir, 'demo/demo.duckdb'));
    expect(settings.models).toMatchObject({ reportingCurrency: 'USD', costMethods: ['fifo', 'average'] });
  });

  it('prints a short summary: passed checks and built models as counts, failed ones in full, no empty section, counts that say what they count', () => {
    const out = demo.stdout;
    // No line per passed check or per model: they are in the log.
    expect(out).not.toMatch(/^pass /m);
    expect(out).not.toMatch(/^\[\s*\d+\/\d+\] ok /m);
    expect(out.split('\n').length).toBeLessThan(70);
    const summary = out.slice(out.indexOf('== summary'));
    // The run's check reads what changed since each test last passed: on a new database, everything.
    expect(summary).toMatch(/^check +ok +\d+\.\d s {2}\d+ passed; checked everything \(no earlier pass to build on\)$/m);
    // Models only (macro files are not models), and how each was brought up to date.
    expect(summary).toMatch(new RegExp(`^build +ok +\\d+\\.\\d s {2}${BUILT}$`, 'm'));
    expect(summary).toMatch(new RegExp(`^reports +ok +\\d+\\.\\d s {2}6 workbooks for ${demoPeriod()} in .*; journal: \\d+ source rows not valued in full \\(no price\\)$`, 'm'));
    expect(summary).not.toMatch(/^ {2}models /m);
    // Every heading has something under it (the build, check and publish have nothing to say on a good run).
    const headings = [...out.matchAll(/^== (\w+)\n(.*)$/gm)].map((match) => [match[1], match[2]]);
    expect(headings.map(([step]) => step)).toEqual(['sync', 'reports', 'summary']);
    for (const [step, next] of headings) expect(next, step).not.toBe('');
    // Counts read as counts: thousands grouped as in the sync table (the funding bills of a year
    // number a few thousand; how many depends on the day the history ends), one of a thing singular.
    const bills = /^sandbox +funding_bills +ok +(\d+) +(\d+) +(\d+) +(\S+) +(\S+) /m.exec(out);
    expect(bills, out).not.toBeNull();
    expect(bills![4]).toMatch(/^\d{1,3}(,\d{3})+$/);
    expect(bills![5]).toBe(bills![4]);
    expect(Number(bills![3])).toBe(5 * Number(bills![2]));
    expect(out).not.toMatch(/\b1 (rows|models|streams|sheets|lines|workbooks)\b/);

    // The log keeps the detail: a line per model and per check, under every step's heading.
    const logFile = path.join(dir, 'demo/logs', readdirSync(path.join(dir, 'demo/logs'))[0]!);
    const log = readFileSync(logFile, 'utf8')
      .split('\n')
      .map((line) => line.slice(25));
    expect(log.filter((line) => line.startsWith('pass  '))).toHaveLength(Number(/(\d+) passed/.exec(summary)![1]));
    const project = loadProject();
    expect(log.filter((line) => /^\[\s*\d+\/\d+\] ok /.test(line))).toHaveLength(project.models.length + project.macros.length);
    for (const step of ['sync', 'build', 'check', 'reports', 'publish', 'summary']) expect(log).toContain(`== ${step}`);
    expect(log.filter((line) => line.startsWith(`build: ${BUILT} (`))).toHaveLength(1);
    expect(log.join('\n')).not.toMatch(/\b1 rows\b/);
  });

  it("rebuilds the open futures positions from the fills exactly as the exchange's own snapshot holds them (side, size, open value), and the books' units differ from its wallets by the commission only", async () => {
    // The sandbox keeps its positions apart from the fills it publishes: its snapshot is the other
    // implementation. The demo syncs up to its snapshot, so the latest month's positions are those
    // at the snapshot's instant (the snapshot names a contract id the fills do not carry: matched as multisets).
    const db = await Database.open(path.join(dir, 'demo/demo.published.duckdb'), { readOnly: true });
    try {
      const snapshot = await db.all<{ side: string; size: string; open_value: string }>(
        `SELECT side, CAST(size AS VARCHAR) AS size, CAST(CAST(open_value AS DECIMAL(38, 12)) AS VARCHAR) AS open_value FROM staging.futures_positions
         WHERE snapshot_at = (SELECT max(snapshot_at) FROM staging.futures_positions) AND size <> 0 ORDER BY ALL`,
      );
      const rebuilt = await db.all<{ side: string; size: string; open_value: string }>(
        `SELECT position_side AS side, CAST(size AS VARCHAR) AS size, CAST(open_value AS VARCHAR) AS open_value FROM marts.futures_positions_valued
         WHERE period_month = (SELECT max(period_month) FROM marts.futures_positions_valued) AND size <> 0 ORDER BY ALL`,
      );
      expect(snapshot.length).toBeGreaterThan(0);
      expect(rebuilt).toEqual(snapshot);
      // The books' units against the exchange's snapshot: the sandbox never credits commission to a
      // wallet, so what the books count as commission is the whole difference, coin by coin.
      const units = await db.all<{ coin: string; difference: string; commission: string }>(
        'SELECT coin, CAST(difference AS VARCHAR) AS difference, CAST(commission_quantity AS VARCHAR) AS commission FROM marts.holdings_vs_exchange ORDER BY coin',
      );
      expect(units.length).toBeGreaterThan(2);
      for (const row of units) expect(row.difference, row.coin).toBe(row.commission);
      expect(units.some((row) => row.difference !== '0.000000000000000000')).toBe(true);
    } finally {
      db.close();
    }
  });

  it('every command it prints works as printed, from the same folder, after the sandbox has stopped; the real job stays untouched', async () => {
    const printed = demo.stdout
      .split('\n')
      .filter((line) => line.startsWith('  npx exledger '))
      .map((line) => line.slice(2));
    expect(printed.map((line) => line.split(' ')[2])).toEqual(['sql', 'sql', 'report', 'build', 'docs', 'sql']);
    for (const line of printed) {
      const result = await runPrinted(line, dir);
      expect({ line, code: result.code, stderr: result.stderr }).toEqual({ line, code: 0, stderr: '' });
      expect(result.stdout, line).not.toBe('');
    }
    // The build found the models built with the same settings (no refusal), and the published copy answered.
    expect(statSync(path.join(dir, 'demo/docs-site/index.html')).isFile()).toBe(true);
    expectRealJobUntouched();
  }, 240_000);
});

describe('exledger demo refuses a folder that is not its own', () => {
  it('a demo/ holding other files, or the working folder itself: exit 2 naming it, nothing removed or written', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'exledger-demo-refused-'));
    try {
      mkdirSync(path.join(dir, 'demo'));
      writeFileSync(path.join(dir, 'demo/notes.txt'), 'mine');
      const before = hashes(dir);
      const taken = await runCli(['demo'], { cwd: dir });
      expect(taken).toMatchObject({ code: 2, stdout: '' });
      expect(taken.stderr).toBe(`error: --dir: ${path.join(dir, 'demo')} holds files no demo wrote (notes.txt), and the demo recreates its folder\n  fix: give the demo a folder of its own: exledger demo --dir <new folder> (default ./demo)\n`);
      const here = await runCli(['demo', '--dir', '.'], { cwd: dir });
      expect(here).toMatchObject({ code: 2, stdout: '' });
      expect(here.stderr).toMatch(/^error: --dir: \S+ is the working folder or holds it: the demo recreates its folder\n/);
      expect(hashes(dir)).toEqual(before);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
