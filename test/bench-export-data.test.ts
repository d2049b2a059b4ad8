import { mkdtempSync, rmSync } from 'node:fs';
import { STREAMS } from '../pipelines/index.ts';
import { COIN_FORMATS } from '../reports/coin-formats.ts';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeBuildData } from '../bench/build-data.ts';
import { inspectWorkbook, writeExportData } from '../bench/export.ts';
import { pnlReport } from '../reports/pnl.ts';
import { parsePeriod } from '../src/export/period.ts';
import { writeReport } from '../src/export/write-report.ts';
import { buildModels } from '../src/models/build.ts';
import { DEFAULT_MODEL_SETTINGS } from '../src/models/settings.ts';
import { Database } from '../src/store/database.ts';
import { openModelDb } from './support/model-db.ts';

/**
 * The export benchmark's generator (bench/export.ts) writes what `exledger build` would: the
 * marts of the pnl report with the real models' column names and types, all lot rows in one
 * month, and a database `exledger report` reads as it is. Its workbook check counts the rows.
 */
const MARTS = ['spot_lot_matches', 'spot_realized_pnl_monthly', 'futures_pnl_monthly', 'needs_price'];
const ROWS = 3_000;
let generated: Database;
let outDir: string;

async function columnsOf(db: Database): Promise<Record<string, string[]>> {
  const rows = await db.all<{ table_name: string; column_name: string; data_type: string }>(
    `SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = 'marts' AND table_name IN (${MARTS.map((name) => `'${name}'`).join(', ')}) ORDER BY table_name, ordinal_position`,
  );
  const columns: Record<string, string[]> = {};
  for (const row of rows) (columns[row.table_name] ??= []).push(`${row.column_name} ${row.data_type}`);
  return columns;
}

beforeAll(async () => {
  generated = await Database.open(':memory:');
  await writeExportData(generated, { lotRows: ROWS, month: '2025-06' });
  outDir = mkdtempSync(path.join(tmpdir(), 'exledger-bench-export-test-'));
});
afterAll(() => {
  generated.close();
  rmSync(outDir, { recursive: true, force: true });
});

describe('bench export data', () => {
  it('has the columns and types of the marts a real build makes', async () => {
    const built = await openModelDb();
    try {
      await writeBuildData(built, { spotFills: 300, futuresFills: 300, fundingBills: 100 });
      await buildModels(built, DEFAULT_MODEL_SETTINGS);
      const real = await columnsOf(built);
      expect(Object.keys(real).sort()).toEqual([...MARTS].sort());
      expect(await columnsOf(generated)).toEqual(real);
    } finally {
      built.close();
    }
  });

  it('puts every lot row in the month, with the mart\'s nulls and 18-digit ids', async () => {
    const [shape] = await generated.all<Record<string, string>>(
      `SELECT count(*) AS n,
              count(DISTINCT sell_month) AS months, min(sell_date)::VARCHAR AS first_day, max(sell_date)::VARCHAR AS last_day,
              count(*) FILTER (WHERE length(sell_fill_id) <> 18 OR length(buy_fill_id) <> 18) AS odd_ids,
              count(*) FILTER (WHERE lot_source = 'unmatched' AND (cost IS NOT NULL OR realized_pnl IS NOT NULL OR buy_fill_id IS NOT NULL)) AS unmatched_with_cost,
              count(*) FILTER (WHERE lot_source = 'fill' AND (buy_at IS NULL OR buy_at >= sell_at)) AS buys_not_before,
              count(*) FILTER (WHERE lot_source <> 'unmatched' AND realized_pnl <> proceeds - cost) AS pnl_not_proceeds_less_cost,
              count(DISTINCT lot_source) AS sources, count(DISTINCT symbol) AS symbols, count(DISTINCT account) AS accounts
       FROM marts.spot_lot_matches`,
    );
    expect(shape).toEqual({
      n: String(ROWS),
      months: '1',
      first_day: '2025-06-01',
      last_day: '2025-06-30',
      odd_ids: '0',
      unmatched_with_cost: '0',
      buys_not_before: '0',
      pnl_not_proceeds_less_cost: '0',
      sources: '3',
      symbols: '5',
      accounts: '2',
    });
  });

  it('gives a workbook whose detail sheet and table hold every row, as the bench checks it', async () => {
    const result = await writeReport(generated, pnlReport, { streams: STREAMS, coinFormats: COIN_FORMATS, period: parsePeriod('2025-06'), outDir, now: new Date('2025-07-02T00:00:00Z') });
    const detail = result.sheets.find((sheet) => sheet.name === 'Spot lot detail')!;
    expect(detail.rows).toBe(ROWS);
    expect(result.warnings).toEqual([]);
    // Header in row 1, rows 2 to 3,001 (the table), the totals per quote coin below it; 15 columns (A to O).
    expect(await inspectWorkbook(result.file, 'Spot lot detail')).toMatchObject({ dataRows: ROWS, tableRows: ROWS, tableRef: 'A1:O3001' });
  });
});
