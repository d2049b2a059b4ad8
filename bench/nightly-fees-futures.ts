/**
 * The nightly build of the futures and fees chains, model by model: a copy of a build benchmark's
 * raw history (bench/build-data.ts, 1M spot and 1M futures fills by default) built whole, one more
 * day appended as a sync would (bench/nightly-day.ts), built again (incremental), then rebuilt
 * whole (--full-refresh) for comparison: the time, how and rows of each model, and whether each
 * incremental table equals the whole rebuild.
 *
 *   npx tsx bench/nightly-fees-futures.ts [spot fills, default 1000000] [--snapshots]
 *
 * --snapshots: the nightly sync also takes its snapshots (the contracts' listing, the futures
 * accounts, the currencies: each one's latest copied a day later), as a real sync does.
 *
 * Only the fees and futures marts and what they read are built (the spot cost-method models would
 * only add time). The load average is printed beside each build: the machine is shared.
 */
import { loadavg } from 'node:os';
import path from 'node:path';
import { buildModels, type ModelResult } from '../src/models/build.ts';
import { DEFAULT_MODEL_SETTINGS } from '../src/models/settings.ts';
import { Database } from '../src/store/database.ts';
import { recordRawChange } from '../src/store/raw-store.ts';
import { BENCH_DATA_DIR, cachedBuildData, copyBuildData, type BuildDataSpec } from './build-data.ts';
import { appendNightlyDay, NIGHTLY_DAY_START_MS } from './nightly-day.ts';

const SELECT = ['+marts.fees_daily', '+marts.fees_monthly', '+marts.futures_pnl_monthly'];
const MODELS = ['intermediate.int_futures_fill_days', 'intermediate.int_fees_legs', 'intermediate.int_fees_periods', 'marts.fees_daily', 'marts.fees_monthly', 'marts.futures_pnl_daily', 'marts.futures_pnl_monthly'];

async function build(db: Database, label: string, fullRefresh = false): Promise<ModelResult[]> {
  const load = loadavg()[0]!;
  const started = performance.now();
  const results = await buildModels(db, DEFAULT_MODEL_SETTINGS, { select: SELECT, fullRefresh });
  const failed = results.filter((result) => result.status !== 'ok');
  if (failed.length > 0) throw new Error(failed.map((result) => `${result.id}: ${result.message}`).join('\n'));
  console.log(`${label}: ${((performance.now() - started) / 1000).toFixed(1)} s (load ${load.toFixed(1)})`);
  return results;
}

/** The snapshot streams a sync takes every run: each account's latest snapshot, taken again at the new day's end. */
async function appendSnapshots(db: Database): Promise<void> {
  for (const table of ['futures_contracts', 'futures_accounts', 'currencies']) {
    const rows = await db.run(`
      insert into raw.${table}
      select _account, _partition, $1::timestamptz, _seq, _record, 'bench-nightly', now()
      from raw.${table}
      where (_account, _snapshot_at) in (select (_account, max(_snapshot_at)) from raw.${table} group by _account)
    `, [new Date(NIGHTLY_DAY_START_MS + 86_400_000 - 1).toISOString()]);
    for (const { account } of await db.all<{ account: string }>(`select distinct _account as account from raw.${table} where _run_id = 'bench-nightly'`)) {
      await recordRawChange(db, { account, table, kind: 'snapshot', minEventMs: NIGHTLY_DAY_START_MS, maxEventMs: NIGHTLY_DAY_START_MS, rows, runId: 'bench-nightly' });
    }
  }
}

const withSnapshots = process.argv.includes('--snapshots');
const spotFills = Number(process.argv.slice(2).find((argument) => !argument.startsWith('--')) ?? 1_000_000);
const spec: BuildDataSpec = { spotFills, futuresFills: 1_000_000, fundingBills: 100_000, seed: 1 };
const data = await cachedBuildData(spec);
const work = path.join(BENCH_DATA_DIR, `run-nightly-fees-futures-${spotFills}.duckdb`);
copyBuildData(data.path, work);
const db = await Database.open(work);
try {
  await build(db, 'first build (whole)');
  const added = await appendNightlyDay(db);
  if (withSnapshots) await appendSnapshots(db);
  console.log(`appended one day: ${added.spotFills} spot and ${added.futuresFills} futures fills${withSnapshots ? ', and a snapshot of each snapshot stream' : ''}`);
  const nightly = await build(db, 'nightly build');
  for (const model of MODELS) await db.run(`CREATE OR REPLACE TABLE main.nightly_${model.split('.')[1]} AS SELECT * FROM ${model}`);
  const whole = await build(db, 'the same, rebuilt whole', true);
  console.log('\nmodel                                  nightly how      nightly ms   whole ms        rows  equal');
  for (const result of nightly) {
    if (result.materialization === 'macro') continue;
    const full = whole.find((candidate) => candidate.id === result.id)!;
    let equal = '';
    if (MODELS.includes(result.id)) {
      const copy = `main.nightly_${result.id.split('.')[1]}`;
      const [row] = await db.all<{ n: string }>(`SELECT (SELECT count(*) FROM (SELECT * FROM ${copy} EXCEPT ALL SELECT * FROM ${result.id})) + (SELECT count(*) FROM (SELECT * FROM ${result.id} EXCEPT ALL SELECT * FROM ${copy})) + abs((SELECT count(*) FROM ${copy}) - (SELECT count(*) FROM ${result.id})) AS n`);
      equal = row!.n === '0' ? 'yes' : `NO (${row!.n})`;
    }
    console.log(`${result.id.padEnd(38)} ${(result.how ?? '').padEnd(12)} ${result.ms.toFixed(0).padStart(10)} ${full.ms.toFixed(0).padStart(10)} ${String(result.rows ?? '').padStart(11)}  ${equal}`);
  }
} finally {
  db.close();
}
