import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { checkModels } from '../src/models/check.ts';
import { readPricesFile } from '../src/models/prices-file.ts';
import type { Valuation } from '../src/models/settings.ts';
import type { Database } from '../src/store/database.ts';
import { buildAll, futuresFill, insertHistory, insertSnapshot, openModelDb, queryRows } from './support/model-db.ts';

/**
 * Open futures positions at month ends (marts.futures_positions_valued), worked by hand. Reporting
 * currency USD; USDT closes 1.001 on Jan 31 and 1 on Feb 28; mark prices in the prices file as
 * contract:<symbol> in USDT.
 * - cmt_btcusdt long: open 0.5 at 60000 (value 30000) on Jan 10; close 0.2 at 61000 (value 12200,
 *   PnL 200: it closed an open value of 12000) on Jan 20: 0.3 open at 18000, entry 60000. Mark
 *   65000 on Jan 31: unrealized 0.3 * 65000 - 18000 = 1500 USDT, fair value 1501.5 USD. Feb 5 opens
 *   0.1 at 70000: 0.4 open at 25000, entry 62500; no mark on Feb 28: unknown, said why.
 * - cmt_ethusdt short: open 2 at 3000 (6000) on Jan 15; mark 2900: unrealized 6000 - 5800 = 200,
 *   200.2 USD. Closed on Feb 10 at 2800 (value 5600, PnL 400): nothing open at Feb's end, fair value 0.
 * - cmt_solusdt long: a close of 1 with no opening fill: opened before the history, size unknown.
 */
const PRICES = [
  'date,coin,currency,price',
  '2026-01-31,USDT,USD,1.001',
  '2026-02-28,USDT,USD,1',
  '2026-01-31,contract:cmt_btcusdt,USDT,65000',
  '2026-01-31,contract:cmt_ethusdt,USDT,2900',
  // In the reporting currency, not the contract's quote coin: no mark price of it.
  '2026-02-28,contract:cmt_btcusdt,USD,70000',
].join('\n');

/** A fill without fees: positions do not depend on them. */
const fill = (tradeId: string, symbol: string, at: string, direction: string, size: string, value: string, pnl: string) => futuresFill(tradeId, symbol, at, direction, size, value, '0', pnl);

const dir = mkdtempSync(path.join(tmpdir(), 'exledger-positions-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let db: Database;
afterEach(() => db?.close());

async function ledger(valuation: Valuation): Promise<Database> {
  const file = path.join(dir, 'prices.csv');
  writeFileSync(file, PRICES);
  db = await openModelDb();
  await insertSnapshot(db, 'futures_contracts', '2026-01-01T00:00:00Z', [
    { symbol: 'cmt_btcusdt', underlying_index: 'BTC', quote_currency: 'USDT', coin: 'USDT', contract_val: '0.0001', forwardContractFlag: true },
    { symbol: 'cmt_ethusdt', underlying_index: 'ETH', quote_currency: 'USDT', coin: 'USDT', contract_val: '0.001', forwardContractFlag: true },
    { symbol: 'cmt_solusdt', underlying_index: 'SOL', quote_currency: 'USDT', coin: 'USDT', contract_val: '0.1', forwardContractFlag: true },
  ]);
  await insertSnapshot(db, 'currencies', '2026-01-01T00:00:00Z', [{ coinId: '2', coinName: 'USDT', transfer: 'true', chains: [] }]);
  await insertHistory(db, 'futures_fills', [
    fill('101', 'cmt_btcusdt', '2026-01-10T10:00:00Z', 'OPEN_LONG', '0.5', '30000', '0'),
    fill('102', 'cmt_ethusdt', '2026-01-15T10:00:00Z', 'OPEN_SHORT', '2', '6000', '0'),
    fill('103', 'cmt_btcusdt', '2026-01-20T10:00:00Z', 'CLOSE_LONG', '0.2', '12200', '200'),
    fill('104', 'cmt_solusdt', '2026-01-21T10:00:00Z', 'CLOSE_LONG', '1', '150', '10'),
    fill('105', 'cmt_btcusdt', '2026-02-05T10:00:00Z', 'OPEN_LONG', '0.1', '7000', '0'),
    fill('106', 'cmt_ethusdt', '2026-02-10T10:00:00Z', 'CLOSE_SHORT', '2', '5600', '400'),
  ]);
  await buildAll(db, { costMethods: ['fifo'], reportingCurrency: 'USD', prices: readPricesFile(file), books: { tradeValue: 'given', fees: 'expense', valuation } });
  return db;
}

const trim = (value: string | null) => (value === null ? null : value.includes('.') ? value.replace(/\.?0+$/, '') : value);
const positions = async (database: Database) =>
  (
    await queryRows(
      database,
      `SELECT symbol, position_side, strftime(period_month, '%Y-%m') AS month, size, open_value, entry_price, mark_price, unrealized_pnl, fair_value, carrying_value, remeasurement, unvalued_reason, reference
       FROM marts.futures_positions_valued ORDER BY symbol, position_side, period_month`,
    )
  ).map((row) => Object.fromEntries(Object.entries(row).map(([key, value]) => [key, key === 'unvalued_reason' || key === 'reference' ? value : trim(value)])));

describe('open futures positions at a mark price', () => {
  it('are rebuilt from their fills and valued at the month-end mark price; unknown where there is none, said why', async () => {
    const rows = await positions(await ledger('fair_value'));
    expect(rows.map(({ symbol, position_side, month, size, open_value, entry_price, mark_price, unrealized_pnl, fair_value, carrying_value, remeasurement }) => [symbol, position_side, month, size, open_value, entry_price, mark_price, unrealized_pnl, fair_value, carrying_value, remeasurement])).toEqual([
      ['cmt_btcusdt', 'LONG', '2026-01', '0.3', '18000', '60000', '65000', '1500', '1501.5', '1501.5', '1501.5'],
      // No mark price in USDT on Feb 28 (the USD line is not one): unknown, never 0; the January value stands.
      ['cmt_btcusdt', 'LONG', '2026-02', '0.4', '25000', '62500', null, null, null, '1501.5', null],
      ['cmt_ethusdt', 'SHORT', '2026-01', '2', '6000', '3000', '2900', '200', '200.2', '200.2', '200.2'],
      // Closed in February: nothing open, its fair value 0, the January gain reversed.
      ['cmt_ethusdt', 'SHORT', '2026-02', '0', '0', null, null, '0', '0', '0', '-200.2'],
      ['cmt_solusdt', 'LONG', '2026-01', null, null, null, null, null, null, '0', null],
      ['cmt_solusdt', 'LONG', '2026-02', null, null, null, null, null, null, '0', null],
    ]);
    expect(rows[1]!.unvalued_reason).toBe('no mark price: add 2026-02-28,contract:cmt_btcusdt,USDT,<price> to the prices file');
    expect(rows[4]!.unvalued_reason).toMatch(/^opened before the history/);
    expect(rows[0]!.reference).toBe('futures_positions_valued/main/cmt_btcusdt/LONG/2026-01');

    // The journal posts each known remeasurement against unrealized gains, on the contract's account.
    const lines = await queryRows(
      db,
      "SELECT entry_id, ledger_account, CAST(net_amount AS VARCHAR) AS net FROM marts.journal_entries WHERE entry_id LIKE 'position/%' ORDER BY entry_id, line_no",
    );
    expect(lines.map((line) => [line.entry_id, line.ledger_account, trim(line.net ?? null)])).toEqual([
      ['position/main/cmt_btcusdt/LONG/2026-01', 'Futures positions:cmt_btcusdt', '1501.5'],
      ['position/main/cmt_btcusdt/LONG/2026-01', 'Unrealized gains and losses', '-1501.5'],
      ['position/main/cmt_ethusdt/SHORT/2026-01', 'Futures positions:cmt_ethusdt', '200.2'],
      ['position/main/cmt_ethusdt/SHORT/2026-01', 'Unrealized gains and losses', '-200.2'],
      ['position/main/cmt_ethusdt/SHORT/2026-02', 'Unrealized gains and losses', '200.2'],
      ['position/main/cmt_ethusdt/SHORT/2026-02', 'Futures positions:cmt_ethusdt', '-200.2'],
    ]);
    // The February BTC position is listed, not posted, and needs its mark price.
    const [unposted] = await queryRows(db, "SELECT status FROM marts.journal_sources WHERE entry_id = 'position/main/cmt_btcusdt/LONG/2026-02'");
    expect(unposted!.status).toBe('no_price');
    const needs = await queryRows(db, "SELECT coin, CAST(needed_date AS VARCHAR) AS day FROM marts.needs_price WHERE mart = 'marts.futures_positions_valued'");
    expect(needs).toEqual([{ coin: 'contract:cmt_btcusdt', day: '2026-02-28' }]);
    const failed = (await checkModels(db)).filter((result) => result.status !== 'pass');
    expect(failed.map((result) => result.id)).toEqual([]);
  }, 120_000);

  it('at cost a position is carried at 0: its fair value is shown, nothing is posted or needed', async () => {
    const rows = await positions(await ledger('cost'));
    expect(rows.filter((row) => row.size !== '0').map((row) => [row.symbol, row.month, row.fair_value, row.carrying_value, row.remeasurement])).toEqual([
      ['cmt_btcusdt', '2026-01', '1501.5', '0', '0'],
      ['cmt_btcusdt', '2026-02', null, '0', '0'],
      ['cmt_ethusdt', '2026-01', '200.2', '0', '0'],
      ['cmt_solusdt', '2026-01', null, '0', '0'],
      ['cmt_solusdt', '2026-02', null, '0', '0'],
    ]);
    expect(await queryRows(db, "SELECT entry_id FROM marts.journal_sources WHERE entry_id LIKE 'position/%'")).toEqual([]);
    expect(await queryRows(db, "SELECT coin FROM marts.needs_price WHERE mart = 'marts.futures_positions_valued'")).toEqual([]);
  }, 120_000);
});
