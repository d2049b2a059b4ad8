import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatasetManifest } from '../src/export/write-dataset.ts';
import type { ShardManifest } from '../src/export/write-shard.ts';
import { runCli, type CliResult } from './support/cli-process.ts';
import { startSandboxProcess, type SandboxProcess } from './support/sandbox-process.ts';

/**
 * Several workers (issue 14, "Past one machine"): a sandbox exchange serving three accounts, in a
 * process of its own; worker 1 (`--accounts alpha,beta`) and worker 2 (`--accounts gamma`), each
 * with its own working folder and database, run as child processes at the same time and export
 * their shards into ONE dataset folder, also at the same time; a single process over all three
 * accounts exports into another folder. A fresh DuckDB then reads both folders as an analyst
 * would, and every mart must be the same, row for row and type for type.
 */

const ACCOUNTS = ['alpha', 'beta', 'gamma'] as const;

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

async function rowsOf(connection: DuckDBConnection, sql: string): Promise<Record<string, unknown>[]> {
  return (await connection.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
}

/** Runs commands one after the other in a working folder, stopping at the first that fails. */
async function chain(dir: string, commands: readonly string[][]): Promise<CliResult[]> {
  const results: CliResult[] = [];
  for (const args of commands) {
    const result = await runCli(args, { cwd: dir });
    results.push(result);
    if (result.code !== 0) break;
  }
  return results;
}

/** The files of a folder, recursively, as relative paths (to see that a refused command wrote nothing). */
function filesUnder(root: string): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true, encoding: 'utf8' }).sort();
}

describe('several workers share the accounts and export one dataset', () => {
  let exchange: SandboxProcess;
  let root: string;
  let shared: string;
  const folders = { worker1: '', worker2: '', single: '', bad: '' };
  let instance: DuckDBInstance;
  let duck: DuckDBConnection;

  /** A working folder with the firm's config (all three accounts); its database is its own. */
  function workFolder(name: string): string {
    const dir = path.join(root, name);
    mkdirSync(dir);
    const config = {
      spotBaseUrl: exchange.url,
      contractBaseUrl: exchange.url,
      accounts: exchange.accounts.map((account, index) => ({ name: ACCOUNTS[index], apiKey: account.apiKey, secret: account.secret, passphrase: account.passphrase })),
      // The sandbox is lifted (below): both workers come from one loopback address here, where real ones each have their own.
      budget: { spot: { quota: 1_000_000, windowMs: 1000 }, contract: { quota: 1_000_000, windowMs: 1000 } },
      retry: { retries: 8, minTimeoutMs: 50, maxTimeoutMs: 500 },
      // Two months of the sandbox's history (it ends 2026-11-01): a short sync, two month partitions.
      sync: { startDate: '2026-09-01' },
      db: './data/exledger.duckdb',
      reports: { outDir: './out' },
      logDir: './logs',
    };
    writeFileSync(path.join(dir, 'exledger.config.json'), JSON.stringify(config));
    return dir;
  }

  beforeAll(async () => {
    exchange = await startSandboxProcess(['--accounts', '3', '--scale', 'small', '--end', '2026-11-01', '--window-ms', '1000', '--spot-quota', '1000000', '--futures-quota', '1000000']);
    expect(exchange.accounts).toHaveLength(3);
    root = mkdtempSync(path.join(os.tmpdir(), 'exledger-workers-'));
    shared = path.join(root, 'shared-dataset');
    for (const name of Object.keys(folders) as (keyof typeof folders)[]) folders[name] = workFolder(name);
    instance = await DuckDBInstance.create(':memory:');
    duck = await instance.connect();
  }, 60_000);
  afterAll(async () => {
    duck?.closeSync();
    instance?.closeSync();
    expect(await exchange?.stop()).toBe(0);
    rmSync(root, { recursive: true, force: true });
  });

  it('an unknown account name is exit 2 naming it and the configured ones, and nothing is written', async () => {
    const results = await Promise.all(['sync', 'run'].map((command) => runCli([command, '--accounts', 'alpha,zeta'], { cwd: folders.bad })));
    for (const result of results) {
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain('--accounts: "zeta" is not a configured account; the configured accounts are alpha, beta, gamma');
      expect(result.stderr).not.toContain(exchange.accounts[0]!.secret);
    }
    expect(filesUnder(folders.bad)).toEqual(['exledger.config.json']);
  });

  it('two workers (alpha,beta and gamma) and one process over all three accounts give the same marts', async () => {
    // Worker 1 runs the nightly job for its accounts; worker 2 syncs and builds its one; a single
    // process does all three: all at the same time, each in its own folder with its own database.
    const [worker1, worker2, single] = await Promise.all([
      chain(folders.worker1, [['run', '--accounts', 'alpha,beta', '--period', '2026-10', '--quiet']]),
      chain(folders.worker2, [
        ['sync', '--accounts', 'gamma', '--quiet'],
        ['build', '--quiet'],
      ]),
      chain(folders.single, [
        ['sync', '--quiet'],
        ['build', '--quiet'],
        ['export', '--out', 'export', '--quiet'],
      ]),
    ]);
    for (const result of [...worker1, ...worker2, ...single]) expect(result.code, result.stderr).toBe(0);

    // Each worker synced only its accounts: its database holds them and no other.
    const databases = { worker1: path.join(folders.worker1, 'data', 'exledger.duckdb'), worker2: path.join(folders.worker2, 'data', 'exledger.duckdb'), single: path.join(folders.single, 'data', 'exledger.duckdb') };
    for (const [name, file] of Object.entries(databases)) await duck.run(`ATTACH '${file}' AS ${name} (READ_ONLY)`);
    const accountsIn = async (name: string) => (await rowsOf(duck, `SELECT DISTINCT account FROM ${name}.meta.runs ORDER BY 1`)).map((row) => row.account);
    expect(await accountsIn('worker1')).toEqual(['alpha', 'beta']);
    expect(await accountsIn('worker2')).toEqual(['gamma']);
    expect(await accountsIn('single')).toEqual(['alpha', 'beta', 'gamma']);
    // Worker 1's workbooks come from its database, which holds its accounts only.
    expect(readdirSync(path.join(folders.worker1, 'out')).sort()).toEqual(['balances-2026-10.xlsx', 'fees-2026-10.xlsx', 'pnl-2026-10.xlsx', 'rebates-2026-10.xlsx']);

    // Both workers export their shard into the one folder at the same time, twice (the second
    // replaces each worker's own partitions; neither loses the other's).
    for (let round = 0; round < 2; round++) {
      const exports = await Promise.all([folders.worker1, folders.worker2].map((dir) => runCli(['export', '--shard', '--out', shared, '--json'], { cwd: dir })));
      for (const result of exports) expect(result.code, result.stderr).toBe(0);
      expect(exports.map((result) => (JSON.parse(result.stdout) as { shard: string[] }).shard)).toEqual([['alpha', 'beta'], ['gamma']]);
    }

    // Each account's manifest names the worker database it came from.
    const shardManifests = Object.fromEntries(ACCOUNTS.map((account) => [account, JSON.parse(readFileSync(path.join(shared, '_accounts', `${account}.json`), 'utf8')) as ShardManifest]));
    expect(shardManifests.alpha!.database).toBe(databases.worker1);
    expect(shardManifests.beta!.database).toBe(databases.worker1);
    expect(shardManifests.gamma!.database).toBe(databases.worker2);
    expect(shardManifests.alpha!.shard).toEqual(['alpha', 'beta']);
    // No work folder (.shard-<host>-<pid>) of either worker is left.
    expect(readdirSync(shared).sort()).toEqual(['_accounts', 'marts']);

    const whole = JSON.parse(readFileSync(path.join(folders.single, 'export', '_manifest.json'), 'utf8')) as DatasetManifest;
    expect(whole.models.length).toBeGreaterThan(10);
    expect(shardManifests.gamma!.models.map((model) => model.model)).toEqual(whole.models.map((model) => model.model));
    let compared = 0;
    for (const model of whole.models) {
      const single = `read_parquet('${path.join(folders.single, 'export', model.path, model.partitionBy.length === 0 ? '*.parquet' : '**/*.parquet')}', hive_partitioning = true)`;
      const sharded = `read_parquet('${path.join(shared, model.path, '**/*.parquet')}', hive_partitioning = true)`;
      // Same column types (DECIMAL scales, ids as text), read back from the files.
      const typesOf = async (relation: string) =>
        Object.fromEntries((await rowsOf(duck, `DESCRIBE SELECT * FROM ${relation}`)).map((column) => [column.column_name as string, column.column_type as string]));
      const [singleTypes, shardedTypes] = [await typesOf(single), await typesOf(sharded)];
      for (const column of model.columns) expect(shardedTypes[column.name], `${model.model}.${column.name}`).toBe(singleTypes[column.name]);
      // The single process's sync read the snapshots (e.g. balance_vs_assets.snapshot_at) at another
      // instant than the workers' syncs: those instants say when a sync ran, not what it computed;
      // compared below against the workers' own databases instead. So is the reference of a row keyed by its snapshot (it names the instant).
      const bySnapshot = model.columns.some((column) => column.name.endsWith('snapshot_at'));
      const columns = model.columns
        .filter((column) => !column.name.endsWith('snapshot_at') && !(bySnapshot && column.name === 'reference'))
        .map((column) => quote(column.name))
        .join(', ');
      expect(await rowsOf(duck, `(SELECT ${columns} FROM ${single}) EXCEPT ALL (SELECT ${columns} FROM ${sharded})`), `${model.model}: rows of the single run missing from the shards`).toEqual([]);
      expect(await rowsOf(duck, `(SELECT ${columns} FROM ${sharded}) EXCEPT ALL (SELECT ${columns} FROM ${single})`), `${model.model}: rows of the shards not in the single run`).toEqual([]);
      // Every column, exactly: the shared dataset is worker 1's database's alpha and beta rows and worker 2's gamma rows.
      const all = model.columns.map((column) => `CAST(${quote(column.name)} AS ${column.type}) AS ${quote(column.name)}`).join(', ');
      const workers = `SELECT ${all} FROM worker1.${model.model} WHERE account IN ('alpha', 'beta') UNION ALL SELECT ${all} FROM worker2.${model.model} WHERE account = 'gamma'`;
      expect(await rowsOf(duck, `(SELECT ${all} FROM ${sharded}) EXCEPT ALL (${workers})`), `${model.model}: shard rows not in their worker's database`).toEqual([]);
      expect(await rowsOf(duck, `(${workers}) EXCEPT ALL (SELECT ${all} FROM ${sharded})`), `${model.model}: worker rows not in the shards`).toEqual([]);
      for (const account of ACCOUNTS) {
        const worker = account === 'gamma' ? 'worker2' : 'worker1';
        const [{ n }] = (await rowsOf(duck, `SELECT count(*)::INTEGER AS n FROM ${worker}.${model.model} WHERE account = '${account}'`)) as [{ n: number }];
        expect(shardManifests[account]!.models.find((entry) => entry.model === model.model)?.rows, `${model.model} ${account}`).toBe(n);
      }
      compared += Number((await rowsOf(duck, `SELECT count(*)::INTEGER AS n FROM ${single}`))[0]!.n);
    }
    // The comparison is over real data: thousands of rows, in every account.
    expect(compared).toBeGreaterThan(1000);
    const fees = await rowsOf(duck, `SELECT DISTINCT account, month FROM read_parquet('${path.join(shared, 'marts', 'fees_monthly', '**', '*.parquet')}', hive_partitioning = true) ORDER BY 1, 2`);
    expect(fees.map((row) => `${row.account as string}/${row.month as string}`)).toEqual(['alpha/2026-09', 'alpha/2026-10', 'beta/2026-09', 'beta/2026-10', 'gamma/2026-09', 'gamma/2026-10']);
  }, 180_000);

  it('refused before anything is written: a shard of an account the database never synced, a whole export over the shared folder, run --accounts over a database holding other accounts', async () => {
    const before = filesUnder(shared);
    const logsBefore = filesUnder(path.join(folders.worker1, 'logs'));
    expect(before.length).toBeGreaterThan(0);
    // Three refusals at once (none of them writes anything).
    const [foreign, whole, run] = await Promise.all([
      runCli(['export', '--shard', '--accounts', 'gamma', '--out', shared], { cwd: folders.worker1 }),
      runCli(['export', '--out', shared], { cwd: folders.worker1 }),
      runCli(['run', '--accounts', 'alpha', '--period', '2026-10'], { cwd: folders.worker1 }),
    ]);
    expect(foreign.code, foreign.stderr).toBe(2);
    expect(foreign.stderr).toContain('gamma was never synced into');
    expect(whole.code, whole.stderr).toBe(2);
    expect(whole.stderr).toContain('is a dataset shared by several workers');
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain('also holds beta, which --accounts alpha leaves out');
    expect(filesUnder(shared)).toEqual(before);
    // The refused run did not even start its log.
    expect(filesUnder(path.join(folders.worker1, 'logs'))).toEqual(logsBefore);
  });

  it('a shard export killed between its two renames: the next shard export on this host puts the set-aside partition back', async () => {
    // A process that is gone: its pid names the leftover work folder.
    const deadPid = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
    const host = os.hostname().replace(/[^A-Za-z0-9_-]/g, '_') || 'host';
    const partition = path.join('marts', 'fees_monthly', 'account=alpha');
    const before = filesUnder(path.join(shared, partition));
    expect(before.length).toBeGreaterThan(0);
    // Killed after setting alpha's partition aside, before renaming the new one into place.
    const setAside = path.join(shared, `.shard-${host}-${deadPid}`, 'old', partition);
    mkdirSync(path.dirname(setAside), { recursive: true });
    renameSync(path.join(shared, partition), setAside);
    // Worker 2 exports gamma: it finds the leftover, puts alpha's partition back, removes the rest.
    const exported = await runCli(['export', '--shard', '--out', shared], { cwd: folders.worker2 });
    expect(exported.code, exported.stderr).toBe(0);
    expect(filesUnder(path.join(shared, partition))).toEqual(before);
    expect(readdirSync(shared).sort()).toEqual(['_accounts', 'marts']);
  });
});
