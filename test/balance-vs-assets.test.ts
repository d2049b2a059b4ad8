import { mkdtempSync, rmSync } from 'node:fs';
import { STREAMS } from '../pipelines/index.ts';
import { COIN_FORMATS } from '../reports/coin-formats.ts';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPORTS } from '../reports/index.ts';
import type { ReportSpec } from '../src/export/report-definition.ts';
import { writeReport } from '../src/export/write-report.ts';
import { checkModels, type TestResult } from '../src/models/check.ts';
import type { Database } from '../src/store/database.ts';
import { buildAll, insertHistory, insertSnapshot, openModelDb, queryRows } from './support/model-db.ts';

/**
 * Funding bills and spot assets are separate accounts' data (exchange-api.md 2.4, 2.5): where
 * they differ, nothing is wrong. `exledger check` must pass (a check that compares them would
 * cry wolf every night), while marts.balance_vs_assets and the balances workbook show the
 * differences as a reconciliation.
 */

const WARNING_FILL = 'FFFFC7CE';
const FIGURE = 'Coins whose bills differ from the assets (reconciliation)';

/** A funding bill as the exchange sends it (deltaAmount signed, afterAmount the balance after). */
function bill(billId: string, iso: string, coinId: number, coinName: string, bizType: string, deltaAmount: string, afterAmount: string) {
  return { billId, coinId, coinName, bizType, deltaAmount, afterAmount, fees: '0', cTime: String(Date.parse(iso)) };
}

/** An asset entry (exchange-api.md 2.4). */
function asset(coinId: number, coinName: string, available: string, frozen: string, equity: string) {
  return { coinId, coinName, available, frozen, equity };
}

/** A DECIMAL string without its padding: '600.000000000000000000' → '600'. */
function trimDecimal(value: string | null): string | null {
  return value !== null && /^-?\d+\.\d+$/.test(value) ? value.replace(/\.?0+$/, '') : value;
}

describe('bills and assets that legitimately differ', () => {
  let db: Database;
  let outDir: string;
  let checks: TestResult[];

  beforeAll(async () => {
    db = await openModelDb();
    // Funding account (times UTC):
    //   USDT 1  2026-01-02  deposit       +1000  after 1000
    //   BTC  2  2026-01-03  deposit       +0.5   after 0.5
    //   USDT 3  2026-01-05  transfer_out  -400   after 600   moved to the spot account
    await insertHistory(db, 'funding_bills', [
      bill('1', '2026-01-02T00:00:00Z', 2, 'USDT', 'deposit', '1000', '1000'),
      bill('2', '2026-01-03T00:00:00Z', 1, 'BTC', 'deposit', '0.5', '0.5'),
      bill('3', '2026-01-05T00:00:00Z', 2, 'USDT', 'transfer_out', '-400', '600'),
    ]);
    // Spot account, 2026-01-20: the 400 USDT transferred (350 available + 50 in an open order),
    // BTC 0.5 as in the bills, and 2 ETH that never went through the funding account.
    await insertSnapshot(db, 'spot_assets', '2026-01-20T00:00:00Z', [asset(1, 'BTC', '0.5', '0', '0.5'), asset(2, 'USDT', '350', '50', '400'), asset(3, 'ETH', '2', '0', '2')]);
    await buildAll(db);
    checks = await checkModels(db);
    outDir = mkdtempSync(path.join(tmpdir(), 'exledger-vs-assets-'));
  });

  afterAll(() => {
    db?.close();
    rmSync(outDir, { recursive: true, force: true });
  });

  it('passes every check of exledger check', () => {
    expect(checks.filter((result) => result.status !== 'pass')).toEqual([]);
    expect(checks.map((result) => result.id)).toContain('marts/balance_vs_assets_unique');
    expect(checks.map((result) => result.id)).toContain('marts/balance_chain_unbroken');
  });

  it('shows the differences in marts.balance_vs_assets', async () => {
    const rows = await queryRows(db, 'SELECT coin_name, found_in, bill_balance, assets_equity, difference, is_different::VARCHAR AS is_different FROM marts.balance_vs_assets ORDER BY coin_name');
    expect(rows.map((row) => Object.fromEntries(Object.entries(row).map(([key, value]) => [key, trimDecimal(value)])))).toEqual([
      // 0.5 - 0.5 = 0.
      { coin_name: 'BTC', found_in: 'both', bill_balance: '0.5', assets_equity: '0.5', difference: '0', is_different: 'false' },
      // No bill: 2 - 0 = 2.
      { coin_name: 'ETH', found_in: 'assets_only', bill_balance: null, assets_equity: '2', difference: '2', is_different: 'true' },
      // 350 + 50 = 400 in the spot account; 600 left in the funding account: 400 - 600 = -200.
      { coin_name: 'USDT', found_in: 'both', bill_balance: '600', assets_equity: '400', difference: '-200', is_different: 'true' },
    ]);
  });

  it('highlights the differing coins in the balances workbook and counts them on the Summary as a reconciliation', async () => {
    const result = await writeReport(db, REPORTS.find((report) => report.name === 'balances')!, { streams: STREAMS, coinFormats: COIN_FORMATS, period: { from: '2026-01-01', to: '2026-01-31', label: '2026-01' }, outDir });
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(result.file);

    const sheet = workbook.getWorksheet('Bills vs assets')!;
    const shown = [2, 3, 4].map((number) => {
      const row = sheet.getRow(number);
      return { coin: row.getCell(2).value, bills: row.getCell(5).value, assets: row.getCell(8).value, difference: row.getCell(9).value, fill: (row.getCell(1).fill as ExcelJS.FillPattern | undefined)?.fgColor?.argb };
    });
    expect(shown).toEqual([
      { coin: 'BTC', bills: 0.5, assets: 0.5, difference: 0, fill: undefined },
      { coin: 'ETH', bills: null, assets: 2, difference: 2, fill: WARNING_FILL },
      { coin: 'USDT', bills: 600, assets: 400, difference: -200, fill: WARNING_FILL },
    ]);

    const summary = workbook.getWorksheet('Summary')!;
    const lines: ExcelJS.CellValue[][] = [];
    summary.eachRow((row) => lines.push([1, 2, 3, 4].map((column) => (column === 1 ? row.getCell(1).text : row.getCell(column).value))));
    // The figure: ETH and USDT differ, BTC does not: 2 coins (one total: no `by`).
    expect(lines.filter((line) => line[0] === FIGURE)).toEqual([[FIGURE, null, 2, '2']]);
    const text = lines.flat().map(String).join('\n');
    expect(text).toContain('Bills vs assets is a reconciliation, not a check: the funding bills and the spot assets snapshot are separate accounts');
    expect(text).toContain('a highlighted difference is to explain, not an error');
  });

  it('refuses a figure whose where is not a BOOLEAN column of the mart, naming it', async () => {
    const balances = REPORTS.find((report) => report.name === 'balances')!;
    const broken: ReportSpec = { ...balances, summary: [{ label: 'Differences', sheet: 'Bills vs assets', where: 'difference' }] };
    await expect(writeReport(db, broken, { streams: STREAMS, coinFormats: COIN_FORMATS, period: { from: '2026-01-01', to: '2026-01-31', label: '2026-01' }, outDir })).rejects.toThrow(
      /reports\/balances\.ts.*"difference" \(where of the figure "Differences"\) is not a BOOLEAN column of marts\.balance_vs_assets/,
    );
  });
});
