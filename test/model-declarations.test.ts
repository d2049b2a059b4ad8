import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../src/errors.ts';
import { buildModels, refreshStaging } from '../src/models/build.ts';
import { checkModels } from '../src/models/check.ts';
import { declareModels, type LayerDeclaration } from '../src/models/declaration.ts';
import { loadProject, REPOSITORY_DECLARATIONS, SQL_DIR } from '../src/models/project.ts';
import { DEFAULT_MODEL_SETTINGS } from '../src/models/settings.ts';
import { Database } from '../src/store/database.ts';
import { buildAll, insertHistory, openModelDb } from './support/model-db.ts';
import { tempDir } from './support/temp-dir.ts';

let db: Database | undefined;
afterEach(() => {
  db?.close();
  db = undefined;
});

/** Writes an SQL project: { 'marts/x.sql': 'select ...' }. */
function project(files: Record<string, string>): string {
  const dir = tempDir('exledger-decl-');
  for (const [file, sql] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), sql);
  }
  return dir;
}

interface ColumnRow {
  id: string;
  column_name: string;
  data_type: string;
  comment: string | null;
}

const MODEL_COLUMNS = `
  SELECT schema_name || '.' || table_name AS id, column_name, data_type, comment
  FROM duckdb_columns() WHERE schema_name IN ('staging', 'intermediate', 'marts') ORDER BY schema_name, table_name, column_index`;

/** A spot fill, a futures fill and a bill as the exchange sends them, so the staging models' macros have rows to read. */
async function insertSomeHistory(target: Database): Promise<void> {
  await insertHistory(target, 'spot_fills', [
    { accountId: '1', symbol: 'BTCUSDT_SPBL', baseCoin: 'BTC', quoteCoin: 'USDT', orderId: '11', fillId: '12', orderType: 'limit', side: 'buy', fillPrice: '65000.5', fillQuantity: '0.000000000000000001', fillTotalAmount: '0.0000000000000650', fees: '0', cTime: '1767225600000' },
  ], { partition: 'symbol=BTCUSDT_SPBL' });
  await insertHistory(target, 'futures_fills', [
    { tradeId: '9223372036854775807', orderId: '21', symbol: 'BTCUSDT', positionSide: 'LONG', orderSide: 'BUY', fillSize: '1000000000000', fillValue: '1000000000000000000000', fillFee: '-0.25', realizePnl: '0', createdTime: '1767225600000' },
  ]);
  await insertHistory(target, 'funding_bills', [
    { billId: '31', coinId: '2', coinName: 'USDT', bizType: 'deposit', deltaAmount: '12345678901234.123456789012345678', afterAmount: '12345678901234.123456789012345678', fees: '0', cTime: '1767225600000' },
  ]);
}

describe('model declarations on the repository SQL project', () => {
  it('comments every model and column of every layer, in the database as built, rebuilt and published by file copy', async () => {
    const file = path.join(tempDir('exledger-decl-db-'), 'ledger.duckdb');
    db = await openModelDb(file);
    await insertSomeHistory(db);
    // Built twice: CREATE OR REPLACE drops a table's comments, the build writes them again.
    await buildAll(db, { costMethods: ['fifo', 'average'] });
    await buildAll(db, { costMethods: ['fifo', 'average'] });
    await db.checkpoint();
    db.close();
    // The published copy is a file copy, opened read-only: its catalog holds the same comments,
    // and the macros the staging models call.
    const copy = `${file}.copy`;
    cpSync(file, copy);
    db = await Database.open(copy, { readOnly: true });

    const columns = await db.all<ColumnRow>(MODEL_COLUMNS);
    const tables = await db.all<{ id: string; comment: string | null }>(
      "SELECT schema_name || '.' || table_name AS id, comment FROM duckdb_tables() WHERE schema_name IN ('staging', 'intermediate', 'marts')",
    );
    let declaredColumns = 0;
    for (const { layer, models } of REPOSITORY_DECLARATIONS) {
      for (const model of models) {
        const id = `${layer}.${model.name}`;
        expect(tables.find((table) => table.id === id)?.comment, id).toBe(`${model.description} Grain: ${model.grain}. Key: (${model.key.join(', ')}).`);
        for (const column of model.columns) {
          const comment = columns.find((row) => row.id === id && row.column_name === column.name)?.comment;
          expect(comment, `${id}.${column.name}`).toBe(column.unit === undefined ? column.description : `${column.description} [${column.unit}]`);
          declaredColumns += 1;
        }
      }
    }
    expect(REPOSITORY_DECLARATIONS.map((declaration) => declaration.layer)).toEqual(['staging', 'intermediate', 'marts']);
    expect(declaredColumns).toBeGreaterThan(450);
    // Whatever was built, every relation and every column of it is described.
    expect(tables.filter((table) => (table.comment ?? '').trim() === '').map((table) => table.id)).toEqual([]);
    expect(columns.filter((row) => (row.comment ?? '').trim() === '').map((row) => `${row.id}.${row.column_name}`)).toEqual([]);
    expect(columns.length).toBe(declaredColumns);
    // An analyst's query: what a column holds and in which unit, in a mart and in staging.
    expect(columns.find((row) => row.id === 'marts.spot_realized_pnl_daily' && row.column_name === 'realized_pnl')?.comment).toBe('proceeds - cost [coin: quote_coin]');
    expect(columns.find((row) => row.id === 'staging.funding_bills' && row.column_name === 'delta_amount')?.comment).toMatch(/\[coin: coin_name\]$/);
    // The staging tables read through their macros (sql/macros/staging.sql) in the read-only copy, exactly.
    expect(await db.all('SELECT fill_quantity::VARCHAR AS quantity, fill_quantity_e18::VARCHAR AS units FROM staging.spot_fills')).toEqual([{ quantity: '0.000000000000000001', units: '1' }]);
    expect(await db.all('SELECT trade_id, fill_value::VARCHAR AS value, fill_fee::VARCHAR AS fee, liquidate_fee::VARCHAR AS liquidate_fee FROM staging.futures_fills')).toEqual([
      { trade_id: '9223372036854775807', value: '1000000000000000000000.0000000000000000', fee: '-0.250000000000000000', liquidate_fee: '0.000000000000000000' },
    ]);
    expect(await db.all('SELECT delta_amount::VARCHAR AS delta FROM staging.funding_bills')).toEqual([{ delta: '12345678901234.123456789012345678' }]);
  });

  it('comments the staging tables a sync creates before any build, macros first', async () => {
    db = await openModelDb();
    await insertSomeHistory(db);
    await refreshStaging(db);
    const views = await db.all<{ name: string; comment: string | null }>("SELECT table_name AS name, comment FROM duckdb_tables() WHERE schema_name = 'staging' ORDER BY table_name");
    const staging = REPOSITORY_DECLARATIONS.find((declaration) => declaration.layer === 'staging')!;
    expect(views.map((view) => view.name)).toEqual(staging.models.map((model) => model.name).sort());
    expect(views.filter((view) => (view.comment ?? '') === '').map((view) => view.name)).toEqual([]);
    const columns = await db.all<ColumnRow>(MODEL_COLUMNS);
    expect(columns.length).toBe(staging.models.reduce((sum, model) => sum + model.columns.length, 0));
    expect(columns.filter((row) => (row.comment ?? '').trim() === '').map((row) => `${row.id}.${row.column_name}`)).toEqual([]);
    expect(await db.all('SELECT fees_e18::VARCHAR AS fees FROM staging.spot_fills')).toEqual([{ fees: '0' }]);
  });

  it('declares every model of every layer, every column it builds and the unit of every amount, date and instant', async () => {
    const models = loadProject().models;
    for (const layer of ['staging', 'intermediate', 'marts']) expect(models.filter((model) => model.layer === layer).length, layer).toBeGreaterThan(7);
    expect(models.filter((model) => model.declaration === undefined).map((model) => model.id)).toEqual([]);

    db = await openModelDb();
    await buildAll(db);
    const built = await db.all<ColumnRow>(MODEL_COLUMNS);
    for (const model of models) {
      const columns = built.filter((row) => row.id === model.id);
      expect(columns.map((row) => row.column_name), model.id).toEqual(model.declaration!.columns.map((column) => column.name));
      const withoutUnit = columns.filter((row) => /^(DECIMAL|DATE|TIMESTAMP|HUGEINT)/.test(row.data_type) && model.declaration!.columns.find((column) => column.name === row.column_name)!.unit === undefined);
      expect(withoutUnit.map((row) => `${model.id}.${row.column_name}`)).toEqual([]);
    }
  });

  it('fails a model whose SQL loses a declared column (or gains an undeclared one), naming them, and keeps its previous table', async () => {
    const sqlDir = tempDir('exledger-decl-sql-');
    cpSync(SQL_DIR, sqlDir, { recursive: true });
    db = await openModelDb();
    expect((await buildModels(db, DEFAULT_MODEL_SETTINGS, { sqlDir, declarations: REPOSITORY_DECLARATIONS })).filter((result) => result.status !== 'ok')).toEqual([]);

    const fees = path.join(sqlDir, 'marts', 'fees_daily.sql');
    writeFileSync(fees, readFileSync(fees, 'utf8').replace(/^(\s+)fee_count\n/m, '$1fee_count as fills_or_bills\n'));
    const results = await buildModels(db, DEFAULT_MODEL_SETTINGS, { sqlDir, declarations: REPOSITORY_DECLARATIONS });
    expect(results.filter((result) => result.status !== 'ok').map(({ id, status, message }) => ({ id, status, message }))).toEqual([
      { id: 'marts.fees_daily', status: 'failed', message: expect.stringMatching(/marts\.fees_daily: its columns disagree with its declaration; declared but not built: fee_count; built but not declared: fills_or_bills \(.*marts\/_models\.ts\)/) },
      // The adjustments to closed periods read fees_daily, and the journal as posted reads them (the
      // journal's lines come from the books' events, not from fees_daily).
      { id: 'marts.period_adjustments', status: 'skipped', message: 'reads marts.fees_daily, which failed' },
      { id: 'marts.journal_entries', status: 'skipped', message: 'reads marts.period_adjustments, which was not built' },
    ]);
    // The previous table stays, its comments with it.
    const kept = await db.all<ColumnRow>(`${MODEL_COLUMNS.replace('ORDER BY', "AND table_name = 'fees_daily' ORDER BY")}`);
    expect(kept.find((column) => column.column_name === 'fee_count')).toMatchObject({ column_name: 'fee_count', comment: 'Fills or bills whose fees are summed here [count]' });
  });
});

describe('declarations on a hand-built project', () => {
  const FILES = {
    'staging/coins.sql': 'select * from raw.coins',
    'marts/balances.sql': 'select account, coin, kind, amount from raw.balances',
    'marts/balance_total.sql': 'select account, sum(amount) as amount from marts.balances group by account',
  };
  const DECLARED: LayerDeclaration[] = [
    declareModels('marts', [
      {
        name: 'balances',
        description: 'Balances.',
        grain: 'one row per account and coin',
        key: ['account', 'coin'],
        columns: [
          { name: 'account', description: 'Account', notNull: true },
          { name: 'coin', description: 'Coin', notNull: true, relationship: { model: 'staging.coins', column: 'coin' } },
          { name: 'kind', description: 'Kind of balance', acceptedValues: ['spot', 'futures'] },
          { name: 'amount', description: 'Amount', unit: 'coin: coin' },
        ],
      },
    ]),
  ];

  async function handBuiltDb(): Promise<Database> {
    db = await Database.open(':memory:');
    await db.run('CREATE TABLE raw.coins (coin VARCHAR); INSERT INTO raw.coins VALUES (\'BTC\'), (\'USDT\')');
    await db.run("CREATE TABLE raw.balances (account VARCHAR, coin VARCHAR, kind VARCHAR, amount DECIMAL(38, 18)); INSERT INTO raw.balances VALUES ('main', 'BTC', 'spot', 1), ('main', 'USDT', 'futures', 2)");
    return db;
  }

  it('generic tests pass on clean data and catch a duplicate key, a null, an unaccepted value and a dangling relationship', async () => {
    const sqlDir = project(FILES);
    await handBuiltDb();
    expect((await buildModels(db!, DEFAULT_MODEL_SETTINGS, { sqlDir, declarations: DECLARED })).map((result) => result.status)).toEqual(['ok', 'ok', 'ok']);
    const clean = await checkModels(db!, { sqlDir, declarations: DECLARED });
    expect(clean.map(({ id, status }) => `${id} ${status}`)).toEqual([
      'marts/balances_accepted_values_kind pass',
      'marts/balances_not_null pass',
      'marts/balances_relationships_coin pass',
      'marts/balances_unique pass',
    ]);

    // A duplicate key, a null account, an unaccepted kind, a coin staging.coins does not have.
    await db!.run("INSERT INTO raw.balances VALUES ('main', 'BTC', 'spot', 3), (NULL, 'USDT', 'spot', 4), ('main', 'ETH', 'margin', 5)");
    await buildModels(db!, DEFAULT_MODEL_SETTINGS, { sqlDir, declarations: DECLARED });
    const dirty = await checkModels(db!, { sqlDir, declarations: DECLARED });
    expect(dirty.map(({ id, status, offending, sample }) => ({ id, status, offending, sample }))).toEqual([
      { id: 'marts/balances_accepted_values_kind', status: 'fail', offending: 1, sample: [{ kind: 'margin', n: '1' }] },
      { id: 'marts/balances_not_null', status: 'fail', offending: 1, sample: [{ null_columns: ['account'], account: null, coin: 'USDT' }] },
      { id: 'marts/balances_relationships_coin', status: 'fail', offending: 1, sample: [{ coin: 'ETH', n: '1' }] },
      { id: 'marts/balances_unique', status: 'fail', offending: 1, sample: [{ account: 'main', coin: 'BTC', n: '2' }] },
    ]);
  });

  it('fails the model that loses a declared column and skips what reads it', async () => {
    await handBuiltDb();
    const sqlDir = project({ ...FILES, 'marts/balances.sql': 'select account, coin, amount from raw.balances' });
    const results = await buildModels(db!, DEFAULT_MODEL_SETTINGS, { sqlDir, declarations: DECLARED });
    expect(results.map(({ id, status, message }) => ({ id, status, message }))).toEqual([
      { id: 'staging.coins', status: 'ok', message: undefined },
      { id: 'marts.balances', status: 'failed', message: expect.stringContaining('marts.balances: its columns disagree with its declaration; declared but not built: kind') },
      { id: 'marts.balance_total', status: 'skipped', message: 'reads marts.balances, which failed' },
    ]);
  });

  it('refuses a declaration of a model without a file, a key that is not a column, a relationship to nothing', () => {
    const sqlDir = project(FILES);
    const [layer] = DECLARED as [LayerDeclaration];
    const model = layer.models[0]!;
    const load = (models: LayerDeclaration['models']) => () => loadProject(sqlDir, [declareModels('marts', models)]);
    expect(load([{ ...model, name: 'nowhere' }])).toThrow(ConfigError);
    expect(load([{ ...model, name: 'nowhere' }])).toThrow(/marts\/_models\.ts: declares nowhere, which no file sql\/marts\/nowhere\.sql defines/);
    expect(load([{ ...model, key: ['account', 'symbol'] }])).toThrow(/model balances: .*key column symbol is not a declared column/);
    expect(load([{ ...model, columns: [...model.columns, { name: 'kind', description: 'again' }] }])).toThrow(/column kind is declared twice/);
    expect(load([{ ...model, columns: [{ ...model.columns[0]!, relationship: { model: 'staging.accounts', column: 'account' } }, ...model.columns.slice(1)] }])).toThrow(/column account: relationship to staging\.accounts\.account: no such model/);
    expect(load([{ ...model, columns: [{ ...model.columns[0]!, description: '' }, ...model.columns.slice(1)] }])).toThrow(/model balances: \[0\]\.columns\[0\]\.description/);
  });
});
