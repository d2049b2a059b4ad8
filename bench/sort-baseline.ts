/**
 * The floor no build can beat: DuckDB reading the spot fills, casting the fields int_spot_trades
 * reads to the types staging gives them, and sorting them in int_spot_trades's order, into a
 * table. Same rows (raw.spot_fills), same parsing (json_transform once, then the staging macros
 * parse_decimal_units and make_timestamptz: sql/staging/spot_fills.sql), same sort keys (the
 * window of int_spot_trades: account, symbol, time, fill id by length then text).
 *
 * Run as a child process so it is measured exactly as `exledger build` is (measure-command.ts):
 *
 *   node --import tsx bench/sort-baseline.ts <database> <table> [<since ms>]
 *
 * opens the database as the build does (DuckDB memory_limit 4GB, the configuration's default),
 * creates the macro files as the build does, and prints one JSON line: rows and the query's ms.
 * With <since ms>, only the fills of `_event_ms >= since` (a nightly's new day) are read.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadProject } from '../src/models/project.ts';
import { Database } from '../src/store/database.ts';
import { measureScript, type MeasuredScript } from './measure-command.ts';

/** What the child prints on its last line. */
export interface SortBaselineOutput {
  rows: number;
  ms: number;
}

/** The memory limit `exledger build` runs under by default (src/config/config.ts). */
const BUILD_MEMORY_LIMIT = '4GB';
const THIS_FILE = fileURLToPath(import.meta.url);

/**
 * The baseline's statement: `create table <table>` of the spot fills (those of `_event_ms >=
 * sinceMs` when given) with the fields int_spot_trades reads, typed as staging.spot_fills types
 * them, in int_spot_trades's order.
 */
export function sortBaselineSql(table: string, sinceMs?: number): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(table)) throw new Error(`not a plain table name: ${table}`);
  if (sinceMs !== undefined && !Number.isSafeInteger(sinceMs)) throw new Error(`not a time in ms: ${sinceMs}`);
  return `
    create or replace table main.${table} as
    with source as (
        select
            _account,
            json_transform(_record, '{
                "symbol": "VARCHAR", "baseCoin": "VARCHAR", "quoteCoin": "VARCHAR", "fillId": "VARCHAR", "side": "VARCHAR",
                "fillPrice": "VARCHAR", "fillQuantity": "VARCHAR", "fillTotalAmount": "VARCHAR", "fees": "VARCHAR", "cTime": "VARCHAR"
            }') as r
        from raw.spot_fills
        ${sinceMs === undefined ? '' : `where _event_ms >= ${sinceMs}`}
    ),

    -- as staging does: the amount texts as columns of their own before the parsing macros' CASE
    amounts as (
        select
            *,
            nullif(r.fillPrice, '') as fill_price_text,
            r.fillQuantity as fill_quantity_text,
            r.fillTotalAmount as fill_total_amount_text,
            r.fees as fees_text
        from source
    ),

    final as (
        select
            _account as account,
            r.symbol,
            r.baseCoin as base_coin,
            r.quoteCoin as quote_coin,
            r.fillId as fill_id,
            lower(r.side) as side,
            make_timestamptz(cast(r.cTime as bigint) * 1000) as c_time_at,
            parse_decimal_units(fill_price_text, 18) as fill_price_e18,
            parse_decimal_units(fill_quantity_text, 18) as fill_quantity_e18,
            parse_decimal_units(fill_total_amount_text, 16) as fill_total_amount_e16,
            parse_decimal_units(fees_text, 18) as fees_e18
        from amounts
    )

    select * from final
    order by account, symbol, c_time_at, length(fill_id), fill_id
  `;
}

/** Creates the macro files (as `exledger build` does first) and runs the baseline's statement. */
export async function runSortBaseline(db: Database, table: string, sinceMs?: number): Promise<SortBaselineOutput> {
  for (const macro of loadProject().macros) await db.run(macro.sql);
  const started = performance.now();
  await db.run(sortBaselineSql(table, sinceMs));
  const ms = performance.now() - started;
  // CREATE TABLE AS reports no changed rows: counted after the clock stopped.
  const [count] = await db.all<{ rows: string }>(`select count(*) as rows from main.${table}`);
  return { rows: Number(count?.rows ?? 0), ms };
}

/** A measured child run of the baseline, with what it printed. */
export type SortBaselineRun = MeasuredScript<SortBaselineOutput>;

/** Runs the baseline in a child process over `database` (which it writes a table into) and measures it. */
export function measureSortBaseline(database: string, table: string, sinceMs: number | undefined, timeoutSeconds: number): Promise<SortBaselineRun> {
  return measureScript<SortBaselineOutput>([THIS_FILE, database, table, ...(sinceMs === undefined ? [] : [String(sinceMs)])], timeoutSeconds);
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === THIS_FILE) {
  const [database, table, since] = process.argv.slice(2);
  if (database === undefined || table === undefined) throw new Error('usage: sort-baseline.ts <database> <table> [<since ms>]');
  const db = await Database.open(database, { memoryLimit: BUILD_MEMORY_LIMIT });
  try {
    console.log(JSON.stringify(await runSortBaseline(db, table, since === undefined ? undefined : Number(since))));
  } finally {
    db.close();
  }
}
