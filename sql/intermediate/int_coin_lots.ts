// The books' lots: what each cost method makes of every coin's acquisitions and disposals
// (intermediate.int_coin_events), in the reporting currency (src/books/coin-lots.ts). Key: (pool,
// coin, cost_method, event_seq). Inputs: intermediate.int_coin_events, settings.reporting.
// Per event: an acquisition's lot cost, a disposal's cost (the known part) and proceeds and gain,
// and the units and carrying value held after it. Unknown is never 0: cost_known and
// carrying_known say whether a figure is whole; gain_e12 is null unless it is.
// Rebuilt whole at each build: a withdrawal's cost carried to another account's deposit can move
// every later figure of that coin.
import { matchCoinPools, type CoinEvent } from '../../src/books/coin-lots.ts';
import { COST_METHODS, type CostMethod } from '../../src/models/settings.ts';
import { declareProgramModel } from '../../src/models/program-model.ts';
import type { Database } from '../../src/store/database.ts';

interface EventRow {
  pool: string;
  event_seq: string;
  day: string;
  direction: 'in' | 'out';
  units_e18: string;
  value_e12: string | null;
  value_basis: CoinEvent['basis'];
  transfer_ref: string | null;
  entry_ref: string;
}

export default declareProgramModel({
  name: 'int_coin_lots',
  layer: 'intermediate',
  references: ['intermediate.int_coin_events'],
  columns: `pool VARCHAR NOT NULL, coin VARCHAR NOT NULL, cost_method VARCHAR NOT NULL, event_seq BIGINT NOT NULL, direction VARCHAR NOT NULL,
    units_e18 HUGEINT NOT NULL, cost_e12 HUGEINT, cost_known BOOLEAN NOT NULL, unmatched_e18 HUGEINT NOT NULL, proceeds_e12 HUGEINT, gain_e12 HUGEINT,
    holding_e18 HUGEINT NOT NULL, carrying_e12 HUGEINT NOT NULL, carrying_known BOOLEAN NOT NULL`,
  async build(db: Database) {
    const [reporting] = await db.all<{ cost_methods: string[] }>('SELECT any_value(cost_methods) AS cost_methods FROM settings.reporting');
    const methods = COST_METHODS.filter((method) => reporting?.cost_methods.includes(method) === true);
    const coins = await db.all<{ coin: string }>('SELECT DISTINCT coin FROM intermediate.int_coin_events ORDER BY coin');
    await db.withInsertionOrder(() => appendLots(db, coins, methods));
  },
});

/** Matches each coin's events under each method and appends its lots (inside withInsertionOrder: see Database). */
async function appendLots(db: Database, coins: readonly { coin: string }[], methods: readonly CostMethod[]): Promise<void> {
  const appender = await db.appender('intermediate', 'int_coin_lots');
  try {
    for (const { coin } of coins) {
      const rows = await db.all<EventRow>(
        `SELECT pool, event_seq, datediff('day', DATE '1970-01-01', event_date) AS day, direction, units_e18, value_e12, value_basis, transfer_ref, entry_ref
         FROM intermediate.int_coin_events WHERE coin = $1 ORDER BY pool, event_seq`,
        [coin],
      );
      const pools = new Map<string, CoinEvent[]>();
      for (const row of rows) {
        const event: CoinEvent = {
          seq: BigInt(row.event_seq),
          day: Number(row.day),
          direction: row.direction,
          units: BigInt(row.units_e18),
          value: row.value_e12 === null ? null : BigInt(row.value_e12),
          basis: row.value_basis,
          transferRef: row.transfer_ref,
          entryRef: row.entry_ref,
        };
        const list = pools.get(row.pool);
        if (list === undefined) pools.set(row.pool, [event]);
        else list.push(event);
      }
      for (const method of methods) appendCoin(appender, coin, method, pools);
      appender.flushSync();
      // Lets a stop signal be acted on between coins.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  } finally {
    appender.closeSync();
  }
}

function appendCoin(appender: Awaited<ReturnType<Database['appender']>>, coin: string, method: CostMethod, pools: ReadonlyMap<string, readonly CoinEvent[]>): void {
  const results = matchCoinPools(method, pools);
  const hugeOrNull = (value: bigint | null) => (value === null ? appender.appendNull() : appender.appendHugeInt(value));
  for (const [pool, events] of pools) {
    results.get(pool)!.forEach((result, index) => {
      const event = events[index]!;
      appender.appendVarchar(pool);
      appender.appendVarchar(coin);
      appender.appendVarchar(method);
      appender.appendBigInt(event.seq);
      appender.appendVarchar(event.direction);
      appender.appendHugeInt(event.units);
      hugeOrNull(result.cost);
      appender.appendBoolean(result.costKnown);
      appender.appendHugeInt(result.unmatched);
      hugeOrNull(result.proceeds);
      hugeOrNull(result.gain);
      appender.appendHugeInt(result.holding);
      appender.appendHugeInt(result.carrying);
      appender.appendBoolean(result.carryingKnown);
      appender.endRow();
    });
  }
}
