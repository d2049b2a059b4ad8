// The books' lots: what each cost method makes of every coin's acquisitions and disposals
// (intermediate.int_coin_events), in the reporting currency (src/books/coin-lots.ts). Key: (pool,
// coin, cost_method, event_seq). Inputs: intermediate.int_coin_events, settings.reporting.
// Per event: an acquisition's lot cost, a disposal's cost (the known part) and proceeds and gain,
// and the units and carrying value held after it. Unknown is never 0: cost_known and
// carrying_known say whether a figure is whole; gain_e12 is null unless it is.
// The events stream in, a coin at a time (src/books/coin-lots.ts, matchCoinStream): what is held is
// each method's open lots and the events not yet settled, never a coin's history (on the 1M
// benchmark history with a reporting currency, USDT's 2M events were held as objects: 4.0 GB).
//
// Incremental (docs/plans/incremental-builds.md, "The books"), as int_spot_lot_segments is: a whole
// build saves each (pool, coin, cost_method)'s match state (src/books/coin-lots.ts
// CoinMatchOptions) before the first event of a month (kind 'month', the latest CHECKPOINTS_KEPT)
// and of each of the pool's last RECENT_DAYS days (kind 'day') in settings.coin_lot_state, which
// this model owns. int_coin_events hands on (pool, coin, B): its events from B on were replaced.
// For each coin named, every pool of the coin is matched again (a withdrawal's cost carried to
// another pool's deposit links them), each method from its latest state before the first event
// whose result may change: the first at or after B (uk: of the day 32 days before B's: a disposal
// takes from the acquisitions of the 30 days after it). Its rows and states from there on are
// replaced; the withdrawals before it that carried deposits name keep their stored costs. The
// result is a whole build's, row for row (test/incremental-builds.test.ts). The readers get
// (pool, coin, the start of the day the match resumed from; null: from the first event).
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { BIGINT, BOOLEAN, HUGEINT, VARCHAR, type DuckDBAppender, type DuckDBValue } from '@duckdb/node-api';
import { matchCoinStream, type CoinEvent, type CoinStreamOptions, type PooledCoinEvent } from '../../src/books/coin-lots.ts';
import { COST_METHODS, type CostMethod } from '../../src/models/settings.ts';
import { closeQuietly, RowChunks } from '../../src/store/row-chunks.ts';
import { declareProgramModel } from '../../src/models/program-model.ts';
import { writeComments, type TableDescription } from '../../src/store/comments.ts';
import type { Database } from '../../src/store/database.ts';

const STATE_TABLE = 'settings.coin_lot_state';
const STATE_COLUMNS = 'pool VARCHAR NOT NULL, coin VARCHAR NOT NULL, cost_method VARCHAR NOT NULL, next_seq BIGINT NOT NULL, kind VARCHAR NOT NULL, next_day INTEGER NOT NULL, state BLOB NOT NULL';
/** STATE_TABLE's comments (src/store/comments.ts), for an analyst who finds it in the settings schema. */
const STATE_DESCRIPTION: TableDescription = {
  schema: 'settings',
  table: 'coin_lot_state',
  description:
    "The books' lot matches' saved states (intermediate.int_coin_lots, internal to it): where an incremental build resumes matching a (pool, coin) under a cost method instead of matching it from the first event.",
  columns: [
    { name: 'pool', description: "Inventory the lots belong to: the account, or * for every account's (pooling universal)" },
    { name: 'coin', description: 'Coin', unit: 'coin code' },
    { name: 'cost_method', description: 'Cost method' },
    { name: 'next_seq', description: 'The state is the one before this event (event_seq of intermediate.int_coin_events)', unit: 'count' },
    { name: 'kind', description: "month: before the first event of a month; day: before the first event of one of the pool's last days" },
    { name: 'next_day', description: 'Day of that event (reporting zone)', unit: 'days since 1970-01-01' },
    { name: 'state', description: 'The open lots, what is held and its carrying value, serialized as JSON, compressed (raw deflate)' },
  ],
};
/** Month-start states kept per (pool, coin, cost_method): the latest months' (a change older than them matches from the first event). */
const CHECKPOINTS_KEPT = 3;
/**
 * Besides, a state before every day of the pool's last days (by the day of its last event): a
 * night's change resumes from the day before its earliest change's day (int_coin_events' B), a
 * late record inside the sync's 3-day lookback a few days earlier; uk 32 days before that.
 */
const RECENT_DAYS: Readonly<Record<CostMethod, number>> = { fifo: 7, average: 7, lifo: 7, hifo: 7, uk: 40 };
/** Days before B's day that uk resumes from (its 30 days, and a day either side for the zones). */
const UK_REACH_DAYS = 32;

export default declareProgramModel({
  name: 'int_coin_lots',
  layer: 'intermediate',
  references: ['intermediate.int_coin_events'],
  columns: `pool VARCHAR NOT NULL, coin VARCHAR NOT NULL, cost_method VARCHAR NOT NULL, event_seq BIGINT NOT NULL, direction VARCHAR NOT NULL,
    units_e18 HUGEINT NOT NULL, cost_e12 HUGEINT, cost_known BOOLEAN NOT NULL, unmatched_e18 HUGEINT NOT NULL, proceeds_e12 HUGEINT, gain_e12 HUGEINT,
    holding_e18 HUGEINT NOT NULL, carrying_e12 HUGEINT NOT NULL, carrying_known BOOLEAN NOT NULL`,
  async build(db: Database) {
    await db.run(`CREATE SCHEMA IF NOT EXISTS settings; CREATE OR REPLACE TABLE ${STATE_TABLE} (${STATE_COLUMNS})`);
    await writeComments(db, [STATE_DESCRIPTION]);
    const methods = await costMethods(db);
    const coins = (await db.all<{ coin: string }>('SELECT DISTINCT coin FROM intermediate.int_coin_events ORDER BY coin')).map((row) => row.coin);
    if (coins.length === 0 || methods.length === 0) return;
    const plans = new Map<string, CoinPlan>(coins.map((coin) => [coin, { resumes: new Map(), carried: new Map(), since: null }]));
    await db.withInsertionOrder(() => appendLots(db, plans, methods));
  },
  async incremental(db: Database) {
    await db.run(`CREATE SCHEMA IF NOT EXISTS settings; CREATE TABLE IF NOT EXISTS ${STATE_TABLE} (${STATE_COLUMNS})`);
    await writeComments(db, [STATE_DESCRIPTION]);
    const methods = await costMethods(db);
    // The earliest day a match may resume from (uk's reach before the earliest change, and a day
    // for the zones), as a literal: the events' scan skips the row groups before it.
    const [earliest] = await db.all<{ day: string | null }>(`
      SELECT strftime(min(local_date(p.from_at, r.time_zone)) - ${UK_REACH_DAYS + 1}, '%Y-%m-%d') AS day
      FROM temp.main.model_pending AS p, (SELECT any_value(time_zone) AS time_zone FROM settings.reporting) AS r`);
    await db.run(replayPlan(methods, earliest?.day === null || earliest?.day === undefined ? "DATE '-infinity'" : `DATE '${earliest.day}'`));
    const rows = await db.all<{ pool: string; coin: string; cost_method: CostMethod; from_seq: string; state_seq: string | null; read_day: number | null }>(
      'SELECT pool, coin, cost_method, from_seq, state_seq, read_day FROM temp.main.coin_lots_replay ORDER BY coin, pool, cost_method',
    );
    try {
      await db.run(`
        DELETE FROM intermediate.int_coin_lots AS l USING temp.main.coin_lots_replay AS r
        WHERE l.pool = r.pool AND l.coin = r.coin AND l.cost_method = r.cost_method AND l.event_seq >= r.from_seq;
        DELETE FROM ${STATE_TABLE} AS c USING temp.main.coin_lots_replay AS r
        WHERE c.pool = r.pool AND c.coin = r.coin AND c.cost_method = r.cost_method AND c.next_seq > r.from_seq`);
      const plans = new Map<string, CoinPlan>();
      for (const row of rows) {
        const plan = plans.get(row.coin) ?? { resumes: new Map(), carried: new Map(), since: null };
        plans.set(row.coin, plan);
        const fromSeq = BigInt(row.from_seq);
        const state = row.state_seq === null ? undefined : await savedState(db, row.pool, row.coin, row.cost_method, row.state_seq);
        plan.resumes.set(resumeKey(row.pool, row.cost_method), state === undefined ? { fromSeq } : { fromSeq, state });
        // The events are read from the earliest day a match resumes from (none: the first event).
        if (plan.since !== undefined) plan.since = row.read_day === null ? undefined : plan.since === null ? row.read_day : Math.min(plan.since, row.read_day);
      }
      // The withdrawals carried deposits name that are not matched again keep their costs.
      for (const row of await db.all<{ coin: string; cost_method: CostMethod; entry_ref: string; cost: bigint | null }>(`
        SELECT e.coin, l.cost_method, e.entry_ref, CASE WHEN l.cost_known THEN l.cost_e12 END AS cost
        FROM intermediate.int_coin_events AS e
        JOIN intermediate.int_coin_lots AS l ON l.pool = e.pool AND l.coin = e.coin AND l.event_seq = e.event_seq
        WHERE e.value_basis = 'carrying_cost'
            AND e.coin IN (SELECT DISTINCT coin FROM temp.main.coin_lots_replay)
            AND e.entry_ref IN (SELECT transfer_ref FROM intermediate.int_coin_events WHERE value_basis = 'carried' AND transfer_ref IS NOT NULL)`)) {
        const plan = plans.get(row.coin);
        if (plan === undefined) continue;
        const costs = plan.carried.get(row.cost_method) ?? new Map<string, bigint | null>();
        plan.carried.set(row.cost_method, costs.set(row.entry_ref, row.cost));
      }
      const lastDays = await db.withInsertionOrder(() => appendLots(db, plans, methods));
      // The states a whole build keeps: the latest CHECKPOINTS_KEPT month starts and the day
      // starts of the pool's last RECENT_DAYS days (its last event moved on).
      const lastDayRows = lastDays.length === 0 ? 'SELECT NULL::VARCHAR, NULL::VARCHAR, NULL::INTEGER WHERE false' : `VALUES ${lastDays.map((row) => `(${quote(row.pool)}, ${quote(row.coin)}, ${row.lastDay})`).join(', ')}`;
      await db.run(`
        DELETE FROM ${STATE_TABLE} AS c USING (
            SELECT k.pool, k.coin, k.cost_method, k.next_seq
            FROM (
                SELECT k.*, row_number() OVER (PARTITION BY k.pool, k.coin, k.cost_method, k.kind ORDER BY k.next_seq DESC) AS recency
                FROM ${STATE_TABLE} AS k
                WHERE EXISTS (SELECT 1 FROM temp.main.coin_lots_replay AS r WHERE r.pool = k.pool AND r.coin = k.coin AND r.cost_method = k.cost_method)
            ) AS k
            LEFT JOIN (${lastDayRows}) AS l (pool, coin, last_day) ON l.pool = k.pool AND l.coin = k.coin
            WHERE NOT ((k.kind = 'month' AND k.recency <= ${CHECKPOINTS_KEPT}) OR (l.last_day IS NOT NULL AND ${IS_RECENT_SQL}))
        ) AS old
        WHERE c.pool = old.pool AND c.coin = old.coin AND c.cost_method = old.cost_method AND c.next_seq = old.next_seq;
        CREATE OR REPLACE TEMP TABLE model_pending AS
        SELECT r.pool AS account, r.coin AS symbol,
            CASE WHEN bool_or(r.read_day IS NULL) THEN NULL ELSE local_day_start(DATE '1970-01-01' + min(r.read_day), any_value(s.time_zone)) END AS from_at
        FROM temp.main.coin_lots_replay AS r
        CROSS JOIN (SELECT any_value(time_zone) AS time_zone FROM settings.reporting) AS s
        GROUP BY r.pool, r.coin`);
    } finally {
      await db.run('DROP TABLE IF EXISTS temp.main.coin_lots_replay');
    }
  },
});

/** One coin's match: where each pool and method resumes (none: from the first event), the kept withdrawals' costs, the earliest day to read (null: none resumes; undefined: some match from the first event). */
interface CoinPlan {
  resumes: Map<string, { fromSeq: bigint; state?: string }>;
  carried: Map<CostMethod, Map<string, bigint | null>>;
  since: number | null | undefined;
}

const resumeKey = (pool: string, method: string) => `${pool}\u0000${method}`;
const quote = (text: string) => `'${text.replace(/'/g, "''")}'`;

async function costMethods(db: Database): Promise<CostMethod[]> {
  const [reporting] = await db.all<{ cost_methods: string[] | null }>('SELECT any_value(cost_methods) AS cost_methods FROM settings.reporting');
  return COST_METHODS.filter((method) => reporting?.cost_methods?.includes(method) === true);
}

/**
 * temp.main.coin_lots_replay: per coin that model_pending names (a pending row of no coin or pool:
 * every coin there is), every pool of the coin (in the events or in this table) and cost method,
 * the first event to match from (from_seq), the state before it (state_seq, its next_seq; NULL:
 * nothing held), that state's day (from_day; NULL: from the first event), and the day the events
 * read from it begin on (read_day; NULL: no day bounds them).
 */
function replayPlan(methods: readonly CostMethod[], since: string): string {
  const methodValues = methods.length === 0 ? "SELECT 'fifo' WHERE false" : `VALUES ${methods.map((method) => `('${method}')`).join(', ')}`;
  return `
CREATE OR REPLACE TEMP TABLE coin_lots_replay AS
with reporting as (
    select any_value(time_zone) as time_zone from settings.reporting
),

wide as (
    select case when bool_or(from_at is null) then null else min(from_at) end as from_at, count(*) > 0 as is_wide
    from temp.main.model_pending where account is null or symbol is null
),

-- The earliest change per coin (NULL: from the first event).
changes as (
    select coin, case when bool_or(from_at is null) then null else min(from_at) end as from_at
    from (
        select symbol as coin, from_at from temp.main.model_pending where account is not null and symbol is not null
        union all
        select x.coin, w.from_at
        from (select distinct coin from intermediate.int_coin_events union select distinct coin from intermediate.int_coin_lots) as x
        cross join wide as w
        where w.is_wide
    )
    group by coin
),

pools as (
    select distinct e.pool, e.coin from intermediate.int_coin_events as e semi join changes as c on c.coin = e.coin
    union
    select distinct l.pool, l.coin from intermediate.int_coin_lots as l semi join changes as c on c.coin = l.coin
),

methods (cost_method) as (
    ${methodValues}
),

-- Each pool's last event now (events from B on may be gone, and the states after them).
lasts as (
    select e.pool, e.coin, max(e.event_seq) as last_seq
    from intermediate.int_coin_events as e
    semi join changes as c on c.coin = e.coin
    group by e.pool, e.coin
),

-- The first event whose result may change: at or after the change (uk: of the day ${UK_REACH_DAYS} days
-- before its day); none: past the last event, so the latest state before it is resumed from.
firsts as (
    select
        p.pool, p.coin, m.cost_method,
        case
            when c.from_at is null then 1
            else coalesce(
                min(e.event_seq) filter (where
                    case when m.cost_method = 'uk' then e.event_date >= local_date(c.from_at, r.time_zone) - ${UK_REACH_DAYS} else e.event_at >= c.from_at end),
                any_value(l.last_seq) + 1,
                1)
        end as replay_seq
    from pools as p
    cross join methods as m
    cross join reporting as r
    join changes as c on c.coin = p.coin
    left join lasts as l on l.pool = p.pool and l.coin = p.coin
    left join intermediate.int_coin_events as e on e.pool = p.pool and e.coin = p.coin and e.event_date >= ${since}
    group by p.pool, p.coin, m.cost_method, c.from_at, r.time_zone
),

-- The latest state before that event.
resume as (
    select f.pool, f.coin, f.cost_method, max(s.next_seq) as next_seq
    from firsts as f
    left join (select pool, coin, cost_method, next_seq from ${STATE_TABLE}) as s
        on s.pool = f.pool and s.coin = f.coin and s.cost_method = f.cost_method and s.next_seq < f.replay_seq
    group by f.pool, f.coin, f.cost_method
)

select
    r.pool, r.coin, r.cost_method, coalesce(r.next_seq, 1) as from_seq, r.next_seq as state_seq, s.next_day as from_day,
    -- The events from a state on lie on its day or later, unless its event is an opening lot (no
    -- instant, first in the order, dated by its symbol's first fill): then no day bounds them.
    case when o.event_seq is null then s.next_day end as read_day
from resume as r
left join (select pool, coin, cost_method, next_seq, next_day from ${STATE_TABLE}) as s
    on s.pool = r.pool and s.coin = r.coin and s.cost_method = r.cost_method and s.next_seq = r.next_seq
left join (select pool, coin, event_seq from intermediate.int_coin_events where event_at is null) as o
    on o.pool = r.pool and o.coin = r.coin and o.event_seq = r.next_seq`;
}

/** A saved state, by constants DuckDB filters the scan with before it reads a state (see int_spot_lot_segments). */
async function savedState(db: Database, pool: string, coin: string, method: CostMethod, nextSeq: string): Promise<string> {
  const [row] = await db.all<{ state: string }>(
    `SELECT base64(state) AS state FROM ${STATE_TABLE} WHERE pool = ${quote(pool)} AND coin = ${quote(coin)} AND cost_method = ${quote(method)} AND next_seq = ${BigInt(nextSeq)}`,
  );
  if (row === undefined) throw new Error(`int_coin_lots: the saved state before event ${nextSeq} of ${pool} ${coin} ${method} is gone`);
  return inflateRawSync(Buffer.from(row.state, 'base64')).toString('utf8');
}

/** Month number of a day (days since 1970-01-01): states are saved before each month's first event. */
function monthOf(day: number): number {
  const date = new Date(day * 86_400_000);
  return date.getUTCFullYear() * 12 + date.getUTCMonth();
}

const isMonthStart = (previousDay: number, nextDay: number): boolean => monthOf(previousDay) !== monthOf(nextDay);
const isRecent = (method: CostMethod, day: number, lastDay: number): boolean => day >= lastDay - RECENT_DAYS[method];
/** isRecent in SQL, on the columns of STATE_TABLE (alias k) and a pool's last_day (alias l). */
const IS_RECENT_SQL = `k.next_day >= l.last_day - case k.cost_method ${COST_METHODS.map((method) => `when '${method}' then ${RECENT_DAYS[method]}`).join(' ')} end`;

/** Per (pool, coin) of the coins matched: the day of its last event, and the earliest month whose start is among its latest CHECKPOINTS_KEPT (Infinity: none). */
async function poolEnds(db: Database, coins: readonly string[]): Promise<Map<string, { lastDay: number; keepMonthsFrom: number }>> {
  if (coins.length === 0) return new Map();
  const rows = await db.all<{ pool: string; coin: string; last_day: number; keep_from: number | null }>(`
    with months as (
        select pool, coin, year(event_date) * 12 + month(event_date) - 1 as month, max(datediff('day', date '1970-01-01', event_date)) as last_day
        from intermediate.int_coin_events
        where coin in (${coins.map(quote).join(', ')})
        group by all
    ),

    ranked as (
        select *, row_number() over (partition by pool, coin order by month desc) as recency, count(*) over (partition by pool, coin) as months
        from months
    )

    select pool, coin, max(last_day)::integer as last_day, min(month) filter (where recency <= ${CHECKPOINTS_KEPT} and recency < months)::integer as keep_from
    from ranked
    group by pool, coin`);
  return new Map(rows.map((row) => [`${row.pool}\u0000${row.coin}`, { lastDay: Number(row.last_day), keepMonthsFrom: row.keep_from === null ? Number.POSITIVE_INFINITY : Number(row.keep_from) }]));
}

/** The columns of int_coin_lots, in order. */
const LOT_TYPES = [VARCHAR, VARCHAR, VARCHAR, BIGINT, VARCHAR, HUGEINT, HUGEINT, BOOLEAN, HUGEINT, HUGEINT, HUGEINT, HUGEINT, HUGEINT, BOOLEAN];

/**
 * Matches each planned coin's pools under each method (from where its plan resumes them) and
 * appends their lots and saved states (inside withInsertionOrder: see Database). Returns the last
 * day of each (pool, coin) matched.
 */
async function appendLots(db: Database, plans: ReadonlyMap<string, CoinPlan>, methods: readonly CostMethod[]): Promise<{ pool: string; coin: string; lastDay: number }[]> {
  const coins = [...plans.keys()].sort();
  // The withdrawals carried deposits name, per coin (one read: they are few).
  const carried = new Map<string, Set<string>>();
  for (const { coin, transfer_ref: ref } of await db.all<{ coin: string; transfer_ref: string }>(
    `SELECT DISTINCT coin, transfer_ref FROM intermediate.int_coin_events WHERE value_basis = 'carried' AND transfer_ref IS NOT NULL`,
  )) {
    carried.set(coin, (carried.get(coin) ?? new Set()).add(ref));
  }
  const ends = await poolEnds(db, coins);
  const lots = new RowChunks(await db.appender('intermediate', 'int_coin_lots'), LOT_TYPES);
  const states = await db.appender('settings', 'coin_lot_state');
  try {
    for (const coin of coins) {
      const plan = plans.get(coin)!;
      const options: CoinStreamOptions = {
        resumeOf: (pool, method) => plan.resumes.get(resumeKey(pool, method)),
        carriedCosts: plan.carried,
        checkpointsOf: (pool, method) => {
          const end = ends.get(`${pool}\u0000${coin}`);
          if (end === undefined) throw new Error(`int_coin_lots: ${pool} ${coin} has events but no last day`);
          return {
            isCheckpoint: (previousDay, nextDay) => (isMonthStart(previousDay, nextDay) && monthOf(nextDay) >= end.keepMonthsFrom) || isRecent(method, nextDay, end.lastDay),
            onCheckpoint: (nextSeq, state, previousDay, nextDay) => appendState(states, pool, coin, method, nextSeq, isMonthStart(previousDay, nextDay) ? 'month' : 'day', nextDay, state),
          };
        },
      };
      await matchCoinStream(
        methods,
        carried.get(coin) ?? new Set(),
        () => coinEvents(db, coin, plan),
        (method, pool, event, result) => {
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
        },
        options,
      );
      lots.flushSync();
    }
    states.flushSync();
  } catch (error) {
    closeQuietly(lots);
    closeQuietly(states);
    throw error;
  }
  lots.closeSync();
  states.closeSync();
  return [...ends].map(([key, end]) => {
    const [pool, coin] = key.split('\u0000') as [string, string];
    return { pool, coin, lastDay: end.lastDay };
  });
}

function appendState(states: DuckDBAppender, pool: string, coin: string, method: CostMethod, nextSeq: bigint, kind: 'month' | 'day', nextDay: number, state: string): void {
  states.appendVarchar(pool);
  states.appendVarchar(coin);
  states.appendVarchar(method);
  states.appendBigInt(nextSeq);
  states.appendVarchar(kind);
  states.appendInteger(nextDay);
  // Compressed: lifo's and hifo's hold every open lot (see int_spot_lot_segments' packState).
  states.appendBlob(deflateRawSync(state, { level: 3 }));
  states.endRow();
  states.flushSync();
}

/**
 * One coin's events, every pool's, in pool then event_seq order, a chunk at a time: from the
 * earliest event a pool's match resumes at (per pool; the other connection cannot see this one's
 * temporary tables, so the pools go in as values), and from the earliest resumed day on (a
 * constant DuckDB skips older row groups by).
 */
async function* coinEvents(db: Database, coin: string, plan: CoinPlan): AsyncGenerator<PooledCoinEvent[]> {
  const starts = new Map<string, bigint>();
  for (const [key, resume] of plan.resumes) {
    const pool = key.split('\u0000')[0]!;
    const start = starts.get(pool);
    if (start === undefined || resume.fromSeq < start) starts.set(pool, resume.fromSeq);
  }
  const bounded = plan.resumes.size > 0;
  const values = [...starts].map(([pool, fromSeq]) => `(${quote(pool)}, ${fromSeq})`).join(', ');
  const sql = `SELECT e.pool, e.event_seq, datediff('day', DATE '1970-01-01', e.event_date) AS day, e.direction, e.units_e18, e.value_e12, e.value_basis, e.transfer_ref, e.entry_ref
    FROM intermediate.int_coin_events AS e
    ${bounded && values !== '' ? `JOIN (VALUES ${values}) AS r (pool, from_seq) ON r.pool = e.pool AND e.event_seq >= r.from_seq` : ''}
    WHERE e.coin = $1${typeof plan.since === 'number' ? ` AND e.event_date >= DATE '1970-01-01' + ${plan.since}` : ''}
    ORDER BY e.pool, e.event_seq`;
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
