import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterEach, describe, expect, it } from 'vitest';
import { STREAMS } from '../pipelines/index.ts';
import { COIN_FORMATS } from '../reports/coin-formats.ts';
import { journalReport } from '../reports/journal.ts';
import { resolveConfig } from '../src/config/config.ts';
import { ConfigError } from '../src/errors.ts';
import { writeReport } from '../src/export/write-report.ts';
import { checkModels } from '../src/models/check.ts';
import { readPricesFile } from '../src/models/prices-file.ts';
import { DEFAULT_CHART_OF_ACCOUNTS, type ModelSettings } from '../src/models/settings.ts';
import type { Database } from '../src/store/database.ts';
import { buildAll, futuresAccountRecord, insertHistory, insertSnapshot, openModelDb, queryRows, spotFill } from './support/model-db.ts';

/**
 * marts.journal_entries (docs/workbooks.md "Journal entries") on a hand-made ledger of account main, zone UTC,
 * reporting currency USD, cost methods fifo and average, the journal posting average.
 * Prices file: USDT in USD 0.998 on 2026-01-10, -15, -20, -31 and 1.002 on 2026-02-10 (no price on -25, -12).
 * Spot BTCUSDT (fees: 0 on buys; on sells in USDT, inside the proceeds):
 *   01-10 buy 1 @ 30000; 01-15 buy 1 @ 34000 -> average cost 32000 a unit
 *   01-20 sell 0.5 @ 40000, fee 20: proceeds 19980, cost 16000, PnL 3980 USDT * 0.998 = 3972.04 USD (fifo: 4980)
 *   01-25 sell 0.25 @ 20000, fee 11: proceeds 4989, cost 8000, PnL -3011 USDT: no price, not posted
 *   01-31 sell 0.25 @ 30000, fee 7.5: proceeds 7492.5, cost 8000, PnL -507.5 USDT * 0.998 = -506.485 USD
 * Futures cmt_btcusdt (margin USDT):
 *   01-20 open long 0.5, value 30000, fee 18 (* 0.998 = 17.964), PnL 0
 *   01-31 close 0.5, value 31000, fee 18.6 (* 0.998 = 18.5628), PnL 500 (* 0.998 = 499)
 *   funding (running total paid): 5 on 01-10, 7.5 on 01-20 (paid 2.5 * 0.998 = 2.495), 6.25 on 01-31 (received 1.25 * 0.998 = 1.2475)
 * Commission (USDT): 0.8 on 01-10 and 0.2 on 01-12 (no price): January is NULL, not posted;
 *   1.5 on 02-10 * 1.002 = 1.503, posted on 2026-02-28.
 */

const PRICES = ['date,coin,currency,price', '2026-01-10,USDT,USD,0.998', '2026-01-15,USDT,USD,0.998', '2026-01-20,USDT,USD,0.998', '2026-01-31,USDT,USD,0.998', '2026-02-10,USDT,USD,1.002', ''].join('\n');

let db: Database | undefined;
const folders: string[] = [];
afterEach(() => {
  db?.close();
  db = undefined;
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function pricesFile(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'exledger-journal-'));
  folders.push(dir);
  writeFileSync(path.join(dir, 'prices.csv'), PRICES);
  return path.join(dir, 'prices.csv');
}

/** Decimal strings without trailing zeros ('4970.040000' -> '4970.04'). */
function trimmed<T extends Record<string, unknown>>(rows: T[]): T[] {
  return rows.map((row) => Object.fromEntries(Object.entries(row).map(([key, value]) => [key, typeof value === 'string' && /^-?\d+\.\d+$/.test(value) ? value.replace(/\.?0+$/, '') : value])) as T);
}

function futuresFill(tradeId: string, at: string, direction: string, size: string, value: string, fee: string, pnl: string): object {
  return {
    tradeId,
    orderId: `9${tradeId}`,
    symbol: 'cmt_btcusdt',
    marginMode: 'SHARED',
    separatedMode: 'COMBINED',
    positionSide: direction.endsWith('LONG') ? 'LONG' : 'SHORT',
    orderSide: direction === 'OPEN_LONG' ? 'BUY' : 'SELL',
    fillSize: size,
    fillValue: value,
    fillFee: fee,
    liquidateFee: '0',
    realizePnl: pnl,
    direction,
    liquidateType: '',
    legacyOrdeDirection: direction,
    createdTime: String(Date.parse(at)),
  };
}


function commission(at: string, paid: string): object {
  return { uid: '7001', dealTime: String(Date.parse(at)), coin: 'USDT', fee: '2', commission: paid, rate: '0.4', symbol: 'BTCUSDT_SPBL', sourceType: 1, takerAmount: '1000', makerAmount: '1000' };
}

async function ledger(settings: Partial<ModelSettings> = {}): Promise<Database> {
  db = await openModelDb();
  await insertHistory(db, 'spot_fills', [
    spotFill('BTCUSDT_SPBL', '1', '2026-01-10T10:00:00Z', 'buy', '1', '30000'),
    spotFill('BTCUSDT_SPBL', '2', '2026-01-15T10:00:00Z', 'buy', '1', '34000'),
    spotFill('BTCUSDT_SPBL', '3', '2026-01-20T10:00:00Z', 'sell', '0.5', '40000', '20'),
    spotFill('BTCUSDT_SPBL', '4', '2026-01-25T10:00:00Z', 'sell', '0.25', '20000', '11'),
    spotFill('BTCUSDT_SPBL', '5', '2026-01-31T10:00:00Z', 'sell', '0.25', '30000', '7.5'),
  ]);
  await insertSnapshot(db, 'futures_contracts', '2026-01-01T00:00:00Z', [
    { symbol: 'cmt_btcusdt', underlying_index: 'BTC', quote_currency: 'USDT', coin: 'USDT', contract_val: '0.0001', forwardContractFlag: true },
  ]);
  await insertSnapshot(db, 'currencies', '2026-01-01T00:00:00Z', [{ coinId: '2', coinName: 'USDT', transfer: 'true', chains: [] }]);
  await insertHistory(db, 'futures_fills', [
    futuresFill('101', '2026-01-20T02:00:00Z', 'OPEN_LONG', '0.5', '30000', '18', '0'),
    futuresFill('102', '2026-01-31T02:00:00Z', 'CLOSE_LONG', '0.5', '31000', '18.6', '500'),
  ]);
  await insertSnapshot(db, 'futures_accounts', '2026-01-10T00:00:00Z', [futuresAccountRecord('5')]);
  await insertSnapshot(db, 'futures_accounts', '2026-01-20T12:00:00Z', [futuresAccountRecord('7.5')]);
  await insertSnapshot(db, 'futures_accounts', '2026-01-31T12:00:00Z', [futuresAccountRecord('6.25')]);
  await insertHistory(db, 'affiliate_commissions', [commission('2026-01-10T08:00:00Z', '0.8'), commission('2026-01-12T08:00:00Z', '0.2'), commission('2026-02-10T08:00:00Z', '1.5')], {
    partition: 'productType=SPOT',
  });
  await buildAll(db, {
    costMethods: ['fifo', 'average'],
    reportingCurrency: 'USD',
    prices: readPricesFile(pricesFile()),
    journal: { costMethod: 'average', accounts: { ...DEFAULT_CHART_OF_ACCOUNTS, digitalAssets: 'Crypto:{account}:{coin}', tradingFees: 'Fees:Trading' } },
    ...settings,
  });
  return db;
}

const LINES = `select cast(entry_date as varchar) as entry_date, entry_id, line_no, ledger_account, debit, credit, currency, coin, coin_amount, kind
  from marts.journal_entries order by entry_date, entry_id, line_no`;

describe('marts.journal_entries', () => {
  it('posts each priced source row as two balancing lines on the configured chart of accounts; unpriced rows are not posted and are counted', async () => {
    const database = await ledger();
    const asset = 'Crypto:main:USDT';
    const line = (entry_date: string, entry_id: string, line_no: number, ledger_account: string, debit: string, credit: string, coin_amount: string, kind: string) => ({
      entry_date,
      entry_id,
      line_no,
      ledger_account,
      debit,
      credit,
      currency: 'USD',
      coin: 'USDT',
      coin_amount,
      kind,
    });
    expect(trimmed(await queryRows(database, LINES))).toEqual([
      // Funding paid 2.5 USDT on 01-20: an expense.
      line('2026-01-20', 'fees/main/futures/USDT/2026-01-20', 1, 'Fees:Trading', '17.964', '0', '18', 'fees'),
      line('2026-01-20', 'fees/main/futures/USDT/2026-01-20', 2, asset, '0', '17.964', '18', 'fees'),
      line('2026-01-20', 'funding/main/USDT/2026-01-20', 1, 'Funding expense', '2.495', '0', '2.5', 'funding'),
      line('2026-01-20', 'funding/main/USDT/2026-01-20', 2, asset, '0', '2.495', '2.5', 'funding'),
      // Average cost: 3980 USDT gain (fifo's 4980 is not posted).
      line('2026-01-20', 'spot-pnl/main/average/BTCUSDT_SPBL/2026-01-20', 1, asset, '3972.04', '0', '3980', 'spot_realized_pnl'),
      line('2026-01-20', 'spot-pnl/main/average/BTCUSDT_SPBL/2026-01-20', 2, 'Realized gains and losses', '0', '3972.04', '3980', 'spot_realized_pnl'),
      line('2026-01-31', 'fees/main/futures/USDT/2026-01-31', 1, 'Fees:Trading', '18.5628', '0', '18.6', 'fees'),
      line('2026-01-31', 'fees/main/futures/USDT/2026-01-31', 2, asset, '0', '18.5628', '18.6', 'fees'),
      line('2026-01-31', 'funding/main/USDT/2026-01-31', 1, asset, '1.2475', '0', '1.25', 'funding'),
      line('2026-01-31', 'funding/main/USDT/2026-01-31', 2, 'Funding income', '0', '1.2475', '1.25', 'funding'),
      line('2026-01-31', 'futures-pnl/main/USDT/cmt_btcusdt/2026-01-31', 1, asset, '499', '0', '500', 'futures_realized_pnl'),
      line('2026-01-31', 'futures-pnl/main/USDT/cmt_btcusdt/2026-01-31', 2, 'Realized gains and losses', '0', '499', '500', 'futures_realized_pnl'),
      // A loss: the gains account is debited.
      line('2026-01-31', 'spot-pnl/main/average/BTCUSDT_SPBL/2026-01-31', 1, 'Realized gains and losses', '506.485', '0', '507.5', 'spot_realized_pnl'),
      line('2026-01-31', 'spot-pnl/main/average/BTCUSDT_SPBL/2026-01-31', 2, asset, '0', '506.485', '507.5', 'spot_realized_pnl'),
      line('2026-02-28', 'commission/main/USDT/2026-02/SPOT/1/BTCUSDT_SPBL', 1, asset, '1.503', '0', '1.5', 'commission'),
      line('2026-02-28', 'commission/main/USDT/2026-02/SPOT/1/BTCUSDT_SPBL', 2, 'Commission income', '0', '1.503', '1.5', 'commission'),
    ]);

    // Not posted, never as 0: the spot day without a price and January's commission (one record without a price).
    expect(trimmed(await queryRows(database, "select entry_id, amount, amount_rc from marts.journal_sources where status = 'no_price' order by entry_id"))).toEqual([
      { entry_id: 'commission/main/USDT/2026-01/SPOT/1/BTCUSDT_SPBL', amount: '1', amount_rc: null },
      { entry_id: 'spot-pnl/main/average/BTCUSDT_SPBL/2026-01-25', amount: '-3011', amount_rc: null },
    ]);
    expect(await queryRows(database, "select count(*) as n from marts.journal_entries where entry_id in (select entry_id from marts.journal_sources where status <> 'posted')")).toEqual([{ n: '0' }]);
    // Spot fees are inside spot realized PnL: no entry posts them again.
    expect(await queryRows(database, "select count(*) as n from marts.journal_entries where kind = 'fees' and product = 'spot'")).toEqual([{ n: '0' }]);
    // Every line keeps a way back to its source row.
    expect(await queryRows(database, "select source_model, source_key, memo from marts.journal_entries where entry_id = 'spot-pnl/main/average/BTCUSDT_SPBL/2026-01-31' and line_no = 1")).toEqual([
      { source_model: 'marts.spot_realized_pnl_daily', source_key: 'account=main; cost_method=average; symbol=BTCUSDT_SPBL; trade_date=2026-01-31', memo: 'Spot realized PnL BTCUSDT_SPBL (average): -507.5 USDT' },
    ]);
  });

  it('per period: every entry balances, and the accounts agree with the PnL, fee and commission marts', async () => {
    const database = await ledger();
    // Per entry and per period, debits equal credits.
    expect(await queryRows(database, 'select entry_id from marts.journal_entries group by entry_id having sum(debit) <> sum(credit) or count(*) <> 2')).toEqual([]);
    expect(trimmed(await queryRows(database, 'select cast(period as varchar) as period, sum(debit) as debits, sum(credit) as credits from marts.journal_entries group by period order by period'))).toEqual([
      // 17.964 + 2.495 + 3972.04 + 18.5628 + 1.2475 + 499 + 506.485 = 5017.7943
      { period: '2026-01-01', debits: '5017.7943', credits: '5017.7943' },
      { period: '2026-02-01', debits: '1.503', credits: '1.503' },
    ]);
    const agreement = await queryRows(
      database,
      `with journal as (
         select period, kind, ledger_account, sum(net_amount) as net from marts.journal_entries group by all
       ),
       gains as (select period, -sum(net) as journal, from journal where ledger_account = 'Realized gains and losses' group by period),
       pnl as (
         select period, sum(value) as mart from (
           select trade_month as period, realized_pnl_rc as value from marts.spot_realized_pnl_daily where cost_method = 'average' and realized_pnl_rc is not null
           union all
           select cast(date_trunc('month', pnl_date) as date), realized_pnl_rc from marts.futures_pnl_daily where symbol is not null and realized_pnl_rc is not null
         ) group by period
       ),
       fees as (select period, sum(net) as journal from journal where ledger_account = 'Fees:Trading' group by period),
       fee_mart as (select cast(date_trunc('month', fee_date) as date) as period, sum(fees_paid_rc) as mart from marts.fees_daily where product = 'futures' and fees_paid_rc is not null group by period),
       funding as (select period, -sum(net) as journal from journal where ledger_account in ('Funding income', 'Funding expense') group by period),
       funding_mart as (select cast(date_trunc('month', pnl_date) as date) as period, sum(funding_rc) as mart from marts.futures_pnl_daily where symbol is null and funding_rc is not null group by period),
       commission as (select period, -sum(net) as journal from journal where ledger_account = 'Commission income' group by period),
       commission_mart as (select commission_month as period, sum(commission_rc) as mart from marts.affiliate_rebates_monthly where commission_rc is not null group by period)
       select 'gains' as what, cast(coalesce(gains.period, pnl.period) as varchar) as period, gains.journal, pnl.mart from gains full join pnl using (period)
       union all select 'fees', cast(period as varchar), fees.journal, fee_mart.mart from fees full join fee_mart using (period)
       union all select 'funding', cast(period as varchar), funding.journal, funding_mart.mart from funding full join funding_mart using (period)
       union all select 'commission', cast(period as varchar), commission.journal, commission_mart.mart from commission full join commission_mart using (period)
       order by what, period`,
    );
    expect(trimmed(agreement)).toEqual([
      { what: 'commission', period: '2026-02-01', journal: '1.503', mart: '1.503' },
      // 18 * 0.998 + 18.6 * 0.998
      { what: 'fees', period: '2026-01-01', journal: '36.5268', mart: '36.5268' },
      // -2.495 + 1.2475
      { what: 'funding', period: '2026-01-01', journal: '-1.2475', mart: '-1.2475' },
      // 3972.04 - 506.485 + 499
      { what: 'gains', period: '2026-01-01', journal: '3964.555', mart: '3964.555' },
    ]);

    // The singular check passes, and fails on an entry that no longer balances.
    const balance = async () => (await checkModels(database)).find((result) => result.id === 'marts/journal_entries_balance');
    expect(await balance()).toMatchObject({ status: 'pass' });
    await database.run("UPDATE marts.journal_entries SET credit = credit + 0.000000000001 WHERE entry_id = 'fees/main/futures/USDT/2026-01-20' AND line_no = 2");
    expect(await balance()).toMatchObject({ status: 'fail' });
  });

  it('defaults: the first cost method and the default chart of accounts; recorded with each model', async () => {
    const database = await ledger({ journal: undefined });
    expect(await queryRows(database, "select distinct ledger_account from marts.journal_entries order by 1")).toEqual(
      ['Commission income', 'Digital assets:USDT', 'Funding expense', 'Funding income', 'Realized gains and losses', 'Trading fees'].map((ledger_account) => ({ ledger_account })),
    );
    // fifo, the first of costMethods: 4980 USDT * 0.998.
    expect(trimmed(await queryRows(database, "select debit from marts.journal_entries where kind = 'spot_realized_pnl' and line_no = 1 and entry_date = '2026-01-20'"))).toEqual([{ debit: '4970.04' }]);
    expect(await queryRows(database, "select journal from settings.model_builds where model = 'marts.journal_entries'")).toEqual([
      {
        journal:
          'spot cost method fifo; accounts digitalAssets "Digital assets:{coin}", realizedGains "Realized gains and losses", tradingFees "Trading fees", otherFees "Other exchange fees", fundingIncome "Funding income", fundingExpense "Funding expense", commissionIncome "Commission income"',
      },
    ]);
  });

  it('a spot PnL beyond DECIMAL(38,18) (|amount| >= 1e20) is posted from its exact value; its native amount is unknown', async () => {
    db = await openModelDb();
    const database = db;
    // Buy 1e12 BTC at 1 USDT, sell them at 2e8: PnL 1e12 * 2e8 - 1e12 * 1 = 199999999000000000000 USDT
    // (2e20: legal in spot_realized_pnl_daily's DECIMAL(38,12), too large for the journal's (38,18)),
    // * 0.998 = 199599999002000000000 USD.
    await insertHistory(database, 'spot_fills', [
      spotFill('BTCUSDT_SPBL', '1', '2026-01-10T10:00:00Z', 'buy', '1000000000000', '1'),
      spotFill('BTCUSDT_SPBL', '2', '2026-01-20T10:00:00Z', 'sell', '1000000000000', '200000000'),
    ]);
    await buildAll(database, { costMethods: ['fifo'], reportingCurrency: 'USD', prices: readPricesFile(pricesFile()) });
    const entry = 'spot-pnl/main/fifo/BTCUSDT_SPBL/2026-01-20';
    expect(trimmed(await queryRows(database, 'select entry_id, amount, amount_rc, status from marts.journal_sources'))).toEqual([
      { entry_id: entry, amount: null, amount_rc: '199599999002000000000', status: 'posted' },
    ]);
    // The journal's scale is kept (DECIMAL(38,18) for amount, not the union's (38,12)).
    expect(await queryRows(database, "select column_name, data_type from information_schema.columns where table_schema = 'marts' and table_name = 'journal_sources' and column_name like 'amount%' order by 1")).toEqual([
      { column_name: 'amount', data_type: 'DECIMAL(38,18)' },
      { column_name: 'amount_rc', data_type: 'DECIMAL(38,12)' },
    ]);
    // Exact in its source mart, which the row names.
    expect(trimmed(await queryRows(database, "select realized_pnl from marts.spot_realized_pnl_daily where trade_date = '2026-01-20'"))).toEqual([{ realized_pnl: '199999999000000000000' }]);
    // Posted for its value; the coin amount is unknown (NULL, never 0) and the memo says where it is exact.
    expect(trimmed(await queryRows(database, `select line_no, ledger_account, debit, credit, coin_amount, memo from marts.journal_entries order by line_no`))).toEqual([
      { line_no: 1, ledger_account: 'Digital assets:USDT', debit: '199599999002000000000', credit: '0', coin_amount: null, memo: 'Spot realized PnL BTCUSDT_SPBL (fifo): USDT amount too large for 18 decimals (exact in marts.spot_realized_pnl_daily)' },
      { line_no: 2, ledger_account: 'Realized gains and losses', debit: '0', credit: '199599999002000000000', coin_amount: null, memo: 'Spot realized PnL BTCUSDT_SPBL (fifo): USDT amount too large for 18 decimals (exact in marts.spot_realized_pnl_daily)' },
    ]);
    // Every check passes (the journal balances; amount and coin_amount may be NULL).
    expect((await checkModels(database)).filter((result) => result.status !== 'pass')).toEqual([]);

    // The workbook shows the coin amount as "unknown" (never blank or 0); the CSV posts the exact value.
    const outDir = mkdtempSync(path.join(tmpdir(), 'exledger-journal-out-'));
    folders.push(outDir);
    const written = await writeReport(database, journalReport, { streams: STREAMS, coinFormats: COIN_FORMATS, period: { label: '2026-01', from: '2026-01-01', to: '2026-01-31' }, outDir });
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(written.file);
    // The coin amount is on the lines' sources, row for row with the Journal lines.
    const sheet = workbook.getWorksheet('Journal line sources')!;
    const header = (sheet.getRow(1).values as unknown[]).indexOf('Coin amount');
    expect(header).toBeGreaterThan(0);
    expect([2, 3].map((row) => sheet.getRow(row).getCell(header).value)).toEqual(['unknown', 'unknown']);
    expect(readFileSync(written.csv!.file, 'utf8').split('\r\n')[1]).toBe(
      `2026-01-20,Digital assets:USDT,199599999002000000000,,USD,Spot realized PnL BTCUSDT_SPBL (fifo): USDT amount too large for 18 decimals (exact in marts.spot_realized_pnl_daily),${entry}`,
    );
  });

  it('without a reporting currency the journal is empty', async () => {
    const database = await ledger({ reportingCurrency: null, prices: null });
    expect(await queryRows(database, 'select (select count(*) from marts.journal_entries) as lines, (select count(*) from marts.journal_sources) as sources')).toEqual([{ lines: '0', sources: '0' }]);
  });

  it('models.journal in the config: names kept, the rest defaulted; a bad name or a cost method not built is a ConfigError naming the key', () => {
    const resolve = (models: object) => resolveConfig({ values: { models } }, {}, tmpdir());
    expect(resolve({ costMethods: ['fifo', 'uk'], journal: { costMethod: 'uk', accounts: { digitalAssets: 'Crypto:{coin}' } } }).models.journal).toEqual({
      costMethod: 'uk',
      accounts: { ...DEFAULT_CHART_OF_ACCOUNTS, digitalAssets: 'Crypto:{coin}' },
    });
    expect(resolve({}).models.journal).toBeUndefined();
    expect(() => resolve({ journal: { accounts: { tradingFees: 'Fees:{symbol}' } } })).toThrow(ConfigError);
    expect(() => resolve({ journal: { accounts: { tradingFees: 'Fees:{symbol}' } } })).toThrow('settings: models.journal.accounts.tradingFees: the only placeholders are {coin} and {account}');
    expect(() => resolve({ journal: { accounts: { tradingFees: '  ' } } })).toThrow('models.journal.accounts.tradingFees: must not be empty');
    expect(() => resolve({ journal: { accounts: { otherFees: 'Fees\nOther' } } })).toThrow('models.journal.accounts.otherFees: no line breaks or control characters');
    expect(() => resolve({ journal: { accounts: { tradingFee: 'Fees' } } })).toThrow(/models\.journal\.accounts/);
    expect(() => resolve({ costMethods: ['fifo'], journal: { costMethod: 'average' } })).toThrow('models.journal.costMethod: "average" is not one of the cost methods built (fifo)');
  });
});
