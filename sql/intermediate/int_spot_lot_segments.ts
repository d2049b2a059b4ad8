// Lot matches of the stateful spot cost methods (lifo, hifo, uk), computed in TypeScript: one row
// per (cost method, sell, rule, lot) with the units, cost and proceeds, plus one row per sell part
// nothing was found for (rule 'unmatched', lot_seq and cost null). Same shape as
// int_spot_fifo_segments plus cost_method and match_rule. Built for the cost methods of
// settings.reporting (empty when none of these is chosen).
// Key: (pool, symbol, cost_method, sell_seq, match_rule, lot_seq). Inputs: intermediate.int_spot_trades, settings.reporting.
// The matching (src/models/lot-matching.ts) walks each (pool, symbol)'s events in event_seq order
// with BigInt on the integer units, exactly; one (pool, symbol)'s events are held in memory at a
// time, and segments are appended as they are found. A pool is an account, or '*' (every account:
// pooling 'universal'); the sells and lots of a segment are found by (pool, symbol, seq).
import type { DuckDBAppender, DuckDBValue } from '@duckdb/node-api';
import { LOT_METHODS, matchLots, type LotMethod, type Segment, type TradeEvent } from '../../src/models/lot-matching.ts';
import { declareProgramModel } from '../../src/models/program-model.ts';
import type { Database } from '../../src/store/database.ts';

const EVENTS = `
select pool, symbol, event_seq, lot_source = 'opening' as is_opening, side,
    datediff('day', date '1970-01-01', event_date) as day, units_in_e18, cost_e12, quantity_out_e18, proceeds_e12
from intermediate.int_spot_trades
order by pool, symbol, event_seq`;

export default declareProgramModel({
  name: 'int_spot_lot_segments',
  layer: 'intermediate',
  references: ['intermediate.int_spot_trades'],
  columns: `pool VARCHAR NOT NULL, symbol VARCHAR NOT NULL, cost_method VARCHAR NOT NULL, sell_seq BIGINT NOT NULL, match_rule VARCHAR NOT NULL,
    lot_seq BIGINT, quantity_e18 HUGEINT NOT NULL, cost_e12 HUGEINT, proceeds_e12 HUGEINT NOT NULL`,
  async build(db: Database) {
    const [reporting] = await db.all<{ cost_methods: string[] }>('SELECT any_value(cost_methods) AS cost_methods FROM settings.reporting');
    const methods = LOT_METHODS.filter((method) => reporting?.cost_methods.includes(method) === true);
    if (methods.length === 0) return;
    const appender = await db.appender('intermediate', 'int_spot_lot_segments');
    let group: { pool: string; symbol: string; events: TradeEvent[] } | undefined;
    const flush = () => {
      if (group !== undefined) appendGroup(appender, group.pool, group.symbol, group.events, methods);
    };
    try {
      for await (const rows of db.streamCommitted(EVENTS)) {
        for (const row of rows) {
          const [pool, symbol] = row as [string, string];
          if (group === undefined || group.pool !== pool || group.symbol !== symbol) {
            flush();
            group = { pool, symbol, events: [] };
          }
          group.events.push(eventOf(row));
        }
        appender.flushSync();
      }
      flush();
      appender.flushSync();
    } finally {
      appender.closeSync();
    }
  },
});

function eventOf(row: DuckDBValue[]): TradeEvent {
  return {
    seq: row[2] as bigint,
    isOpening: row[3] as boolean,
    side: row[4] === 'sell' ? 'sell' : 'buy',
    day: Number(row[5]),
    unitsIn: row[6] as bigint,
    cost: row[7] as bigint,
    quantityOut: row[8] as bigint,
    proceeds: row[9] as bigint,
  };
}

function appendGroup(appender: DuckDBAppender, pool: string, symbol: string, events: readonly TradeEvent[], methods: readonly LotMethod[]): void {
  for (const method of methods) {
    // Each segment goes to the appender as it is found: a symbol's segments are never all held.
    const push = (...segments: Segment[]): number => {
      for (const segment of segments) {
        appender.appendVarchar(pool);
        appender.appendVarchar(symbol);
        appender.appendVarchar(method);
        appender.appendBigInt(segment.sellSeq);
        appender.appendVarchar(segment.rule);
        if (segment.lotSeq === null) appender.appendNull();
        else appender.appendBigInt(segment.lotSeq);
        appender.appendHugeInt(segment.quantity);
        if (segment.cost === null) appender.appendNull();
        else appender.appendHugeInt(segment.cost);
        appender.appendHugeInt(segment.proceeds);
        appender.endRow();
      }
      return 0;
    };
    matchLots(method, events, { push });
  }
}
