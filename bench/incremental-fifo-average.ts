/**
 * Whole rebuild versus incremental step of intermediate.int_spot_fifo_segments and
 * int_spot_average_cost on a build benchmark's history (bench/build-data.ts: 85% of the spot fills
 * on BTCUSDT_SPBL) plus one more day (bench/nightly-day.ts), as a nightly build would run them:
 * int_spot_trades rebuilt, temp.main.model_pending as it leaves it (per account and symbol of the
 * new day, from_at = its first fill), each step in one transaction. Then the tables are checked
 * equal to a whole rebuild, and the times printed with the load average. int_spot_average_cost is
 * computed in TypeScript: its step is the program's incremental().
 *
 *   node --experimental-strip-types bench/incremental-fifo-average.ts [spotFills]   (default 1000000)
 */
import { readFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { ensureRawTables } from '../src/extract/sync.ts';
import { STREAMS } from '../pipelines/index.ts';
import { buildModels } from '../src/models/build.ts';
import { loadProject, SQL_DIR } from '../src/models/project.ts';
import { DEFAULT_MODEL_SETTINGS, type ModelSettings } from '../src/models/settings.ts';
import { Database } from '../src/store/database.ts';
import { cachedBuildData, copyBuildData, removeDatabaseFiles } from './build-data.ts';
import { appendNightlyDay } from './nightly-day.ts';

const MODELS = ['intermediate.int_spot_fifo_segments', 'intermediate.int_spot_average_cost'] as const;
const spotFills = Number(process.argv[2] ?? 1_000_000);
const settings: ModelSettings = { ...DEFAULT_MODEL_SETTINGS, costMethods: ['fifo', 'average'] };

const load = () => loadavg().map((value) => value.toFixed(2)).join(' ');
const seconds = (ms: number) => (ms / 1000).toFixed(2);
/** Wall time and the process's CPU time (DuckDB's threads included: steadier than wall time on a loaded machine). */
const timed = (wallMs: number, cpu: NodeJS.CpuUsage) => `${seconds(wallMs)} s (CPU ${seconds((cpu.user + cpu.system) / 1000)} s)`;

/** Builds the selected models; per model its wall time and CPU time, as text. */
async function build(db: Database, select: readonly string[]): Promise<Map<string, string>> {
  const times = new Map<string, string>();
  let cpu = process.cpuUsage();
  const results = await buildModels(db, settings, {
    select,
    onResult: (result) => {
      times.set(result.id, timed(result.ms, process.cpuUsage(cpu)));
      cpu = process.cpuUsage();
    },
  });
  const broken = results.filter((result) => result.status !== 'ok');
  if (broken.length > 0) throw new Error(broken.map((result) => `${result.id}: ${result.message}`).join('\n'));
  return times;
}

function stepStatements(model: string): string[] {
  const [layer, name] = model.split('.') as [string, string];
  return readFileSync(path.join(SQL_DIR, layer, `${name}.incremental.sql`), 'utf8')
    .split(/;\s*$/m)
    .map((statement) => statement.trim())
    .filter((statement) => statement.replace(/--[^\n]*/g, '').trim() !== '');
}

async function main(): Promise<void> {
  const data = await cachedBuildData({ spotFills, futuresFills: 1_000_000, fundingBills: 100_000 });
  const file = path.join(tmpdir(), `exledger-bench-fifoavg-${process.pid}.duckdb`);
  copyBuildData(data.path, file);
  const db = await Database.open(file);
  try {
    await ensureRawTables(db, STREAMS);
    const rows: [string, string][] = [];
    const first = await build(db, MODELS.map((model) => `+${model}`));
    const [partition] = await db.all<{ symbol: string; n: string }>('select symbol, count(*) as n from intermediate.int_spot_trades group by symbol order by n desc limit 1');
    rows.push(['history: fills of the biggest (pool, symbol)', `${partition!.n} (${partition!.symbol})`]);
    for (const model of MODELS) rows.push([`whole build, history: ${model}`, first.get(model)!]);

    const added = await appendNightlyDay(db);
    rows.push(['new day: spot fills', String(added.spotFills)]);
    await build(db, ['+intermediate.int_spot_trades']);
    // What int_spot_trades leaves for its children: per pool (account) and symbol, the day's first fill.
    await db.run(`create or replace temp table model_pending as
      select account, symbol, min(c_time_at) as from_at
      from staging.spot_fills where _run_id = 'bench-nightly'
      group by account, symbol`);
    for (const model of MODELS) {
      const started = performance.now();
      const cpu = process.cpuUsage();
      const statements: [string, string][] = [];
      const program = loadProject().models.find((candidate) => candidate.id === model)?.program;
      await db.transaction(async () => {
        if (program?.incremental !== undefined) await program.incremental(db);
        else for (const statement of stepStatements(model)) {
          const statementStarted = performance.now();
          const statementCpu = process.cpuUsage();
          await db.run(statement);
          const words = statement.replace(/--[^\n]*/g, '').trim().split(/\s+/);
          statements.push([`  ${words.slice(0, words[0] === 'delete' ? 3 : 5).join(' ')}`, timed(performance.now() - statementStarted, process.cpuUsage(statementCpu))]);
        }
      });
      rows.push([`incremental step, + 1 day: ${model}`, timed(performance.now() - started, process.cpuUsage(cpu))], ...statements);
      await db.run(`create or replace temp table incremental_${model.split('.')[1]} as select * from ${model}`);
    }
    const whole = await build(db, [...MODELS]);
    for (const model of MODELS) {
      rows.push([`whole build, + 1 day: ${model}`, whole.get(model)!]);
      const [diff] = await db.all<{ a: string; b: string }>(
        `select (select count(*) from (select * from temp.main.incremental_${model.split('.')[1]} except all select * from ${model})) as a,
           (select count(*) from (select * from ${model} except all select * from temp.main.incremental_${model.split('.')[1]})) as b`,
      );
      rows.push([`rows differing, incremental vs whole: ${model}`, `${diff!.a} / ${diff!.b}`]);
    }
    rows.push(['load average (1, 5, 15 min)', load()]);
    const width = Math.max(...rows.map(([label]) => label.length));
    for (const [label, value] of rows) process.stdout.write(`${label.padEnd(width)}  ${value}\n`);
  } finally {
    db.close();
    removeDatabaseFiles(file);
  }
}

await main();
