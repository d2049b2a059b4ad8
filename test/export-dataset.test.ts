import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CSV_INSTANT, KV_COLUMN, KV_MODEL, type DatasetManifest } from '../src/export/write-dataset.ts';
import { loadProject } from '../src/models/project.ts';
import { runCli } from './support/cli-process.ts';
import { startSandboxProcess, type SandboxProcess } from './support/sandbox-process.ts';

/**
 * `exledger export` the way it is deployed (issue 14): a sandbox history synced and built by the
 * `exledger` executable in child processes (the sandbox in a process of its own), then exported
 * by another child process. The dataset is then read back by a fresh in-memory DuckDB, as an
 * analyst's DuckDB would read it, and compared with the database's tables row for row.
 */

const CONFIG = {
  budget: { spot: { quota: 500, windowMs: 1000 }, contract: { quota: 1000, windowMs: 1000 } },
  retry: { retries: 8, minTimeoutMs: 50, maxTimeoutMs: 500 },
  timeoutMs: 10_000,
  // Two months of the sandbox's history (it ends 2026-11-01): two month partitions, a short sync.
  sync: { startDate: '2026-09-01' },
  db: './data/exledger.duckdb',
};

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Each declared column's description and unit (null when it has none), by `<model>.<column>`: what the export must carry. */
const DECLARED = new Map(
  loadProject().models.flatMap((model) => (model.declaration?.columns ?? []).map((column) => [`${model.id}.${column.name}`, { description: column.description, unit: column.unit ?? null }] as const)),
);

/** Rows of a query as JSON objects (exact numbers as strings). */
async function rowsOf(connection: DuckDBConnection, sql: string): Promise<Record<string, unknown>[]> {
  return (await connection.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
}

describe('exledger export: the warehouse as a hive-partitioned dataset', () => {
  let exchange: SandboxProcess;
  let dir: string;
  let env: Record<string, string>;
  let instance: DuckDBInstance;
  let duck: DuckDBConnection;
  const cli = (args: string[]) => runCli(args, { cwd: dir, env });
  const manifestOf = (folder: string) => JSON.parse(readFileSync(path.join(dir, folder, '_manifest.json'), 'utf8')) as DatasetManifest;

  /**
   * Compares each model of the manifest with its source table: both ways EXCEPT ALL (so
   * duplicates count), after casting each column to its database type, which changes nothing but
   * a HUGEINT written as DECIMAL(38,0); the hive columns come from the files, with their types.
   */
  async function expectSameAsSource(folder: string, manifest: DatasetManifest): Promise<void> {
    for (const model of manifest.models) {
      const files = path.join(dir, folder, model.path, model.partitionBy.length === 0 ? '*.parquet' : '**/*.parquet');
      const read = `read_parquet('${files}', hive_partitioning = true)`;
      // Every type as in the database (DECIMAL(38,18) stays DECIMAL(38,18)), bar the declared file types.
      const described = await rowsOf(duck, `DESCRIBE SELECT * FROM ${read}`);
      const fileTypes = Object.fromEntries(described.map((column) => [column.column_name as string, column.column_type as string]));
      for (const column of model.columns) expect(fileTypes[column.name], `${model.model}.${column.name}`).toBe(column.fileType ?? column.type);
      if (model.partitionBy.includes('month')) expect(fileTypes.month, `${model.model}.month`).toBe('VARCHAR');
      const exported = `SELECT ${model.columns.map((column) => `CAST(${quote(column.name)} AS ${column.type}) AS ${quote(column.name)}`).join(', ')} FROM ${read}`;
      const source = `SELECT ${model.columns.map((column) => quote(column.name)).join(', ')} FROM src.${model.model}`;
      expect(await rowsOf(duck, `(${exported}) EXCEPT ALL (${source})`), `${model.model}: exported rows not in the source`).toEqual([]);
      expect(await rowsOf(duck, `(${source}) EXCEPT ALL (${exported})`), `${model.model}: source rows not exported`).toEqual([]);
      const [{ rows }] = (await rowsOf(duck, `SELECT count(*) AS rows FROM src.${model.model}`)) as [{ rows: string }];
      expect(model.rows, model.model).toBe(Number(rows));
      if (model.month !== null) {
        // The month key is the model's own month column as YYYY-MM, in every row.
        expect(await rowsOf(duck, `SELECT * FROM ${read} WHERE month IS DISTINCT FROM strftime(${quote(model.month.column)}, '%Y-%m')`), model.model).toEqual([]);
      }
    }
  }

  beforeAll(async () => {
    exchange = await startSandboxProcess(['--end', '2026-11-01', '--window-ms', '1000', '--spot-quota', '500', '--futures-quota', '1000']);
    dir = mkdtempSync(path.join(os.tmpdir(), 'exledger-export-'));
    writeFileSync(path.join(dir, 'exledger.config.json'), JSON.stringify(CONFIG));
    env = exchange.settings;
    const sync = await cli(['sync', '--quiet']);
    expect(sync.code, sync.stderr).toBe(0);
    const build = await cli(['build', '--quiet']);
    expect(build.code, build.stderr).toBe(0);
    instance = await DuckDBInstance.create(':memory:');
    duck = await instance.connect();
  }, 120_000);
  afterAll(async () => {
    duck?.closeSync();
    instance?.closeSync();
    expect(await exchange?.stop()).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  });

  it('every marts table, read back by DuckDB with hive partitioning, equals its source exactly: DECIMAL types, 64-bit ids as text, account=/month= partitions', async () => {
    const exported = await cli(['export', '--json']);
    expect(exported.code, exported.stderr).toBe(0);
    const details = JSON.parse(exported.stdout) as { command: string; ok: boolean; path: string; manifest: DatasetManifest };
    expect(details).toMatchObject({ command: 'export', ok: true, path: path.join(dir, 'export') });
    const manifest = manifestOf('export');
    expect(manifest).toEqual(details.manifest);
    expect(manifest).toMatchObject({ version: 1, format: 'parquet', database: path.join(dir, 'data', 'exledger.duckdb') });
    expect(manifest.runId).toMatch(/^\d{8}T\d{6}-[0-9a-f]{6}$/);

    await duck.run(`ATTACH '${path.join(dir, 'data', 'exledger.duckdb')}' AS src (READ_ONLY)`);
    const marts = (await rowsOf(duck, "SELECT table_name FROM information_schema.tables WHERE table_catalog = 'src' AND table_schema = 'marts' ORDER BY table_name")).map((row) => `marts.${row.table_name as string}`);
    expect(manifest.models.map((model) => model.model)).toEqual(marts);
    await expectSameAsSource('export', manifest);

    // The layout: account=…/month=YYYY-MM/ under the model's folder, month from fee_month.
    const fees = manifest.models.find((model) => model.model === 'marts.fees_monthly')!;
    expect(fees).toMatchObject({ path: 'marts/fees_monthly', partitionBy: ['account', 'month'], month: { column: 'fee_month' } });
    expect(readdirSync(path.join(dir, 'export', 'marts', 'fees_monthly'))).toEqual(['account=main']);
    expect(readdirSync(path.join(dir, 'export', 'marts', 'fees_monthly', 'account=main')).sort()).toEqual(['month=2026-09', 'month=2026-10']);
    // A day-grained model is partitioned by its day's month.
    expect(manifest.models.find((model) => model.model === 'marts.fees_daily')).toMatchObject({ partitionBy: ['account', 'month'], month: { column: 'fee_date' } });
    // Money stays DECIMAL with its scale (checked for every column above); one spelled out.
    expect(fees.columns.find((column) => column.name === 'fees_paid')).toEqual({ name: 'fees_paid', type: 'DECIMAL(38,18)', ...DECLARED.get('marts.fees_monthly.fees_paid') });
    // 64-bit ids: text, beyond what a double holds exactly (2^53), and every one came back (EXCEPT ALL above).
    const lots = manifest.models.find((model) => model.model === 'marts.spot_lot_matches')!;
    expect(lots.rows).toBeGreaterThan(0);
    expect(lots.columns.find((column) => column.name === 'sell_fill_id')?.type).toBe('VARCHAR');
    const [{ longest }] = (await rowsOf(duck, `SELECT max(sell_fill_id::HUGEINT)::VARCHAR AS longest FROM read_parquet('${path.join(dir, 'export', 'marts', 'spot_lot_matches')}/**/*.parquet', hive_partitioning = true)`)) as [{ longest: string }];
    expect(BigInt(longest)).toBeGreaterThan(2n ** 53n);
  }, 60_000);

  it('a second export replaces the first whole (HUGEINT written as exact DECIMAL(38,0)); leftovers of a killed export are removed, a running one keeps its folder', async () => {
    const first = manifestOf('export');
    const deadPid = await new Promise<number>((resolve) => {
      const child = spawn(process.execPath, ['-e', '0']);
      child.on('exit', () => resolve(child.pid!));
    });
    mkdirSync(path.join(dir, `.export.tmp-${deadPid}`, 'marts'), { recursive: true });
    writeFileSync(path.join(dir, `.export.tmp-${deadPid}`, 'marts', 'half.parquet'), 'half a dataset');
    mkdirSync(path.join(dir, `.export.tmp-${process.pid}`));

    const second = await cli(['export', 'layer:intermediate', 'marts.fees_monthly', '--out', 'export']);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toBe('');
    expect(second.stdout).toMatch(/^export \d{8}T\d{6}-[0-9a-f]{6}: \d+ models, [\d,]+ rows as parquet in export \(/m);
    const manifest = manifestOf('export');
    expect(manifest.runId).not.toBe(first.runId);
    expect(manifest.models.map((model) => model.model)).toEqual([...manifest.models.filter((model) => model.model.startsWith('intermediate.')).map((model) => model.model), 'marts.fees_monthly']);
    // Nothing of the first export is left: the folder is the new dataset only.
    expect(readdirSync(path.join(dir, 'export')).sort()).toEqual(['_manifest.json', 'intermediate', 'marts']);
    expect(readdirSync(path.join(dir, 'export', 'marts'))).toEqual(['fees_monthly']);
    expect(readdirSync(dir).filter((name) => name.startsWith('.export.')).sort()).toEqual([`.export.tmp-${process.pid}`]);
    rmSync(path.join(dir, `.export.tmp-${process.pid}`), { recursive: true });

    // 128-bit integers: Parquet has none, so DECIMAL(38,0), exact (DuckDB's default would be DOUBLE).
    const trades = manifest.models.find((model) => model.model === 'intermediate.int_spot_trades')!;
    expect(trades.rows).toBeGreaterThan(0);
    expect(trades.columns.find((column) => column.name === 'units_in_e18')).toEqual({ name: 'units_in_e18', type: 'HUGEINT', fileType: 'DECIMAL(38,0)', ...DECLARED.get('intermediate.int_spot_trades.units_in_e18') });
    await expectSameAsSource('export', manifest);
  }, 60_000);

  it("every column's description and unit, as its model declares them, in the manifest and in every Parquet file's key-value metadata (parquet_kv_metadata)", async () => {
    const exported = await cli(['export', 'layer:staging', 'layer:marts', '--out', 'described', '--quiet']);
    expect(exported.code, exported.stderr).toBe(0);
    const manifest = manifestOf('described');
    expect(manifest.models.length).toBeGreaterThan(20);
    let files = 0;
    for (const model of manifest.models) {
      expect(model.description, model.model).toMatch(/\S/);
      // The manifest: per column its type, description and unit, as declared (the unit null where none is declared).
      for (const column of model.columns) {
        const declared = DECLARED.get(`${model.model}.${column.name}`);
        expect(declared, `${model.model}.${column.name} is declared`).toBeDefined();
        expect({ description: column.description, unit: column.unit }, `${model.model}.${column.name}`).toEqual(declared);
      }
      // Every file of the model: the model and each of its columns (the month key too) in the key-value metadata.
      const glob = path.join(dir, 'described', model.path, model.partitionBy.length === 0 ? '*.parquet' : '**/*.parquet');
      const rows = (await rowsOf(duck, `SELECT file_name, decode(key) AS key, decode(value) AS value FROM parquet_kv_metadata('${glob}') ORDER BY file_name, key`)) as { file_name: string; key: string; value: string }[];
      const byFile = new Map<string, typeof rows>();
      for (const row of rows) byFile.set(row.file_name, [...(byFile.get(row.file_name) ?? []), row]);
      const inFolder = (await rowsOf(duck, `SELECT count(*)::INTEGER AS n FROM glob('${glob}')`))[0]!.n as number;
      expect(byFile.size, model.model).toBe(inFolder);
      for (const [file, entries] of byFile) {
        files += 1;
        const metadata = new Map(entries.map((entry) => [entry.key, JSON.parse(entry.value) as Record<string, string | null>]));
        expect(metadata.get(KV_MODEL), file).toEqual({ model: model.model, description: model.description });
        for (const column of model.columns) expect(metadata.get(`${KV_COLUMN}${column.name}`), `${file}: ${column.name}`).toEqual(DECLARED.get(`${model.model}.${column.name}`));
        const columnKeys = [...metadata.keys()].filter((key) => key.startsWith(KV_COLUMN)).map((key) => key.slice(KV_COLUMN.length));
        expect(columnKeys.sort(), file).toEqual([...model.columns.map((column) => column.name), ...(model.partitionBy.includes('month') ? ['month'] : [])].sort());
        if (model.partitionBy.includes('month')) expect(metadata.get(`${KV_COLUMN}month`), file).toEqual({ description: `Month of ${model.month!.column}, the hive partition key`, unit: 'YYYY-MM' });
      }
    }
    expect(files).toBeGreaterThan(manifest.models.length);
  }, 60_000);

  it('CSV: the same layout, decimals printed exactly as DuckDB holds them', async () => {
    const csv = await cli(['export', 'marts.fees_monthly', 'spot_lot_matches', '--format', 'csv', '--out', 'csv']);
    expect(csv.code, csv.stderr).toBe(0);
    const manifest = manifestOf('csv');
    expect(manifest.format).toBe('csv');
    for (const model of manifest.models) {
      const names = model.columns.map((column) => quote(column.name)).join(', ');
      const read = `SELECT ${names} FROM read_csv('${path.join(dir, 'csv', model.path)}/**/*.csv', hive_partitioning = true, all_varchar = true)`;
      // Instants as ISO 8601 UTC with microseconds (2026-09-30T23:59:59.999000Z), everything else as DuckDB prints it.
      const text = (column: { name: string; type: string }) => (column.type === 'TIMESTAMP WITH TIME ZONE' ? `strftime(${quote(column.name)}, '${CSV_INSTANT}')` : `${quote(column.name)}::VARCHAR`);
      const source = `SELECT ${model.columns.map(text).join(', ')} FROM src.${model.model}`;
      expect(await rowsOf(duck, `(${read}) EXCEPT ALL (${source})`), model.model).toEqual([]);
      expect(await rowsOf(duck, `(${source}) EXCEPT ALL (${read})`), model.model).toEqual([]);
    }
    // e.g. 44.743121830000000000: all 18 decimals, no float rounding.
    expect(readFileSync(path.join(dir, 'csv', 'marts', 'fees_monthly', 'account=main', 'month=2026-10', 'data_0.csv'), 'utf8')).toMatch(/^main,spot,USDT,2026-10-01,\d+\.\d{18},/m);
    expect(readFileSync(path.join(dir, 'csv', 'marts', 'spot_lot_matches', 'account=main', 'month=2026-10', 'data_0.csv'), 'utf8')).toMatch(/,2026-10-\d\dT\d\d:\d\d:\d\d\.\d{6}Z,/);
  }, 60_000);

  it('an unknown model or a bad --out is exit 2 naming it, and nothing is written', async () => {
    const before = manifestOf('export');
    const listing = readdirSync(dir).sort();
    const unknown = await cli(['export', 'marts.fees_montly', '--out', 'export']);
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toMatch(/^error: model: "marts\.fees_montly" is not a model of the project[^\n]*\n {2}fix: select with model \(fees_monthly, or marts\.fees_monthly\), \+model/);
    const layer = await cli(['export', 'layer:mart', '--out', 'fresh']);
    expect(layer.code).toBe(2);
    expect(layer.stderr).toMatch(/^error: model: "layer:mart" is not a layer; the layers are layer:staging, layer:intermediate, layer:marts\n/);
    const file = await cli(['export', '--out', 'exledger.config.json']);
    expect(file.code).toBe(2);
    expect(file.stderr).toBe(`error: ${path.join(dir, 'exledger.config.json')}: is a file, not a folder\n  fix: choose another folder (--out), or move the file away\n`);
    // A folder of something else is never replaced.
    mkdirSync(path.join(dir, 'notes'));
    writeFileSync(path.join(dir, 'notes', 'todo.txt'), 'mine');
    const other = await cli(['export', '--out', 'notes']);
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/^error: \S+\/notes: is a folder with other things in it \(no _manifest\.json\)/);
    expect(readdirSync(path.join(dir, 'notes'))).toEqual(['todo.txt']);
    rmSync(path.join(dir, 'notes'), { recursive: true });

    expect(readdirSync(dir).sort()).toEqual(listing);
    expect(manifestOf('export')).toEqual(before);
    expect(existsSync(path.join(dir, 'fresh'))).toBe(false);
  }, 60_000);
});
