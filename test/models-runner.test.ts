import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../src/errors.ts';
import { buildModels } from '../src/models/build.ts';
import { checkModels } from '../src/models/check.ts';
import { loadProject } from '../src/models/project.ts';
import { DEFAULT_MODEL_SETTINGS } from '../src/models/settings.ts';
import { Database } from '../src/store/database.ts';
import { tempDir } from './support/temp-dir.ts';

/** Writes an SQL project: { 'marts/x.sql': 'select ...' }. */
function project(files: Record<string, string>): string {
  const dir = tempDir('exledger-sql-');
  for (const [file, sql] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), sql);
  }
  return dir;
}

let db: Database;
afterEach(() => db?.close());

async function freshDb(): Promise<Database> {
  db = await Database.open(':memory:');
  await db.run('CREATE TABLE raw.numbers AS SELECT range AS n FROM range(5)');
  return db;
}

const PROJECT = {
  // File names sort against dependency order on purpose: a_total reads z_evens.
  'staging/numbers.sql': '-- all numbers\nselect n from raw.numbers',
  'intermediate/z_evens.sql': 'select n from staging.numbers where n % 2 = 0',
  'marts/a_total.sql': 'select sum(n) as total from intermediate.z_evens',
  'marts/b_count.sql': 'select count(*) as c from staging.numbers',
};

describe('the model runner', () => {
  it('orders models by what they read, not by name, and materializes each layer as declared', async () => {
    const sqlDir = project(PROJECT);
    expect(loadProject(sqlDir).models.map((model) => model.id)).toEqual(['staging.numbers', 'intermediate.z_evens', 'marts.a_total', 'marts.b_count']);
    await freshDb();
    const results = await buildModels(db, DEFAULT_MODEL_SETTINGS, { sqlDir });
    expect(results.map(({ id, status, materialization, rows }) => ({ id, status, materialization, rows }))).toEqual([
      { id: 'staging.numbers', status: 'ok', materialization: 'table', rows: 5 },
      { id: 'intermediate.z_evens', status: 'ok', materialization: 'table', rows: 3 },
      { id: 'marts.a_total', status: 'ok', materialization: 'table', rows: 1 },
      { id: 'marts.b_count', status: 'ok', materialization: 'table', rows: 1 },
    ]);
    // 0 + 2 + 4
    expect(await db.all('SELECT total FROM marts.a_total')).toEqual([{ total: '6' }]);
    const kinds = await db.all("SELECT table_schema || '.' || table_name AS id, table_type FROM information_schema.tables WHERE table_schema IN ('staging', 'intermediate', 'marts') ORDER BY 1");
    expect(kinds).toEqual([
      { id: 'intermediate.z_evens', table_type: 'BASE TABLE' },
      { id: 'marts.a_total', table_type: 'BASE TABLE' },
      { id: 'marts.b_count', table_type: 'BASE TABLE' },
      { id: 'staging.numbers', table_type: 'BASE TABLE' },
    ]);
  });

  it('rebuilds whole a model whose relation is a view (a database from before its layer held tables) or is gone, and leaves the others unchanged', async () => {
    const sqlDir = project(PROJECT);
    await freshDb();
    await buildModels(db, DEFAULT_MODEL_SETTINGS, { sqlDir });
    await db.run('DROP TABLE marts.b_count; CREATE VIEW marts.b_count AS SELECT 0 AS c; DROP TABLE marts.a_total');
    const results = await buildModels(db, DEFAULT_MODEL_SETTINGS, { sqlDir });
    expect(results.map(({ id, how, why }) => `${id} ${how}${why === undefined ? '' : ` (${why})`}`)).toEqual([
      'staging.numbers unchanged',
      'intermediate.z_evens unchanged',
      'marts.a_total whole (first build)',
      'marts.b_count whole (first build)',
    ]);
    expect(await db.all("SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = 'marts' ORDER BY 1")).toEqual([
      { table_name: 'a_total', table_type: 'BASE TABLE' },
      { table_name: 'b_count', table_type: 'BASE TABLE' },
    ]);
    expect(await db.all('SELECT c FROM marts.b_count')).toEqual([{ c: '5' }]);
  });

  it('keeps the previous table of a failing model readable and skips what reads it', async () => {
    await freshDb();
    await buildModels(db, DEFAULT_MODEL_SETTINGS, { sqlDir: project(PROJECT) });
    await db.run('INSERT INTO raw.numbers VALUES (10)');
    const broken = project({ ...PROJECT, 'intermediate/z_evens.sql': "select n from staging.numbers where error('no evens today') is null" });
    const results = await buildModels(db, DEFAULT_MODEL_SETTINGS, { sqlDir: broken });
    expect(results.map(({ id, status }) => `${id} ${status}`)).toEqual(['staging.numbers ok', 'intermediate.z_evens failed', 'marts.a_total skipped', 'marts.b_count ok']);
    expect(results[1]!.message).toMatch(/no evens today/);
    expect(results[2]!.message).toBe('reads intermediate.z_evens, which failed');
    // The tables of the failed model and of the skipped one are the previous build's.
    expect(await db.all('SELECT total FROM marts.a_total')).toEqual([{ total: '6' }]);
    expect(await db.all('SELECT count(*) AS n FROM intermediate.z_evens')).toEqual([{ n: '3' }]);
    // The independent model was rebuilt with the new row.
    expect(await db.all('SELECT c FROM marts.b_count')).toEqual([{ c: '6' }]);
  });

  it('names the file to fix for a missing model, a backwards reference or a cycle', () => {
    expect(() => loadProject(project({ 'marts/a.sql': 'select * from intermediate.nowhere' }))).toThrow(/marts\/a\.sql: reads intermediate\.nowhere, which no file in sql\/ defines/);
    expect(() => loadProject(project({ 'intermediate/a.sql': 'select * from marts.b', 'marts/b.sql': 'select 1' }))).toThrow(/intermediate\/a\.sql: reads marts\.b, a later layer/);
    const cycle = () => loadProject(project({ 'marts/a.sql': 'select * from marts.b', 'marts/b.sql': 'select * from marts.a' }));
    expect(cycle).toThrow(ConfigError);
    expect(cycle).toThrow(/reference cycle: marts\.a → marts\.b → marts\.a/);
    // Names in comments and string literals are not references.
    expect(loadProject(project({ 'marts/a.sql': "-- reads marts.nothing\nselect 'marts.none' as x" })).models[0]!.references).toEqual([]);
    // A test's {{ changed(of: …) }} names models it reads (only theirs have changes to select by).
    expect(() => loadProject(project({ 'marts/a.sql': 'select 1 as x', 'marts/b.sql': 'select 2 as y', 'marts/tests/t.sql': 'select * from marts.a where {{ changed(of: marts.b) }}' }))).toThrow(
      /marts\/tests\/t\.sql: \{\{ changed\(of: …\) \}\} names marts\.b, which the test does not read/,
    );
  });

  it('checks: a test passes with no rows, fails with a sample of the offending rows, errors when models are missing', async () => {
    const sqlDir = project({
      ...PROJECT,
      'intermediate/tests/evens_are_even.sql': 'select n from intermediate.z_evens where n % 2 <> 0',
      'marts/tests/numbers_below_three.sql': 'select n from staging.numbers where n >= 3 order by n',
      'marts/tests/reads_a_missing_table.sql': 'select * from marts.never_built',
    });
    await freshDb();
    // Models are not built yet: every test errors, saying what to do.
    const before = await checkModels(db, { sqlDir });
    expect(before.map((result) => result.status)).toEqual(['error', 'error', 'error']);
    expect(before[0]!.message).toMatch(/run exledger build first/);

    await buildModels(db, DEFAULT_MODEL_SETTINGS, { sqlDir });
    const results = await checkModels(db, { sqlDir, sampleSize: 1 });
    expect(results.map(({ id, status, offending, sample }) => ({ id, status, offending, sample }))).toEqual([
      { id: 'intermediate/evens_are_even', status: 'pass', offending: 0, sample: [] },
      { id: 'marts/numbers_below_three', status: 'fail', offending: 2, sample: [{ n: '3' }] },
      { id: 'marts/reads_a_missing_table', status: 'error', offending: 0, sample: [] },
    ]);
  });

  it('writes the settings the models read, amounts exact', async () => {
    await freshDb();
    const openingPositions = [{ account: 'main', symbol: 'BTCUSDT_SPBL', quantity: '0.123456789012345678', cost: '12345678901234.123456789012' }];
    await buildModels(db, { ...DEFAULT_MODEL_SETTINGS, reportingTimeZone: 'America/New_York', costMethods: ['fifo', 'average'], openingPositions, pooling: 'universal' }, { sqlDir: project(PROJECT) });
    expect(await db.all('SELECT time_zone, cost_methods, pooling, reporting_currency FROM settings.reporting')).toEqual([{ time_zone: 'America/New_York', cost_methods: ['fifo', 'average'], pooling: 'universal', reporting_currency: null }]);
    expect(await db.all('SELECT account, symbol, quantity, cost FROM settings.opening_positions')).toEqual([
      { account: 'main', symbol: 'BTCUSDT_SPBL', quantity: '0.123456789012345678', cost: '12345678901234.123456789012' },
    ]);
  });

  it('keeps one settings.model_builds row per model, and takes the key off an earlier version\'s table', async () => {
    await freshDb();
    // As versions before the full-disk fix created it: a PRIMARY KEY on model.
    await db.run('CREATE SCHEMA IF NOT EXISTS settings');
    await db.run(
      'CREATE TABLE settings.model_builds (model VARCHAR PRIMARY KEY, time_zone VARCHAR NOT NULL, cost_methods VARCHAR[] NOT NULL, opening_positions VARCHAR NOT NULL, built_at TIMESTAMPTZ NOT NULL, pooling VARCHAR)',
    );
    await db.run("INSERT INTO settings.model_builds VALUES ('marts.gone', 'UTC', ['fifo'], '[]', now(), NULL)");
    const settings = DEFAULT_MODEL_SETTINGS;
    await buildModels(db, settings, { sqlDir: project(PROJECT) });
    await buildModels(db, { ...settings, reportingTimeZone: 'Asia/Tokyo' }, { sqlDir: project(PROJECT) });
    expect(await db.all("SELECT constraint_type FROM duckdb_constraints() WHERE schema_name = 'settings' AND table_name = 'model_builds' AND constraint_type IN ('PRIMARY KEY', 'UNIQUE')")).toEqual([]);
    const rows = await db.all<{ model: string; time_zone: string }>('SELECT model, time_zone FROM settings.model_builds ORDER BY model');
    expect(rows.length).toBeGreaterThan(1);
    expect(new Set(rows.map((row) => row.model)).size).toBe(rows.length);
    expect(rows.filter((row) => row.model !== 'marts.gone').every((row) => row.time_zone === 'Asia/Tokyo')).toBe(true);
    expect(rows.find((row) => row.model === 'marts.gone')).toEqual({ model: 'marts.gone', time_zone: 'UTC' });
  });
});
