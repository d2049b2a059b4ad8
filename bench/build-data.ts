/**
 * Raw tables for the model build benchmark, written by DuckDB itself (no sandbox, no HTTP):
 * `insert into raw.<stream> select … from range(n)` builds each record as the exchange sends it
 * (same field names and JSON types as src/sandbox, amounts as decimal strings), so the staging
 * views read it exactly as they read a sync.
 *
 * What the data holds, on purpose:
 * - spot fills: 85% on ONE symbol (BTCUSDT_SPBL: the worst case for lot matching), buys and sells
 *   interleaved (three fills per order, the side drawn per order, buys a little larger so the
 *   inventory grows but sells still run past it now and then), maker/taker fees on both sides
 *   (a buy pays in the base coin, a sell in the quote coin), 2% with an empty fillPrice and
 *   orderType; ETHBTC_SPBL with 18-decimal quantities (its total rounded to the 8 decimals of BTC,
 *   its price always given); SHIBUSDT_SPBL with quantities up to 5e9; and, 4 fills in every
 *   50,000 (the first of them at index 0), WXTUSDT_SPBL at prices up to 1e9 and quantities up
 *   to 1e12 (a notional of 1e21).
 * - futures fills: three USDT contracts, opens and closes of both sides, realized PnL on closes,
 *   maker/taker fees, 0.5% of closes forced liquidations with their fee, and 2 fills in every
 *   200,000 (an open and its close) at price 1e9 and size 1e12.
 * - funding bills: six coins, every business type, fees inside the deltas, and an afterAmount
 *   chain that is consistent per coin (each coin opens with a deposit large enough that no
 *   balance goes below zero); the bills of a trade's two legs share a millisecond.
 * - snapshots: currencies and contracts (the sandbox catalog), two spot assets snapshots equal
 *   to the bill balances, and a weekly futures account whose running totals are the fills' (but
 *   for the extreme ones) with a drawn funding total.
 *
 * Everything is a function of (counts, seed): the same spec gives the same bytes, so a generated
 * database is cached under data/bench/, keyed by the spec and this file's text.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { STREAMS } from '../pipelines/index.ts';
import { ensureRawTables } from '../src/extract/sync.ts';
import { buildContractsWire, buildCurrenciesWire } from '../src/sandbox/generate/catalog.ts';
import { Database } from '../src/store/database.ts';

/** How much to generate. */
export interface BuildDataSpec {
  spotFills: number;
  futuresFills: number;
  fundingBills: number;
  /** @default 1 */
  seed?: number;
  /**
   * The years the history spans, ending with 2025 (every stream's records spread evenly over them).
   * A history that grows does so by its years, at the same pace: the 30M nightly history is three
   * years (2023 to 2025) of what the 10M one holds in 2025, so that its last day, and so the night
   * appended to it, is the 10M history's. @default 1
   */
  years?: number;
}

/** The history runs over 2025, in UTC (over the spec's years up to the end of 2025). */
export const BENCH_START_MS = Date.UTC(2025, 0, 1);
export const BENCH_END_MS = Date.UTC(2026, 0, 1);

/** The first instant of a spec's history and its span: its years up to BENCH_END_MS. */
export function benchSpan(spec: Pick<BuildDataSpec, 'years'>): { startMs: number; spanMs: number } {
  const startMs = Date.UTC(2026 - (spec.years ?? 1), 0, 1);
  return { startMs, spanMs: BENCH_END_MS - startMs };
}
const ACCOUNT = 'main';
const RUN_ID = 'bench-build';
/** Rows per INSERT, so 10M fills never sit in one statement's buffers. */
const CHUNK = 2_000_000;

/**
 * The spot pairs: price and quantity decimals (of the exchange's ticks and units), coin decimals,
 * the price's centre and swing in ticks, the quantity range in units, and the share of orders.
 */
const SPOT = [
  { symbol: 'BTCUSDT_SPBL', base: 'BTC', quote: 'USDT', pd: 2, qd: 6, bd: 8, center: 8_000_000, swing: 2_000_000, qMin: 1_000, qMax: 200_000, share: 850 },
  { symbol: 'ETHUSDT_SPBL', base: 'ETH', quote: 'USDT', pd: 2, qd: 4, bd: 18, center: 300_000, swing: 80_000, qMin: 10, qMax: 50_000, share: 50 },
  { symbol: 'SOLUSDT_SPBL', base: 'SOL', quote: 'USDT', pd: 2, qd: 3, bd: 8, center: 15_000, swing: 5_000, qMin: 100, qMax: 500_000, share: 30 },
  { symbol: 'SHIBUSDT_SPBL', base: 'SHIB', quote: 'USDT', pd: 8, qd: 0, bd: 8, center: 2_000, swing: 800, qMin: 1_000_000, qMax: 5_000_000_000, share: 30 },
  // 18-decimal quantities: 0.001 to 0.5 ETH with every digit used.
  { symbol: 'ETHBTC_SPBL', base: 'ETH', quote: 'BTC', pd: 5, qd: 18, bd: 18, center: 3_500, swing: 800, qMin: 1e15, qMax: 5e17, share: 40 },
  // Only the extreme fills: price up to 1e9 (1e11 ticks), quantity up to 1e12 (1e14 units).
  { symbol: 'WXTUSDT_SPBL', base: 'WXT', quote: 'USDT', pd: 2, qd: 2, bd: 8, center: 0, swing: 0, qMin: 0, qMax: 0, share: 0 },
] as const;
/** Quote coins (USDT, BTC) both have 8 decimals: totals and sell fees are written with at most 8. */
const QUOTE_DECIMALS = 8;
const EXTREME_SPOT_INDEX = 5;
const EXTREME_EVERY = 50_000;

const FUTURES = [
  { symbol: 'cmt_btcusdt', pd: 1, sd: 3, center: 800_000, swing: 200_000, sMax: 2_000, share: 70 },
  { symbol: 'cmt_ethusdt', pd: 2, sd: 2, center: 300_000, swing: 80_000, sMax: 5_000, share: 20 },
  { symbol: 'cmt_solusdt', pd: 3, sd: 1, center: 150_000, swing: 50_000, sMax: 10_000, share: 10 },
] as const;
/** Futures amounts (value, fees, PnL, collateral) carry 8 decimals, as the sandbox writes them. */
const FUTURES_DECIMALS = 8;
const FUTURES_EXTREME_EVERY = 200_000;

/**
 * Funding coins: id, decimals, share of bills (per mille), bill size range in units, withdrawal
 * fee in units, and the opening deposit in units.
 */
const BILL_COINS = [
  { coin: 'USDT', id: 2, decimals: 8, share: 400, min: 1e8, max: 5e11, withdrawFee: 1e8, opening: 1e13 },
  { coin: 'BTC', id: 1, decimals: 8, share: 250, min: 1e5, max: 5e7, withdrawFee: 2e4, opening: 1e9 },
  { coin: 'ETH', id: 3, decimals: 18, share: 150, min: 1e15, max: 5e18, withdrawFee: 1.5e15, opening: 1e20 },
  { coin: 'SOL', id: 7, decimals: 8, share: 80, min: 1e7, max: 5e10, withdrawFee: 8e5, opening: 1e12 },
  { coin: 'SHIB', id: 18, decimals: 8, share: 70, min: 1e13, max: 1e17, withdrawFee: 2.5e13, opening: 1e18 },
  { coin: 'WXT', id: 12, decimals: 8, share: 50, min: 1e9, max: 1e13, withdrawFee: 0, opening: 1e14 },
] as const;
/** bizType per mille: the sign of buy and sell bills is drawn (a trade has a received and a paid leg). */
const BIZ_TYPES = [
  ['deposit', 150],
  ['withdraw', 100],
  ['transfer_in', 100],
  ['transfer_out', 100],
  ['buy', 280],
  ['sell', 270],
] as const;

/** Cumulative `case` over per-mille shares of a hashed bucket. */
function pick(bucket: string, shares: readonly number[], values: readonly string[]): string {
  let until = 0;
  const arms = shares.map((share, index) => {
    until += share;
    return index === shares.length - 1 ? `else ${values[index]}` : `when ${bucket} < ${until} then ${values[index]}`;
  });
  return `case ${arms.join(' ')} end`;
}

/** `(values (…), …) t(columns)` for a list of plain objects of numbers and strings. */
function valuesTable(rows: readonly Record<string, string | number>[], alias: string): string {
  const columns = Object.keys(rows[0] as object);
  const literal = (value: string | number) => (typeof value === 'number' ? `cast('${BigInt(value)}' as ${Math.abs(value) < 2 ** 31 ? 'integer' : 'hugeint'})` : `'${value}'`);
  return `(values ${rows.map((row) => `(${columns.map((column) => literal(row[column] as string | number)).join(', ')})`).join(', ')}) ${alias}(${columns.join(', ')})`;
}

/** Temporary macros of the generator: deterministic draws and exact fixed-point text. */
async function createMacros(db: Database, seed: number): Promise<void> {
  await db.run(`
    -- An integer in [lo, hi], drawn from (k, salt) and the seed.
    create or replace temp macro bx_draw(k, salt, lo, hi) as
      cast(lo as hugeint) + cast(hash(k, salt, ${seed}) % cast(cast(hi as hugeint) - cast(lo as hugeint) + 1 as ubigint) as hugeint);
    -- A per-mille bucket drawn from (k, salt).
    create or replace temp macro bx_bucket(k, salt) as cast(hash(k, salt, ${seed}) % 1000 as integer);
    create or replace temp macro bx_pow10(s) as cast(pow(10, s) as hugeint);
    -- round(n / d) half up, for n >= 0 and d > 0.
    create or replace temp macro bx_div_round(n, d) as (2 * cast(n as hugeint) + d) // (2 * cast(d as hugeint));
    -- Units of 10^-s as text with exactly s decimals (the exchange's fixed form).
    create or replace temp macro bx_fixed(u, s) as
      case when s = 0 then cast(u as varchar)
      else (case when u < 0 then '-' else '' end) || cast(abs(u) // bx_pow10(s) as varchar) || '.' || lpad(cast(abs(u) % bx_pow10(s) as varchar), cast(s as integer), '0') end;
    -- The same without trailing zeros (the exchange's trimmed form: 0.1, 100, 0).
    create or replace temp macro bx_trimmed(u, s) as
      case when s = 0 then cast(u as varchar) else rtrim(rtrim(bx_fixed(u, s), '0'), '.') end;
  `);
}

/** Writes every raw table the models read, into a database whose raw tables exist. */
export async function writeBuildData(db: Database, spec: BuildDataSpec): Promise<void> {
  const seed = spec.seed ?? 1;
  await ensureRawTables(db, STREAMS);
  await createMacros(db, seed);
  await writeReferenceSnapshots(db);
  const span = benchSpan(spec);
  for (let start = 0; start < spec.spotFills; start += CHUNK) await writeSpotFills(db, span, spec.spotFills, start, Math.min(spec.spotFills, start + CHUNK));
  for (let start = 0; start < spec.futuresFills; start += CHUNK) await writeFuturesFills(db, span, spec.futuresFills, start, Math.min(spec.futuresFills, start + CHUNK));
  await writeFundingBills(db, span, spec.fundingBills);
  await writeFuturesAccounts(db, span);
}

type Span = ReturnType<typeof benchSpan>;

async function writeReferenceSnapshots(db: Database): Promise<void> {
  const takenAt = new Date(BENCH_END_MS).toISOString();
  for (const [table, records] of [
    ['currencies', buildCurrenciesWire()],
    ['futures_contracts', buildContractsWire()],
  ] as const) {
    const values = records.map((_, index) => `('${ACCOUNT}', '', '${takenAt}'::timestamptz, ${index}, $${index + 1}::json, '${RUN_ID}', now())`);
    await db.run(`insert into raw.${table} values ${values.join(', ')}`, records.map((record) => JSON.stringify(record)));
  }
}

async function writeSpotFills(db: Database, { startMs, spanMs }: Span, total: number, from: number, to: number): Promise<void> {
  const orders = Math.ceil(total / 3);
  const symbols = valuesTable(
    SPOT.map((s, idx) => ({ idx, symbol: s.symbol, base: s.base, quote: s.quote, pd: s.pd, qd: s.qd, bd: s.bd, center: s.center, swing: s.swing, q_min: s.qMin, q_max: s.qMax })),
    's',
  );
  await db.run(`
    insert into raw.spot_fills
    with fills as (
        select
            i,
            i // 3 as o,
            i % ${EXTREME_EVERY} < 4 as is_extreme,
            i % ${EXTREME_EVERY} as extreme_no
        from range(${from}, ${to}) t(i)
    ),

    drawn as (
        select
            fills.*,
            case when is_extreme then ${EXTREME_SPOT_INDEX} else ${pick('bx_bucket(o, 1)', SPOT.map((s) => s.share).slice(0, EXTREME_SPOT_INDEX), SPOT.slice(0, EXTREME_SPOT_INDEX).map((_, index) => String(index)))} end as idx,
            case when is_extreme then extreme_no < 2 else bx_bucket(o, 2) < 500 end as is_buy,
            not is_extreme and bx_bucket(o, 3) < 20 as is_blank,
            case when is_extreme then 'limit' when bx_bucket(o, 4) < 333 then 'market' else 'limit' end as order_type,
            ${startMs} + (o * ${spanMs}) // ${orders} as c_time
        from fills
    ),

    priced as (
        select
            d.*,
            s.symbol, s.base, s.quote, s.pd, s.qd, s.bd,
            case
                when d.is_extreme and d.extreme_no = 0 then cast('100000000000' as hugeint)
                when d.is_extreme then bx_draw(d.i, 5, 10000000000, 100000000000)
                else s.center + cast(s.swing * sin(2 * pi() * 3 * d.o / ${orders}) as hugeint) + bx_draw(d.o, 6, 0, s.swing // 10) - s.swing // 20
            end as price_ticks,
            case
                when d.is_extreme and d.extreme_no = 0 then cast('100000000000000' as hugeint)
                when d.is_extreme then bx_draw(d.i, 7, 10000000000000, 100000000000000)
                when d.is_buy then bx_draw(d.i, 8, s.q_min, s.q_max)
                else bx_draw(d.i, 8, s.q_min, s.q_max * 19 // 20)
            end as quantity_units,
            -- maker 0.08%, taker 0.1% (per 10,000)
            case when d.order_type = 'market' or bx_bucket(d.o, 9) < 400 then 10 else 8 end as fee_rate,
            least(s.pd + s.qd, ${QUOTE_DECIMALS}) as total_scale
        from drawn d
        join ${symbols} on s.idx = d.idx
    ),

    amounts as (
        select
            *,
            bx_div_round(price_ticks * quantity_units, bx_pow10(pd + qd - total_scale)) as total_units,
            case when is_buy then bx_div_round(quantity_units * bx_pow10(bd - qd) * fee_rate, 10000) end as buy_fee_units
        from priced
    ),

    final as (
        select
            '${ACCOUNT}' as _account,
            'symbol=' || symbol as _partition,
            cast(1000000000000000000 + i * 1000 + bx_draw(i, 10, 0, 999) as varchar) as _key,
            c_time as _event_ms,
            json_object(
                'accountId', '6012345678',
                'symbol', symbol,
                'baseCoin', base,
                'quoteCoin', quote,
                'orderId', cast(2000000000000000000 + o * 1000 as varchar),
                'fillId', cast(1000000000000000000 + i * 1000 + bx_draw(i, 10, 0, 999) as varchar),
                'orderType', case when is_blank then '' else order_type end,
                'side', case when is_buy then 'buy' else 'sell' end,
                'fillPrice', case when is_blank then '' else bx_trimmed(price_ticks, pd) end,
                'fillQuantity', bx_trimmed(quantity_units, qd),
                'fillTotalAmount', bx_trimmed(total_units, total_scale),
                'fees', case
                    when is_buy then bx_trimmed(buy_fee_units, bd)
                    else bx_trimmed(bx_div_round(total_units * bx_pow10(${QUOTE_DECIMALS} - total_scale) * fee_rate, 10000), ${QUOTE_DECIMALS})
                end,
                'cTime', cast(c_time as varchar)
            ) as _record,
            '${RUN_ID}' as _run_id,
            now() as _fetched_at
        from amounts
    )

    select * from final
  `);
}

async function writeFuturesFills(db: Database, { startMs, spanMs }: Span, total: number, from: number, to: number): Promise<void> {
  const orders = Math.ceil(total / 2);
  const contracts = valuesTable(
    FUTURES.map((c, idx) => ({ idx, symbol: c.symbol, pd: c.pd, sd: c.sd, center: c.center, swing: c.swing, s_max: c.sMax })),
    'c',
  );
  await db.run(`
    insert into raw.futures_fills
    with fills as (
        select
            i,
            i // 2 as o,
            i % ${FUTURES_EXTREME_EVERY} < 2 as is_extreme
        from range(${from}, ${to}) t(i)
    ),

    drawn as (
        select
            fills.*,
            case when is_extreme then 0 else ${pick('bx_bucket(o, 21)', FUTURES.map((c) => c.share), FUTURES.map((_, index) => String(index)))} end as idx,
            case
                when is_extreme then case when i % ${FUTURES_EXTREME_EVERY} = 0 then 'OPEN_LONG' else 'CLOSE_LONG' end
                else ${pick('bx_bucket(o, 22)', [300, 250, 250, 200], ["'OPEN_LONG'", "'CLOSE_LONG'", "'OPEN_SHORT'", "'CLOSE_SHORT'"])}
            end as direction,
            case when bx_bucket(o, 23) < 600 then 6 else 2 end as fee_rate,
            ${startMs} + (o * ${spanMs}) // ${orders} as created_time
        from fills
    ),

    priced as (
        select
            d.*,
            c.symbol, c.pd, c.sd,
            d.direction like 'CLOSE%' as is_close,
            d.direction like 'CLOSE%' and bx_bucket(d.o, 24) < 5 as is_liquidation,
            case
                when d.is_extreme then bx_pow10(9 + c.pd)
                else c.center + cast(c.swing * sin(2 * pi() * 5 * d.o / ${orders}) as hugeint) + bx_draw(d.o, 25, 0, c.swing // 10) - c.swing // 20
            end as price_ticks,
            case when d.is_extreme then bx_pow10(12 + c.sd) else bx_draw(d.i, 26, 1, c.s_max) end as size_units
        from drawn d
        join ${contracts} on c.idx = d.idx
    ),

    amounts as (
        select
            *,
            -- value at 8 decimals: size (sd) x price (pd) has sd + pd <= 8 decimals, so this is exact
            price_ticks * size_units * bx_pow10(${FUTURES_DECIMALS} - pd - sd) as value_units
        from priced
    ),

    final as (
        select
            '${ACCOUNT}' as _account,
            '' as _partition,
            cast(1300000000000000000 + i * 7 as varchar) as _key,
            created_time as _event_ms,
            json_object(
                'tradeId', cast(1300000000000000000 + i * 7 as bigint),
                'orderId', cast(1200000000000000000 + o * 11 as bigint),
                'symbol', symbol,
                'marginMode', 'SHARED',
                'separatedMode', 'COMBINED',
                'positionSide', case when direction like '%LONG' then 'LONG' else 'SHORT' end,
                'orderSide', case when direction in ('OPEN_LONG', 'CLOSE_SHORT') then 'BUY' else 'SELL' end,
                'fillSize', bx_fixed(size_units, sd),
                'fillValue', bx_fixed(value_units, ${FUTURES_DECIMALS}),
                'fillFee', bx_fixed(bx_div_round(value_units * fee_rate, 10000), ${FUTURES_DECIMALS}),
                'liquidateFee', case when is_liquidation then bx_fixed(bx_div_round(value_units * 5, 10000), ${FUTURES_DECIMALS}) else '0' end,
                'realizePnl', case
                    when not is_close then '0'
                    when is_extreme then bx_fixed(bx_draw(i, 27, -1000000000, 1000000000) * bx_pow10(${FUTURES_DECIMALS} + 9), ${FUTURES_DECIMALS})
                    else bx_fixed(bx_draw(i, 27, -100000000000, 120000000000), ${FUTURES_DECIMALS})
                end,
                'direction', direction,
                'liquidateType', case when is_liquidation then 'FORCE_LIQUIDATE' else '' end,
                'legacyOrdeDirection', direction,
                'createdTime', created_time
            ) as _record,
            '${RUN_ID}' as _run_id,
            now() as _fetched_at
        from amounts
    )

    select * from final
  `);
}

async function writeFundingBills(db: Database, { startMs, spanMs }: Span, total: number): Promise<void> {
  if (total === 0) return;
  const coins = valuesTable(
    BILL_COINS.map((c, idx) => ({ idx, coin: c.coin, coin_id: c.id, decimals: c.decimals, a_min: c.min, a_max: c.max, withdraw_fee: c.withdrawFee, opening: c.opening })),
    'c',
  );
  const pairs = Math.ceil(total / 2);
  await db.run(`
    insert into raw.funding_bills
    with bills as (
        select
            i,
            -- the two bills of a pair share a millisecond (a trade's two legs)
            ${startMs} + ((i // 2) * ${spanMs}) // ${pairs} as c_time,
            ${pick('bx_bucket(i, 31)', BILL_COINS.map((c) => c.share), BILL_COINS.map((_, index) => String(index)))} as idx,
            ${pick('bx_bucket(i, 32)', BIZ_TYPES.map(([, share]) => share), BIZ_TYPES.map(([biz]) => `'${biz}'`))} as drawn_biz
        from range(${total}) t(i)
    ),

    moves as (
        select
            b.i, b.c_time, c.coin, c.coin_id, c.decimals, c.opening,
            row_number() over (partition by c.coin order by b.i) = 1 as is_first,
            b.drawn_biz as biz_type,
            bx_draw(b.i, 33, c.a_min, c.a_max) as amount,
            case
                when b.drawn_biz in ('deposit', 'transfer_in') then 1
                when b.drawn_biz in ('withdraw', 'transfer_out') then -1
                when bx_bucket(b.i, 34) < 500 then 1
                else -1
            end as sign,
            case when b.drawn_biz = 'withdraw' then c.withdraw_fee else 0 end as withdraw_fee
        from bills b
        join ${coins} on c.idx = b.idx
    ),

    deltas as (
        select
            *,
            -- a received trade leg is net of its fee (0.1%); a withdrawal's fee is paid on top
            case
                when biz_type in ('buy', 'sell') and sign > 0 then bx_div_round(amount, 1000)
                else withdraw_fee
            end as fee,
            case
                when biz_type in ('buy', 'sell') and sign > 0 then amount - bx_div_round(amount, 1000)
                when sign > 0 then amount
                else -(amount + withdraw_fee)
            end as move
        from moves
    ),

    running as (
        select
            *,
            sum(case when is_first then 0 else move end) over (partition by coin order by i rows unbounded preceding) as moved
        from deltas
    ),

    -- each coin opens with a deposit big enough that its balance never goes below zero
    opened as (
        select
            *,
            opening + greatest(0, -min(moved) over (partition by coin)) as opening_deposit
        from running
    ),

    final as (
        select
            '${ACCOUNT}' as _account,
            '' as _partition,
            cast(5000000000000000000 + i * 100 as varchar) as _key,
            c_time as _event_ms,
            json_object(
                'billId', cast(5000000000000000000 + i * 100 as varchar),
                'coinId', coin_id,
                'coinName', coin,
                'bizType', case when is_first then 'deposit' else biz_type end,
                'deltaAmount', bx_fixed(case when is_first then opening_deposit else move end, decimals),
                'afterAmount', bx_fixed(opening_deposit + moved, decimals),
                'fees', bx_fixed(case when is_first then 0 else fee end, decimals),
                'cTime', cast(c_time as varchar)
            ) as _record,
            '${RUN_ID}' as _run_id,
            now() as _fetched_at
        from opened
    )

    select * from final
  `);
  // Two spot assets snapshots (mid-year and end): equity is the coin's last afterAmount by then.
  for (const takenMs of [startMs + spanMs / 2, BENCH_END_MS]) {
    await db.run(`
      insert into raw.spot_assets
      with bills as (
          select
              cast(_record->>'coinId' as integer) as coin_id,
              _record->>'coinName' as coin_name,
              _record->>'afterAmount' as after_amount,
              _event_ms,
              _key
          from raw.funding_bills
          where _account = '${ACCOUNT}' and _event_ms < ${takenMs}
      ),

      latest as (
          select coin_id, coin_name, arg_max(after_amount, (_event_ms, _key)) as equity
          from bills
          group by all
      )

      select
          '${ACCOUNT}', '', make_timestamptz(${takenMs} * 1000), cast(row_number() over (order by coin_id) - 1 as integer),
          json_object('coinId', coin_id, 'coinName', coin_name, 'available', equity, 'frozen', regexp_replace(equity, '[1-9]', '0', 'g'), 'equity', equity),
          '${RUN_ID}', now()
      from latest
    `);
  }
}

/**
 * A futures account snapshot every week: one USDT collateral entry whose running totals are the
 * fills' totals up to the snapshot (funding drawn per week), and no open position.
 */
async function writeFuturesAccounts(db: Database, { startMs, spanMs }: Span): Promise<void> {
  const weekMs = 7 * 86_400_000;
  await db.run(`
    insert into raw.futures_accounts
    with snapshots as (
        select k, ${startMs} + k * ${weekMs} as taken_ms
        from range(1, ${Math.floor(spanMs / weekMs) + 1}) t(k)
    ),

    fills as (
        select
            (cast(_record->>'createdTime' as bigint) - ${startMs}) // ${weekMs} + 1 as k,
            _record->>'direction' as direction,
            cast(_record->>'fillValue' as decimal(38, 8)) as fill_value,
            cast(_record->>'fillFee' as decimal(38, 8)) as fill_fee,
            cast(_record->>'liquidateFee' as decimal(38, 8)) as liquidate_fee
        from raw.futures_fills
        -- the extreme fills (notional 1e21) are left out: running totals of that size would not be plausible
        where _account = '${ACCOUNT}' and cast(_record->>'fillSize' as decimal(38, 3)) < 1000000000
    ),

    weekly as (
        select
            s.k,
            coalesce(sum(f.fill_value) filter (where f.direction = 'OPEN_LONG'), 0) as open_long,
            coalesce(sum(f.fill_value) filter (where f.direction = 'OPEN_SHORT'), 0) as open_short,
            coalesce(sum(f.fill_value) filter (where f.direction = 'CLOSE_LONG'), 0) as close_long,
            coalesce(sum(f.fill_value) filter (where f.direction = 'CLOSE_SHORT'), 0) as close_short,
            coalesce(sum(f.fill_fee), 0) as fill_fee,
            coalesce(sum(f.liquidate_fee), 0) as liquidate_fee
        from snapshots s
        left join fills f using (k)
        group by s.k
    ),

    totals as (
        select
            s.k,
            s.taken_ms,
            sum(w.open_long) over running as cum_open_long,
            sum(w.open_short) over running as cum_open_short,
            sum(w.close_long) over running as cum_close_long,
            sum(w.close_short) over running as cum_close_short,
            sum(w.fill_fee) over running as cum_fill_fee,
            sum(w.liquidate_fee) over running as cum_liquidate_fee,
            -- funding paid is positive in the running total; some weeks the account receives
            sum(bx_draw(s.k, 41, -2000000000, 6000000000)) over running as cum_funding_units
        from snapshots s
        join weekly w using (k)
        window running as (order by s.k rows unbounded preceding)
    ),

    final as (
        select
            '${ACCOUNT}' as _account,
            '' as _partition,
            make_timestamptz(taken_ms * 1000) as _snapshot_at,
            0 as _seq,
            json_object(
                'account', json_object('id', '7012345678', 'user_id', '8012345678', 'client_account_id', '0', 'is_system_account', false,
                    'status', 'NORMAL', 'created_time', '${startMs}', 'updated_time', cast(taken_ms as varchar)),
                'collateral', json_array(json_object(
                    'account_id', '7012345678',
                    'coin_id', 2,
                    'margin_mode', 'SHARED',
                    'cross_contract_id', 0,
                    'isolated_position_id', '0',
                    'amount', bx_fixed(bx_pow10(${FUTURES_DECIMALS} + 7) + k * bx_pow10(${FUTURES_DECIMALS} + 3), ${FUTURES_DECIMALS}),
                    'pending_deposit_amount', '0.00000000',
                    'pending_withdraw_amount', '0.00000000',
                    'pending_transfer_in_amount', '0.00000000',
                    'pending_transfer_out_amount', '0.00000000',
                    'is_liquidating', false,
                    'legacy_amount', '0.00000000',
                    'cum_deposit_amount', '0.00000000',
                    'cum_withdraw_amount', '0.00000000',
                    'cum_transfer_in_amount', bx_fixed(bx_pow10(${FUTURES_DECIMALS} + 7), ${FUTURES_DECIMALS}),
                    'cum_transfer_out_amount', '0.00000000',
                    'cum_margin_move_in_amount', '0.00000000',
                    'cum_margin_move_out_amount', '0.00000000',
                    'cum_position_open_long_amount', cast(cum_open_long as varchar),
                    'cum_position_open_short_amount', cast(cum_open_short as varchar),
                    'cum_position_close_long_amount', cast(cum_close_long as varchar),
                    'cum_position_close_short_amount', cast(cum_close_short as varchar),
                    'cum_position_fill_fee_amount', cast(cum_fill_fee as varchar),
                    'cum_position_liquidate_fee_amount', cast(cum_liquidate_fee as varchar),
                    'cum_position_funding_amount', bx_fixed(cum_funding_units, ${FUTURES_DECIMALS}),
                    'cum_order_fill_fee_income_amount', '0.00000000',
                    'cum_order_liquidate_fee_income_amount', '0.00000000',
                    'created_time', '${startMs}',
                    'updated_time', cast(taken_ms as varchar)
                )),
                'position', json_array(),
                'version', cast(k as varchar)
            ) as _record,
            '${RUN_ID}' as _run_id,
            now() as _fetched_at
        from totals
    )

    select * from final
  `);
}

/** The repository the benchmarks run in. */
export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Where generated databases are kept (data/ is not committed). */
export const BENCH_DATA_DIR = path.join(REPO, 'data', 'bench');

/** The cached database file for a spec: the counts, the seed and a hash of this generator's text. */
export function buildDataPath(spec: BuildDataSpec): string {
  const generator = createHash('sha256').update(readFileSync(fileURLToPath(import.meta.url))).digest('hex').slice(0, 10);
  const years = (spec.years ?? 1) === 1 ? '' : `-y${spec.years}`;
  return path.join(BENCH_DATA_DIR, `build-s${spec.spotFills}-f${spec.futuresFills}-b${spec.fundingBills}${years}-seed${spec.seed ?? 1}-${generator}.duckdb`);
}

/**
 * The path of a generated database for the spec, generating it first when no cached one exists.
 * `seconds` is the generation time, undefined when the cache was used.
 */
export async function cachedBuildData(spec: BuildDataSpec): Promise<{ path: string; seconds?: number }> {
  const file = buildDataPath(spec);
  if (existsSync(file)) return { path: file };
  mkdirSync(BENCH_DATA_DIR, { recursive: true });
  const partial = `${file}.partial`;
  removeDatabaseFiles(partial);
  const started = performance.now();
  const db = await Database.open(partial);
  try {
    await writeBuildData(db, spec);
    await db.run('checkpoint');
  } finally {
    db.close();
  }
  renameSync(partial, file);
  return { path: file, seconds: (performance.now() - started) / 1000 };
}

/** A fresh copy of a generated database, so every build starts from raw tables only. */
export function copyBuildData(source: string, target: string): void {
  removeDatabaseFiles(target);
  copyFileSync(source, target);
}

/** Removes a database file with its write-ahead log and lock file (each if it is there). */
export function removeDatabaseFiles(file: string): void {
  for (const suffix of ['', '.wal', '.lock']) rmSync(`${file}${suffix}`, { force: true });
}
