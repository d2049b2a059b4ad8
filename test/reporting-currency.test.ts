import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../src/config/config.ts';
import { ConfigError } from '../src/errors.ts';
import { readPricesFile } from '../src/models/prices-file.ts';
import type { Database } from '../src/store/database.ts';
import { buildAll, insertHistory, openModelDb, queryRows } from './support/model-db.ts';

/**
 * Reporting currency (README "Reporting currency") on a hand-made ledger, reporting zone UTC, currency USD.
 * Prices file:
 *   2025-01-10            USDT 0.999  (a day's close)
 *   2025-01-20T08:00:00Z  USDT 0.997  (an instant: the day's last one wins)
 *   2025-01-20T15:00:00Z  USDT 0.998
 *   2025-01-20            BTC  50000 EUR (another currency: not used for USD)
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

const PRICES = ['date,coin,currency,price', '2025-01-10,USDT,USD,0.999', '2025-01-20T08:00:00Z,USDT,USD,0.997', '2025-01-20T15:00:00Z,USDT,USD,0.998', '2025-01-20,BTC,EUR,50000', ''].join('\n');

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
      { account: 'main', coin: 'USDT', needed_date: '2025-01-25', mart: 'marts.spot_realized_pnl_daily', row_count: '1' },
    ]);
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


  });
});
