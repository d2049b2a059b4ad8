// Lot matches of the stateful spot cost methods (lifo, hifo, uk), computed in TypeScript: one row
// per (cost method, sell, rule, lot) with the units, cost and proceeds, plus one row per sell part
// nothing was found for (rule 'unmatched', lot_seq and cost null). Same shape as
// int_spot_fifo_segments plus cost_method and match_rule. Built for the cost methods of
// settings.reporting (empty when none of these is chosen).
// Key: (pool, symbol, cost_method, sell_seq, match_rule, lot_seq). Inputs: intermediate.int_spot_trades, settings.reporting.
// The matching (src/models/lot-matching.ts) walks each (pool, symbol)'s events in event_seq order
// with BigInt on the integer units, exactly, as the events stream in: no partition's events are held
// (a matcher keeps its open lots; uk the last 31 days' events), and segments are appended as they
// are settled, so memory does not grow with a partition's fills.
// The event loop runs between the stream's chunks (2,048 events), so a stop signal is acted on
// within one (by hand, on the 1M benchmark history with lifo, hifo and uk: exit 130 0.9 s after
// SIGTERM). A pool is an account, or '*' (every account: pooling 'universal'); the sells and lots
// of a segment are found by (pool, symbol, seq).
// sell_at is the sell's instant, so that a reader's incremental step reads only the row groups
// of recent sells (DuckDB skips those a constant bound on it excludes).
//
// Incremental (docs/plans/incremental-builds.md, "The contract"): a whole walk starts each
// (pool, symbol) at its first event; the incremental step resumes it from a saved state instead.
// The state lives in settings.spot_lot_state and settings.spot_lot_open (STATE_TABLE and LOTS_TABLE
// below), which this model owns: build() replaces them and incremental() updates them, in the
// model's transaction. They hold, per (pool, symbol, cost_method), the matcher's state
// (checkpoints) before the first event of each month (kind 'month', the latest CHECKPOINTS_KEPT of
// them) and of each of the partition's last RECENT_DAYS days (kind 'day'), exactly: uk's as JSON
// (integers as decimal strings; compressed), lifo's and hifo's as their open lots in LOTS_TABLE,
// each checkpoint writing the lots that changed since the one before. Besides, each walk saves the
// state after the partition's last event (kind 'end'): a night's new events resume from there,
// matching only themselves (lifo and hifo always, uk where they start a new day and no disposal of
// the 30 days before took from the pool or found nothing); a late record inside the lookback
// resumes from the start of the day before it: on the 10M-fill history the BTC partition's month
// holds 720k events, its day 23k. (Until 2026-11-30 a night resumed from the start of the day
// before its first event too: it matched the day before again, the 10M benchmark night's 27k
// events twice.)
// For each (pool, symbol) that temp.main.model_pending names, the step:
//   1. finds the first event to replay: lifo and hifo, the first at or after from_at (a sell's
//      segments depend only on the events before it); uk, the first of the earliest reporting-zone
//      day, among the 30 days before from_at's day, whose disposal took from the pool, found
//      nothing, or took from an acquisition on from_at's day or later (the segments before the
//      change say so), else the first of from_at's day (a disposal is matched with acquisitions of
//      the 30 days after it, earliest first: one matched in full from acquisitions before the
//      change cannot take from those of the change's days, and so neither it nor the pool after it
//      changes);
//   2. loads the latest checkpoint strictly before that event (none: the partition's first event),
//      or at it where that event is before the first changed one (uk): its own event and the one
//      before are unchanged, so it is still where a whole build puts one (lifo and hifo: only the
//      open lots the replay's sells can reach, lotState); or the end state where it is that
//      event's (every event before it is unchanged: it is the state before it);
//   3. deletes the segments of sells from the checkpoint on (lifo and hifo; uk's in 5) and the
//      checkpoints after it (and their lots' rows);
//   4. reads the partition's events from the checkpoint on (never those before it), matches them
//      from the loaded state, appends their segments and their checkpoints, and keeps the latest
//      CHECKPOINTS_KEPT month starts, the day starts of the last RECENT_DAYS days (by the
//      partition's last event, which moved on) and the new end state (an end state resumed from
//      goes: where a whole walk puts a day or month start there, the walk resumed from it saved
//      one, its first event being read with the day of the last one before it);
//   5. with uk among the cost methods, compares uk's segments of the replayed sells (matched
//      into a temporary table) with those they replace, writes only those that differ (gone:
//      deleted, added: inserted), and moves each pending row's from_at back to the earliest sell
//      whose segments differ, for the models that read this one (a new acquisition can change
//      the matches of sells up to 30 days before it; mostly it changes those of a day or two).
// The result is the whole build's, row for row, and so are the checkpoints left (a checkpoint is a
// function of the events before it, which checkpoints are kept of the partition's last day). A
// change older than the oldest checkpoint kept replays the partition from its first event. One
// exception, of the checkpoints only: a change that removes a partition's last days leaves it
// without the day starts a whole build would keep before its new last day (the next change there
// resumes from an older checkpoint; every segment is the same).
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { BIGINT, BOOLEAN, HUGEINT, TIMESTAMPTZ, VARCHAR, type DuckDBAppender, type DuckDBBlobValue, type DuckDBValue } from '@duckdb/node-api';
import { LOT_METHODS, lotMatcher, type CheckpointLots, type HeldLot, type LotMatcher, type LotMethod, type Segment, type TradeEvent } from '../../src/models/lot-matching.ts';
import { declareProgramModel } from '../../src/models/program-model.ts';
import { writeComments, type TableDescription } from '../../src/store/comments.ts';
import type { Database } from '../../src/store/database.ts';
import { ChunkColumns } from '../../src/store/chunk-columns.ts';
import { closeQuietly, RowChunks } from '../../src/store/row-chunks.ts';

/**
 * The matcher's saved states (internal to this model, not a documented model: it lives in the
 * settings schema, beside settings.model_builds). `state` is the state before event `next_seq`,
 * under `cost_method`: the first event of a month (`kind` 'month') or of one of the last days
 * (`kind` 'day') of that (pool, symbol); `next_day` is its day (days since 1970-01-01).
 */
const STATE_TABLE = 'settings.spot_lot_state';
const STATE_COLUMNS =
  'pool VARCHAR NOT NULL, symbol VARCHAR NOT NULL, cost_method VARCHAR NOT NULL, next_seq BIGINT NOT NULL, kind VARCHAR NOT NULL, next_day INTEGER NOT NULL, base_seq BIGINT, state BLOB NOT NULL';
/** STATE_TABLE's comments (src/store/comments.ts), for an analyst who finds it in the settings schema. */
const STATE_DESCRIPTION: TableDescription = {
  schema: 'settings',
  table: 'spot_lot_state',
  description:
    "The lot matcher's saved states (intermediate.int_spot_lot_segments, internal to it): where an incremental build resumes matching a (pool, symbol) under a cost method instead of replaying it from the first event.",
  columns: [
    { name: 'pool', description: "Inventory the lots belong to: the account, or * for every account's (pooling universal)" },
    { name: 'symbol', description: 'Spot symbol' },
    { name: 'cost_method', description: 'Cost method (lifo, hifo, uk)' },
    { name: 'next_seq', description: 'The state is the one before this event (event_seq of intermediate.int_spot_trades)', unit: 'count' },
    { name: 'kind', description: "month: before the first event of a month; day: before the first event of one of the partition's last days; end: after the partition's last event" },
    { name: 'next_day', description: 'Day of that event (end: of the last event)', unit: 'days since 1970-01-01' },
    {
      name: 'base_seq',
      description:
        'Null (until 2026-11-29, the month state a lifo or hifo day state held the changes since)',
    },
    {
      name: 'state',
      description:
        "JSON, compressed (raw deflate): uk's pool and the units taken in the next 30 days; lifo's and hifo's open lots are in settings.spot_lot_open",
    },
  ],
};
/**
 * lifo's and hifo's open lots at their checkpoints, as versions: a row is a lot as it stood at the
 * checkpoint before event `from_seq` and at every later one until the lot's next row (`gone`: it
 * was no longer held). A checkpoint writes only the lots that changed since the checkpoint before
 * it, so a night writes what its days changed, never every open lot (hundreds of thousands on a
 * long history: lifo and hifo keep the old ones), and a resume reads only the lots its sells can
 * reach (lotState). Versions no kept checkpoint needs are deleted with the checkpoints.
 */
const LOTS_TABLE = 'settings.spot_lot_open';
const LOTS_COLUMNS =
  'pool VARCHAR NOT NULL, symbol VARCHAR NOT NULL, cost_method VARCHAR NOT NULL, lot_seq BIGINT NOT NULL, from_seq BIGINT NOT NULL, gone BOOLEAN NOT NULL, units HUGEINT, cost HUGEINT, taken HUGEINT';
/** LOTS_TABLE's comments. */
const LOTS_DESCRIPTION: TableDescription = {
  schema: 'settings',
  table: 'spot_lot_open',
  description:
    "The lot matcher's open lots under lifo and hifo at its saved states (settings.spot_lot_state, internal to intermediate.int_spot_lot_segments), as versions: each row holds from the state before from_seq until the lot's next row.",
  columns: [
    { name: 'pool', description: "Inventory the lot belongs to: the account, or * for every account's (pooling universal)" },
    { name: 'symbol', description: 'Spot symbol' },
    { name: 'cost_method', description: 'Cost method (lifo, hifo)' },
    { name: 'lot_seq', description: "The lot's buy (event_seq of intermediate.int_spot_trades)", unit: 'count' },
    { name: 'from_seq', description: 'The first saved state this row is the lot in (the state before this event)', unit: 'count' },
    { name: 'gone', description: 'The lot is no longer held from that state on (units, cost and taken null)' },
    { name: 'units', description: 'Units the buy added', unit: '1e-18 of the base coin' },
    { name: 'cost', description: 'Their cost', unit: '1e-12 of the quote coin' },
    { name: 'taken', description: 'Units already taken from it by sells', unit: '1e-18 of the base coin' },
  ],
};
/** A lifo or hifo checkpoint's `state` in STATE_TABLE: its lots are in LOTS_TABLE. */
const LOTS_ELSEWHERE = JSON.stringify({ lots: LOTS_TABLE });

/**
 * Every lifo and hifo checkpoint's open lots, one row per (checkpoint, lot): what a resume from it
 * could read (for a reader checking the states; lotState reads a checkpoint's, and only those its
 * replay can reach).
 */
export const CHECKPOINT_LOTS_SQL = `
SELECT c.pool, c.symbol, c.cost_method, c.next_seq, v.lot_seq,
    arg_max(v.units, v.from_seq) AS units, arg_max(v.cost, v.from_seq) AS cost, arg_max(v.taken, v.from_seq) AS taken
FROM ${STATE_TABLE} AS c
JOIN ${LOTS_TABLE} AS v ON v.pool = c.pool AND v.symbol = c.symbol AND v.cost_method = c.cost_method AND v.from_seq <= c.next_seq
WHERE c.cost_method IN ('lifo', 'hifo')
GROUP BY c.pool, c.symbol, c.cost_method, c.next_seq, v.lot_seq
HAVING NOT arg_max(v.gone, v.from_seq)`;

/** Month-start checkpoints kept per (pool, symbol, cost_method): the latest months' (a late fill older than them replays from the start). */
export const CHECKPOINTS_KEPT = 3;
/**
 * Besides, a checkpoint before every day of the partition's last RECENT_DAYS days (by the day of
 * its last event), kept while it is that recent: a night's new day, or a late record inside the
 * sync's lookback (3 days by default), resumes from the start of the day before it, not from the
 * month's. uk replays from 30 days before a change, so it keeps 40 (its states are small: the pool
 * and the next 30 days' taken units); lifo and hifo keep 7 (theirs hold every open lot).
 */
export const RECENT_DAYS: Readonly<Record<LotMethod, number>> = { lifo: 7, hifo: 7, uk: 40 };

const EVENT_COLUMNS = `t.pool, t.symbol, t.event_seq, t.lot_source = 'opening' as is_opening, t.side,
    datediff('day', date '1970-01-01', t.event_date) as day, t.units_in_e18, t.cost_e12, t.quantity_out_e18, t.proceeds_e12,
    epoch_us(t.event_at) as at_us`;

const ALL_EVENTS = `
select ${EVENT_COLUMNS}
from intermediate.int_spot_trades as t
order by t.pool, t.symbol, t.event_seq`;

/**
 * Where one (pool, symbol, cost_method) is matched from: its first event, and the state before it
 * (none: from nothing): uk's as JSON, lifo's and hifo's as the open lots the replay can reach.
 */
interface Resume {
  fromSeq: bigint;
  state?: string;
  lots?: ResumedLots;
  /** Resuming from an end state: the day of the last event before fromSeq (MatchOptions.previousDay). */
  previousDay?: number;
}

/** A lifo or hifo state to resume from: the matcher's fromLots (the lots the replay can reach). */
interface ResumedLots {
  held: HeldLot[];
  removed: bigint[];
}

export default declareProgramModel({
  name: 'int_spot_lot_segments',
  layer: 'intermediate',
  references: ['intermediate.int_spot_trades'],
  columns: `pool VARCHAR NOT NULL, symbol VARCHAR NOT NULL, cost_method VARCHAR NOT NULL, sell_seq BIGINT NOT NULL, match_rule VARCHAR NOT NULL,
    lot_seq BIGINT, sell_at TIMESTAMPTZ NOT NULL, quantity_e18 HUGEINT NOT NULL, cost_e12 HUGEINT, proceeds_e12 HUGEINT NOT NULL`,
  async build(db: Database) {
    await db.run(`CREATE SCHEMA IF NOT EXISTS settings; CREATE OR REPLACE TABLE ${STATE_TABLE} (${STATE_COLUMNS}); CREATE OR REPLACE TABLE ${LOTS_TABLE} (${LOTS_COLUMNS})`);
    await writeComments(db, [STATE_DESCRIPTION, LOTS_DESCRIPTION]);
    const methods = await lotMethods(db);
    if (methods.length === 0) return;
    await matchPartitions(db, ALL_EVENTS, methods, await partitionEnds(db), () => ({ fromSeq: 1n }));
  },
  async incremental(db: Database) {
    const [lotsTable] = await db.all<{ present: bigint }>(
      "SELECT count(*) AS present FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'settings' AND table_name = 'spot_lot_open'",
    );
    await db.run(`CREATE SCHEMA IF NOT EXISTS settings; CREATE TABLE IF NOT EXISTS ${STATE_TABLE} (${STATE_COLUMNS}); CREATE TABLE IF NOT EXISTS ${LOTS_TABLE} (${LOTS_COLUMNS})`);
    // A database built before LOTS_TABLE holds lifo's and hifo's open lots in each state's JSON:
    // those states go, and every partition replays from its first event, once. (A guard: a build
    // rebuilds this model whole when its code has changed, as it has since.)
    const migrating = Number(lotsTable?.present ?? 0) === 0;
    if (migrating) await db.run(`DELETE FROM ${STATE_TABLE} WHERE cost_method IN ('lifo', 'hifo')`);
    await writeComments(db, [STATE_DESCRIPTION, LOTS_DESCRIPTION]);
    // What it reads changed from each from_at on, one row per pool and symbol (the trades hand on
    // no bounded change; were one to, a replay from there changes every segment after it): its own
    // bounded changes are uk's, added below.
    await db.run(`CREATE OR REPLACE TEMP TABLE model_pending AS
      SELECT account, symbol, CASE WHEN bool_or(from_at IS NULL) THEN NULL ELSE min(from_at) END AS from_at, CAST(NULL AS TIMESTAMPTZ) AS to_at
      FROM temp.main.model_pending GROUP BY account, symbol`);
    const methods = await lotMethods(db);
    if (methods.length === 0) return;
    // A pending row naming one pool and symbol is that partition; only a wider one (every account
    // or every symbol) needs the partitions listed from the tables.
    const [{ wide } = { wide: '0' }] = await db.all<{ wide: string }>(`
      SELECT count(*) AS wide FROM temp.main.model_pending AS p, (SELECT any_value(pooling) AS pooling FROM settings.reporting) AS r
      WHERE p.account IS NULL OR p.symbol IS NULL OR (p.account = '*' AND r.pooling <> 'universal')`);
    // The earliest day a replay starts from (uk: 30 days before the earliest change), as a literal.
    const [earliest] = await db.all<{ day: string | null }>(`
      SELECT strftime(min(local_date(p.from_at, r.time_zone)) - 30, '%Y-%m-%d') AS day
      FROM temp.main.model_pending AS p, (SELECT any_value(time_zone) AS time_zone FROM settings.reporting) AS r`);
    const since = earliest?.day === null || earliest?.day === undefined ? undefined : earliest.day;
    await db.run(
      replayPlan(
        methods,
        wide !== '0',
        since === undefined ? "DATE '9999-12-31'" : `DATE '${since}'`,
        since === undefined ? "TIMESTAMPTZ '9999-12-31 00:00:00+00'" : `TIMESTAMPTZ '${new Date(Date.parse(`${since}T00:00:00Z`) - 86_400_000).toISOString()}'`,
      ),
    );
    // (Every partition, when lifo's and hifo's states were dropped above: each replays from its first event.)
    const stacks = methods.filter((method) => method !== 'uk');
    if (migrating && stacks.length > 0) {
      await db.run(`
        DELETE FROM temp.main.int_spot_lot_replay WHERE cost_method <> 'uk';
        INSERT INTO temp.main.int_spot_lot_replay
        SELECT p.pool, p.symbol, m.cost_method, 1, NULL, NULL, NULL
        FROM (SELECT DISTINCT pool, symbol FROM intermediate.int_spot_trades UNION SELECT DISTINCT pool, symbol FROM intermediate.int_spot_lot_segments) AS p
        CROSS JOIN (VALUES ${stacks.map((method) => `('${method}')`).join(', ')}) AS m (cost_method)`);
    }
    // Every row the replay deletes or reads again is of a sell on or after the day of its
    // checkpoint: a constant bound on sell_at (a day earlier, for any time zone) that DuckDB skips
    // the older row groups of the segments by (none when a partition replays from its first event).
    const [bound] = await db.all<{ from_1970: number | null; days: number | null }>(
      'SELECT count(*) FILTER (WHERE from_day IS NULL) AS from_1970, min(from_day) AS days FROM temp.main.int_spot_lot_replay',
    );
    const sellsFrom = Number(bound?.from_1970 ?? 0) > 0 || bound?.days === null || bound?.days === undefined ? '' : ` AND s.sell_at >= TIMESTAMPTZ '${new Date((Number(bound.days) - 1) * 86_400_000).toISOString()}'`;
    const eventsFrom = sellsFrom === '' ? '' : ` and t.event_date >= DATE '${new Date(Number(bound!.days) * 86_400_000).toISOString().slice(0, 10)}'`;
    const ukReplayed = `${UK_REPLAYED}${sellsFrom}`;
    const uk = methods.includes('uk');
    try {
      // uk's replay goes to a temporary table first, to be compared with the segments it makes again
      // (below): only the rows that differ are written (the sells of the days it replays mostly
      // come out the same).
      if (uk) await db.run('CREATE OR REPLACE TEMP TABLE int_spot_lot_uk_after AS SELECT * FROM intermediate.int_spot_lot_segments WHERE false');
      // What the lots' clean-up below must look at (see there): per lifo and hifo partition, the first
      // checkpoint kept before this build, or the replay's first event where that is earlier; none
      // where no checkpoint was kept (every row is looked at).
      await db.run(`
        CREATE OR REPLACE TEMP TABLE int_spot_lot_kept_before AS
        SELECT r.pool, r.symbol, r.cost_method, CASE WHEN min(c.next_seq) IS NULL THEN NULL ELSE least(min(c.next_seq), min(r.from_seq)) END AS low
        FROM temp.main.int_spot_lot_replay AS r
        LEFT JOIN ${STATE_TABLE} AS c ON c.pool = r.pool AND c.symbol = r.symbol AND c.cost_method = r.cost_method
        WHERE r.cost_method <> 'uk'
        GROUP BY ALL`);
      await db.run(`
        DELETE FROM intermediate.int_spot_lot_segments AS s USING temp.main.int_spot_lot_replay AS r
        WHERE s.pool = r.pool AND s.symbol = r.symbol AND s.cost_method = r.cost_method AND s.sell_seq >= r.from_seq AND r.cost_method <> 'uk'${sellsFrom};
        DELETE FROM ${STATE_TABLE} AS c USING temp.main.int_spot_lot_replay AS r
        WHERE c.pool = r.pool AND c.symbol = r.symbol AND c.cost_method = r.cost_method AND c.next_seq > r.from_seq;
        DELETE FROM ${LOTS_TABLE} AS v USING temp.main.int_spot_lot_replay AS r
        WHERE v.pool = r.pool AND v.symbol = r.symbol AND v.cost_method = r.cost_method AND v.from_seq > r.from_seq`);
      const plan = await db.all<{ pool: string; symbol: string; cost_method: LotMethod; from_seq: string; state_seq: string | null; state_kind: string | null; from_day: number | null }>(
        'SELECT pool, symbol, cost_method, from_seq, state_seq, state_kind, from_day FROM temp.main.int_spot_lot_replay',
      );
      // The units each lifo and hifo replay sells: how deep into its open lots it can reach (lotState).
      const sold = new Map<string, number>();
      if (plan.some((row) => row.cost_method !== 'uk' && row.state_seq !== null)) {
        const rows = await db.all<{ pool: string; symbol: string; cost_method: string; sold: number }>(`
          SELECT r.pool, r.symbol, r.cost_method, sum(t.quantity_out_e18::DOUBLE) AS sold
          FROM temp.main.int_spot_lot_replay AS r
          JOIN intermediate.int_spot_trades AS t ON t.pool = r.pool AND t.symbol = r.symbol AND t.event_seq >= r.from_seq${eventsFrom}
          WHERE r.cost_method <> 'uk' AND r.state_seq IS NOT NULL
          GROUP BY ALL`);
        for (const row of rows) sold.set(resumeKey(row.pool, row.symbol, row.cost_method), Number(row.sold ?? 0));
      }
      const resumes = new Map<string, Resume>();
      const starts = new Map<string, { pool: string; symbol: string; fromSeq: bigint }>();
      for (const row of plan) {
        const fromSeq = BigInt(row.from_seq);
        const key = resumeKey(row.pool, row.symbol, row.cost_method);
        const previousDay = row.state_kind === 'end' && row.from_day !== null ? { previousDay: Number(row.from_day) } : {};
        if (row.state_seq === null) resumes.set(key, { fromSeq });
        else if (row.cost_method === 'uk') resumes.set(key, { fromSeq, state: await checkpointState(db, row.pool, row.symbol, row.cost_method, row.state_seq), ...previousDay });
        else resumes.set(key, { fromSeq, lots: await lotState(db, row.pool, row.symbol, row.cost_method, BigInt(row.state_seq), sold.get(key) ?? 0), ...previousDay });
        const partition = `${row.pool}\u0000${row.symbol}`;
        const start = starts.get(partition);
        if (start === undefined || fromSeq < start.fromSeq) starts.set(partition, { pool: row.pool, symbol: row.symbol, fromSeq });
      }
      let lastDays: LastDay[] = [];
      if (starts.size > 0) {
        // The other connection (streamCommitted) cannot see this one's temporary tables: the
        // partitions and their first events go into the query as values.
        const values = [...starts.values()].map((start) => `(${quote(start.pool)}, ${quote(start.symbol)}, ${start.fromSeq})`).join(',\n    ');
        const events = `
          select ${EVENT_COLUMNS}
          from intermediate.int_spot_trades as t
          join (values ${values}) as r (pool, symbol, from_seq) on t.pool = r.pool and t.symbol = r.symbol and t.event_seq >= r.from_seq${eventsFrom}
          order by t.pool, t.symbol, t.event_seq`;
        // (the months before the replay's earliest day that hold the latest month starts: 4 of them
        // and the 31 days uk's replay may start before, in 160 days)
        const recentFrom = since === undefined ? undefined : `DATE '${since}' - 160`;
        const ends = await partitionEnds(db, [...starts.values()], recentFrom);
        lastDays = await matchPartitions(db, events, methods, ends, (pool, symbol, method) => resumes.get(resumeKey(pool, symbol, method)), uk ? 'int_spot_lot_uk_after' : undefined);
      }
      // The checkpoints a whole walk keeps: the latest CHECKPOINTS_KEPT month starts, and the day
      // starts of the last RECENT_DAYS days (by the partition's last event, which moved on). A
      // partition of which no event was read keeps its day starts. Of its end states, the latest
      // (a walk that read events saved a new one), unless a day or month start was saved where it
      // is (the walk resumed from it, whose first event began a day).
      const lastDayRows = lastDays.length === 0 ? 'select null::varchar, null::varchar, null::integer where false' : `values ${lastDays.map((row) => `(${quote(row.pool)}, ${quote(row.symbol)}, ${row.lastDay})`).join(', ')}`;
      await db.run(`
        DELETE FROM ${STATE_TABLE} AS c USING (
            SELECT k.pool, k.symbol, k.cost_method, k.next_seq, k.kind
            FROM (
                SELECT k.pool, k.symbol, k.cost_method, k.next_seq, k.kind, k.next_day,
                    row_number() OVER (PARTITION BY k.pool, k.symbol, k.cost_method, k.kind ORDER BY k.next_seq DESC) AS recency,
                    count(*) OVER (PARTITION BY k.pool, k.symbol, k.cost_method, k.next_seq) AS sharing
                FROM ${STATE_TABLE} AS k
                WHERE EXISTS (SELECT 1 FROM temp.main.int_spot_lot_replay AS r WHERE r.pool = k.pool AND r.symbol = k.symbol AND r.cost_method = k.cost_method)
            ) AS k
            LEFT JOIN (${lastDayRows}) AS l (pool, symbol, last_day) ON l.pool = k.pool AND l.symbol = k.symbol
            WHERE NOT CASE
                WHEN k.kind = 'end' THEN k.recency = 1 AND k.sharing = 1
                ELSE (k.kind = 'month' AND k.recency <= ${CHECKPOINTS_KEPT}) OR (l.last_day IS NULL AND k.kind = 'day') OR ${IS_RECENT_SQL}
            END
        ) AS old
        WHERE c.pool = old.pool AND c.symbol = old.symbol AND c.cost_method = old.cost_method AND c.next_seq = old.next_seq AND c.kind = old.kind;
        -- A lot's rows before its last one at or before the first checkpoint kept (and that one, where
        -- the lot is gone there) are in no kept state: they go (every row, where none is kept). A
        -- grouping, not a numbering of every row: most lots have one row.
        -- Only lots with a row from the first checkpoint kept before this build (or the replay's
        -- first event, if earlier) to the first one kept now can have such rows: the build before
        -- left at most one row at or before its first checkpoint kept, not a gone one, and rows
        -- after the replay's first event were all written again. So only theirs are grouped: on a
        -- night whose first checkpoint kept stays where it was, none (grouping every row of the
        -- 30M history's 1.5M took 0.2 to 0.3 s a night).
        CREATE OR REPLACE TEMP TABLE int_spot_lot_oldest AS
        SELECT r.pool, r.symbol, r.cost_method, min(c.next_seq) AS first_kept, any_value(b.low) AS low
        FROM (SELECT DISTINCT pool, symbol, cost_method FROM temp.main.int_spot_lot_replay WHERE cost_method <> 'uk') AS r
        LEFT JOIN ${STATE_TABLE} AS c ON c.pool = r.pool AND c.symbol = r.symbol AND c.cost_method = r.cost_method
        LEFT JOIN temp.main.int_spot_lot_kept_before AS b ON b.pool = r.pool AND b.symbol = r.symbol AND b.cost_method = r.cost_method
        GROUP BY r.pool, r.symbol, r.cost_method;
        DELETE FROM ${LOTS_TABLE} AS v USING temp.main.int_spot_lot_oldest AS o
        WHERE o.first_kept IS NULL AND v.pool = o.pool AND v.symbol = o.symbol AND v.cost_method = o.cost_method;
        CREATE OR REPLACE TEMP TABLE int_spot_lot_touched AS
        SELECT DISTINCT v.pool, v.symbol, v.cost_method, v.lot_seq
        FROM ${LOTS_TABLE} AS v
        JOIN temp.main.int_spot_lot_oldest AS o ON o.pool = v.pool AND o.symbol = v.symbol AND o.cost_method = v.cost_method
        WHERE v.from_seq <= o.first_kept AND (o.low IS NULL OR v.from_seq >= o.low);
        DELETE FROM ${LOTS_TABLE} AS v USING (
            SELECT v.pool, v.symbol, v.cost_method, v.lot_seq, max(v.from_seq) AS from_seq, arg_max(v.gone, v.from_seq) AS gone
            FROM ${LOTS_TABLE} AS v
            SEMI JOIN temp.main.int_spot_lot_touched AS t ON t.pool = v.pool AND t.symbol = v.symbol AND t.cost_method = v.cost_method AND t.lot_seq = v.lot_seq
            JOIN temp.main.int_spot_lot_oldest AS o ON o.pool = v.pool AND o.symbol = v.symbol AND o.cost_method = v.cost_method
            WHERE v.from_seq <= o.first_kept
            GROUP BY ALL
            HAVING count(*) > 1 OR arg_max(v.gone, v.from_seq)
        ) AS last
        WHERE v.pool = last.pool AND v.symbol = last.symbol AND v.cost_method = last.cost_method AND v.lot_seq = last.lot_seq
            AND (v.from_seq < last.from_seq OR (v.from_seq = last.from_seq AND last.gone))`);
      if (uk) {
        // uk's replayed segments against those they replace: a row counted +1 in the table and -1
        // in the replay is gone where the count is 1, added where it is -1 (the symmetric EXCEPT
        // ALL as one hash aggregate: 0.3 s on the 10M night's 828k rows a side, against 2 s for
        // EXCEPT ALL, which numbers the rows of each side). Only those are deleted and inserted.
        // uk matches a sell with the acquisitions of the 30 days after it, so the replay may have
        // changed the segments of sells up to 30 days before from_at: only those whose uk segments
        // differ (added or gone). They are handed on as bounded changes (the model declares
        // changeRanges), one per pool, symbol and UTC day of such sells, from the first to the last
        // of them, where no pending row already covers them from an earlier instant: a reader that
        // reads ranges (spot_lot_matches, the check) redoes those sells, not every one since the
        // first (on the 10M benchmark a sell of 28 Dec, matched night after night with the new
        // day's buys, made its readers redo 25 days of SOLUSDT each night in late January); one
        // that does not reads them as from the first on, as before.
        await db.run(`
          CREATE OR REPLACE TEMP TABLE int_spot_lot_uk_diff AS
          SELECT pool, symbol, cost_method, sell_seq, match_rule, lot_seq, sell_at, quantity_e18, cost_e12, proceeds_e12, sum(side) AS side
          FROM (SELECT *, 1 AS side FROM (${ukReplayed}) UNION ALL SELECT *, -1 AS side FROM temp.main.int_spot_lot_uk_after)
          GROUP BY ALL
          HAVING sum(side) <> 0;
          DELETE FROM intermediate.int_spot_lot_segments AS s USING (SELECT * FROM temp.main.int_spot_lot_uk_diff WHERE side > 0) AS d
          WHERE s.pool = d.pool AND s.symbol = d.symbol AND s.cost_method = d.cost_method AND s.sell_seq = d.sell_seq
              AND s.match_rule = d.match_rule AND s.lot_seq IS NOT DISTINCT FROM d.lot_seq${sellsFrom};
          INSERT INTO intermediate.int_spot_lot_segments
          SELECT pool, symbol, cost_method, sell_seq, match_rule, lot_seq, sell_at, quantity_e18, cost_e12, proceeds_e12
          FROM temp.main.int_spot_lot_uk_diff
          WHERE side < 0;
          CREATE OR REPLACE TEMP TABLE int_spot_lot_uk_changed AS
          SELECT pool, symbol, min(sell_at) AS from_at, max(sell_at) AS to_at
          FROM temp.main.int_spot_lot_uk_diff
          GROUP BY pool, symbol, date_trunc('day', sell_at);
          INSERT INTO temp.main.model_pending (account, symbol, from_at, to_at)
          SELECT c.pool, c.symbol, c.from_at, c.to_at
          FROM temp.main.int_spot_lot_uk_changed AS c
          WHERE NOT EXISTS (
              SELECT 1 FROM temp.main.model_pending AS p
              WHERE p.to_at IS NULL AND (p.from_at IS NULL OR p.from_at <= c.from_at)
                  AND (p.account IS NULL OR p.account = '*' OR p.account = c.pool) AND (p.symbol IS NULL OR p.symbol = c.symbol)
          )`);
      }
    } finally {
      await db.run(
        'DROP TABLE IF EXISTS temp.main.int_spot_lot_replay; DROP TABLE IF EXISTS temp.main.int_spot_lot_oldest; DROP TABLE IF EXISTS temp.main.int_spot_lot_kept_before; DROP TABLE IF EXISTS temp.main.int_spot_lot_touched; DROP TABLE IF EXISTS temp.main.int_spot_lot_uk_after; DROP TABLE IF EXISTS temp.main.int_spot_lot_uk_diff; DROP TABLE IF EXISTS temp.main.int_spot_lot_uk_changed',
      );
    }
  },
});

/**
 * uk's state at a checkpoint, as JSON, by constants DuckDB filters the scan with before it reads a
 * state: a join, or an IN list of more than a few values, reads every state in the table.
 */
async function checkpointState(db: Database, pool: string, symbol: string, method: LotMethod, nextSeq: string | bigint): Promise<string> {
  // (the state's bytes as they are: as base64 text they were encoded by DuckDB and decoded again)
  const [row] = await db.values(
    `SELECT state FROM ${STATE_TABLE} WHERE pool = ${quote(pool)} AND symbol = ${quote(symbol)} AND cost_method = ${quote(method)} AND next_seq = ${BigInt(nextSeq)}`,
  );
  if (row === undefined) throw new Error(`int_spot_lot_segments: the checkpoint ${nextSeq} of ${pool} ${symbol} ${method} is gone`);
  return inflateRawSync((row[0] as DuckDBBlobValue).bytes).toString('utf8');
}

/**
 * The open lots of a lifo or hifo checkpoint (next_seq) that a replay selling `sold` units (about:
 * a sum of doubles) can take from, from LOTS_TABLE: lifo's latest, hifo's of highest unit cost,
 * until their units left reach `sold` (on the 30M benchmark history the BTC partition holds 670k
 * open lots, of which a night's sells reach a few thousand). A lot not read is never taken from:
 * those read before it (lifo: later lots; hifo: of a unit cost higher by more than a double's
 * error, which the margins cover) hold more units than every sell of the replay together. The
 * others stay where they are (a lot that never changes has no new row).
 */
export async function lotState(db: Database, pool: string, symbol: string, method: LotMethod, nextSeq: bigint, sold: number): Promise<ResumedLots> {
  const order = method === 'lifo' ? 'lot_seq DESC' : 'price DESC, lot_seq';
  const deepest = method === 'lifo' ? 'lot_seq' : 'price';
  const partition = (alias: string) => `${alias}.pool = ${quote(pool)} AND ${alias}.symbol = ${quote(symbol)} AND ${alias}.cost_method = ${quote(method)}`;
  // Each open lot's row at the checkpoint, by a few narrow columns (its unit cost and units left as
  // doubles: the exact integers are read below, for the lots the replay reaches only). lifo's are
  // read from the lots of the last `window` events first (a constant DuckDB skips the older row
  // groups by: on the 30M history 5 ms for BTC's last 262,144 events, against 150 to 210 ms for
  // its 675k open lots), and from further back while those hold fewer units than the replay sells.
  const held = (floor: bigint) =>
    db.run(`
      CREATE OR REPLACE TEMP TABLE int_spot_lot_held AS
      SELECT lot_seq, max(from_seq) AS from_seq, arg_max(cost::DOUBLE / units::DOUBLE, from_seq) AS price, arg_max((units - taken)::DOUBLE, from_seq) AS left_units
      FROM ${LOTS_TABLE} AS v
      WHERE ${partition('v')} AND v.from_seq <= ${nextSeq}${floor > 0n ? ` AND v.lot_seq >= ${floor}` : ''}
      GROUP BY lot_seq
      HAVING NOT arg_max(gone, from_seq)`);
  try {
    // The deepest lot the replay reaches (its seq, or its unit cost), among the first `limit` lots
    // in the order they are taken (a top-N, not a sort of every open lot), tried on more lots while
    // those hold too few units.
    let cut: DuckDBValue | null | undefined;
    for (let window = 262_144n; cut === undefined; window *= 16n) {
      const floor = method === 'lifo' ? nextSeq - window : 0n;
      await held(floor);
      for (let limit = 65_536; cut === undefined; limit *= 16) {
        const [row] = await db.values(`
          WITH top AS (SELECT * FROM temp.main.int_spot_lot_held ORDER BY ${order} LIMIT ${limit}),
          reached AS (SELECT lot_seq, price, sum(left_units) OVER (ORDER BY ${order} ROWS UNBOUNDED PRECEDING) AS units_reached FROM top)
          SELECT max(${deepest}) FILTER (WHERE units_reached >= ${sold} * (1 + 1e-6)), count(*) FROM reached`);
        if (row?.[0] !== null && row?.[0] !== undefined) cut = row[0];
        // (none reached, and fewer lots than asked for: they are every lot read; every lot, where
        // none was left out by the floor)
        else if (Number(row?.[1] ?? 0) < limit) {
          if (floor > 0n) break;
          cut = null;
        }
      }
    }
    const reached = cut === null ? 'true' : method === 'lifo' ? `lot_seq >= ${String(cut)}` : `price >= ${String(cut)} - abs(${String(cut)}) * 1e-9`;
    const rows = await db.values(`
      SELECT v.lot_seq, v.units, v.cost, v.taken
      FROM ${LOTS_TABLE} AS v
      SEMI JOIN (SELECT lot_seq, from_seq FROM temp.main.int_spot_lot_held WHERE ${reached}) AS h ON h.lot_seq = v.lot_seq AND h.from_seq = v.from_seq
      WHERE ${partition('v')}`);
    return { held: rows.map(([seq, units, cost, taken]) => ({ seq: seq as bigint, units: units as bigint, cost: cost as bigint, taken: taken as bigint, baseTaken: taken as bigint })), removed: [] };
  } finally {
    await db.run('DROP TABLE IF EXISTS temp.main.int_spot_lot_held');
  }
}

/**
 * A state as stored: its JSON compressed (uk's; lifo's and hifo's only name LOTS_TABLE). DuckDB
 * rewrites the whole row group a night's new checkpoints are appended to (every state: the table
 * is far below a row group's 122,880 rows).
 */
function packState(state: string): Uint8Array {
  return deflateRawSync(state, { level: 3 });
}

async function lotMethods(db: Database): Promise<LotMethod[]> {
  const [reporting] = await db.all<{ cost_methods: string[] }>('SELECT any_value(cost_methods) AS cost_methods FROM settings.reporting');
  return LOT_METHODS.filter((method) => reporting?.cost_methods.includes(method) === true);
}

/** uk's segments of the sells the replay starts from on (those it deletes and makes again). */
const UK_REPLAYED = `SELECT s.* FROM intermediate.int_spot_lot_segments AS s
    JOIN temp.main.int_spot_lot_replay AS r ON s.pool = r.pool AND s.symbol = r.symbol AND s.cost_method = r.cost_method
    WHERE r.cost_method = 'uk' AND s.sell_seq >= r.from_seq`;

/** A seq above every event's: see replayPlan. */
const PAST_EVERY_EVENT = '9223372036854775807';

const resumeKey = (pool: string, symbol: string, method: string) => `${pool}\u0000${symbol}\u0000${method}`;
const quote = (text: string) => `'${text.replace(/'/g, "''")}'`;

/**
 * temp.main.int_spot_lot_replay: per (pool, symbol) that model_pending names and cost method, the
 * first event to match from (from_seq) and the checkpoint holding the state before it (state_seq,
 * its next_seq; NULL: nothing held). A wide pending row (account NULL: everything; '*' under
 * pooling account: every account; symbol NULL) names the partitions found in the trades, the
 * segments or the checkpoints (a partition whose events are gone loses its rows). from_day is the
 * checkpoint's day (NULL: from the first event).
 *
 * `since` (a DATE literal) is the earliest reporting-zone day a replay can start from (uk's 30 days
 * before the earliest change): only the trades from then on are read, by a constant bound DuckDB
 * skips row groups by (on the 10M benchmark history: 6.5 s to read every event of the changed
 * partitions); `sinceAt` (a TIMESTAMPTZ literal, a day before it for any time zone) bounds uk's
 * segments alike. A partition with no event from its start on gets PAST_EVERY_EVENT: like the last
 * event's seq + 1, it picks the partition's latest checkpoint, and replays from there.
 *
 * uk starts at the first day of its 30-day window whose disposal may match differently: one whose
 * segments (before the change) have a part from the pool, an unmatched part, or a 30-day match
 * with an acquisition of the change's day or later (lot_seq at or after its first event). A day
 * before it was matched in full by its own day's and the next days' acquisitions before the
 * change, which the change does not touch, and took nothing from the pool; so the pool and what
 * later days' acquisitions have left are those of the checkpoint before that day. None: uk starts
 * at the change's day. On the 10M benchmark's night, a day or two instead of 31.
 */
function replayPlan(methods: readonly LotMethod[], wide: boolean, since: string, sinceAt: string): string {
  const partitions = wide
    ? `select distinct pool, symbol from intermediate.int_spot_trades
    union
    select distinct pool, symbol from intermediate.int_spot_lot_segments
    union
    select distinct pool, symbol from ${STATE_TABLE}`
    : 'select distinct account as pool, symbol from pending';
  return `
CREATE OR REPLACE TEMP TABLE int_spot_lot_replay AS
with pending as (
    select account, symbol, from_at from temp.main.model_pending
),

reporting as (
    select any_value(time_zone) as time_zone from settings.reporting
),

partitions as (
    ${partitions}
),

-- The earliest change per partition (NULL: from the beginning).
changes as (
    select x.pool, x.symbol, case when bool_or(p.from_at is null) then null else min(p.from_at) end as from_at
    from partitions as x
    join pending as p on (p.account is null or p.account = '*' or p.account = x.pool) and (p.symbol is null or p.symbol = x.symbol)
    group by x.pool, x.symbol
),

-- The change's reporting-zone day, and uk's window: the 30 days before it (once per partition,
-- not per event: a time zone conversion is slow).
touched as (
    select c.pool, c.symbol, c.from_at, local_date(c.from_at, r.time_zone) as change_date, local_date(c.from_at, r.time_zone) - 30 as uk_from_date
    from changes as c
    cross join reporting as r
),

-- The first event whose segments may change: lifo and hifo at from_at; uk's window's and the
-- change's day's first events. No such event: past the last one.
firsts as (
    select
        x.pool,
        x.symbol,
        x.from_at,
        -- (past the last event before from_at when the change removed every event from it on: an
        -- end state after a removed event is not that event's)
        case when x.from_at is null then 1 else coalesce(min(t.event_seq) filter (where t.event_at >= x.from_at), max(t.event_seq) filter (where t.event_at < x.from_at) + 1, ${PAST_EVERY_EVENT}) end as lot_start,
        case when x.from_at is null then 1 else coalesce(min(t.event_seq) filter (where t.event_date >= x.uk_from_date), ${PAST_EVERY_EVENT}) end as window_seq,
        -- (past the window's last event when the change removed every event from its day on:
        -- an acquisition it removed has an old seq from there)
        case when x.from_at is null then 1 else coalesce(min(t.event_seq) filter (where t.event_date >= x.change_date), max(t.event_seq) filter (where t.event_date < x.change_date) + 1, ${PAST_EVERY_EVENT}) end as change_seq
    from touched as x
    left join intermediate.int_spot_trades as t on t.pool = x.pool and t.symbol = x.symbol and t.event_date >= ${since}
    group by x.pool, x.symbol, x.from_at, x.uk_from_date, x.change_date
),

-- uk's first sell of the window, before the change's day, whose matches may change (see above).
uk_risk as (
    select f.pool, f.symbol, min(g.sell_seq) as risk_seq
    from firsts as f
    join intermediate.int_spot_lot_segments as g
        on g.pool = f.pool and g.symbol = f.symbol and g.cost_method = 'uk' and g.sell_seq >= f.window_seq and g.sell_seq < f.change_seq
    where ${methods.includes('uk') ? 'true' : 'false'} and f.from_at is not null and g.sell_at >= ${sinceAt}
        and (g.match_rule in ('pool', 'unmatched') or (g.match_rule = 'thirty_day' and g.lot_seq >= f.change_seq))
    group by f.pool, f.symbol
),

-- The first event of that sell's day.
uk_risk_day as (
    select r.pool, r.symbol, min(d.event_seq) as day_seq
    from uk_risk as r
    join intermediate.int_spot_trades as t on t.pool = r.pool and t.symbol = r.symbol and t.event_seq = r.risk_seq and t.event_date >= ${since}
    join intermediate.int_spot_trades as d on d.pool = r.pool and d.symbol = r.symbol and d.event_date = t.event_date and d.event_date >= ${since}
    group by r.pool, r.symbol
),

starts as (
    select f.pool, f.symbol, f.lot_start, coalesce(k.day_seq, f.change_seq) as uk_start
    from firsts as f
    left join uk_risk_day as k on k.pool = f.pool and k.symbol = f.symbol
),

methods (cost_method) as (
    values ${methods.map((method) => `('${method}')`).join(', ')}
),

replay as (
    select s.pool, s.symbol, m.cost_method, case when m.cost_method = 'uk' then s.uk_start else s.lot_start end as replay_seq, s.lot_start
    from starts as s
    cross join methods as m
),

-- The latest checkpoint before the replay's first event, or at it where that event is before the
-- first changed one (lot_start: it and the one before are unchanged, so a day start there is still
-- where a whole walk puts one; uk's replay of the change's day, or of a day before it, starts
-- there, not a day earlier), or the end state before it (the state after every event before it: a
-- night's new events resume there). Of two states at one seq (an end state and the day start saved
-- where it was), the day start.
resume as (
    select r.pool, r.symbol, r.cost_method, max(c.next_seq) as next_seq
    from replay as r
    left join (select pool, symbol, cost_method, next_seq, kind from ${STATE_TABLE}) as c
        on c.pool = r.pool and c.symbol = r.symbol and c.cost_method = r.cost_method
        and (c.next_seq < r.replay_seq or (c.next_seq = r.replay_seq and (c.kind = 'end' or r.replay_seq < r.lot_start)))
    group by r.pool, r.symbol, r.cost_method
)

select r.pool, r.symbol, r.cost_method, coalesce(r.next_seq, 1) as from_seq, r.next_seq as state_seq, c.kind as state_kind, c.next_day as from_day
from resume as r
left join (
    select pool, symbol, cost_method, next_seq, arg_min(kind, kind = 'end') as kind, arg_min(next_day, kind = 'end') as next_day
    from ${STATE_TABLE}
    group by all
) as c
    on c.pool = r.pool and c.symbol = r.symbol and c.cost_method = r.cost_method and c.next_seq = r.next_seq`;
}

/** Month number of a day (days since 1970-01-01): checkpoints fall before each month's first event. */
function monthOf(day: number): number {
  const date = new Date(day * 86_400_000);
  return date.getUTCFullYear() * 12 + date.getUTCMonth();
}

const isMonthStart = (previousDay: number, nextDay: number): boolean => monthOf(previousDay) !== monthOf(nextDay);

/**
 * Per partition, known before its events are read: the day of its last event (which day starts
 * are recent) and the earliest month whose start is among its latest CHECKPOINTS_KEPT month starts
 * (keepMonthsFrom, as year * 12 + month - 1; Infinity: it has no month start). Only those states
 * are serialized: a whole walk over 57 months would otherwise write 54 states of every open lot
 * only to drop them.
 */
interface PartitionEnd {
  lastDay: number;
  keepMonthsFrom: number;
}

/**
 * The PartitionEnd of each (pool, symbol) that `partitions` names (none: every
 * one). With `recentFrom` (a DATE literal), from the trades from that day on only (a constant
 * bound DuckDB skips the older row groups by), for each partition with more than CHECKPOINTS_KEPT
 * months there (its latest ones are then there, and none is its first); the others from all of
 * their trades.
 */
async function partitionEnds(db: Database, partitions?: readonly { pool: string; symbol: string }[], recentFrom?: string): Promise<Map<string, PartitionEnd>> {
  const named = (list: readonly { pool: string; symbol: string }[]) => `select * from (values ${list.map((row) => `(${quote(row.pool)}, ${quote(row.symbol)})`).join(', ')}) as r (pool, symbol)`;
  const ends = async (list: readonly { pool: string; symbol: string }[] | undefined, from: string | undefined) =>
    db.all<{ pool: string; symbol: string; last_day: number; keep_from: number | null; months: number }>(`
    with months as (
        select t.pool, t.symbol, year(t.event_date) * 12 + month(t.event_date) - 1 as month, max(datediff('day', date '1970-01-01', t.event_date)) as last_day
        from intermediate.int_spot_trades as t
        ${list === undefined ? '' : `semi join (${named(list)}) as p on p.pool = t.pool and p.symbol = t.symbol`}
        ${from === undefined ? '' : `where t.event_date >= ${from}`}
        group by all
    ),

    -- Every month but a partition's first starts with a checkpoint (month start).
    ranked as (
        select *, row_number() over (partition by pool, symbol order by month desc) as recency, count(*) over (partition by pool, symbol) as months
        from months
    )

    select pool, symbol, max(last_day)::integer as last_day, min(month) filter (where recency <= ${CHECKPOINTS_KEPT} and recency < months)::integer as keep_from, max(months)::integer as months
    from ranked
    group by pool, symbol`);
  const result = new Map<string, PartitionEnd>();
  const add = (rows: Awaited<ReturnType<typeof ends>>) => {
    for (const row of rows) result.set(partitionKey(row.pool, row.symbol), { lastDay: Number(row.last_day), keepMonthsFrom: row.keep_from === null ? Number.POSITIVE_INFINITY : Number(row.keep_from) });
  };
  if (recentFrom === undefined || partitions === undefined) {
    add(await ends(partitions, undefined));
    return result;
  }
  add((await ends(partitions, recentFrom)).filter((row) => Number(row.months) > CHECKPOINTS_KEPT));
  const rest = partitions.filter((row) => !result.has(partitionKey(row.pool, row.symbol)));
  if (rest.length > 0) add(await ends(rest, undefined));
  return result;
}

const partitionKey = (pool: string, symbol: string) => `${pool}\u0000${symbol}`;

/**
 * Matches the events `sql` returns (ordered by pool, symbol, event_seq) as they stream in, one
 * (pool, symbol) at a time, each cost method from where resumeOf says (undefined: not matched),
 * appending the segments as they are settled and each checkpoint as it is made. No partition's
 * events are held: each matcher keeps only its open lots (uk: the last 31 days' events), so memory
 * does not grow with a partition's fills. Returns the day of each partition's last event.
 * ukTable: a temporary table (int_spot_lot_segments' columns) that uk's segments go to instead.
 */
async function matchPartitions(
  db: Database,
  sql: string,
  methods: readonly LotMethod[],
  ends: ReadonlyMap<string, PartitionEnd>,
  resumeOf: (pool: string, symbol: string, method: LotMethod) => Resume | undefined,
  ukTable?: string,
): Promise<LastDay[]> {
  // Appended rows are written to the file as row groups fill, not held until the commit.
  return db.withInsertionOrder(async () => {
    const segments = new RowChunks(await db.appender('intermediate', 'int_spot_lot_segments'), SEGMENT_TYPES);
    const ukSegments = ukTable === undefined ? segments : new RowChunks(await db.appender('main', ukTable, 'temp'), SEGMENT_TYPES);
    const states = await db.appender('settings', 'spot_lot_state');
    const lots = new RowChunks(await db.appender('settings', 'spot_lot_open'), LOT_TYPES);
    const lastDays: LastDay[] = [];
    let partition: PartitionMatch | undefined;
    try {
      // The events a column at a time (EVENT_COLUMNS, in order), read from the chunks' vectors.
      for await (const chunk of db.streamCommittedChunks(sql)) {
        const columns = new ChunkColumns(chunk);
        const [pools, symbols, seqs, openings, sides, days] = [columns.strings(0), columns.strings(1), columns.bigints(2), columns.booleans(3), columns.strings(4), columns.numbers(5)];
        const [unitsIn, costs, quantitiesOut, proceeds, ats] = [columns.hugeints(6), columns.hugeints(7), columns.hugeints(8), columns.hugeints(9), columns.bigints(10)];
        for (let row = 0; row < columns.rows; row++) {
          const pool = pools[row] as string;
          const symbol = symbols[row] as string;
          if (partition === undefined || partition.pool !== pool || partition.symbol !== symbol) {
            if (partition !== undefined) lastDays.push(finishPartition(partition));
            partition = startPartition(segments, ukSegments, states, lots, pool, symbol, methods, ends, resumeOf);
          }
          const event: TradeEvent = {
            seq: seqs[row] as bigint,
            isOpening: openings[row] as boolean,
            side: sides[row] === 'sell' ? 'sell' : 'buy',
            day: Number(days[row]),
            unitsIn: unitsIn[row] as bigint,
            cost: costs[row] as bigint,
            quantityOut: quantitiesOut[row] as bigint,
            proceeds: proceeds[row] as bigint,
            at: ats[row] ?? null,
          };
          for (const match of partition.matches) if (event.seq >= match.fromSeq) match.matcher.push(event);
        }
      }
      if (partition !== undefined) lastDays.push(finishPartition(partition));
      segments.flushSync();
      if (ukSegments !== segments) ukSegments.flushSync();
      states.flushSync();
      lots.flushSync();
    } catch (error) {
      closeQuietly(segments);
      if (ukSegments !== segments) closeQuietly(ukSegments);
      closeQuietly(states);
      closeQuietly(lots);
      throw error;
    }
    segments.closeSync();
    if (ukSegments !== segments) ukSegments.closeSync();
    states.closeSync();
    lots.closeSync();
    return lastDays;
  });
}

/** The day of a partition's last event (days since 1970-01-01). */
interface LastDay {
  pool: string;
  symbol: string;
  lastDay: number;
}

/** One (pool, symbol) being matched: a matcher per cost method that resumes there. */
interface PartitionMatch {
  pool: string;
  symbol: string;
  lastDay: number;
  matches: MethodMatch[];
}

/** One cost method's match of a partition, from its first event (fromSeq). */
interface MethodMatch {
  fromSeq: bigint;
  matcher: LotMatcher;
}

function startPartition(
  segments: RowChunks,
  ukSegments: RowChunks,
  states: DuckDBAppender,
  lots: RowChunks,
  pool: string,
  symbol: string,
  methods: readonly LotMethod[],
  ends: ReadonlyMap<string, PartitionEnd>,
  resumeOf: (pool: string, symbol: string, method: LotMethod) => Resume | undefined,
): PartitionMatch {
  const end = ends.get(partitionKey(pool, symbol));
  if (end === undefined) throw new Error(`int_spot_lot_segments: ${pool} ${symbol} has events but no last day`);
  const { lastDay, keepMonthsFrom } = end;
  const matches: MethodMatch[] = [];
  for (const method of methods) {
    const resume = resumeOf(pool, symbol, method);
    if (resume === undefined) continue;
    // Each segment goes to the appender as it is settled (a chunk at a time): a symbol's segments are never all held.
    const target = method === 'uk' ? ukSegments : segments;
    const sink = {
      push: (...found: Segment[]): number => {
        for (const segment of found) {
          if (segment.sellAt === undefined || segment.sellAt === null) throw new Error(`int_spot_lot_segments: sell ${segment.sellSeq} of ${pool} ${symbol} has no instant`);
          target.add([pool, symbol, method, segment.sellSeq, segment.rule, segment.lotSeq, segment.sellAt, segment.quantity, segment.cost, segment.proceeds]);
        }
        return 0;
      },
    };
    // Only the states kept are asked for (the latest CHECKPOINTS_KEPT month starts, known before
    // the walk, and the recent day starts), so each goes to the table as it is made: a
    // partition's states are never all held.
    const save = (nextSeq: bigint, kind: 'month' | 'day' | 'end', nextDay: number, state: string) => {
      states.appendVarchar(pool);
      states.appendVarchar(symbol);
      states.appendVarchar(method);
      states.appendBigInt(nextSeq);
      states.appendVarchar(kind);
      states.appendInteger(nextDay);
      states.appendNull();
      states.appendBlob(packState(state));
      states.endRow();
      states.flushSync();
    };
    const isCheckpoint = (previousDay: number, nextDay: number) => (isMonthStart(previousDay, nextDay) && monthOf(nextDay) >= keepMonthsFrom) || isRecent(method, nextDay, lastDay);
    let matcher: LotMatcher;
    if (method === 'uk') {
      matcher = lotMatcher(method, sink, {
        ...(resume.state === undefined ? {} : { from: resume.state }),
        ...(resume.previousDay === undefined ? {} : { previousDay: resume.previousDay }),
        isCheckpoint,
        onCheckpoint: (nextSeq, state, previousDay, nextDay) => save(nextSeq, isMonthStart(previousDay, nextDay) ? 'month' : 'day', nextDay, state),
        onEnd: (nextSeq, state, lastDay) => save(nextSeq, 'end', lastDay, state),
      });
    } else {
      // A state's open lots are the rows of LOTS_TABLE: each checkpoint adds the lots that changed
      // since the one before (the matcher's base, moved on at each).
      const saveLots = (nextSeq: bigint, kind: 'month' | 'day' | 'end', day: number, held: CheckpointLots) => {
        save(nextSeq, kind, day, LOTS_ELSEWHERE);
        const { removed, taken, added } = held.changes();
        for (const seq of removed) lots.add([pool, symbol, method, seq, nextSeq, true, null, null, null]);
        for (const lot of [...taken, ...added]) lots.add([pool, symbol, method, lot.seq, nextSeq, false, lot.units, lot.cost, lot.taken]);
        held.rebase();
      };
      matcher = lotMatcher(method, sink, {
        ...(resume.lots === undefined ? {} : { fromLots: resume.lots }),
        ...(resume.previousDay === undefined ? {} : { previousDay: resume.previousDay }),
        isCheckpoint,
        onCheckpointLots: (nextSeq, held, previousDay, nextDay) => saveLots(nextSeq, isMonthStart(previousDay, nextDay) ? 'month' : 'day', nextDay, held),
        onEndLots: (nextSeq, held, lastDay) => saveLots(nextSeq, 'end', lastDay, held),
      });
    }
    matches.push({ fromSeq: resume.fromSeq, matcher });
  }
  return { pool, symbol, lastDay, matches };
}

/** Settles what each matcher still holds. */
function finishPartition(partition: PartitionMatch): LastDay {
  for (const { matcher } of partition.matches) matcher.end();
  return { pool: partition.pool, symbol: partition.symbol, lastDay: partition.lastDay };
}

/** The columns of LOTS_TABLE, in order. */
const LOT_TYPES = [VARCHAR, VARCHAR, VARCHAR, BIGINT, BIGINT, BOOLEAN, HUGEINT, HUGEINT, HUGEINT];
/** The columns of int_spot_lot_segments, in order. */
const SEGMENT_TYPES = [VARCHAR, VARCHAR, VARCHAR, BIGINT, VARCHAR, BIGINT, TIMESTAMPTZ, HUGEINT, HUGEINT, HUGEINT];
/** Whether a day start is among the last RECENT_DAYS[method] days of a partition whose last event is on lastDay. */
const isRecent = (method: LotMethod, day: number, lastDay: number): boolean => day >= lastDay - RECENT_DAYS[method];

/** The rule of isRecent, in SQL, on the columns of STATE_TABLE (alias k) and a partition's last_day (alias l). */
const IS_RECENT_SQL = `k.next_day >= l.last_day - case k.cost_method ${LOT_METHODS.map((method) => `when '${method}' then ${RECENT_DAYS[method]}`).join(' ')} end`;
