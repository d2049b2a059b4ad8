import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { STREAMS } from '../pipelines/index.ts';
import { COIN_FORMATS } from '../reports/coin-formats.ts';
import { REPORTS } from '../reports/index.ts';
import type { ReportPeriod } from '../src/export/period.ts';
import { writeReport } from '../src/export/write-report.ts';
import { buildModels } from '../src/models/build.ts';
import { SQL_DIR } from '../src/models/project.ts';
import { DEFAULT_MODEL_SETTINGS } from '../src/models/settings.ts';
import { Database } from '../src/store/database.ts';
import { runCli, startCli } from './support/cli-process.ts';
import { queryDatabase } from './support/sync-harness.ts';
import { openModelDb } from './support/model-db.ts';
import { startSandboxProcess, type SandboxProcess } from './support/sandbox-process.ts';

/**
 * Settings commit with the models built with them (issue 12): a build whose settings changed and
 * that did not reach every model leaves each table described by the settings that built it, and a
 * workbook never says a time zone its marts were not built in.
 */

const PERIOD: ReportPeriod = { label: '2026-10', from: '2026-10-01', to: '2026-10-31' };
const report = (name: string) => REPORTS.find((candidate) => candidate.name === name)!;
let db: Database | undefined;
const folders: string[] = [];
afterEach(() => {
  db?.close();
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function folder(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'exledger-settings-'));
  folders.push(dir);
  return dir;
}

/** What the workbook's Summary says for `label`. */
async function summaryValue(file: string, label: string): Promise<unknown> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.readFile(file);
  let value: unknown;
  workbook.getWorksheet('Summary')!.eachRow((row) => {
    if (row.getCell(1).text === label) value = row.getCell(2).value;
  });
  return value;
}

describe('settings and the models built with them', () => {
  it('a build in Europe/Paris that fails at fees_daily: the fees workbook is refused naming both settings, the pnl workbook says Europe/Paris, settings.model_builds tells each table apart', async () => {
    db = await openModelDb();
    const utc = await buildModels(db, DEFAULT_MODEL_SETTINGS);
    expect(utc.filter((result) => result.status !== 'ok')).toEqual([]);

    // The same project with fees_daily broken: everything before it, and beside it, is rebuilt in Paris.
    const broken = folder();
    cpSync(SQL_DIR, broken, { recursive: true });
    writeFileSync(path.join(broken, 'marts', 'fees_daily.sql'), "select error('broken on purpose') as fee_date");
    const paris = await buildModels(db, { ...DEFAULT_MODEL_SETTINGS, reportingTimeZone: 'Europe/Paris', costMethods: ['fifo', 'average'] }, { sqlDir: broken });
    // The adjustments to closed periods read fees_daily, and the journal as posted reads them: skipped, they keep their UTC tables too.
    expect(paris.filter((result) => result.status !== 'ok').map((result) => `${result.id} ${result.status}`)).toEqual([
      'marts.fees_daily failed',
      'marts.period_adjustments skipped',
      'marts.journal_entries skipped',
    ]);

    const builds = await db.all<{ model: string; time_zone: string }>("SELECT model, time_zone FROM settings.model_builds WHERE model IN ('marts.fees_daily', 'marts.fees_monthly', 'marts.spot_realized_pnl_monthly') ORDER BY model");
    expect(builds).toEqual([
      { model: 'marts.fees_daily', time_zone: 'UTC' },
      { model: 'marts.fees_monthly', time_zone: 'Europe/Paris' },
      { model: 'marts.spot_realized_pnl_monthly', time_zone: 'Europe/Paris' },
    ]);

    const outDir = folder();
    const options = { streams: STREAMS, coinFormats: COIN_FORMATS, period: PERIOD, outDir };
    await expect(writeReport(db, report('fees'), options)).rejects.toThrow(
      /^the marts of report fees were built with different settings \(marts\.fees_daily: time zone UTC, cost methods fifo, opening positions none; marts\.fees_monthly: time zone Europe\/Paris, cost methods fifo, average, opening positions none; marts\.needs_price: time zone Europe\/Paris, cost methods fifo, average, opening positions none\): a build did not finish$/,
    );
    const pnl = await writeReport(db, report('pnl'), options);
    expect(await summaryValue(pnl.file, 'Reporting time zone')).toBe('Europe/Paris');
    expect(await summaryValue(pnl.file, 'Spot cost methods')).toBe('fifo, average');

    // The next complete build makes them one again.
    const again = await buildModels(db, { ...DEFAULT_MODEL_SETTINGS, reportingTimeZone: 'Europe/Paris', costMethods: ['fifo', 'average'] });
    expect(again.filter((result) => result.status !== 'ok')).toEqual([]);
    const fees = await writeReport(db, report('fees'), options);
    expect(await summaryValue(fees.file, 'Reporting time zone')).toBe('Europe/Paris');
  });
});

describe('a build killed after the settings changed (exledger build, SIGKILL, in its own process)', () => {
  let exchange: SandboxProcess;
  let dir: string;
  const cli = (args: string[]) => runCli(args, { cwd: dir, env: exchange.settings });

  beforeAll(async () => {
    exchange = await startSandboxProcess(['--end', '2026-11-01']);
    dir = mkdtempSync(path.join(tmpdir(), 'exledger-settings-kill-'));
    writeFileSync(
      path.join(dir, 'exledger.config.json'),
      JSON.stringify({ db: './ledger.duckdb', retry: { retries: 8, minTimeoutMs: 50, maxTimeoutMs: 500 }, sync: { startDate: '2026-09-01' } }),
    );
  });
  afterAll(async () => {
    expect(await exchange?.stop()).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  });

  /** The settings each mart of `name` was built with. */
  async function martSettings(name: string): Promise<{ model: string; time_zone: string }[]> {
    const spec = report(name);
    const marts = [...new Set([...spec.sheets.map((sheet) => sheet.mart), spec.chart.mart])];
    return queryDatabase(path.join(dir, 'ledger.duckdb'), `SELECT model, time_zone FROM settings.model_builds WHERE model IN (${marts.map((mart) => `'${mart}'`).join(', ')}) ORDER BY model`);
  }

  /** Every report: refused naming both settings where its marts differ, else labelled with theirs. */
  async function expectTruthfulWorkbooks(out: string): Promise<string[]> {
    const labels: string[] = [];
    for (const name of ['pnl', 'fees', 'rebates', 'balances']) {
      const zones = [...new Set((await martSettings(name)).map((row) => row.time_zone))];
      const result = await cli(['report', name, '--period', '2026-10', '--out', out]);
      const file = path.join(out, `${name}-2026-10.xlsx`);
      if (zones.length > 1) {
        expect(result.code, result.stderr).toBe(1);
        expect(result.stderr).toMatch(new RegExp(`^error: the marts of report ${name} were built with different settings \\(`));
        expect(result.stderr).toContain('time zone UTC');
        expect(result.stderr).toContain('time zone Europe/Paris');
        expect(existsSync(file)).toBe(false);
        labels.push(`${name}: refused`);
      } else {
        expect(result.code, result.stderr).toBe(0);
        expect(await summaryValue(file, 'Reporting time zone')).toBe(zones[0]);
        labels.push(`${name}: ${zones[0]}`);
      }
    }
    return labels;
  }

  it('each workbook says the zone its marts were built in, or is refused where they differ; the next build makes them one', async () => {
    expect((await cli(['sync', '--streams', 'currencies,spot_assets,funding_bills,spot_fills'])).code).toBe(0);
    expect((await cli(['build'])).code).toBe(0);

    // Rebuilt in Paris, killed outright as its first mart commits.
    const build = startCli(['build', '--time-zone', 'Europe/Paris'], { cwd: dir, env: exchange.settings });
    await new Promise<void>((resolve, reject) => {
      let seen = '';
      build.child.stdout!.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        if (/marts\.\w+/.test(seen)) {
          build.child.kill('SIGKILL');
          resolve();
        }
      });
      void build.done.then((result) => reject(new Error(`the build ended before a mart was built: ${result.stdout}${result.stderr}`)));
    });
    expect((await build.done).signal).toBe('SIGKILL');

    const killed = await expectTruthfulWorkbooks(folder());
    // The kill left both: some marts rebuilt in Paris, some still UTC.
    const zones = new Set((await Promise.all(['pnl', 'fees', 'rebates', 'balances'].map(martSettings))).flat().map((row) => row.time_zone));
    expect([...zones].sort()).toEqual(['Europe/Paris', 'UTC']);
    expect(killed.length).toBe(4);

    expect((await cli(['build', '--time-zone', 'Europe/Paris'])).code).toBe(0);
    expect(await expectTruthfulWorkbooks(folder())).toEqual(['pnl: Europe/Paris', 'fees: Europe/Paris', 'rebates: Europe/Paris', 'balances: Europe/Paris']);
  }, 120_000);
});
