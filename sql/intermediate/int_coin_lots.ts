// The books' lots: what each cost method makes of every coin's acquisitions and disposals
// (intermediate.int_coin_events), in the reporting currency (src/books/coin-lots.ts). Key: (pool,
// coin, cost_method, event_seq). Inputs: intermediate.int_coin_events, settings.reporting.
// Per event: an acquisition's lot cost, a disposal's cost (the known part) and proceeds and gain,
// and the units and carrying value held after it. Unknown is never 0: cost_known and
// carrying_known say whether a figure is whole; gain_e12 is null unless it is.
// Rebuilt whole at each build: a withdrawal's cost carried to another account's deposit can move
// every later figure of that coin.
// The events stream in, a coin at a time (src/books/coin-lots.ts, matchCoinStream): what is held is
// each method's open lots and the events not yet settled, never a coin's history (on the 1M
// benchmark history with a reporting currency, USDT's 2M events were held as objects: 4.0 GB).
import { BIGINT, BOOLEAN, HUGEINT, VARCHAR, type DuckDBValue } from '@duckdb/node-api';
import { matchCoinStream, type CoinEvent, type PooledCoinEvent } from '../../src/books/coin-lots.ts';
import { COST_METHODS, type CostMethod } from '../../src/models/settings.ts';
import { closeQuietly, RowChunks } from '../../src/store/row-chunks.ts';
import { declareProgramModel } from '../../src/models/program-model.ts';
import type { Database } from '../../src/store/database.ts';

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

/** The columns of int_coin_lots, in order. */
const LOT_TYPES = [VARCHAR, VARCHAR, VARCHAR, BIGINT, VARCHAR, HUGEINT, HUGEINT, BOOLEAN, HUGEINT, HUGEINT, HUGEINT, HUGEINT, HUGEINT, BOOLEAN];

/** Matches each coin's events under each method and appends its lots (inside withInsertionOrder: see Database). */
async function appendLots(db: Database, coins: readonly { coin: string }[], methods: readonly CostMethod[]): Promise<void> {
  // The withdrawals carried deposits name, per coin (one read: they are few).
  const carried = new Map<string, Set<string>>();
  for (const { coin, transfer_ref: ref } of await db.all<{ coin: string; transfer_ref: string }>(
    `SELECT DISTINCT coin, transfer_ref FROM intermediate.int_coin_events WHERE value_basis = 'carried' AND transfer_ref IS NOT NULL`,
  )) {
    carried.set(coin, (carried.get(coin) ?? new Set()).add(ref));
  }
  const lots = new RowChunks(await db.appender('intermediate', 'int_coin_lots'), LOT_TYPES);
  try {
    for (const { coin } of coins) {
      await matchCoinStream(methods, carried.get(coin) ?? new Set(), () => coinEvents(db, coin), (method, pool, event, result) => {
        lots.add([
          pool,
          coin,
          method,
          event.seq,
          event.direction,
          event.units,
          result.cost,
          result.costKnown,
          result.unmatched,
          result.proceeds,
          result.gain,
          result.holding,
          result.carrying,
          result.carryingKnown,
        ]);
      });
      lots.flushSync();
    }
  } catch (error) {
    closeQuietly(lots);
    throw error;
  }
  lots.closeSync();
}

/** One coin's events, every pool's, in pool then event_seq order, a chunk at a time. */
async function* coinEvents(db: Database, coin: string): AsyncGenerator<PooledCoinEvent[]> {
  const sql = `SELECT pool, event_seq, datediff('day', DATE '1970-01-01', event_date) AS day, direction, units_e18, value_e12, value_basis, transfer_ref, entry_ref
    FROM intermediate.int_coin_events WHERE coin = $1 ORDER BY pool, event_seq`;
  for await (const rows of db.streamCommitted(sql, [coin])) yield rows.map(pooledEventOf);
}

function pooledEventOf(row: DuckDBValue[]): PooledCoinEvent {
  return {
    pool: row[0] as string,
    event: {
      seq: row[1] as bigint,
      day: Number(row[2]),
      direction: row[3] === 'out' ? 'out' : 'in',
      units: row[4] as bigint,
      value: row[5] as bigint | null,
      basis: row[6] as CoinEvent['basis'],
      transferRef: row[7] as string | null,
      entryRef: row[8] as string,
    },
  };
}
