import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBuildLines } from '../bench/build.ts';
import { writeBuildData, type BuildDataSpec } from '../bench/build-data.ts';
import { formatModelResult, summarizeBuild } from '../src/cli/result-text.ts';
import type { ModelResult } from '../src/models/build.ts';
import { refreshStaging } from '../src/models/build.ts';
import type { Database } from '../src/store/database.ts';
import { openModelDb, queryRows } from './support/model-db.ts';

/**
 * The build benchmark's generator (bench/build-data.ts) writes valid input: the staging models
 * read every record, and the amounts are exact and consistent the way the exchange's are.
 */
const spec: BuildDataSpec = { spotFills: 1_000, futuresFills: 1_000, fundingBills: 300 };
let db: Database;

beforeAll(async () => {
  db = await openModelDb();
  await writeBuildData(db, spec);
  await refreshStaging(db);
});
afterAll(() => db.close());

/** A decimal text as integer units of 10^-scale (the text must not have more decimals). */
function units(text: string, scale: number): bigint {
  const negative = text.startsWith('-');
  const [whole = '0', digits = ''] = text.replace('-', '').split('.');
  const fraction = digits.replace(/0+$/, '');
  if (fraction.length > scale) throw new Error(`${text} has more than ${scale} decimals`);
  const value = BigInt(whole + fraction.padEnd(scale, '0'));
  return negative ? -value : value;
}

/** round(n / d) half up, n >= 0. */
function roundDiv(n: bigint, d: bigint): bigint {
  return (2n * n + d) / (2n * d);
}

describe('bench build data', () => {
  it('every staging model reads every record, with every column cast', async () => {
    const counts: Record<string, number> = {};
    for (const view of ['spot_fills', 'futures_fills', 'funding_bills', 'spot_assets', 'futures_collateral', 'futures_accounts', 'futures_positions', 'currencies', 'futures_contracts', 'snapshots']) {
      // A table of the whole view: every column's cast runs on every row.
      await db.run(`CREATE OR REPLACE TEMP TABLE read_back AS SELECT * FROM staging.${view}`);
      counts[view] = Number((await queryRows<{ n: string }>(db, 'SELECT count(*) AS n FROM read_back'))[0]!.n);
    }
    expect(counts).toMatchObject({ spot_fills: 1_000, futures_fills: 1_000, funding_bills: 300, futures_collateral: 52, futures_accounts: 52, futures_positions: 0 });
    expect(counts.spot_assets).toBeGreaterThan(0);
  });

  it('spot fills: one symbol holds most of them, both sides, blank prices, 18-decimal quantities and a 1e21 notional', async () => {
    const [shape] = await queryRows(
      db,
      `SELECT
         count(*) FILTER (WHERE symbol = 'BTCUSDT_SPBL') AS btc,
         count(DISTINCT symbol) AS symbols,
         count(*) FILTER (WHERE symbol = 'BTCUSDT_SPBL' AND side = 'buy') AS btc_buys,
         count(*) FILTER (WHERE fill_price IS NULL) AS blank_prices,
         count(*) FILTER (WHERE fill_quantity <> round(fill_quantity, 17)) AS quantities_with_18_decimals,
         max(fill_total_amount)::VARCHAR AS max_total,
         max(fill_price)::VARCHAR AS max_price,
         max(fill_quantity)::VARCHAR AS max_quantity
       FROM staging.spot_fills`,
    );
    expect(Number(shape!.btc)).toBeGreaterThan(800);
    expect(Number(shape!.symbols)).toBe(6);
    expect(Number(shape!.btc_buys)).toBeGreaterThan(300);
    expect(Number(shape!.btc_buys)).toBeLessThan(Number(shape!.btc) - 300);
    expect(Number(shape!.blank_prices)).toBeGreaterThan(0);
    expect(Number(shape!.quantities_with_18_decimals)).toBeGreaterThan(0);
    expect(units(shape!.max_total!, 18)).toBe(10n ** 21n * 10n ** 18n);
    expect(units(shape!.max_price!, 18)).toBe(10n ** 9n * 10n ** 18n);
    expect(units(shape!.max_quantity!, 18)).toBe(10n ** 12n * 10n ** 18n);
  });

  it('spot amounts are exact: staging equals the raw text, total = price x quantity, fees at the maker or taker rate', async () => {
    const rows = await queryRows<Record<string, string>>(
      db,
      `SELECT
         s.symbol, s.side, s.base_coin,
         r._record->>'fillPrice' AS raw_price, r._record->>'fillQuantity' AS raw_quantity,
         r._record->>'fillTotalAmount' AS raw_total, r._record->>'fees' AS raw_fees,
         s.fill_quantity::VARCHAR AS quantity, s.fill_total_amount::VARCHAR AS total, s.fees::VARCHAR AS fees
       FROM staging.spot_fills s JOIN raw.spot_fills r ON r._key = s.fill_id`,
    );
    expect(rows).toHaveLength(1_000);
    const scale = 18;
    for (const row of rows) {
      const quantity = units(row.raw_quantity!, scale);
      const total = units(row.raw_total!, scale);
      expect(units(row.quantity!, scale)).toBe(quantity);
      expect(units(row.total!, scale)).toBe(total);
      expect(units(row.fees!, scale)).toBe(units(row.raw_fees!, scale));
      const fees = units(row.raw_fees!, scale);
      if (row.raw_price !== '') {
        const notional = units(row.raw_price!, scale) * quantity; // at scale 36
        // The total is the notional, rounded to the quote coin's 8 decimals (only ETHBTC, with 18-decimal quantities, rounds).
        expect(total).toBe(roundDiv(notional, 10n ** 28n) * 10n ** 10n);
        if (row.symbol !== 'ETHBTC_SPBL') expect(total * 10n ** 18n).toBe(notional);
      }
      // Buys pay in the base coin (8 decimals, ETH 18) on the quantity, sells in the quote coin (8) on the total.
      const [base, step] = row.side === 'buy' ? [quantity, row.base_coin === 'ETH' ? 1n : 10n ** 10n] : [total, 10n ** 10n];
      const atRate = (perTenThousand: bigint) => roundDiv(base * perTenThousand, 10_000n * step) * step;
      expect([atRate(8n), atRate(10n)]).toContain(fees);
    }
  });

  it('futures fills: fee at 0.02% or 0.06% of the value, liquidation fee 0.05%, PnL only on closes, a 1e21 notional', async () => {
    const rows = await queryRows<Record<string, string>>(
      db,
      `SELECT direction, liquidate_type, fill_value::VARCHAR AS value, fill_fee::VARCHAR AS fee,
              liquidate_fee::VARCHAR AS liquidate_fee, realize_pnl::VARCHAR AS pnl
       FROM staging.futures_fills`,
    );
    let maxValue = 0n;
    for (const row of rows) {
      const value = units(row.value!, 16);
      if (value > maxValue) maxValue = value;
      expect([(value * 2n) / 10_000n, (value * 6n) / 10_000n]).toContain(units(row.fee!, 16));
      expect(units(row.liquidate_fee!, 16)).toBe(row.liquidate_type === 'FORCE_LIQUIDATE' ? (value * 5n) / 10_000n : 0n);
      if (row.direction!.startsWith('OPEN')) expect(units(row.pnl!, 18)).toBe(0n);
    }
    expect(maxValue).toBe(10n ** 21n * 10n ** 16n);
    expect(rows.some((row) => row.liquidate_type === 'FORCE_LIQUIDATE' || row.direction!.startsWith('CLOSE'))).toBe(true);
  });

  it('funding bills: each coin chains (after - delta = previous after), never below zero, and the assets snapshots agree', async () => {
    const bills = await queryRows<Record<string, string>>(
      db,
      `SELECT coin_name, bill_id, c_time_at::VARCHAR AS at, delta_amount::VARCHAR AS delta, after_amount::VARCHAR AS after, fees::VARCHAR AS fees, biz_type
       FROM staging.funding_bills ORDER BY coin_name, c_time_at, bill_id::HUGEINT`,
    );
    const previous = new Map<string, bigint>();
    for (const bill of bills) {
      const after = units(bill.after!, 18);
      expect(after - units(bill.delta!, 18)).toBe(previous.get(bill.coin_name!) ?? 0n);
      expect(after >= 0n).toBe(true);
      previous.set(bill.coin_name!, after);
    }
    expect(new Set(bills.map((bill) => bill.biz_type))).toEqual(new Set(['deposit', 'withdraw', 'transfer_in', 'transfer_out', 'buy', 'sell']));
    const latest = await queryRows<Record<string, string>>(
      db,
      `SELECT coin_name, equity::VARCHAR AS equity FROM staging.spot_assets WHERE snapshot_at = (SELECT max(snapshot_at) FROM staging.spot_assets)`,
    );
    expect(latest).toHaveLength(previous.size);
    for (const asset of latest) expect(units(asset.equity!, 18)).toBe(previous.get(asset.coin_name!));
  });

  it('the same spec gives the same records', async () => {
    const again = await openModelDb();
    try {
      await writeBuildData(again, spec);
      const digest = (target: Database) =>
        queryRows<{ d: string }>(target, `SELECT md5(string_agg(_key || _record::VARCHAR, ',' ORDER BY _key)) AS d FROM (SELECT _key, _record FROM raw.spot_fills UNION ALL SELECT _key, _record FROM raw.futures_fills UNION ALL SELECT _key, _record FROM raw.funding_bills)`);
      expect(await digest(again)).toEqual(await digest(db));
    } finally {
      again.close();
    }
  });

  it('a history of three years is three of the one-year history at its pace: 2023 to 2025, its last day as busy', async () => {
    const longer = await openModelDb();
    try {
      await writeBuildData(longer, { spotFills: 3 * spec.spotFills, futuresFills: 3 * spec.futuresFills, fundingBills: 3 * spec.fundingBills, years: 3 });
      const span = (target: Database, table: string, field: string) =>
        queryRows<{ first: string; last: string; december: string }>(
          target,
          `SELECT min(t)::VARCHAR AS first, max(t)::VARCHAR AS last, count(*) FILTER (WHERE t >= TIMESTAMP '2025-12-01') AS december
           FROM (SELECT make_timestamp(CAST(_record->>'${field}' AS BIGINT) * 1000) AS t FROM raw.${table})`,
        );
      for (const [table, field] of [['spot_fills', 'cTime'], ['futures_fills', 'createdTime'], ['funding_bills', 'cTime']] as const) {
        const [three] = await span(longer, table, field);
        const [one] = await span(db, table, field);
        expect(three!.first, table).toMatch(/^2023-01-01/);
        expect(one!.first, table).toMatch(/^2025-01-01/);
        expect([three!.last.slice(0, 7), one!.last.slice(0, 7)], table).toEqual(['2025-12', '2025-12']);
        // December holds as many records, to a record or two of rounding (the orders are spread evenly).
        expect(Math.abs(Number(three!.december) - Number(one!.december)), table).toBeLessThanOrEqual(3);
      }
    } finally {
      longer.close();
    }
  });
});

describe('bench build output', () => {
  it("reads back exledger build's lines: status, model, seconds, rows, how it was brought up to date, a failure's message and the total", () => {
    const results: ModelResult[] = [
      { id: 'macros/exact_arith', materialization: 'macro', status: 'ok', ms: 20 },
      { id: 'intermediate.int_spot_trades', materialization: 'table', status: 'ok', ms: 12_340, rows: 1_000_000, how: 'incremental' },
      { id: 'marts.fees_daily', materialization: 'table', status: 'failed', ms: 500, message: 'Conversion Error: no' },
      { id: 'marts.fees_monthly', materialization: 'table', status: 'skipped', ms: 0, message: 'reads marts.fees_daily, which failed' },
    ];
    const stdout = [...results.map((result, index) => formatModelResult(result, index + 1, results.length)), summarizeBuild(results, 13_860)].join('\n');
    expect(parseBuildLines(stdout)).toEqual({ results, buildMs: 13_860 });
  });
});
