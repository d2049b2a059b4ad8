import { afterEach, describe, expect, it } from 'vitest';
import type { Database } from '../src/store/database.ts';
import { buildAll, futuresAccountRecord, insertHistory, insertSnapshot, openModelDb, queryRows, spotFill } from './support/model-db.ts';

/**
 * How a build hands on what changed beyond the spot fills: a new snapshot (a staging table rebuilt
 * whole tells its readers only its new rows, and a listing that changes a contract's coins
 * replaces that contract on every day), raw rows written outside a sync, a changed setting and
 * --full-refresh. Each incremental build is compared with a whole rebuild of every table.
 */

let db: Database | undefined;
afterEach(() => {
  db?.close();
  db = undefined;
});

/** The tables of every model that differ between the incremental build and a whole rebuild (rows only in one, each way). */
async function differencesFromWhole(database: Database, settings: Parameters<typeof buildAll>[1]): Promise<string[]> {
  const tables = (await queryRows<{ t: string }>(database, "select table_schema || '.' || table_name as t from information_schema.tables where table_schema in ('staging', 'intermediate', 'marts') order by 1")).map((row) => row.t);
  for (const table of tables) await database.run(`create or replace table main."${table}" as select * from ${table}`);
  await buildAll(database, settings, { fullRefresh: true });
  const differences: string[] = [];
  for (const table of tables) {
    const [counts] = await queryRows<{ only_incremental: string; only_whole: string }>(
      database,
      `select (select count(*) from (select * from main."${table}" except all select * from ${table})) as only_incremental,
              (select count(*) from (select * from ${table} except all select * from main."${table}")) as only_whole`,
    );
    if (counts!.only_incremental !== '0' || counts!.only_whole !== '0') differences.push(`${table}: ${counts!.only_incremental} rows only incremental, ${counts!.only_whole} only whole`);
    await database.run(`drop table main."${table}"`);
  }
  return differences;
}

function howOf(results: Awaited<ReturnType<typeof buildAll>>, id: string): string | undefined {
  return results.find((result) => result.id === id)?.how;
}

const futuresFill = (tradeId: number, at: string) => ({
  tradeId, orderId: tradeId + 1, symbol: 'cmt_btcusdt', marginMode: 'cross', separatedMode: 'combined', positionSide: 'long', orderSide: 'open_long',
  fillSize: '1', fillValue: '100', fillFee: '0.1', liquidateFee: '0', realizePnl: '0', direction: '', liquidateType: '', legacyOrdeDirection: '', createdTime: String(Date.parse(at)),
});
const listing = (coin: string) => ({ symbol: 'cmt_btcusdt', coin, quote_currency: 'USDT' });
/** A futures fill that realized `pnl` USDT, at a fee of 0.1. */
const pnlFill = (tradeId: number, at: string, pnl: string) => ({ ...futuresFill(tradeId, at), orderSide: 'close_long', realizePnl: pnl });
/** The futures account with `amount` of coin 2 as collateral. */
function collateral(amount: string): object {
  const record = futuresAccountRecord('0') as { collateral: object[] };
  return { ...record, collateral: [{ ...record.collateral[0], amount }] };
}
/** A currencies listing naming coin 2. */
const listed = (coinName: string) => [{ coinId: '2', coinName, transfer: 'true', chains: [] }];
const usdtAsset = (equity: string) => ({ coinId: 2, coinName: 'USDT', available: equity, frozen: '0', equity });

describe('incremental builds beyond the spot fills', () => {
  it('a new snapshot hands on its new rows only; a listing that changes the coins replaces the contract on every day', async () => {
    db = await openModelDb();
    await insertHistory(db, 'futures_fills', [futuresFill(1, '2026-01-01T00:00:00Z'), futuresFill(3, '2026-01-05T00:00:00Z')]);
    await insertSnapshot(db, 'futures_contracts', '2026-01-01T00:00:00Z', [listing('USDT')]);
    await buildAll(db);

    await insertSnapshot(db, 'futures_contracts', '2026-01-06T00:00:00Z', [listing('USDT')]);
    const same = await buildAll(db);
    expect(howOf(same, 'staging.futures_contracts')).toBe('whole');
    // Told the new listing's rows only, the futures chain stays incremental.
    expect(howOf(same, 'intermediate.int_futures_fill_days')).toBe('incremental');
    expect(howOf(same, 'intermediate.int_fees_legs')).toBe('incremental');
    expect(await differencesFromWhole(db, {})).toEqual([]);

    await insertSnapshot(db, 'futures_contracts', '2026-01-07T00:00:00Z', [listing('BTC')]);
    await buildAll(db);
    expect(await queryRows(db, 'select distinct margin_coin from intermediate.int_futures_fill_days')).toEqual([{ margin_coin: 'BTC' }]);
    expect(await differencesFromWhole(db, {})).toEqual([]);
  }, 120_000);

  it('a new futures account snapshot: its funding change is handed on as new rows, so the daily futures PnL stays incremental; a snapshot older than the last is not', async () => {
    db = await openModelDb();
    await insertHistory(db, 'futures_fills', [futuresFill(1, '2026-01-01T00:00:00Z'), futuresFill(3, '2026-01-05T00:00:00Z')]);
    await insertSnapshot(db, 'futures_accounts', '2026-01-02T00:00:00Z', [futuresAccountRecord('1')]);
    await insertSnapshot(db, 'futures_accounts', '2026-01-04T00:00:00Z', [futuresAccountRecord('2.5')]);
    await buildAll(db);

    // Every night's sync takes a snapshot: the funding model (no incremental step) is rebuilt, and tells its readers only the new day.
    await insertSnapshot(db, 'futures_accounts', '2026-01-06T00:00:00Z', [futuresAccountRecord('4')]);
    const night = await buildAll(db);
    expect(howOf(night, 'intermediate.int_futures_funding_changes')).toBe('whole');
    expect(howOf(night, 'marts.futures_pnl_daily')).toBe('incremental');
    expect(await queryRows(db, "select pnl_date, funding from marts.futures_pnl_daily where symbol is null order by pnl_date")).toEqual([
      { pnl_date: '2026-01-04', funding: '-1.500000000000000000' },
      { pnl_date: '2026-01-06', funding: '-1.500000000000000000' },
    ]);
    expect(await differencesFromWhole(db, {})).toEqual([]);

    // A snapshot between two built ones changes the funding row after it: readers are told everything.
    await insertSnapshot(db, 'futures_accounts', '2026-01-05T00:00:00Z', [futuresAccountRecord('3')]);
    const backfilled = await buildAll(db);
    expect(backfilled.find((result) => result.id === 'marts.futures_pnl_daily')).toMatchObject({ how: 'whole', why: 'a model it reads was rebuilt whole' });
    expect(await differencesFromWhole(db, {})).toEqual([]);
  }, 120_000);

  it('the books: a currencies listing that renames a collateral coin renames the funding settled before its first snapshot, however old: the events are replaced whole', async () => {
    db = await openModelDb();
    const settings = { reportingCurrency: 'USDT' } as const;
    // The listings are taken as the syncs run: the first after the history it read.
    await insertSnapshot(db, 'futures_contracts', '2026-01-01T00:00:00Z', [listing('USDT')]);
    await insertSnapshot(db, 'futures_accounts', '2026-01-02T00:00:00Z', [futuresAccountRecord('1')]);
    await insertHistory(db, 'futures_fills', [futuresFill(1, '2026-01-03T00:00:00Z')]);
    await insertSnapshot(db, 'currencies', '2026-01-10T00:00:00Z', [{ coinId: '2', coinName: 'USDT', transfer: 'true', chains: [] }]);
    await buildAll(db, settings);
    const funding = "select coin, entry_ref from intermediate.int_coin_events where source_model = 'staging.futures_collateral'";
    expect(await queryRows(db, funding)).toEqual([{ coin: 'USDT', entry_ref: 'funding/main/USDT/2026-01-02T00:00:00.000Z/before' }]);
    const handedOn = async () => (await queryRows<{ from_at: string | null }>(db!, "select max(from_at)::varchar as from_at from settings.model_changes where model = 'intermediate.int_coin_events' and change_seq = (select max(change_seq) from settings.model_changes where model = 'intermediate.int_coin_events')"))[0]!.from_at;

    // A night: a futures fill, and a listing naming the coin as before: the events from the day before the fill's on.
    await insertHistory(db, 'futures_fills', [futuresFill(3, '2026-01-09T00:00:00Z')]);
    await insertSnapshot(db, 'currencies', '2026-01-11T00:00:00Z', [{ coinId: '2', coinName: 'USDT', transfer: 'true', chains: [] }]);
    expect(howOf(await buildAll(db, settings), 'intermediate.int_coin_events')).toBe('incremental');
    expect(await handedOn()).toBe('2026-01-08 00:00:00+00');

    // Another: a fill, and a listing that names coin 2 otherwise: every event.
    await insertHistory(db, 'futures_fills', [futuresFill(5, '2026-01-12T00:00:00Z')]);
    await insertSnapshot(db, 'currencies', '2026-01-12T00:00:00Z', [{ coinId: '2', coinName: 'USDT2', transfer: 'true', chains: [] }]);
    expect(howOf(await buildAll(db, settings), 'intermediate.int_coin_events')).toBe('incremental');
    expect(await handedOn()).toBeNull();
    expect(await queryRows(db, funding)).toEqual([{ coin: 'USDT2', entry_ref: 'funding/main/USDT2/2026-01-02T00:00:00.000Z/before' }]);
    expect(await differencesFromWhole(db, settings)).toEqual([]);
  }, 120_000);

  it('the books: a late bill older than the second of two opening lots of a coin resumes the lots from a state before it, reading every event after', async () => {
    db = await openModelDb();
    const openingPositions = [
      { account: 'main', symbol: 'BTCUSDT_SPBL', quantity: '1', cost: '30000' },
      { account: 'main', symbol: 'BTCUSDC_SPBL', quantity: '2', cost: '62000' },
    ];
    const settings = { reportingCurrency: 'USDT', costMethods: ['fifo'], openingPositions } as const;
    const at = (day: number, hour = 12) => new Date(Date.UTC(2026, 0, day, hour)).toISOString();
    const bill = (billId: string, day: number, delta: string) => ({ billId, coinId: '1', coinName: 'BTC', bizType: 'deposit', deltaAmount: delta, afterAmount: delta, fees: '0', cTime: String(Date.parse(at(day))) });
    // The openings come first (no instant), dated by their symbols' first fills: BTCUSDC's day 12,
    // then BTCUSDT's day 10; a state is saved between them (their days differ), and the events
    // after them go back to day 6. (fifo alone: uk would replay the coin from its first event.)
    await insertHistory(db, 'spot_fills', [spotFill('BTCUSDT_SPBL', '1', at(10), 'sell', '0.5', '31000'), spotFill('BTCUSDC_SPBL', '2', at(12), 'sell', '0.5', '32000'), spotFill('BTCUSDT_SPBL', '3', at(13), 'sell', '0.25', '33000')]);
    await insertHistory(db, 'funding_bills', [bill('11', 6, '0.3')]);
    await buildAll(db, settings);
    // A late deposit on day 5: fifo resumes from the latest state before it, the one at the second
    // opening lot (day 10), and must read every event after it, day 5's and 6's included.
    await insertHistory(db, 'funding_bills', [bill('10', 5, '0.1')]);
    const night = await buildAll(db, settings);
    expect(howOf(night, 'intermediate.int_coin_lots')).toBe('incremental');
    expect(await differencesFromWhole(db, settings)).toEqual([]);
  }, 120_000);

  it('holdings against the exchange: a night replaces the instants from its changes on; and a late fill of a built instant\'s day replaces that instant', async () => {
    db = await openModelDb();
    // Days are London's (GMT in January); the books hold the deposit and the futures results.
    const settings = { reportingCurrency: 'USDT', reportingTimeZone: 'Europe/London' } as const;
    await insertSnapshot(db, 'futures_contracts', '2026-01-01T00:00:00Z', [listing('USDT')], { runId: 'r1' });
    await insertSnapshot(db, 'currencies', '2026-01-01T00:00:00Z', listed('USDT'), { runId: 'r1' });
    await insertHistory(db, 'funding_bills', [{ billId: '11', coinId: 2, coinName: 'USDT', bizType: 'deposit', deltaAmount: '1000', afterAmount: '1000', fees: '0', cTime: String(Date.parse('2026-01-01T10:00:00Z')) }]);
    // Sync r2's instant is 12:00, the later of its two snapshots: the day's first fill is before it, the second after.
    await insertHistory(db, 'futures_fills', [pnlFill(1, '2026-01-02T03:00:00Z', '5'), pnlFill(2, '2026-01-02T20:00:00Z', '7')]);
    await insertSnapshot(db, 'futures_accounts', '2026-01-02T11:00:00Z', [collateral('10')], { runId: 'r2' });
    await insertSnapshot(db, 'spot_assets', '2026-01-02T12:00:00Z', [usdtAsset('990')], { runId: 'r2' });
    await buildAll(db, settings);
    const holdings = () => queryRows(db!, "select coin, strftime(snapshot_at at time zone 'UTC', '%d %H:%M') as at, books_quantity::varchar as books, exchange_quantity::varchar as exchange from marts.holdings_vs_exchange order by snapshot_at, coin");
    const amount = (digits: string) => `${digits}.000000000000000000`;
    // The deposit, and fill 1's result (5 less its fee of 0.1) counted from the fills on its own day.
    expect(await holdings()).toEqual([{ coin: 'USDT', at: '02 12:00', books: '1004.900000000000000000', exchange: amount('1000') }]);

    // A night: a fill and sync r3. The books' events are replaced from the day before the fill's, so
    // the instants from then on are replaced (r2's too), from their syncs, movements and days alone.
    await insertHistory(db, 'futures_fills', [pnlFill(3, '2026-01-03T04:00:00Z', '3')]);
    await insertSnapshot(db, 'futures_accounts', '2026-01-03T12:00:00Z', [collateral('20')], { runId: 'r3' });
    expect(howOf(await buildAll(db, settings), 'marts.holdings_vs_exchange')).toBe('incremental');
    expect(await queryRows(db, "select account, from_at::varchar as from_at from settings.model_changes where model = 'marts.holdings_vs_exchange' and change_seq = (select max(change_seq) from settings.model_changes where model = 'marts.holdings_vs_exchange')")).toEqual([
      { account: 'main', from_at: '2026-01-02 00:00:00+00' },
    ]);
    expect(await holdings()).toEqual([
      { coin: 'USDT', at: '02 12:00', books: '1004.900000000000000000', exchange: amount('1000') },
      // The deposit, day 2's results at its end (5 + 7 - 0.2), fill 3's on its own day (3 - 0.1).
      { coin: 'USDT', at: '03 12:00', books: '1014.700000000000000000', exchange: amount('20') },
    ]);
    expect(await differencesFromWhole(db, settings)).toEqual([]);

    // A late fill of day 2 before r2's instant, and sync r4: r2's books change.
    await insertHistory(db, 'futures_fills', [pnlFill(4, '2026-01-02T01:00:00Z', '11')]);
    await insertSnapshot(db, 'futures_accounts', '2026-01-04T12:00:00Z', [collateral('30')], { runId: 'r4' });
    expect(howOf(await buildAll(db, settings), 'marts.holdings_vs_exchange')).toBe('incremental');
    expect((await holdings())[0]).toEqual({ coin: 'USDT', at: '02 12:00', books: '1015.800000000000000000', exchange: amount('1000') });
    expect(await differencesFromWhole(db, settings)).toEqual([]);

  }, 180_000);

  it('holdings against the exchange: a snapshot added to a built sync moves its instant; a listing that renames the collateral\'s coin renames it at every instant, the ones before the night\'s too', async () => {
    db = await openModelDb();
    await insertSnapshot(db, 'currencies', '2026-01-01T00:00:00Z', listed('USDT'), { runId: 'r1' });
    await insertSnapshot(db, 'futures_accounts', '2026-01-02T12:00:00Z', [collateral('10')], { runId: 'r2' });
    await insertSnapshot(db, 'futures_accounts', '2026-01-03T12:00:00Z', [collateral('20')], { runId: 'r3' });
    await insertSnapshot(db, 'spot_assets', '2026-01-03T15:00:00Z', [usdtAsset('7')], { runId: 'r3s' });
    await buildAll(db);
    const coins = () => queryRows(db!, "select coin, strftime(snapshot_at at time zone 'UTC', '%d') as day from marts.holdings_vs_exchange order by snapshot_at, coin");
    expect(await coins()).toEqual([{ coin: 'USDT', day: '02' }, { coin: 'USDT', day: '03' }, { coin: 'USDT', day: '03' }]);

    // A night whose listing names coin 2 as before: only its own instant.
    await insertSnapshot(db, 'currencies', '2026-01-04T00:00:00Z', listed('USDT'), { runId: 'r4' });
    await insertSnapshot(db, 'futures_accounts', '2026-01-04T12:00:00Z', [collateral('30')], { runId: 'r4' });
    expect(howOf(await buildAll(db), 'marts.holdings_vs_exchange')).toBe('incremental');
    expect(await queryRows(db, "select from_at::varchar as from_at from settings.model_changes where model = 'marts.holdings_vs_exchange' and change_seq = (select max(change_seq) from settings.model_changes where model = 'marts.holdings_vs_exchange')")).toEqual([
      { from_at: '2026-01-04 00:00:00+00' },
    ]);
    // A snapshot added to a built sync (r3s, spot assets only): its instant moves from 15:00 to 18:00 of day 3, the row at 15:00 goes.
    await insertSnapshot(db, 'spot_assets', '2026-01-03T18:00:00Z', [usdtAsset('5')], { runId: 'r3s' });
    expect(howOf(await buildAll(db), 'marts.holdings_vs_exchange')).toBe('incremental');
    expect(await queryRows(db, "select strftime(snapshot_at at time zone 'UTC', '%d %H:%M') as at, exchange_quantity::varchar as exchange from marts.holdings_vs_exchange where snapshot_at < '2026-01-04' order by 1")).toEqual([
      { at: '02 12:00', exchange: '10.000000000000000000' },
      { at: '03 12:00', exchange: '20.000000000000000000' },
      // A sync's snapshots of one stream add up (the model's: a sync takes one of each).
      { at: '03 18:00', exchange: '12.000000000000000000' },
    ]);
    expect(await differencesFromWhole(db, {})).toEqual([]);

    // Without a reporting currency nothing else reads the listing: the rename is the step's to find.
    await insertSnapshot(db, 'currencies', '2026-01-05T00:00:00Z', listed('USDT2'), { runId: 'r5' });
    await insertSnapshot(db, 'futures_accounts', '2026-01-05T12:00:00Z', [collateral('40')], { runId: 'r5' });
    expect(howOf(await buildAll(db), 'marts.holdings_vs_exchange')).toBe('incremental');
    // The spot assets name their coin themselves: sync r3s's USDT stays.
    expect(await coins()).toEqual([{ coin: 'USDT2', day: '02' }, { coin: 'USDT2', day: '03' }, { coin: 'USDT', day: '03' }, { coin: 'USDT2', day: '04' }, { coin: 'USDT2', day: '05' }]);
    expect(await queryRows(db, "select account, from_at from settings.model_changes where model = 'marts.holdings_vs_exchange' and change_seq = (select max(change_seq) from settings.model_changes where model = 'marts.holdings_vs_exchange')")).toEqual([
      { account: 'main', from_at: null },
    ]);
    expect(await differencesFromWhole(db, {})).toEqual([]);
  }, 120_000);

  it('raw rows written outside a sync rebuild staging whole; a changed setting rebuilds what reads it; --full-refresh rebuilds everything', async () => {
    db = await openModelDb();
    await insertHistory(db, 'futures_fills', [futuresFill(1, '2026-01-01T00:00:00Z')]);
    await buildAll(db);
    expect((await buildAll(db)).every((result) => result.how === undefined || result.how === 'unchanged')).toBe(true);

    // A row no sync logged: the count no longer matches the log.
    await db.run(`insert into raw.futures_fills values ('main', '', 'outside', ${Date.parse('2026-01-02T00:00:00Z')}, $1::JSON, 'hand', now())`, [JSON.stringify(futuresFill(5, '2026-01-02T00:00:00Z'))]);
    const outside = await buildAll(db);
    expect(outside.find((result) => result.id === 'staging.futures_fills')).toMatchObject({ how: 'whole', why: 'its raw rows changed without a logged change (written outside a sync)' });
    expect(await queryRows(db, 'select count(*) as n from staging.futures_fills')).toEqual([{ n: '2' }]);

    const paris = await buildAll(db, { reportingTimeZone: 'Europe/Paris' });
    expect(howOf(paris, 'staging.futures_fills')).toBe('unchanged');
    expect(paris.find((result) => result.id === 'intermediate.int_futures_fill_days')).toMatchObject({ how: 'whole', why: 'its SQL, a macro, a setting it reads or a model upstream changed' });
    expect(await differencesFromWhole(db, { reportingTimeZone: 'Europe/Paris' })).toEqual([]);

    const full = await buildAll(db, { reportingTimeZone: 'Europe/Paris' }, { fullRefresh: true });
    expect(full.filter((result) => result.how !== undefined).every((result) => result.how === 'whole' && result.why === 'full refresh')).toBe(true);
  }, 120_000);
});
