import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { COIN_FORMATS } from '../reports/coin-formats.ts';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { STREAMS } from '../pipelines/index.ts';
import { REPORTS } from '../reports/index.ts';
import { runCli } from './support/cli-process.ts';
import { DecimalSum, amountFormat } from '../src/export/cell-formats.ts';
import { lastClosedPeriod, parsePeriod, parseRange } from '../src/export/period.ts';
import { validateReports, type ReportSpec } from '../src/export/report-definition.ts';

const STREAM_NAMES = STREAMS.map((stream) => stream.name);

describe('report declarations', () => {
  it('the six reports are valid', () => {
    expect(() => validateReports(REPORTS, STREAM_NAMES)).not.toThrow();
    expect(REPORTS.map((report) => report.name)).toEqual(['pnl', 'fees', 'rebates', 'balances', 'journal', 'holdings']);
  });

  it('a broken declaration is refused naming the report and the field', () => {
    const pnl = REPORTS[0]!;
    const broken = (change: (report: ReportSpec) => ReportSpec) => () => validateReports([change(structuredClone(pnl))], STREAM_NAMES);
    expect(broken((report) => ({ ...report, sheets: [{ ...report.sheets[0]!, name: 'Bad/name' }] }))).toThrow(/reports\/pnl\.ts: sheets\.0\.name/);
    expect(broken((report) => ({ ...report, streams: ['spot_fils'] }))).toThrow(/reports\/pnl\.ts: streams.*"spot_fils" is not a stream/);
    expect(broken((report) => ({ ...report, summary: [{ label: 'x', sheet: 'Nope' }] }))).toThrow(/summary\.0\.sheet.*"Nope" is not a sheet/);
    // The writer splits every figure per account (and consolidates): a declaration does not.
    expect(broken((report) => ({ ...report, summary: [{ label: 'x', sheet: 'Spot PnL by month', sum: 'realized_pnl', by: ['account', 'quote_coin'], coinColumn: 'quote_coin' }] }))).toThrow(
      /summary\.0\.by.*leave "account" out/,
    );
    expect(
      broken((report) => ({ ...report, sheets: [{ ...report.sheets[0]!, columns: [{ column: 'a', header: 'A', format: 'text' }, { column: 'b', header: 'a', format: 'text' }] }] })),
    ).toThrow(/"a" is used twice/);
    expect(broken((report) => ({ ...report, sheets: [{ ...report.sheets[0]!, columns: [{ column: 'a', header: 'Sum [x]', format: 'amount' }] }] }))).toThrow(/columns\.0\.header/);
  });

  it('totals are kept per coin and cost method over blocks of rows: refused otherwise', () => {
    const pnl = REPORTS[0]!;
    const spot = pnl.sheets[0]!;
    const broken = (sheet: typeof spot) => () => validateReports([{ ...pnl, sheets: [sheet] , summary: [] }], STREAM_NAMES);
    // Spot PnL totals per cost method and quote coin: rows ordered by symbol first would interleave the coins.
    expect(broken({ ...spot, orderBy: ['account', 'cost_method', 'symbol', 'trade_month'] })).toThrow(/sheets\.0\.orderBy.*starts with the columns totals are kept per \(cost_method, quote_coin\)/);
    // A totalled base-coin quantity beside quote-coin amounts: two coins in one total row.
    const inventory = pnl.sheets.find((sheet) => sheet.name === 'Spot inventory by month')!;
    expect(broken({ ...inventory, columns: inventory.columns.map((column) => (column.column === 'quantity_sold' ? { ...column, total: true } : column)) })).toThrow(/totalled amounts name different coin columns \(quote_coin, base_coin\)/);
    expect(broken({ ...spot, columns: spot.columns.map((column) => (column.column === 'symbol' ? { ...column, nullMeans: 'unknown' } : column)) })).toThrow(/columns\.2\.nullMeans/);
    expect(broken({ ...spot, columns: [{ column: 'quote_coin', header: 'Quote coin', format: 'text' }, ...spot.columns.filter((column) => column.column !== 'quote_coin')] })).toThrow(/columns\.0.*first column holds the totals rows' label/);
  });

  it('a roll-up keeps its lines per the coin of each amount it sums, per its totals\' keys, and per what a figure on it reads: refused otherwise', () => {
    const pnl = REPORTS[0]!;
    const lots = pnl.sheets.find((sheet) => sheet.name === 'Spot lot detail')!;
    const rollUp = lots.rollUp!;
    const broken = (sheet: typeof lots, summary: ReportSpec['summary'] = []) => () => validateReports([{ ...pnl, sheets: [sheet], summary }], STREAM_NAMES);
    expect(broken(lots)).not.toThrow();
    // Without the quote coin, a line would add USDT and BTC costs.
    expect(broken({ ...lots, rollUp: { ...rollUp, by: rollUp.by.filter((key) => key !== 'quote_coin') } })).toThrow(/sheets\.0\.rollUp\.by: has not "quote_coin", the coin of the summed "cost"/);
    expect(broken({ ...lots, rollUp: { ...rollUp, by: rollUp.by.filter((key) => key !== 'cost_method') } })).toThrow(/sheets\.0\.rollUp\.by: has not "cost_method", a column the sheet's totals are kept per/);
    expect(broken({ ...lots, rollUp: { ...rollUp, sum: ['symbol'] } })).toThrow(/sheets\.0\.rollUp\.sum\.0: "symbol" is not an amount or count column/);
    expect(broken({ ...lots, rollUp: { ...rollUp, by: [...rollUp.by, 'sel_date'] } })).toThrow(/rollUp\.by\.7: "sel_date" is not a column of the sheet/);
    // A figure on a rolled-up sheet reads its lines: by what they are kept per.
    expect(broken(lots, [{ label: 'Proceeds', sheet: lots.name, sum: 'proceeds', by: ['quote_coin'], coinColumn: 'quote_coin' }])).not.toThrow();
    expect(broken(lots, [{ label: 'Proceeds', sheet: lots.name, sum: 'proceeds', by: ['buy_fill_id'] }])).toThrow(/summary\.0: "buy_fill_id" is not one of the rollUp\.by columns of the sheet "Spot lot detail"/);
  });
});

describe('periods', () => {
  it('parses months, quarters, years and day ranges (both ends included)', () => {
    expect(parsePeriod('2026-10')).toEqual({ from: '2026-10-01', to: '2026-10-31', label: '2026-10' });
    expect(parsePeriod('2024-02')).toEqual({ from: '2024-02-01', to: '2024-02-29', label: '2024-02' });
    expect(parsePeriod('2026-Q3')).toEqual({ from: '2026-07-01', to: '2026-09-30', label: '2026-Q3' });
    expect(parsePeriod('2026')).toEqual({ from: '2026-01-01', to: '2026-12-31', label: '2026' });
    expect(parseRange('2026-10-05', '2026-11-04')).toEqual({ from: '2026-10-05', to: '2026-11-04', label: '2026-10-05_2026-11-04' });
  });

  it('refuses what is not a period, naming the flag', () => {
    expect(() => parsePeriod('2026-13')).toThrow(/--period.*"2026-13" is not a period/);
    expect(() => parsePeriod('Q3')).toThrow(/--period/);
    expect(() => parseRange('2026-02-30', '2026-03-01')).toThrow(/--from.*"2026-02-30" is not a date/);
    expect(() => parseRange('2026-03-02', '2026-03-01')).toThrow(/--to.*before --from/);
  });

  it('the last closed period is that of the reporting zone\'s today', () => {
    // 2026-11-01 02:00 UTC is still October 31 in New York: October has not closed there.
    const now = new Date('2026-11-01T02:00:00Z');
    expect(lastClosedPeriod('month', 'UTC', now).label).toBe('2026-10');
    expect(lastClosedPeriod('month', 'America/New_York', now).label).toBe('2026-09');
    expect(lastClosedPeriod('quarter', 'UTC', now)).toEqual({ from: '2026-07-01', to: '2026-09-30', label: '2026-Q3' });
    expect(lastClosedPeriod('quarter', 'UTC', new Date('2026-01-15T00:00:00Z')).label).toBe('2025-Q4');
    expect(lastClosedPeriod('year', 'UTC', now)).toEqual({ from: '2025-01-01', to: '2025-12-31', label: '2025' });
    expect(lastClosedPeriod('month', 'UTC', new Date('2026-01-01T00:00:00Z')).label).toBe('2025-12');
  });
});

describe('cell formats', () => {
  it('sums decimal strings exactly, past what a double holds', () => {
    const sum = new DecimalSum();
    for (const value of ['0.1', '0.2', '-0.3', '123456789012345678.123456789012345678', '1']) sum.add(value);
    // 0.1 + 0.2 - 0.3 = 0 exactly; + 123456789012345678.123456789012345678 + 1.
    expect(sum.toString()).toBe('123456789012345679.123456789012345678');
    expect(() => sum.add('1e5')).toThrow(/not a decimal number/);
  });

  it('shows stablecoins to the cent and other coins to the satoshi, always that many decimals, negatives in red', () => {
    expect(amountFormat('USDT', COIN_FORMATS)).toBe('#,##0.00;[Red]-#,##0.00');
    expect(amountFormat('BTC', COIN_FORMATS)).toBe('#,##0.00000000;[Red]-#,##0.00000000');
    expect(amountFormat('JPY', COIN_FORMATS)).toBe('#,##0;[Red]-#,##0');
  });
});

describe('exledger report: bad input', () => {
  it('names the flag or report to fix, exit 2, and writes nothing', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'exledger-report-flags-'));
    try {
      const out = path.join(dir, 'out');
      const cases: [string[], RegExp][] = [
        [['report', 'pnl', 'fess', '--period', '2026-10'], /^error: report: "fess" is not a report; the reports are pnl, fees, rebates, balances, journal, holdings \(or all\); did you mean fees\?$/],
        [['report', 'pnl', '--period', '2026-10', '--from', '2026-10-01', '--to', '2026-10-31'], /^error: --period: give either --period or --from and --to, not both$/],
        [['report', 'pnl'], /^error: --period: say which period/],
        [['report', 'pnl', '--from', '2026-10-01', '--to', '2026-09-30'], /^error: --to: 2026-09-30 is before --from 2026-10-01$/],
        [['report', 'pnl', '--period', '2026-10', '--db', path.join(dir, 'none.duckdb')], /^error: .*none\.duckdb: no database here$/],
      ];
      // One child process per case, as a scheduler runs it; they are independent, so side by side.
      const results = await Promise.all(cases.map(([args]) => runCli([...args, '--out', out], { cwd: dir })));
      cases.forEach(([args, message], index) => {
        expect(results[index]!.code, args.join(' ')).toBe(2);
        expect(results[index]!.stdout, args.join(' ')).toBe('');
        expect(results[index]!.stderr.split('\n')[0], args.join(' ')).toMatch(message);
      });
      expect(existsSync(out)).toBe(false);
      expect(existsSync(path.join(dir, 'none.duckdb'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
