import { afterEach, describe, expect, it } from 'vitest';
import { checkModels, type TestResult } from '../src/models/check.ts';
import type { Database } from '../src/store/database.ts';
import { buildAll, insertHistory, insertSnapshot, openModelDb, queryRows } from './support/model-db.ts';

/**
 * Balance reconciliation from funding bills (sql/intermediate/int_ledger_events.sql,
 * sql/marts/balance_*.sql) on hand-written ledgers. Bills are written as the exchange sends them:
 * deltaAmount signed and net of the fee (`fees` is informational), afterAmount the balance after.
 */

let db: Database | undefined;
afterEach(() => {
  db?.close();
  db = undefined;
});

const COIN_IDS: Record<string, number> = { BTC: 1, USDT: 2, ETH: 3, SOL: 7, DOGE: 9 };

/** A funding bill as the exchange sends it. */
function bill(billId: string, iso: string, coinName: string, bizType: string, deltaAmount: string, afterAmount: string, fees = '0') {
  return { billId, coinId: COIN_IDS[coinName], coinName, bizType, deltaAmount, afterAmount, fees, cTime: String(Date.parse(iso)) };
}

/** An asset entry (exchange-api.md 2.4). */
function asset(coinName: string, available: string, frozen: string, equity: string) {
  return { coinId: COIN_IDS[coinName], coinName, available, frozen, equity };
}

/** A DECIMAL string without trailing zeros: '1098.900000000000000000' → '1098.9'. */
function trim(value: unknown): unknown {
  if (typeof value !== 'string' || !/^-?\d+\.\d+$/.test(value)) return value;
  return value.replace(/0+$/, '').replace(/\.$/, '');
}

function trimRows(rows: Record<string, unknown>[]): Record<string, unknown>[] {
  return rows.map((row) => Object.fromEntries(Object.entries(row).map(([key, value]) => [key, trim(value)])));
}

async function rows(sql: string): Promise<Record<string, unknown>[]> {
  return trimRows(await queryRows<Record<string, unknown>>(db!, sql));
}

/**
 * The clean ledger of account main (times UTC; Tokyo is UTC+9, no DST):
 *
 * USDT, from 0:
 *   9   2026-01-05 10:00:00   deposit      +1000              after 1000
 *   10  2026-01-05 10:00:00   deposit      +500               after 1500   same ms: 9 before 10 as numbers ('10' < '9' as text)
 *   12  2026-01-10 12:00:00   buy          -300               after 1200   quote leg of buying 0.003 BTC at 100000
 *   15  2026-01-20 08:00:00   sell         +99.9   fee 0.1    after 1299.9 quote leg of selling 0.001 BTC at 100000: 100 - 0.1
 *   16  2026-01-31 16:30:00   withdraw     -201    fee 1      after 1098.9 200 + fee 1; in Tokyo 2026-02-01 01:30, February
 *   17  2026-02-10 00:00:00   transfer_out -98.9              after 1000
 *   18  2026-02-11 00:00:00   transfer_in  +50                after 1050
 *   19  2026-03-31 15:00:00   c2c_buy      +300               after 1350   in Tokyo exactly 2026-04-01 00:00, April
 *   20  2026-04-03 00:00:00   c2c_sell     -350               after 1000
 * BTC, from 0:
 *   11  2026-01-10 12:00:00   buy          +0.00299 fee 0.00001 after 0.00299  0.003 bought, fee in BTC
 *   14  2026-01-20 08:00:00   sell         -0.001             after 0.00199
 * SOL: history starts after the account was funded: the first bill's balance before it is 10, not 0.
 *   30  2026-02-15 00:00:00   withdraw     -2.01   fee 0.01   after 7.99   before = 7.99 + 2.01 = 10
 */
const CLEAN_LEDGER = [
  bill('9', '2026-01-05T10:00:00Z', 'USDT', 'deposit', '1000', '1000'),
  bill('10', '2026-01-05T10:00:00Z', 'USDT', 'deposit', '500', '1500'),
  bill('11', '2026-01-10T12:00:00Z', 'BTC', 'buy', '0.00299', '0.00299', '0.00001'),
  bill('12', '2026-01-10T12:00:00Z', 'USDT', 'buy', '-300', '1200'),
  bill('14', '2026-01-20T08:00:00Z', 'BTC', 'sell', '-0.001', '0.00199'),
  bill('15', '2026-01-20T08:00:00Z', 'USDT', 'sell', '99.9', '1299.9', '0.1'),
  bill('16', '2026-01-31T16:30:00Z', 'USDT', 'withdraw', '-201', '1098.9', '1'),
  bill('17', '2026-02-10T00:00:00Z', 'USDT', 'transfer_out', '-98.9', '1000'),
  bill('18', '2026-02-11T00:00:00Z', 'USDT', 'transfer_in', '50', '1050'),
  bill('30', '2026-02-15T00:00:00Z', 'SOL', 'withdraw', '-2.01', '7.99', '0.01'),
  bill('19', '2026-03-31T15:00:00Z', 'USDT', 'c2c_buy', '300', '1350'),
  bill('20', '2026-04-03T00:00:00Z', 'USDT', 'c2c_sell', '-350', '1000'),
];

const RECONCILIATION_COLUMNS = 'balance_month::VARCHAR AS month, opening_balance AS opening, total_inflow AS inflow, total_outflow AS outflow, fees, closing_balance AS closing, computed_closing AS computed, difference, bill_count::VARCHAR AS bills';

function balanceTests(results: readonly TestResult[]): Record<string, TestResult> {
  return Object.fromEntries(results.filter((result) => /\/(balance_|int_ledger_events_)/.test(result.id)).map((result) => [result.id, result]));
}

describe('balance reconciliation from funding bills', () => {
  it('rolls each coin forward month by month in UTC: opening, inflow, outflow, fees, closing; empty months carried', async () => {
    db = await openModelDb();
    await insertHistory(db, 'funding_bills', CLEAN_LEDGER);
    await buildAll(db);

    expect(await rows(`SELECT ${RECONCILIATION_COLUMNS} FROM marts.balance_reconciliation WHERE coin_name = 'USDT' ORDER BY balance_month`)).toEqual([
      // January: in 1000 + 500 + 99.9 = 1599.9; out 300 + 201 = 501; fees 0.1 + 1 = 1.1 (already inside the deltas);
      // 0 + 1599.9 - 501 = 1098.9 = after_amount of bill 16.
      { month: '2026-01-01', opening: '0', inflow: '1599.9', outflow: '501', fees: '1.1', closing: '1098.9', computed: '1098.9', difference: '0', bills: '5' },
      // February: 1098.9 + 50 - 98.9 = 1050.
      { month: '2026-02-01', opening: '1098.9', inflow: '50', outflow: '98.9', fees: '0', closing: '1050', computed: '1050', difference: '0', bills: '2' },
      // March: 1050 + 300 = 1350 (bill 19 is 2026-03-31 15:00 UTC).
      { month: '2026-03-01', opening: '1050', inflow: '300', outflow: '0', fees: '0', closing: '1350', computed: '1350', difference: '0', bills: '1' },
      // April: 1350 - 350 = 1000.
      { month: '2026-04-01', opening: '1350', inflow: '0', outflow: '350', fees: '0', closing: '1000', computed: '1000', difference: '0', bills: '1' },
    ]);

    // BTC moved in January only; February to April (the account's last month) carry 0.00199 forward.
    // January: in 0.00299, out 0.001, fee 0.00001 (inside the buy's delta: 0.003 - 0.00001); 0 + 0.00299 - 0.001 = 0.00199.
    expect(await rows(`SELECT ${RECONCILIATION_COLUMNS} FROM marts.balance_reconciliation WHERE coin_name = 'BTC' ORDER BY balance_month`)).toEqual([
      { month: '2026-01-01', opening: '0', inflow: '0.00299', outflow: '0.001', fees: '0.00001', closing: '0.00199', computed: '0.00199', difference: '0', bills: '2' },
      { month: '2026-02-01', opening: '0.00199', inflow: '0', outflow: '0', fees: '0', closing: '0.00199', computed: '0.00199', difference: '0', bills: '0' },
      { month: '2026-03-01', opening: '0.00199', inflow: '0', outflow: '0', fees: '0', closing: '0.00199', computed: '0.00199', difference: '0', bills: '0' },
      { month: '2026-04-01', opening: '0.00199', inflow: '0', outflow: '0', fees: '0', closing: '0.00199', computed: '0.00199', difference: '0', bills: '0' },
    ]);

    // SOL's synced history starts at a balance of 10 (7.99 + 2.01): that is its opening, not a break.
    expect(await rows(`SELECT ${RECONCILIATION_COLUMNS} FROM marts.balance_reconciliation WHERE coin_name = 'SOL' ORDER BY balance_month`)).toEqual([
      { month: '2026-02-01', opening: '10', inflow: '0', outflow: '2.01', fees: '0.01', closing: '7.99', computed: '7.99', difference: '0', bills: '1' },
      { month: '2026-03-01', opening: '7.99', inflow: '0', outflow: '0', fees: '0', closing: '7.99', computed: '7.99', difference: '0', bills: '0' },
      { month: '2026-04-01', opening: '7.99', inflow: '0', outflow: '0', fees: '0', closing: '7.99', computed: '7.99', difference: '0', bills: '0' },
    ]);

    // The wide table's net column per business type: January USDT deposit 1000 + 500, buy -300, sell +99.9, withdraw -201.
    expect(
      await rows(
        "SELECT net_deposit, net_withdraw, net_transfer_in, net_transfer_out, net_buy, net_sell, net_c2c_buy, net_c2c_sell, net_other, last_bill_id FROM marts.balance_reconciliation WHERE coin_name = 'USDT' AND balance_month = '2026-01-01'",
      ),
    ).toEqual([
      { net_deposit: '1500', net_withdraw: '-201', net_transfer_in: '0', net_transfer_out: '0', net_buy: '-300', net_sell: '99.9', net_c2c_buy: '0', net_c2c_sell: '0', net_other: '0', last_bill_id: '16' },
    ]);

    // The bills of one millisecond are chained by bill_id as a number: 9 (after 1000) then 10 (before 1000).
    expect(await rows("SELECT bill_id, chain_seq::VARCHAR AS seq, before_amount, previous_bill_id FROM intermediate.int_ledger_events WHERE coin_name = 'USDT' ORDER BY chain_seq LIMIT 2")).toEqual([
      { bill_id: '9', seq: '1', before_amount: '0', previous_bill_id: null },
      { bill_id: '10', seq: '2', before_amount: '1000', previous_bill_id: '9' },
    ]);
    expect(await rows('SELECT count(*)::VARCHAR AS n FROM marts.balance_chain_breaks')).toEqual([{ n: '0' }]);
  });

  it('cuts months in the reporting time zone and splits movements by business type', async () => {
    db = await openModelDb();
    await insertHistory(db, 'funding_bills', CLEAN_LEDGER);
    await buildAll(db, { reportingTimeZone: 'Asia/Tokyo' });

    expect(await rows(`SELECT ${RECONCILIATION_COLUMNS} FROM marts.balance_reconciliation WHERE coin_name = 'USDT' ORDER BY balance_month`)).toEqual([
      // In Tokyo the withdrawal (bill 16, 2026-02-01 01:30 local) belongs to February.
      // January: in 1000 + 500 + 99.9 = 1599.9; out 300; fee 0.1; 0 + 1599.9 - 300 = 1299.9 = after of bill 15.
      { month: '2026-01-01', opening: '0', inflow: '1599.9', outflow: '300', fees: '0.1', closing: '1299.9', computed: '1299.9', difference: '0', bills: '4' },
      // February: in 50; out 201 + 98.9 = 299.9; fee 1; 1299.9 + 50 - 299.9 = 1050.
      { month: '2026-02-01', opening: '1299.9', inflow: '50', outflow: '299.9', fees: '1', closing: '1050', computed: '1050', difference: '0', bills: '3' },
      // March has no bill in Tokyo (bill 19 is 2026-04-01 00:00 local): carried forward.
      { month: '2026-03-01', opening: '1050', inflow: '0', outflow: '0', fees: '0', closing: '1050', computed: '1050', difference: '0', bills: '0' },
      // April: 1050 + 300 - 350 = 1000.
      { month: '2026-04-01', opening: '1050', inflow: '300', outflow: '350', fees: '0', closing: '1000', computed: '1000', difference: '0', bills: '2' },
    ]);

    // The long table, one row per business type: what an Excel sheet pivots on.
    expect(
      await rows(
        "SELECT balance_month::VARCHAR AS month, biz_type, inflow, outflow, net_change, fees, bill_count::VARCHAR AS bills FROM marts.balance_movements WHERE coin_name = 'USDT' ORDER BY balance_month, biz_type",
      ),
    ).toEqual([
      { month: '2026-01-01', biz_type: 'buy', inflow: '0', outflow: '300', net_change: '-300', fees: '0', bills: '1' },
      { month: '2026-01-01', biz_type: 'deposit', inflow: '1500', outflow: '0', net_change: '1500', fees: '0', bills: '2' },
      { month: '2026-01-01', biz_type: 'sell', inflow: '99.9', outflow: '0', net_change: '99.9', fees: '0.1', bills: '1' },
      { month: '2026-02-01', biz_type: 'transfer_in', inflow: '50', outflow: '0', net_change: '50', fees: '0', bills: '1' },
      { month: '2026-02-01', biz_type: 'transfer_out', inflow: '0', outflow: '98.9', net_change: '-98.9', fees: '0', bills: '1' },
      // 200 withdrawn + 1 fee = 201 left the balance.
      { month: '2026-02-01', biz_type: 'withdraw', inflow: '0', outflow: '201', net_change: '-201', fees: '1', bills: '1' },
      { month: '2026-04-01', biz_type: 'c2c_buy', inflow: '300', outflow: '0', net_change: '300', fees: '0', bills: '1' },
      { month: '2026-04-01', biz_type: 'c2c_sell', inflow: '0', outflow: '350', net_change: '-350', fees: '0', bills: '1' },
    ]);

    // Per month and coin, the movements sum to the reconciliation's inflow and outflow.
    expect(
      await rows(`
        SELECT count(*)::VARCHAR AS mismatches FROM marts.balance_reconciliation r
        LEFT JOIN (SELECT account, coin_name, balance_month, sum(inflow) AS i, sum(outflow) AS o FROM marts.balance_movements GROUP BY ALL) m USING (account, coin_name, balance_month)
        WHERE coalesce(m.i, 0) <> r.total_inflow OR coalesce(m.o, 0) <> r.total_outflow`),
    ).toEqual([{ mismatches: '0' }]);

    const tests = balanceTests(await checkModels(db));
    for (const id of ['marts/balance_chain_unbroken', 'marts/balance_reconciliation_rolls_forward', 'marts/balance_reconciliation_unique', 'marts/balance_movements_unique', 'marts/balance_vs_assets_unique', 'intermediate/int_ledger_events_unique', 'intermediate/int_ledger_events_chain_numbered']) {
      expect(tests[id]?.status, id).toBe('pass');
    }
  });

  it('lists a broken chain with the expected and found balance, and the month does not roll forward', async () => {
    db = await openModelDb();
    // ETH: bill 41 (2026-01-25, withdraw -0.5, after 1.5) is missing from the synced history.
    //   40  2026-01-15  deposit  +2   after 2
    //   42  2026-02-05  sell     -1   after 0.5   before = 0.5 + 1 = 1.5, but bill 40 left 2: gap 1.5 - 2 = -0.5
    //   43  2026-02-06  deposit  +1   after 1.5   before 0.5 = after of 42: the chain goes on from the break
    await insertHistory(db, 'funding_bills', [
      ...CLEAN_LEDGER,
      bill('40', '2026-01-15T00:00:00Z', 'ETH', 'deposit', '2', '2'),
      bill('42', '2026-02-05T00:00:00Z', 'ETH', 'sell', '-1', '0.5'),
      bill('43', '2026-02-06T00:00:00Z', 'ETH', 'deposit', '1', '1.5'),
    ]);
    await buildAll(db);

    const breakRow = {
      account: 'main',
      coin_name: 'ETH',
      bill_id: '42',
      c_time_at: '2026-02-05 00:00:00+00',
      expected_before_amount: '2',
      found_before_amount: '1.5',
      gap: '-0.5',
      previous_bill_id: '40',
      previous_c_time_at: '2026-01-15 00:00:00+00',
    };
    expect(
      await rows('SELECT account, coin_name, bill_id, c_time_at::VARCHAR AS c_time_at, expected_before_amount, found_before_amount, gap, previous_bill_id, previous_c_time_at::VARCHAR AS previous_c_time_at FROM marts.balance_chain_breaks'),
    ).toEqual([breakRow]);

    // February: opening 2 (January's closing), out 1, in 1: computed 2 - 1 + 1 = 2; closing 1.5; difference 1.5 - 2 = -0.5, the gap.
    expect(await rows(`SELECT ${RECONCILIATION_COLUMNS}, chain_break_count::VARCHAR AS breaks FROM marts.balance_reconciliation WHERE coin_name = 'ETH' ORDER BY balance_month`)).toEqual([
      { month: '2026-01-01', opening: '0', inflow: '2', outflow: '0', fees: '0', closing: '2', computed: '2', difference: '0', bills: '1', breaks: '0' },
      { month: '2026-02-01', opening: '2', inflow: '1', outflow: '1', fees: '0', closing: '1.5', computed: '2', difference: '-0.5', bills: '2', breaks: '1' },
      { month: '2026-03-01', opening: '1.5', inflow: '0', outflow: '0', fees: '0', closing: '1.5', computed: '1.5', difference: '0', bills: '0', breaks: '0' },
      { month: '2026-04-01', opening: '1.5', inflow: '0', outflow: '0', fees: '0', closing: '1.5', computed: '1.5', difference: '0', bills: '0', breaks: '0' },
    ]);

    const tests = balanceTests(await checkModels(db));
    const chain = tests['marts/balance_chain_unbroken']!;
    expect(chain.status).toBe('fail');
    expect(chain.offending).toBe(1);
    expect(trimRows(chain.sample)).toEqual([{ ...breakRow, c_time_at: '2026-02-05 00:00:00+00', previous_c_time_at: '2026-01-15 00:00:00+00' }]);
    const rolls = tests['marts/balance_reconciliation_rolls_forward']!;
    expect(rolls.status).toBe('fail');
    expect(trimRows(rolls.sample).map((row) => [row.coin_name, row.difference])).toEqual([['ETH', '-0.5']]);
    // Nothing else is blamed: the other coins' chains are whole.
    expect(tests['marts/balance_reconciliation_unique']!.status).toBe('pass');
  });

  it('reconciles the balance from bills with the latest assets snapshot, coins on one side only included, no check failing on a difference', async () => {
    db = await openModelDb();
    await insertHistory(db, 'funding_bills', CLEAN_LEDGER);
    // An older snapshot with a wrong figure: only the latest one counts.
    await insertSnapshot(db, 'spot_assets', '2026-03-01T00:00:00Z', [asset('USDT', '1', '0', '1')]);
    // The latest, taken between bill 19 (2026-03-31 15:00, after 1350) and bill 20 (2026-04-03):
    // USDT 900 available + 450 frozen = 1350 equity; BTC 0.00199; DOGE only in the assets (an airdrop with no bill synced);
    // SOL missing from the assets although its bills leave 7.99.
    await insertSnapshot(db, 'spot_assets', '2026-04-02T12:00:00Z', [asset('BTC', '0.00199', '0', '0.00199'), asset('USDT', '900', '450', '1350'), asset('DOGE', '7', '0', '7')]);
    // Account "emptied": its last snapshot is empty (the sync's marker row), and its bills end at 0.
    await insertHistory(db, 'funding_bills', [bill('50', '2026-01-02T00:00:00Z', 'USDT', 'deposit', '5', '5'), bill('51', '2026-01-03T00:00:00Z', 'USDT', 'withdraw', '-5', '0')], { account: 'emptied' });
    await insertSnapshot(db, 'spot_assets', '2026-01-01T00:00:00Z', [asset('USDT', '0', '0', '0')], { account: 'emptied' });
    await db.run("INSERT INTO raw.spot_assets VALUES ('emptied', '', '2026-01-04T00:00:00Z', -1, '{}', 'test-run', now())");
    // Account "unseen": bills but no assets snapshot at all: nothing to compare with.
    await insertHistory(db, 'funding_bills', [bill('60', '2026-01-02T00:00:00Z', 'USDT', 'deposit', '3', '3')], { account: 'unseen' });
    await buildAll(db);

    expect(
      await rows(
        'SELECT account, coin_name, found_in, snapshot_at::VARCHAR AS snapshot_at, bill_balance, bill_balance_bill_id, bills_after_snapshot::VARCHAR AS after_snapshot, closing_balance, assets_available, assets_frozen, assets_equity, difference, is_different FROM marts.balance_vs_assets WHERE snapshot_at IS NULL OR (account, snapshot_at) IN (SELECT account, max(snapshot_at) FROM marts.balance_vs_assets GROUP BY account) ORDER BY account, coin_name',
      ),
      // The latest snapshot of each account (the mart keeps every snapshot; a workbook shows the one nearest its period's end).
    ).toEqual([
      // An empty latest snapshot means every coin is at 0 there: 0 - 0 = 0.
      { account: 'emptied', coin_name: 'USDT', found_in: 'bills_only', snapshot_at: '2026-01-04 00:00:00+00', bill_balance: '0', bill_balance_bill_id: '51', after_snapshot: '0', closing_balance: '0', assets_available: null, assets_frozen: null, assets_equity: '0', difference: '0', is_different: false },
      // 0.00199 - 0.00199 = 0.
      { account: 'main', coin_name: 'BTC', found_in: 'both', snapshot_at: '2026-04-02 12:00:00+00', bill_balance: '0.00199', bill_balance_bill_id: '14', after_snapshot: '0', closing_balance: '0.00199', assets_available: '0.00199', assets_frozen: '0', assets_equity: '0.00199', difference: '0', is_different: false },
      // No bill: 7 - 0 = 7.
      { account: 'main', coin_name: 'DOGE', found_in: 'assets_only', snapshot_at: '2026-04-02 12:00:00+00', bill_balance: null, bill_balance_bill_id: null, after_snapshot: '0', closing_balance: null, assets_available: '7', assets_frozen: '0', assets_equity: '7', difference: '7', is_different: true },
      // Not in the assets: 0 - 7.99 = -7.99.
      { account: 'main', coin_name: 'SOL', found_in: 'bills_only', snapshot_at: '2026-04-02 12:00:00+00', bill_balance: '7.99', bill_balance_bill_id: '30', after_snapshot: '0', closing_balance: '7.99', assets_available: null, assets_frozen: null, assets_equity: '0', difference: '-7.99', is_different: true },
      // At the snapshot the bills stand at 1350 (bill 19); bill 20 comes after it (closing 1000) and is counted, not used:
      // 1350 - 1350 = 0.
      { account: 'main', coin_name: 'USDT', found_in: 'both', snapshot_at: '2026-04-02 12:00:00+00', bill_balance: '1350', bill_balance_bill_id: '19', after_snapshot: '1', closing_balance: '1000', assets_available: '900', assets_frozen: '450', assets_equity: '1350', difference: '0', is_different: false },
      { account: 'unseen', coin_name: 'USDT', found_in: 'bills_only', snapshot_at: null, bill_balance: null, bill_balance_bill_id: null, after_snapshot: '0', closing_balance: '3', assets_available: null, assets_frozen: null, assets_equity: null, difference: null, is_different: null },
    ]);

    // The bills and the assets are separate accounts' data: their differences are a reconciliation
    // (the rows above), never a failing check.
    const tests = Object.values(balanceTests(await checkModels(db)));
    expect(tests.map((test) => test.id)).toContain('marts/balance_vs_assets_unique');
    expect(tests.filter((test) => test.status !== 'pass')).toEqual([]);
  });

  it('builds on a database without any bill or snapshot, every balance test passing', async () => {
    db = await openModelDb();
    await buildAll(db);
    for (const table of ['intermediate.int_ledger_events', 'marts.balance_chain_breaks', 'marts.balance_movements', 'marts.balance_reconciliation', 'marts.balance_vs_assets']) {
      expect(await rows(`SELECT count(*)::VARCHAR AS n FROM ${table}`), table).toEqual([{ n: '0' }]);
    }
    const tests = Object.values(balanceTests(await checkModels(db)));
    expect(tests.map((test) => test.id).sort()).toEqual([
      'intermediate/int_ledger_events_chain_numbered',
      'intermediate/int_ledger_events_not_null',
      'intermediate/int_ledger_events_unique',
      'marts/balance_chain_breaks_not_null',
      'marts/balance_chain_breaks_relationships_bill_id',
      'marts/balance_chain_breaks_relationships_previous_bill_id',
      'marts/balance_chain_breaks_unique',
      'marts/balance_chain_unbroken',
      'marts/balance_movements_not_null',
      'marts/balance_movements_unique',
      'marts/balance_reconciliation_not_null',
      'marts/balance_reconciliation_rolls_forward',
      'marts/balance_reconciliation_unique',
      'marts/balance_vs_assets_accepted_values_found_in',
      'marts/balance_vs_assets_not_null',
      'marts/balance_vs_assets_unique',
    ]);
    expect(tests.filter((test) => test.status !== 'pass')).toEqual([]);
  });
});
