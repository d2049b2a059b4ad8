import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { STREAMS } from '../pipelines/index.ts';
import { COIN_FORMATS } from '../reports/coin-formats.ts';
import { REPORTS } from '../reports/index.ts';
import { resolveConfig } from '../src/config/config.ts';
import { writeReport } from '../src/export/write-report.ts';
import { ConfigError } from '../src/errors.ts';
import { buildModels } from '../src/models/build.ts';
import { checkModels } from '../src/models/check.ts';
import { readPricesFile } from '../src/models/prices-file.ts';
import { DEFAULT_MODEL_SETTINGS } from '../src/models/settings.ts';
import type { Database } from '../src/store/database.ts';
import { runCli } from './support/cli-process.ts';
import { buildAll, insertHistory, openModelDb, queryRows } from './support/model-db.ts';
import { startSandboxProcess, type SandboxProcess } from './support/sandbox-process.ts';
import { queryDatabase } from './support/sync-harness.ts';

/**
 * Reporting currency (docs/workbooks.md "Reporting currency") on a hand-made ledger, reporting zone UTC, currency USD.
 * Prices file:
 *   2025-01-10            USDT 0.999  (a day's close)
 *   2025-01-20T08:00:00Z  USDT 0.997  (an instant: the day's last one wins)
 *   2025-01-20T15:00:00Z  USDT 0.998
 *   2025-01-20            BTC  50000 EUR (another currency: not used for USD)
 *   2025-01-10T20:00:00Z  USDT 0.5   (an instant on a day with a close line: the close wins)
 * Spot fills (account main):
 *   2025-01-10 buy  1 BTC for 30000 USDT, fee 0 BTC
 *   2025-01-10 buy  2 ETH for 6000 USDT, fee 0.002 ETH; buy 1 ETH for 3100 USDT, fee 0 ETH
 *   2025-01-20 sell 0.5 BTC for 20000 USDT, fee 20 USDT -> proceeds 19980, cost 15000, PnL 4980 USDT
 *   2025-01-25 sell 0.25 BTC for 11000 USDT, fee 11 USDT -> proceeds 10989, cost 7500, PnL 3489 USDT
 * Derived prices (no file price of the coin that day; the other side priced):
 *   BTC 2025-01-10 = 30000 * 0.999 / 1 = 29970;  BTC 2025-01-20 = 20000 * 0.998 / 0.5 = 39920 (the EUR line is ignored)
 *   ETH 2025-01-10 = (6000 + 3100) * 0.999 / (2 + 1) = 3030.3
 *   2025-01-25: neither USDT nor BTC has a file price: nothing derived, the day needs a price.
 */

const PRICES = ['date,coin,currency,price', '2025-01-10,USDT,USD,0.999', '2025-01-20T08:00:00Z,USDT,USD,0.997', '2025-01-20T15:00:00Z,USDT,USD,0.998', '2025-01-20,BTC,EUR,50000', '2025-01-10T20:00:00Z,USDT,USD,0.5', ''].join('\n');

let db: Database | undefined;
const folders: string[] = [];
afterEach(() => {
  db?.close();
  db = undefined;
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function pricesFile(text: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'exledger-prices-'));
  folders.push(dir);
  const file = path.join(dir, 'prices.csv');
  writeFileSync(file, text);
  return file;
}

function fill(base: string, quote: string, fillId: string, at: string, side: 'buy' | 'sell', quantity: string, total: string, fees: string): object {
  return {
    accountId: '590105411156181178',
    symbol: `${base}${quote}_SPBL`,
    baseCoin: base,
    quoteCoin: quote,
    orderId: `9${fillId}`,
    fillId,
    orderType: 'limit',
    side,
    fillPrice: '',
    fillQuantity: quantity,
    fillTotalAmount: total,
    fees,
    cTime: String(Date.parse(at)),
  };
}

/** Decimal strings without trailing zeros ('4970.040000' -> '4970.04'). */
function trimmed<T extends Record<string, unknown>>(rows: T[]): T[] {
  return rows.map((row) => Object.fromEntries(Object.entries(row).map(([key, value]) => [key, typeof value === 'string' && /^-?\d+\.\d+$/.test(value) ? value.replace(/\.?0+$/, '') : value])) as T);
}

async function ledger(): Promise<Database> {
  db = await openModelDb();
  await insertHistory(db, 'spot_fills', [
    fill('BTC', 'USDT', '1', '2025-01-10T10:00:00Z', 'buy', '1', '30000', '0'),
    fill('ETH', 'USDT', '2', '2025-01-10T11:00:00Z', 'buy', '2', '6000', '0.002'),
    fill('ETH', 'USDT', '3', '2025-01-10T12:00:00Z', 'buy', '1', '3100', '0'),
    fill('BTC', 'USDT', '4', '2025-01-20T10:00:00Z', 'sell', '0.5', '20000', '20'),
    fill('BTC', 'USDT', '5', '2025-01-25T10:00:00Z', 'sell', '0.25', '11000', '11'),
  ]);
  return db;
}

describe('reporting currency', () => {
  it('prices from the file (a day\'s close, the day\'s last instant), derived from fills, identity; exact converted values; a missing price is NULL and listed in needs_price', async () => {
    const database = await ledger();
    await buildAll(database, { reportingCurrency: 'USD', prices: readPricesFile(pricesFile(PRICES)) });

    expect(trimmed(await queryRows(database, "select coin, cast(price_date as varchar) as price_date, currency, price, price_source, price_basis from intermediate.int_prices order by coin, price_date"))).toEqual([
      { coin: 'BTC', price_date: '2025-01-10', currency: 'USD', price: '29970', price_source: 'derived', price_basis: 'fills of BTCUSDT_SPBL' },
      { coin: 'BTC', price_date: '2025-01-20', currency: 'USD', price: '39920', price_source: 'derived', price_basis: 'fills of BTCUSDT_SPBL' },
      { coin: 'ETH', price_date: '2025-01-10', currency: 'USD', price: '3030.3', price_source: 'derived', price_basis: 'fills of ETHUSDT_SPBL' },
      { coin: 'USDT', price_date: '2025-01-10', currency: 'USD', price: '0.999', price_source: 'file', price_basis: 'prices file line 2' },
      { coin: 'USDT', price_date: '2025-01-20', currency: 'USD', price: '0.998', price_source: 'file', price_basis: 'prices file line 4' },
    ]);

    // PnL 4980 USDT * 0.998 = 4970.04 USD; the buy days' PnL is 0 (0 in any currency); 3489 USDT on Jan 25 has no price.
    expect(trimmed(await queryRows(database, "select symbol, cast(trade_date as varchar) as trade_date, realized_pnl, reporting_currency, price, cast(price_date as varchar) as price_date, price_source, realized_pnl_rc from marts.spot_realized_pnl_daily where symbol = 'BTCUSDT_SPBL' order by trade_date"))).toEqual([
      { symbol: 'BTCUSDT_SPBL', trade_date: '2025-01-10', realized_pnl: '0', reporting_currency: 'USD', price: '0.999', price_date: '2025-01-10', price_source: 'file', realized_pnl_rc: '0' },
      { symbol: 'BTCUSDT_SPBL', trade_date: '2025-01-20', realized_pnl: '4980', reporting_currency: 'USD', price: '0.998', price_date: '2025-01-20', price_source: 'file', realized_pnl_rc: '4970.04' },
      { symbol: 'BTCUSDT_SPBL', trade_date: '2025-01-25', realized_pnl: '3489', reporting_currency: 'USD', price: null, price_date: null, price_source: null, realized_pnl_rc: null },
    ]);
    // The month lacks a price on one day: unknown, never the 4970.04 of the others.
    expect(trimmed(await queryRows(database, "select realized_pnl, realized_pnl_rc, unpriced_days from marts.spot_realized_pnl_monthly where symbol = 'BTCUSDT_SPBL'"))).toEqual([
      { realized_pnl: '8469', realized_pnl_rc: null, unpriced_days: '1' },
    ]);

    // Fees: 0.002 ETH * 3030.3 = 6.0606 USD (derived ETH price); 20 USDT * 0.998 = 19.96; 11 USDT on Jan 25: unknown.
    expect(trimmed(await queryRows(database, "select coin, cast(fee_date as varchar) as fee_date, fees_paid, price, price_source, fees_paid_rc from marts.fees_daily where product = 'spot' and fees_paid <> 0 order by fee_date, coin"))).toEqual([
      { coin: 'ETH', fee_date: '2025-01-10', fees_paid: '0.002', price: '3030.3', price_source: 'derived', fees_paid_rc: '6.0606' },
      { coin: 'USDT', fee_date: '2025-01-20', fees_paid: '20', price: '0.998', price_source: 'file', fees_paid_rc: '19.96' },
      { coin: 'USDT', fee_date: '2025-01-25', fees_paid: '11', price: null, price_source: null, fees_paid_rc: null },
    ]);

    expect(await queryRows(database, "select account, coin, cast(needed_date as varchar) as needed_date, mart, row_count from marts.needs_price order by mart, coin")).toEqual([
      { account: 'main', coin: 'USDT', needed_date: '2025-01-25', mart: 'marts.fees_daily', row_count: '1' },
      // The books value the sale of Jan 25 at the BTC given up (both legs) and its fee at USDT's price.
      { account: 'main', coin: 'BTC', needed_date: '2025-01-25', mart: 'marts.journal_entries', row_count: '2' },
      { account: 'main', coin: 'USDT', needed_date: '2025-01-25', mart: 'marts.journal_entries', row_count: '1' },
      { account: 'main', coin: 'USDT', needed_date: '2025-01-25', mart: 'marts.spot_realized_pnl_daily', row_count: '1' },
    ]);

    // The singular check (sql/marts/tests/reporting_currency_consistent.sql) passes, and fails once needs_price loses a day.
    const consistent = async () => (await checkModels(database)).find((result) => result.id === 'marts/reporting_currency_consistent');
    expect(await consistent()).toMatchObject({ status: 'pass' });
    await database.run("DELETE FROM marts.needs_price WHERE mart = 'marts.spot_realized_pnl_daily'");
    expect(await consistent()).toMatchObject({ status: 'fail', offending: 1 });
  });

  it('a price derived for the quote coin: with only BTC in the file, USDT is derived from the BTCUSDT fills, and nothing is derived from a derived price', async () => {
    const database = await ledger();
    await buildAll(database, { reportingCurrency: 'USD', prices: readPricesFile(pricesFile('date,coin,currency,price\n2025-01-25,BTC,USD,43956\n')) });
    // USDT on Jan 25 = 0.25 BTC * 43956 / 11000 USDT = 0.999; the PnL 3489 USDT * 0.999 = 3485.511.
    expect(trimmed(await queryRows(database, "select coin, cast(price_date as varchar) as price_date, price, price_source from intermediate.int_prices order by coin"))).toEqual([
      { coin: 'BTC', price_date: '2025-01-25', price: '43956', price_source: 'file' },
      { coin: 'USDT', price_date: '2025-01-25', price: '0.999', price_source: 'derived' },
    ]);
    expect(trimmed(await queryRows(database, "select realized_pnl_rc, price_source from marts.spot_realized_pnl_daily where trade_date = '2025-01-25'"))).toEqual([{ realized_pnl_rc: '3485.511', price_source: 'derived' }]);
  });

  it('prices are settings: each model records the currency and the prices file\'s hash, and a partial build with other prices refuses to read tables valued with the old ones', async () => {
    const database = await ledger();
    const first = readPricesFile(pricesFile(PRICES));
    await buildAll(database, { reportingCurrency: 'USD', prices: first });
    expect(await queryRows(database, "select reporting_currency, prices from settings.model_builds where model = 'marts.fees_daily'")).toEqual([
      { reporting_currency: 'USD', prices: `prices.csv sha256:${first.sha256.slice(0, 16)}` },
    ]);
    const other = readPricesFile(pricesFile(PRICES.replace('0.999', '0.9991')));
    expect(other.sha256).not.toBe(first.sha256);
    const results = await buildModels(database, { ...DEFAULT_MODEL_SETTINGS, reportingCurrency: 'USD', prices: other }, { select: ['marts.fees_daily'] });
    expect(results.find((result) => result.id === 'marts.fees_daily')).toMatchObject({
      status: 'failed',
      message: expect.stringContaining(`which was built with time zone UTC, cost methods fifo, opening positions none, reporting currency USD, prices prices.csv sha256:${first.sha256.slice(0, 16)}; this build has time zone UTC, cost methods fifo, opening positions none, reporting currency USD, prices prices.csv sha256:${other.sha256.slice(0, 16)}`),
    });
  });

  it('a database whose models an earlier version built (no valuation recorded) is refused by a report, naming the fix', async () => {
    const database = await ledger();
    await buildAll(database);
    await database.run('ALTER TABLE settings.model_builds DROP COLUMN prices');
    const outDir = mkdtempSync(path.join(tmpdir(), 'exledger-rc-old-'));
    folders.push(outDir);
    const pnl = REPORTS.find((candidate) => candidate.name === 'pnl')!;
    await expect(writeReport(database, pnl, { streams: STREAMS, coinFormats: COIN_FORMATS, period: { label: '2025-01', from: '2025-01-01', to: '2025-01-31' }, outDir })).rejects.toThrow(
      'the models were built by an earlier version of exledger (no reporting currency recorded)',
    );
  });

  it('reporting in USDT: USDT is priced 1 (identity), other coins derived from their USDT pairs', async () => {
    const database = await ledger();
    await buildAll(database, { reportingCurrency: 'USDT' });
    expect(trimmed(await queryRows(database, "select cast(trade_date as varchar) as trade_date, price, price_source, realized_pnl_rc from marts.spot_realized_pnl_daily where symbol = 'BTCUSDT_SPBL' and realized_pnl <> 0 order by trade_date"))).toEqual([
      { trade_date: '2025-01-20', price: '1', price_source: 'identity', realized_pnl_rc: '4980' },
      { trade_date: '2025-01-25', price: '1', price_source: 'identity', realized_pnl_rc: '3489' },
    ]);
    expect(await queryRows(database, 'select count(*) as n from marts.needs_price')).toEqual([{ n: '0' }]);
  });

  it('derives a price from fills whose totals reach 1e21 exactly (their units would overflow a HUGEINT times 100)', async () => {
    const database = await openModelDb();
    // Totals of 1e21 USDT (1e37 units of 1e-16), twice on one day.
    const fill = (fillId: string, quantity: string, total: string) => ({
      accountId: '1', symbol: 'WXTUSDT_SPBL', baseCoin: 'WXT', quoteCoin: 'USDT', orderId: `9${fillId}`, fillId, orderType: 'limit', side: 'buy',
      fillPrice: '', fillQuantity: quantity, fillTotalAmount: total, fees: '0', cTime: String(Date.parse('2025-03-01T10:00:00Z')),
    });
    await insertHistory(database, 'spot_fills', [fill('1', '1000000000000', '1000000000000000000000'), fill('2', '2000000000000', '1000000000000000000000')]);
    // The books cannot hold 1e21 USDT (their limit is 1.7e20 coins): they fail by name, prices do not.
    const results = await buildModels(database, { ...DEFAULT_MODEL_SETTINGS, reportingCurrency: 'USDT' });
    expect(results.filter((result) => result.status === 'failed').map((result) => [result.id, result.message?.includes('the books hold coin amounts below 1.7e20')])).toEqual([['intermediate.int_coin_events', true]]);
    // 2e21 / 3e12, rounded half up to 18 decimals.
    expect(await queryRows(database, "select cast(price as varchar) as price, price_source from intermediate.int_prices where coin = 'WXT'")).toEqual([{ price: '666666666.666666666666666667', price_source: 'derived' }]);
  });

  it('without a reporting currency nothing is valued: the *_rc columns are NULL, needs_price is empty', async () => {
    const database = await ledger();
    await buildAll(database);
    expect(await queryRows(database, 'select count(*) filter (where realized_pnl_rc is not null or price is not null) as valued, count(*) as n from marts.spot_realized_pnl_daily')).toEqual([{ valued: '0', n: '4' }]);
    expect(await queryRows(database, 'select (select count(*) from intermediate.int_prices) as prices, (select count(*) from marts.needs_price) as needs')).toEqual([{ prices: '0', needs: '0' }]);
  });

  it('a bad prices file is one ConfigError naming file:line and the fix; pricesFile without a currency is refused', () => {
    const bad = pricesFile(['date,coin,currency,price', '2025-01-10,USDT,USD,0.999', '2025-01-11,USDT,USD,1e0'].join('\n'));
    const resolve = (models: object) => resolveConfig({ values: { models } }, {}, path.dirname(bad));
    expect(() => resolve({ reportingCurrency: 'USD', pricesFile: 'prices.csv' })).toThrow(ConfigError);
    expect(() => resolve({ reportingCurrency: 'USD', pricesFile: 'prices.csv' })).toThrow(`${bad}:3: price "1e0" is not a positive plain decimal`);
    const repeated = pricesFile(['date,coin,currency,price', '2025-01-10,USDT,USD,0.999', '2025-01-10,USDT,USD,0.998'].join('\n'));
    expect(() => readPricesFile(repeated)).toThrow(`${repeated}:3: repeats the price of USDT in USD at 2025-01-10 (line 2)`);
    expect(() => readPricesFile(pricesFile('day,coin,price\n'))).toThrow(/:1: the first line must be the header date,coin,currency,price/);
    expect(() => readPricesFile(pricesFile('date,coin,currency,price\n2025-02-30,BTC,USD,1\n'))).toThrow(/:2: date "2025-02-30" is neither a day/);
    expect(() => resolve({ pricesFile: 'prices.csv' })).toThrow('models.pricesFile: is set but models.reportingCurrency is not');
    // A futures contract's mark price is contract:<symbol>; a lower-case code is neither that nor a coin.
    expect(readPricesFile(pricesFile('date,coin,currency,price\n2025-02-28,contract:cmt_btcusdt,USDT,65000.5\n')).rows.map((row) => row.coin)).toEqual(['contract:cmt_btcusdt']);
    expect(() => readPricesFile(pricesFile('date,coin,currency,price\n2025-02-28,cmt_btcusdt,USDT,65000\n'))).toThrow(/:2: coin "cmt_btcusdt" is neither an upper-case coin code .* nor a futures contract's mark price \(contract:<symbol>/);
  });
});

describe('deployed: exledger build and exledger report pnl in processes of their own, against the sandbox in another', () => {
  let exchange: SandboxProcess;
  let dir: string;
  const cli = (args: string[]) => runCli(args, { cwd: dir, env: exchange.settings });
  const database = () => path.join(dir, 'ledger.duckdb');

  /** Daily USDT closes for September and October 2026, except the days `missing`. */
  function usdtCloses(missing: readonly string[] = []): string {
    const lines = ['date,coin,currency,price'];
    for (let day = Date.parse('2026-09-01T00:00:00Z'); day <= Date.parse('2026-10-31T00:00:00Z'); day += 86_400_000) {
      const date = new Date(day).toISOString().slice(0, 10);
      if (!missing.includes(date)) lines.push(`${date},USDT,USD,0.99${String(((day / 86_400_000) % 90) + 10)}`);
    }
    return `${lines.join('\n')}\n`;
  }

  /** The Summary's lines (columns A to E) and the "Needs a price" sheet's (coin, day) rows. */
  async function readWorkbook(): Promise<{ summary: unknown[][]; needs: string[][] }> {
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(path.join(dir, 'out', 'pnl-2026-10.xlsx'));
    const summary: unknown[][] = [];
    workbook.getWorksheet('Summary')!.eachRow((row) => summary.push([1, 2, 3, 4, 5].map((column) => (column === 1 ? row.getCell(1).text : row.getCell(column).value))));
    const needs: string[][] = [];
    workbook.getWorksheet('Needs a price')!.eachRow((row, index) => {
      const day = row.getCell(3).value;
      if (index > 1 && day instanceof Date) needs.push([String(row.getCell(2).value), day.toISOString().slice(0, 10)]);
    });
    return { summary, needs };
  }

  /** The fifo figure over the mart, in SQL: its sum and its rows without a price. */
  const martTotal = async () =>
    (
      await queryDatabase<{ total: string; unpriced: string }>(
        database(),
        "select cast(sum(realized_pnl_rc) as varchar) as total, cast(count(*) filter (where realized_pnl_rc is null) as varchar) as unpriced from marts.spot_realized_pnl_monthly where trade_month = '2026-10-01' and cost_method = 'fifo'",
      )
    )[0]!;

  beforeAll(async () => {
    exchange = await startSandboxProcess(['--end', '2026-11-01']);
    dir = mkdtempSync(path.join(tmpdir(), 'exledger-rc-deployed-'));
    writeFileSync(path.join(dir, 'prices.csv'), usdtCloses());
    writeFileSync(
      path.join(dir, 'exledger.config.json'),
      JSON.stringify({
        db: './ledger.duckdb',
        retry: { retries: 8, minTimeoutMs: 50, maxTimeoutMs: 500 },
        sync: { startDate: '2026-09-01' },
        models: { reportingCurrency: 'USD', pricesFile: 'prices.csv' },
      }),
    );
    const sync = await cli(['sync', '--streams', 'currencies,futures_contracts,spot_fills,futures_fills,futures_accounts,funding_bills']);
    expect(sync.code, sync.stdout + sync.stderr).toBe(0);
  });
  afterAll(async () => {
    expect(await exchange?.stop()).toBe(0);
    if (process.env.KEEP_RC_DIR === undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('the workbook\'s reporting-currency figure is the sum over the mart; with days left out of the prices file it says how many rows need a price and lists them on "Needs a price"; a bad prices file stops the build naming file:line', async () => {
    const build = await cli(['build']);
    expect(build.code, build.stdout + build.stderr).toBe(0);
    const report = await cli(['report', 'pnl', '--period', '2026-10', '--out', 'out']);
    expect(report.code, report.stdout + report.stderr).toBe(0);
    const complete = await martTotal();
    expect(complete.unpriced).toBe('0');
    let { summary, needs } = await readWorkbook();
    let figure = summary.find((line) => line[0] === 'Spot realized PnL in the reporting currency')!;
    expect(figure.slice(1, 4)).toEqual(['fifo · USD', expect.any(Number), complete.total.replace(/\.?0+$/, '')]);
    expect(String(figure[4] ?? '')).not.toContain('Incomplete');
    expect(summary.find((line) => line[0] === 'Reporting currency')?.[1]).toBe('USD');
    expect(needs).toEqual([]);

    // Two October days with fifo PnL in USDT lose their USDT close: their rows (and what is derived from USDT) need a price.
    const days = (
      await queryDatabase<{ day: string }>(
        database(),
        "select distinct cast(trade_date as varchar) as day from marts.spot_realized_pnl_daily where cost_method = 'fifo' and quote_coin = 'USDT' and realized_pnl <> 0 and trade_month = '2026-10-01' order by day limit 2",
      )
    ).map((row) => row.day);
    expect(days).toHaveLength(2);
    writeFileSync(path.join(dir, 'prices.csv'), usdtCloses(days));
    expect((await cli(['build'])).code).toBe(0);
    expect((await cli(['report', 'pnl', '--period', '2026-10', '--out', 'out'])).code).toBe(0);
    const partial = await martTotal();
    expect(Number(partial.unpriced)).toBeGreaterThan(0);
    ({ summary, needs } = await readWorkbook());
    figure = summary.find((line) => line[0] === 'Spot realized PnL in the reporting currency')!;
    expect(figure[3]).toBe(partial.total.replace(/\.?0+$/, ''));
    expect(figure[4]).toContain(`Incomplete: ${partial.unpriced} ${partial.unpriced === '1' ? 'row of "Spot PnL by month" needs' : 'rows of "Spot PnL by month" need'} a price`);
    const listed = await queryDatabase<{ coin: string; day: string }>(
      database(),
      "select coin, cast(needed_date as varchar) as day from marts.needs_price where needed_month = '2026-10-01' and mart in ('marts.spot_realized_pnl_daily', 'marts.futures_pnl_daily') order by coin, needed_date, account, mart",
    );
    expect(needs).toEqual(listed.map((row) => [row.coin, row.day]));
    expect(needs.map(([coin]) => coin)).toContain('USDT');
    expect(needs.every(([, day]) => days.includes(day!))).toBe(true);

    // A bad line: one error naming the file and line, exit 2, nothing rebuilt.
    const builtAt = "select cast(max(built_at) as varchar) as built_at from settings.model_builds";
    const before = await queryDatabase(database(), builtAt);
    const text = usdtCloses(days);
    writeFileSync(path.join(dir, 'prices.csv'), `${text}2026-10-11,USDT,USD,1,0\n`);
    const bad = await cli(['build']);
    expect(bad.code).toBe(2);
    expect(bad.stdout + bad.stderr).toContain(`${path.join(dir, 'prices.csv')}:${text.trim().split('\n').length + 1}: has 5 fields, not 4`);
    expect(await queryDatabase(database(), builtAt)).toEqual(before);
  });
});
