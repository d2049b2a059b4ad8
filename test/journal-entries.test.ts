import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../src/config/config.ts';
import { ConfigError } from '../src/errors.ts';
import { checkModels } from '../src/models/check.ts';
import { readPricesFile } from '../src/models/prices-file.ts';
import { buildModels } from '../src/models/build.ts';
import { DEFAULT_CHART_OF_ACCOUNTS, DEFAULT_MODEL_SETTINGS, type ModelSettings } from '../src/models/settings.ts';
import type { Database } from '../src/store/database.ts';
import { buildAll, futuresAccountRecord, insertHistory, insertSnapshot, openModelDb, queryRows, spotFill } from './support/model-db.ts';

/**
 * marts.journal_entries (docs/workbooks.md "Journal entries", "Books in the reporting currency") on a
 * hand-made ledger of account main, zone UTC, reporting currency USD, cost methods average and
 * fifo, the journal posting fifo. Prices file: USDT in USD 0.998 on 2026-01-09, -10, -15, -20,
 * -31 and 1.002 on 2026-02-10 (none on -12 and -25); BTC has the prices derived from that day's
 * BTCUSDT fills (30000 * 0.998 = 29940 on 01-10, 33932 on 01-15, 39920 on 01-20, 29940 on 01-31).
 * Deposit 100000 USDT on 01-09 (99800 USD). Spot BTCUSDT (fees: 0 on buys; on sells in USDT):
 *   01-10 buy 1 @ 30000: BTC lot 29940 USD; 01-15 buy 1 @ 34000: BTC lot 33932 USD
 *   01-20 sell 0.5 @ 40000, fee 20: worth 0.5 BTC at 39920 = 19960; fifo cost 14970; gain 4990; the fee 19.96
 *   01-25 sell 0.25 @ 20000, fee 11: no price: the BTC's cost (7485) and the fee's (10.978) go to suspense
 *   01-31 sell 0.25 @ 30000, fee 7.5
 * Futures cmt_btcusdt (margin USDT): fees 18 on 01-20, 18.6 and PnL 500 on 01-31; funding (running
 *   total paid): 5 by the first snapshot on 01-10, 7.5 on 01-20, 6.25 on 01-31.
 * Commission (USDT): 0.8 on 01-10, 0.2 on 01-12 (no price: not posted), 1.5 on 02-10.
 */

const PRICES = ['date,coin,currency,price', '2026-01-09,USDT,USD,0.998', '2026-01-10,USDT,USD,0.998', '2026-01-15,USDT,USD,0.998', '2026-01-20,USDT,USD,0.998', '2026-01-31,USDT,USD,0.998', '2026-02-10,USDT,USD,1.002', ''].join('\n');

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
  await insertHistory(db, 'funding_bills', [
    { billId: '501', coinId: 2, coinName: 'USDT', bizType: 'deposit', deltaAmount: '100000', afterAmount: '100000', fees: '0', cTime: String(Date.parse('2026-01-09T12:00:00Z')) },
  ]);
  await insertHistory(db, 'spot_fills', [
    // With their totals, as the exchange sends them: BTC's prices are derived from them.
    spotFill('BTCUSDT_SPBL', '1', '2026-01-10T10:00:00Z', 'buy', '1', '30000', '0', '30000'),
    spotFill('BTCUSDT_SPBL', '2', '2026-01-15T10:00:00Z', 'buy', '1', '34000', '0', '34000'),
    spotFill('BTCUSDT_SPBL', '3', '2026-01-20T10:00:00Z', 'sell', '0.5', '40000', '20', '20000'),
    spotFill('BTCUSDT_SPBL', '4', '2026-01-25T10:00:00Z', 'sell', '0.25', '20000', '11', '5000'),
    spotFill('BTCUSDT_SPBL', '5', '2026-01-31T10:00:00Z', 'sell', '0.25', '30000', '7.5', '7500'),
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
    costMethods: ['average', 'fifo'],
    reportingCurrency: 'USD',
    prices: readPricesFile(pricesFile()),
    journal: { costMethod: 'fifo', accounts: { ...DEFAULT_CHART_OF_ACCOUNTS, digitalAssets: 'Crypto:{account}:{coin}', tradingFees: 'Fees:Trading' } },
    ...settings,
  });
  return db;
}

describe('marts.journal_entries', () => {
  it('posts every movement on the configured chart of accounts: a trade as an acquisition and a disposal, the gain realized; what has no price goes to suspense, never to 0', async () => {
    const database = await ledger();
    const entry = async (entryId: string) =>
      trimmed(await queryRows(database, `select line_no, ledger_account, coin, debit, credit, coin_amount, kind from marts.journal_entries where entry_id = '${entryId}' order by line_no`));
    // The sale of 0.5 BTC on 01-20 for 20000 USDT, less a 20 USDT fee: worth 0.5 * 39920 = 19960;
    // fifo cost 0.5 * 29940 = 14970; gain 4990. The USDT received (19960) less the fee's USDT at cost
    // (20 * 0.998 = 19.96, paid for 19.96: no gain) is one line of USDT.
    expect(await entry('spot/main/3')).toEqual([
      { line_no: 1, ledger_account: 'Crypto:main:USDT', coin: 'USDT', debit: '19940.04', credit: '0', coin_amount: '19980', kind: 'trade' },
      { line_no: 2, ledger_account: 'Fees:Trading', coin: 'USDT', debit: '19.96', credit: '0', coin_amount: null, kind: 'trade' },
      { line_no: 3, ledger_account: 'Crypto:main:BTC', coin: 'BTC', debit: '0', credit: '14970', coin_amount: '0.5', kind: 'trade' },
      { line_no: 4, ledger_account: 'Realized gains and losses', coin: 'BTC', debit: '0', credit: '4990', coin_amount: null, kind: 'trade' },
    ]);
    // The buy of 01-10: 1 BTC for 30000 USDT, both worth 29940; the USDT paid cost 29940 (the deposit's lot): no gain.
    expect(await entry('spot/main/1')).toEqual([
      { line_no: 1, ledger_account: 'Crypto:main:BTC', coin: 'BTC', debit: '29940', credit: '0', coin_amount: '1', kind: 'trade' },
      { line_no: 2, ledger_account: 'Crypto:main:USDT', coin: 'USDT', debit: '0', credit: '29940', coin_amount: '30000', kind: 'trade' },
    ]);
    // 01-25 has no price: the 0.25 BTC given up leave the books at their cost (7485) and the fee's
    // 11 USDT at theirs (10.978), both into suspense; the USDT received has no value: no line.
    expect(await entry('spot/main/4')).toEqual([
      { line_no: 1, ledger_account: 'Suspense:unvalued', coin: 'BTC', debit: '7485', credit: '0', coin_amount: null, kind: 'trade' },
      { line_no: 2, ledger_account: 'Suspense:unvalued', coin: 'USDT', debit: '10.978', credit: '0', coin_amount: null, kind: 'trade' },
      { line_no: 3, ledger_account: 'Crypto:main:BTC', coin: 'BTC', debit: '0', credit: '7485', coin_amount: '0.25', kind: 'trade' },
      { line_no: 4, ledger_account: 'Crypto:main:USDT', coin: 'USDT', debit: '0', credit: '10.978', coin_amount: '11', kind: 'trade' },
    ]);
    expect(await queryRows(database, "select status from marts.journal_sources where entry_id = 'spot/main/4'")).toEqual([{ status: 'suspense' }]);
    // Income at its value: commission of 02-10 (1.5 * 1.002); the one of 01-12 has no price: not posted.
    const commissions = trimmed(await queryRows(database, "select entry_date::varchar as day, status, amount, amount_rc from marts.journal_sources where kind = 'commission' order by entry_date"));
    expect(commissions).toEqual([
      { day: '2026-01-10', status: 'posted', amount: '0.8', amount_rc: '0.7984' },
      { day: '2026-01-12', status: 'no_price', amount: '0.2', amount_rc: null },
      { day: '2026-02-10', status: 'posted', amount: '1.5', amount_rc: '1.503' },
    ]);
    expect(await queryRows(database, "select count(*) as n from marts.journal_entries where entry_id in (select entry_id from marts.journal_sources where status in ('no_price', 'zero_value'))")).toEqual([{ n: '0' }]);
    // Futures: the day's fees an expense, a gain credited; funding paid an expense.
    expect(trimmed(await queryRows(database, "select ledger_account, sum(net_amount) as net from marts.journal_entries where product = 'futures' and ledger_account not like 'Crypto:%' group by 1 order by 1"))).toEqual([
      // 18 * 0.998 + 18.6 * 0.998
      { ledger_account: 'Fees:Trading', net: '36.5268' },
      // 5 (settled before the first snapshot) * 0.998 + 2.5 * 0.998, less 1.25 * 0.998 received
      { ledger_account: 'Funding expense', net: '7.485' },
      { ledger_account: 'Funding income', net: '-1.2475' },
      // 500 * 0.998
      { ledger_account: 'Realized gains and losses', net: '-499' },
    ]);
    // Every line keeps a way back to its source record.
    expect(await queryRows(database, "select distinct source_model, source_key, memo from marts.journal_entries where entry_id = 'spot/main/3'")).toEqual([
      { source_model: 'staging.spot_fills', source_key: 'account=main; fill_id=3', memo: 'Spot sell BTCUSDT_SPBL fill 3' },
    ]);
  });

  it('every entry balances, and the sub-ledger ties: each coin\'s digital-assets account equals the cost of the lots held at every month end (journal_ties_to_holdings); broken on purpose, the check fails', async () => {
    const database = await ledger();
    expect(await queryRows(database, 'select entry_id from marts.journal_entries group by entry_id having sum(debit) <> sum(credit) or count(*) < 2')).toEqual([]);
    const tie = async () => (await checkModels(database)).find((result) => result.id === 'marts/journal_ties_to_holdings');
    const balance = async () => (await checkModels(database)).find((result) => result.id === 'marts/journal_entries_balance');
    expect(await tie()).toMatchObject({ status: 'pass' });
    expect(await balance()).toMatchObject({ status: 'pass' });
    // What the tie compares: BTC at the end of January: 2 bought, 1 sold (01-10's lot, fifo), 01-15's lot (33932) held.
    expect(trimmed(await queryRows(database, `select sum(net_amount) as balance from marts.journal_entries where ledger_account = 'Crypto:main:BTC' and entry_date <= '2026-01-31'`))).toEqual([{ balance: '33932' }]);
    expect(trimmed(await queryRows(database, `select exact_money(arg_max(carrying_e12, event_seq)) as held, exact_qty(arg_max(holding_e18, event_seq)) as units from intermediate.int_coin_lots where coin = 'BTC' and cost_method = 'fifo'`))).toEqual([{ held: '33932', units: '1' }]);

    // A lot whose cost moves without its journal line: the tie fails at that coin and month end.
    await database.run("UPDATE intermediate.int_coin_lots SET carrying_e12 = carrying_e12 + 1 WHERE coin = 'BTC' AND cost_method = 'fifo' AND event_seq = (SELECT max(event_seq) FROM intermediate.int_coin_lots WHERE coin = 'BTC')");
    expect(await tie()).toMatchObject({ status: 'fail', offending: 1, sample: [{ pool: 'main', coin: 'BTC', month_end: '2026-01-31' }] });
    await database.run("UPDATE intermediate.int_coin_lots SET carrying_e12 = carrying_e12 - 1 WHERE coin = 'BTC' AND cost_method = 'fifo' AND event_seq = (SELECT max(event_seq) FROM intermediate.int_coin_lots WHERE coin = 'BTC')");
    expect(await tie()).toMatchObject({ status: 'pass' });
    // A journal line that no longer balances its entry: both checks fail.
    await database.run("UPDATE marts.journal_entries SET credit = credit + 0.000000000001, net_amount = net_amount - 0.000000000001 WHERE entry_id = 'spot/main/1' AND line_no = 2");
    expect(await balance()).toMatchObject({ status: 'fail' });
    expect(await tie()).toMatchObject({ status: 'fail' });
  });

  it('defaults: the first cost method and the default chart of accounts; recorded with each model', async () => {
    const database = await ledger({ journal: undefined });
    expect(await queryRows(database, 'select distinct ledger_account from marts.journal_entries order by 1')).toEqual(
      [
        'Commission income',
        'Digital assets:BTC',
        'Digital assets:USDT',
        'Funding expense',
        'Funding income',
        'Realized gains and losses',
        'Suspense:unvalued',
        'Trading fees',
        'Transfers clearing:external',
      ].map((ledger_account) => ({ ledger_account })),
    );
    expect(await queryRows(database, "select distinct cost_method from marts.journal_entries")).toEqual([{ cost_method: 'average' }]);
    expect(await queryRows(database, "select journal from settings.model_builds where model = 'marts.journal_entries'")).toEqual([
      {
        journal:
          'cost method average; trade value given; fees expense; valuation cost; accounts digitalAssets "Digital assets:{coin}", realizedGains "Realized gains and losses", tradingFees "Trading fees", otherFees "Other exchange fees", fundingIncome "Funding income", fundingExpense "Funding expense", commissionIncome "Commission income", transfersClearing "Transfers clearing:{counterpart}", suspense "Suspense:unvalued", unrealizedGains "Unrealized gains and losses", futuresPositions "Futures positions:{contract}"',
      },
    ]);
  });

  it('a spot fill moving 1.7e20 coins or more: the books fail by name (their units cannot hold it), the spot PnL marts keep it exactly', async () => {
    db = await openModelDb();
    const database = db;
    // Buy 1e12 BTC at 1 USDT, sell them at 2e8: 2e20 USDT received, beyond the books' 1.7e20.
    await insertHistory(database, 'spot_fills', [
      spotFill('BTCUSDT_SPBL', '1', '2026-01-10T10:00:00Z', 'buy', '1000000000000', '1'),
      spotFill('BTCUSDT_SPBL', '2', '2026-01-20T10:00:00Z', 'sell', '1000000000000', '200000000'),
    ]);
    const results = await buildModels(database, { ...DEFAULT_MODEL_SETTINGS, costMethods: ['fifo'], reportingCurrency: 'USD', prices: readPricesFile(pricesFile()) });
    const failed = results.filter((result) => result.status === 'failed');
    expect(failed.map((result) => result.id)).toEqual(['intermediate.int_coin_events']);
    expect(failed[0]!.message).toContain('the books hold coin amounts below 1.7e20: fill 2 of main (BTCUSDT_SPBL) moves 200000000000000000000.000000000000 USDT');
    // What reads the books is not built (and says why); the quote-coin PnL is exact.
    expect(results.filter((result) => result.status === 'skipped').map((result) => result.id)).toContain('marts.journal_entries');
    expect(trimmed(await queryRows(database, "select realized_pnl from marts.spot_realized_pnl_daily where trade_date = '2026-01-20'"))).toEqual([{ realized_pnl: '199999999000000000000' }]);
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
      posting: 'detail',
    });
    expect(resolve({ journal: { posting: 'summary' } }).models.journal).toEqual({ costMethod: 'fifo', accounts: DEFAULT_CHART_OF_ACCOUNTS, posting: 'summary' });
    expect(resolve({}).models.journal).toBeUndefined();
    expect(() => resolve({ journal: { accounts: { tradingFees: 'Fees:{symbol}' } } })).toThrow(ConfigError);
    expect(() => resolve({ journal: { accounts: { tradingFees: 'Fees:{symbol}' } } })).toThrow('settings: models.journal.accounts.tradingFees: the only placeholders are {coin}, {account}, {counterpart} and {contract}');
    expect(() => resolve({ journal: { accounts: { tradingFees: '  ' } } })).toThrow('models.journal.accounts.tradingFees: must not be empty');
    expect(() => resolve({ journal: { accounts: { otherFees: 'Fees\nOther' } } })).toThrow('models.journal.accounts.otherFees: no line breaks or control characters');
    expect(() => resolve({ journal: { accounts: { tradingFee: 'Fees' } } })).toThrow(/models\.journal\.accounts/);
    expect(() => resolve({ costMethods: ['fifo'], journal: { costMethod: 'average' } })).toThrow('models.journal.costMethod: "average" is not one of the cost methods built (fifo)');
  });
});
