// Moving weighted-average cost, computed in TypeScript: one row per spot trade event with the cost
// its sell disposed of and the inventory's cost after it. Built only when 'average' is a reporting
// cost method (empty otherwise).
// Key: (pool, symbol, event_seq). Inputs: intermediate.int_spot_trades, settings.reporting.
// Each (pool, symbol)'s events are walked in event_seq order with BigInt on the integer units,
// exactly, as they stream in (nothing of a partition is held but its inventory's cost C):
//   a buy (or an opening lot) adds its cost: C -> C + cost_e12 (cost_e12 of the row: null);
//   a sell keeps the average: C -> round(C * after / before), half up, where before and after are
//   the units held before and after it (before = inventory_e18 + the units it took, quantity_out
//   less unmatched); it disposed of the difference (cost_e12). Emptied (after 0): all of C. Nothing
//   held (before 0, the whole sell unmatched): C unchanged, cost 0.
// So each row follows from the row before it and its own event, digit for digit: the inventory
// cost rolls forward exactly (previous + bought - sold), and is 0 when the inventory is (unless a
// buy of 0 units, its fee taking every unit, carried cost).
//
// Incremental (docs/plans/incremental-builds.md, "The contract"): a row depends only on the events
// up to it, so for each (pool, symbol) that temp.main.model_pending names the step deletes the rows
// from the first event at or after from_at (the first event when from_at is null; past the last
// when there is none) and walks the events from there, starting from the inventory cost of the row
// before it (0 before the first event). It reads those events only, and one row of its own table
// per partition. Pending rows are passed on unchanged: the rows before the first replaced event are
// as they were. A partition whose events are gone (named by a wide pending row) loses its rows.
import { BIGINT, HUGEINT, TIMESTAMPTZ, VARCHAR } from '@duckdb/node-api';
import { shareOf } from '../../src/models/lot-matching.ts';
import { declareProgramModel } from '../../src/models/program-model.ts';
import type { Database } from '../../src/store/database.ts';
import { ChunkColumns } from '../../src/store/chunk-columns.ts';
import { closeQuietly, RowChunks } from '../../src/store/row-chunks.ts';

/** The columns the walk reads, in this order, from int_spot_trades as t. */
const EVENT_COLUMNS = `t.pool, t.symbol, t.event_seq, t.side = 'sell' as is_sell, t.inventory_e18,
    t.inventory_e18 + t.quantity_out_e18 - t.unmatched_e18 as before_e18, t.cost_e12, t.event_at`;

const IS_CONFIGURED = "list_contains((SELECT any_value(cost_methods) FROM settings.reporting), 'average')";

export default declareProgramModel({
  name: 'int_spot_average_cost',
  layer: 'intermediate',
  references: ['intermediate.int_spot_trades'],
  columns: 'pool VARCHAR NOT NULL, symbol VARCHAR NOT NULL, event_seq BIGINT NOT NULL, event_at TIMESTAMPTZ, cost_e12 HUGEINT, inventory_cost_e12 HUGEINT NOT NULL',
  async build(db: Database) {
    if (!(await isConfigured(db))) return;
    await walk(db, `select ${EVENT_COLUMNS} from intermediate.int_spot_trades as t order by t.pool, t.symbol, t.event_seq`, new Map());
  },
  async incremental(db: Database) {
    if (!(await isConfigured(db))) {
      await db.run('DELETE FROM intermediate.int_spot_average_cost');
      return;
    }
    const [{ wide } = { wide: '0' }] = await db.all<{ wide: string }>(`
      SELECT count(*) AS wide FROM temp.main.model_pending AS p, (SELECT any_value(pooling) AS pooling FROM settings.reporting) AS r
      WHERE p.account IS NULL OR p.symbol IS NULL OR (p.account = '*' AND r.pooling <> 'universal')`);
    // The earliest change, as a literal (none: every change replays a whole partition).
    const [earliest] = await db.all<{ at: string | null }>('SELECT min(from_at)::varchar AS at FROM temp.main.model_pending');
    try {
      await db.run(replayPlan(wide !== '0', earliest?.at ?? null));
      const [{ none } = { none: '0' }] = await db.all<{ none: string }>('SELECT count(*) AS none FROM temp.main.int_spot_average_replay WHERE from_seq IS NULL');
      if (none !== '0') await db.run(PAST_THE_LAST);
      const plan = await db.all<{ pool: string; symbol: string; from_seq: string; from_at: string | null; previous_e12: string | null }>(`
        SELECT r.pool, r.symbol, r.from_seq, r.from_at::varchar AS from_at, a.inventory_cost_e12::varchar AS previous_e12
        FROM temp.main.int_spot_average_replay AS r
        LEFT JOIN intermediate.int_spot_average_cost AS a ON a.pool = r.pool AND a.symbol = r.symbol AND a.event_seq = r.from_seq - 1`);
      if (plan.length === 0) return;
      // Every row deleted is of an event at or after its partition's from_at (none is an opening
      // lot's, which has no instant, unless a partition replays whole): a constant bound on
      // event_at lets DuckDB skip the older row groups then.
      const whole = plan.some((row) => row.from_at === null);
      const after = whole || earliest?.at == null ? '' : ` AND a.event_at >= TIMESTAMPTZ ${quote(earliest.at)}`;
      await db.run(`
        DELETE FROM intermediate.int_spot_average_cost AS a USING temp.main.int_spot_average_replay AS r
        WHERE a.pool = r.pool AND a.symbol = r.symbol AND a.event_seq >= r.from_seq${after}`);
      // The other connection (streamCommitted) cannot see this one's temporary tables: the
      // partitions and their first events go into the query as values; the events, as the rows,
      // from the earliest change on.
      const values = plan.map((row) => `(${quote(row.pool)}, ${quote(row.symbol)}, ${BigInt(row.from_seq)})`).join(',\n    ');
      const events = `
        select ${EVENT_COLUMNS}
        from intermediate.int_spot_trades as t
        join (values ${values}) as r (pool, symbol, from_seq) on t.pool = r.pool and t.symbol = r.symbol and t.event_seq >= r.from_seq
        ${after === '' ? '' : `where t.event_at >= TIMESTAMPTZ ${quote(earliest!.at!)}`}
        order by t.pool, t.symbol, t.event_seq`;
      const previous = new Map(plan.map((row) => [partitionKey(row.pool, row.symbol), row.previous_e12 === null ? 0n : BigInt(row.previous_e12)]));
      // A replay from past the first event with no row before it is a table out of step with its trades.
      const broken = plan.find((row) => BigInt(row.from_seq) > 1n && row.previous_e12 === null);
      if (broken !== undefined) throw new Error(`int_spot_average_cost: the row before event ${broken.from_seq} of ${broken.pool} ${broken.symbol} is missing; rebuild with --full-refresh`);
      await walk(db, events, previous);
    } finally {
      await db.run('DROP TABLE IF EXISTS temp.main.int_spot_average_replay');
    }
  },
});

async function isConfigured(db: Database): Promise<boolean> {
  const [row] = await db.all<{ configured: boolean | null }>(`SELECT ${IS_CONFIGURED} AS configured`);
  return row?.configured === true;
}

const partitionKey = (pool: string, symbol: string) => `${pool}\u0000${symbol}`;
const quote = (text: string) => `'${text.replace(/'/g, "''")}'`;

/**
 * temp.main.int_spot_average_replay: per (pool, symbol) that model_pending names, the first event
 * to replay (from_seq; NULL where no event is at or after the change: PAST_THE_LAST) and the
 * change's instant (from_at; NULL: the whole partition). Under pooling universal an account names
 * pool '*'. A wide pending row (account NULL: everything; '*' under pooling account: every
 * account; symbol NULL) names the partitions found in the trades or in this table (one whose
 * events are gone loses its rows: nothing is replayed).
 */
function replayPlan(wide: boolean, earliest: string | null): string {
  const partitions = wide
    ? `select distinct pool, symbol from intermediate.int_spot_trades
    union
    select distinct pool, symbol from intermediate.int_spot_average_cost`
    : `select distinct case when r.pooling = 'universal' then '*' else p.account end as pool, p.symbol
    from pending as p, (select any_value(pooling) as pooling from settings.reporting) as r`;
  return `
CREATE OR REPLACE TEMP TABLE int_spot_average_replay AS
with pending as (
    select account, symbol, from_at from temp.main.model_pending
),

partitions as (
    ${partitions}
),

-- The earliest change per partition (NULL: from the beginning). Under pooling universal an account
-- names pool '*' (should an account be named where its pool is meant).
changes as (
    select x.pool, x.symbol, case when bool_or(p.from_at is null) then null else min(p.from_at) end as from_at
    from partitions as x
    join pending as p on (p.account is null or p.account = '*' or p.account = x.pool or x.pool = '*') and (p.symbol is null or p.symbol = x.symbol)
    group by x.pool, x.symbol
),

-- The first event at or after the change, read from the trades at or after the earliest change
-- only (a constant bound: DuckDB skips the older row groups).
firsts as (
    select c.pool, c.symbol, min(t.event_seq) as first_seq
    from changes as c
    join intermediate.int_spot_trades as t on t.pool = c.pool and t.symbol = c.symbol and t.event_at >= c.from_at
    where t.event_at >= ${earliest === null ? "TIMESTAMPTZ 'infinity'" : `TIMESTAMPTZ ${quote(earliest)}`}
    group by c.pool, c.symbol
)

-- (NULL where there is none: see PAST_THE_LAST)
select c.pool, c.symbol, c.from_at, case when c.from_at is null then 1 else f.first_seq end as from_seq
from changes as c
left join firsts as f on f.pool = c.pool and f.symbol = c.symbol`;
}

/**
 * A partition with no event at or after its change (the change removed its last events) replays
 * from past its last event: the rows of the events removed are deleted, none is walked. Rare, and
 * read apart: it reads every event of those partitions.
 */
const PAST_THE_LAST = `
UPDATE temp.main.int_spot_average_replay AS r
SET from_seq = coalesce((SELECT max(t.event_seq) FROM intermediate.int_spot_trades AS t WHERE t.pool = r.pool AND t.symbol = r.symbol), 0) + 1
WHERE r.from_seq IS NULL`;

/** The columns of int_spot_average_cost, in order. */
const TYPES = [VARCHAR, VARCHAR, BIGINT, TIMESTAMPTZ, HUGEINT, HUGEINT];

/**
 * Walks the events `sql` returns (EVENT_COLUMNS, ordered by pool, symbol, event_seq) as they
 * stream in, each partition from the inventory cost `previous` holds for it (none: 0), and appends
 * a row per event, a data chunk at a time. The inventory cost is never negative (a buy's cost is
 * not), so shareOf's halves away from zero are halves up.
 */
async function walk(db: Database, sql: string, previous: ReadonlyMap<string, bigint>): Promise<void> {
  await db.withInsertionOrder(async () => {
    const rowsOut = new RowChunks(await db.appender('intermediate', 'int_spot_average_cost'), TYPES);
    let pool = '';
    let symbol = '';
    let started = false;
    let cost = 0n;
    try {
      // The events a column at a time (EVENT_COLUMNS, in order), read from the chunks' vectors.
      for await (const chunk of db.streamCommittedChunks(sql)) {
        const columns = new ChunkColumns(chunk);
        const [pools, symbols, seqs, sells] = [columns.strings(0), columns.strings(1), columns.bigints(2), columns.booleans(3)];
        const [inventories, befores, costs, ats] = [columns.hugeints(4), columns.hugeints(5), columns.hugeints(6), columns.bigints(7)];
        for (let row = 0; row < columns.rows; row++) {
          if (!started || pools[row] !== pool || symbols[row] !== symbol) {
            started = true;
            pool = pools[row] as string;
            symbol = symbols[row] as string;
            cost = previous.get(partitionKey(pool, symbol)) ?? 0n;
          }
          let disposed: bigint | null = null;
          if (sells[row] === true) {
            const before = befores[row] as bigint;
            const kept = before === 0n ? cost : shareOf(cost, inventories[row] as bigint, before);
            disposed = cost - kept;
            cost = kept;
          } else {
            cost += costs[row] as bigint;
          }
          // (event_at as its microseconds: RowChunks writes a TIMESTAMPTZ from them.)
          rowsOut.add([pool, symbol, seqs[row] as bigint, ats[row] ?? null, disposed, cost]);
        }
      }
      rowsOut.flushSync();
    } catch (error) {
      closeQuietly(rowsOut);
      throw error;
    }
    rowsOut.closeSync();
  });
}
