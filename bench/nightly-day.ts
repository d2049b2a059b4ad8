/**
 * One more day of fills on top of a build benchmark's history (bench/build-data.ts), as a nightly
 * sync would append it: the spot and futures fills of the history's last day, copied one day
 * later with new ids (fill, trade and order ids moved past every id of the history, so the keys
 * stay unique and grow with time) and their own run. Funding bills are not copied: their
 * afterAmount chain per coin would break. And a futures account snapshot taken at the end of the
 * new day: the latest one, updated then (a sync stores a snapshot only when it differs from the
 * latest, and the futures account's `updated_time` moves every day; the spot assets follow the
 * funding bills, which the day has none of, and the listings do not change).
 *
 * Run alone, it appends the day to a database a build benchmark built (to time a night by hand,
 * with other flags than the benchmark's, e.g. every cost method):
 *
 *   node --import tsx bench/nightly-day.ts <database> [night]
 *
 * (night 2, 3, … appends the days after: see appendNightlyDay). A third argument copies at most
 * that many of the day's spot fills (a sample spread over the day, by a hash of their keys): the
 * same night on a larger history, e.g. the 10M history's 27,394 on the 30M one, whose last day has
 * 82,191.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Database } from '../src/store/database.ts';
import { recordRawChange } from '../src/store/raw-store.ts';
import { BENCH_END_MS } from './build-data.ts';

const DAY_MS = 86_400_000;
/** Added to every copied id: above the ids of a history of up to 1e9 fills (bench/build-data.ts ids grow by 1,000 or 11 per fill). */
const ID_SHIFT = 10_000_000_000_000;
const RUN_ID = 'bench-nightly';

/** The first instant of the appended day: the history ends at BENCH_END_MS. */
export const NIGHTLY_DAY_START_MS = BENCH_END_MS;

/**
 * Appends the new day; returns the spot and futures fills and the futures account snapshots added.
 * `night` n > 1 appends the n-th day after the history instead (the same last day's fills, moved
 * n days on, their ids by n shifts): nights after nights on one database, as a benchmark that
 * times several nights needs (each night once: the days before it must have been appended).
 * `spotFillsAtMost` copies only that many of the day's spot fills (those first by a hash of their
 * keys: spread over the day and its symbols), the futures fills all.
 */
export async function appendNightlyDay(db: Database, night = 1, spotFillsAtMost?: number): Promise<{ spotFills: number; futuresFills: number; snapshots: number }> {
  if (!Number.isInteger(night) || night < 1) throw new Error(`appendNightlyDay: night must be a whole number from 1, not ${night}`);
  if (spotFillsAtMost !== undefined && (!Number.isInteger(spotFillsAtMost) || spotFillsAtMost < 1)) throw new Error(`appendNightlyDay: spotFillsAtMost must be a whole number from 1, not ${spotFillsAtMost}`);
  const from = NIGHTLY_DAY_START_MS - DAY_MS;
  const dayStart = NIGHTLY_DAY_START_MS + (night - 1) * DAY_MS;
  const shiftMs = night * DAY_MS;
  const idShift = BigInt(night) * BigInt(ID_SHIFT);
  const spotFills = await db.run(`
    insert into raw.spot_fills
    select
        _account,
        _partition,
        cast(cast(_key as hugeint) + ${idShift} as varchar),
        _event_ms + ${shiftMs},
        json_merge_patch(_record, json_object(
            'fillId', cast(cast(_record->>'fillId' as hugeint) + ${idShift} as varchar),
            'orderId', cast(cast(_record->>'orderId' as hugeint) + ${idShift} as varchar),
            'cTime', cast(cast(_record->>'cTime' as bigint) + ${shiftMs} as varchar)
        )),
        '${RUN_ID}',
        now()
    from raw.spot_fills
    where _event_ms >= ${from} and _event_ms < ${NIGHTLY_DAY_START_MS}
    ${spotFillsAtMost === undefined ? '' : `qualify row_number() over (order by hash(_key), _key) <= ${spotFillsAtMost}`}
  `);
  const futuresFills = await db.run(`
    insert into raw.futures_fills
    select
        _account,
        _partition,
        cast(cast(_key as hugeint) + ${idShift} as varchar),
        _event_ms + ${shiftMs},
        json_merge_patch(_record, json_object(
            'tradeId', cast(_record->>'tradeId' as bigint) + ${idShift},
            'orderId', cast(_record->>'orderId' as bigint) + ${idShift},
            'createdTime', cast(_record->>'createdTime' as bigint) + ${shiftMs}
        )),
        '${RUN_ID}',
        now()
    from raw.futures_fills
    where _event_ms >= ${from} and _event_ms < ${NIGHTLY_DAY_START_MS}
  `);
  // Logged as a sync logs its windows: the incremental build takes the day from this log.
  const accounts = await db.all<{ account: string }>(`select distinct _account as account from raw.spot_fills where _run_id = '${RUN_ID}' union select distinct _account from raw.futures_fills where _run_id = '${RUN_ID}'`);
  for (const { account } of accounts) {
    for (const [table, rows] of [['spot_fills', spotFills], ['futures_fills', futuresFills]] as const) {
      await recordRawChange(db, { account, table, kind: 'window', minEventMs: dayStart, maxEventMs: dayStart + DAY_MS, rows, runId: RUN_ID });
    }
  }
  let snapshots = 0;
  const takenMs = dayStart + DAY_MS;
  const latest = await db.all<{ account: string; partition: string; taken_ms: string }>(
    'select _account as account, _partition as partition, max(epoch_ms(_snapshot_at)) as taken_ms from raw.futures_accounts group by all order by all',
  );
  for (const { account, partition, taken_ms: latestMs } of latest) {
    const rows = await db.run(
      `insert into raw.futures_accounts
       select _account, _partition, make_timestamptz(${takenMs} * 1000), _seq,
           json_merge_patch(_record, json_object('account', json_object('updated_time', '${takenMs}'))), '${RUN_ID}', now()
       from raw.futures_accounts
       where _account = $1 and _partition = $2 and epoch_ms(_snapshot_at) = ${Number(latestMs)}`,
      [account, partition],
    );
    await recordRawChange(db, { account, table: 'futures_accounts', kind: 'snapshot', minEventMs: takenMs, maxEventMs: takenMs, rows, runId: RUN_ID });
    snapshots += 1;
  }
  return { spotFills, futuresFills, snapshots };
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [database, night = '1', atMost] = process.argv.slice(2);
  if (database === undefined) throw new Error('usage: node --import tsx bench/nightly-day.ts <database> [night: 1, then 2, ...] [at most this many spot fills]');
  const db = await Database.open(database);
  try {
    const added = await appendNightlyDay(db, Number(night), atMost === undefined ? undefined : Number(atMost));
    console.log(`appended ${added.spotFills.toLocaleString('en-US')} spot and ${added.futuresFills.toLocaleString('en-US')} futures fills (one day) and ${added.snapshots} futures account snapshot(s) to ${database}`);
  } finally {
    db.close();
  }
}
