/**
 * One more day of fills on top of a build benchmark's history (bench/build-data.ts), as a nightly
 * sync would append it: the spot and futures fills of the history's last day, copied one day
 * later with new ids (fill, trade and order ids moved past every id of the history, so the keys
 * stay unique and grow with time) and their own run. Funding bills are not copied: their
 * afterAmount chain per coin would break.
 *
 * Run alone, it appends the day to a database a build benchmark built (to time a night by hand,
 * with other flags than the benchmark's, e.g. every cost method):
 *
 *   node --import tsx bench/nightly-day.ts <database>
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

/** Appends the new day; returns the spot and futures fills added. */
export async function appendNightlyDay(db: Database): Promise<{ spotFills: number; futuresFills: number }> {
  const from = NIGHTLY_DAY_START_MS - DAY_MS;
  const spotFills = await db.run(`
    insert into raw.spot_fills
    select
        _account,
        _partition,
        cast(cast(_key as hugeint) + ${ID_SHIFT} as varchar),
        _event_ms + ${DAY_MS},
        json_merge_patch(_record, json_object(
            'fillId', cast(cast(_record->>'fillId' as hugeint) + ${ID_SHIFT} as varchar),
            'orderId', cast(cast(_record->>'orderId' as hugeint) + ${ID_SHIFT} as varchar),
            'cTime', cast(cast(_record->>'cTime' as bigint) + ${DAY_MS} as varchar)
        )),
        '${RUN_ID}',
        now()
    from raw.spot_fills
    where _event_ms >= ${from} and _event_ms < ${NIGHTLY_DAY_START_MS}
  `);
  const futuresFills = await db.run(`
    insert into raw.futures_fills
    select
        _account,
        _partition,
        cast(cast(_key as hugeint) + ${ID_SHIFT} as varchar),
        _event_ms + ${DAY_MS},
        json_merge_patch(_record, json_object(
            'tradeId', cast(_record->>'tradeId' as bigint) + ${ID_SHIFT},
            'orderId', cast(_record->>'orderId' as bigint) + ${ID_SHIFT},
            'createdTime', cast(_record->>'createdTime' as bigint) + ${DAY_MS}
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
      await recordRawChange(db, { account, table, kind: 'window', minEventMs: NIGHTLY_DAY_START_MS, maxEventMs: NIGHTLY_DAY_START_MS + DAY_MS, rows, runId: RUN_ID });
    }
  }
  return { spotFills, futuresFills };
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [database] = process.argv.slice(2);
  if (database === undefined) throw new Error('usage: node --import tsx bench/nightly-day.ts <database>');
  const db = await Database.open(database);
  try {
    const added = await appendNightlyDay(db);
    console.log(`appended ${added.spotFills.toLocaleString('en-US')} spot and ${added.futuresFills.toLocaleString('en-US')} futures fills (one day) to ${database}`);
  } finally {
    db.close();
  }
}
