import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterEach, describe, expect, it } from 'vitest';
import { STREAMS } from '../pipelines/index.ts';
import { COIN_FORMATS } from '../reports/coin-formats.ts';
import { REPORTS } from '../reports/index.ts';
import type { ReportPeriod } from '../src/export/period.ts';
import { writeReport } from '../src/export/write-report.ts';
import { buildModels } from '../src/models/build.ts';
import { SQL_DIR } from '../src/models/project.ts';
import { DEFAULT_MODEL_SETTINGS } from '../src/models/settings.ts';
import type { Database } from '../src/store/database.ts';
import { openModelDb } from './support/model-db.ts';

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
    if (row.getCell(1).value === label) value = row.getCell(2).value;
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
    expect(paris.filter((result) => result.status !== 'ok').map((result) => result.id)).toEqual(['marts.fees_daily']);

    const builds = await db.all<{ model: string; time_zone: string }>("SELECT model, time_zone FROM settings.model_builds WHERE model IN ('marts.fees_daily', 'marts.fees_monthly', 'marts.spot_realized_pnl_monthly') ORDER BY model");
    expect(builds).toEqual([
      { model: 'marts.fees_daily', time_zone: 'UTC' },
      { model: 'marts.fees_monthly', time_zone: 'Europe/Paris' },
      { model: 'marts.spot_realized_pnl_monthly', time_zone: 'Europe/Paris' },
    ]);

    const outDir = folder();
    const options = { streams: STREAMS, coinFormats: COIN_FORMATS, period: PERIOD, outDir };
    await expect(writeReport(db, report('fees'), options)).rejects.toThrow(
      /^the marts of report fees were built with different settings \(marts\.fees_daily: time zone UTC, cost methods fifo, opening positions none; marts\.fees_monthly: time zone Europe\/Paris, cost methods fifo, average, opening positions none\): a build did not finish$/,
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
