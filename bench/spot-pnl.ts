/**
 * Benchmark of the spot PnL models alone: FIFO and moving average cost over N fills of ONE symbol
 * (the worst case for lot matching: one partition, no parallelism across symbols).
 *
 *   npx tsx bench/spot-pnl.ts [fills]      default 1M; benchSpotPnl(fills) for bench/index.ts
 *
 * The fills are written straight into raw.spot_fills by DuckDB (buys and sells interleaved, the
 * buys a little larger so inventory grows while sells still run past it now and then, fees on both
 * sides, 2% without a price, some fills sharing a millisecond). Every spot model is built three
 * times: with cost methods ['fifo'], ['fifo', 'average'], then ['fifo', 'lifo', 'hifo', 'uk'] (the
 * TypeScript model int_spot_lot_segments); the table shows each model's time.
 * Prints, never asserts: other processes share the machine's 2 cores (the load average is shown).
 */
import { loadavg } from 'node:os';
import { STREAMS } from '../pipelines/index.ts';
import { ensureRawTables } from '../src/extract/sync.ts';
import { buildModels, type ModelResult } from '../src/models/build.ts';
import { DEFAULT_MODEL_SETTINGS, type CostMethod } from '../src/models/settings.ts';
import { Database } from '../src/store/database.ts';

/** Writes `count` spot fills of BTCUSDT_SPBL into raw.spot_fills (deterministic). */
export async function writeSpotBenchFills(db: Database, count: number): Promise<void> {
  await ensureRawTables(db, STREAMS);
  await db.run(`
    insert into raw.spot_fills
    select
        'main', 'symbol=BTCUSDT_SPBL', cast(i as varchar), ms,
        json_object(
            'accountId', '1', 'symbol', 'BTCUSDT_SPBL', 'baseCoin', 'BTC', 'quoteCoin', 'USDT',
            'orderId', cast(i // 3 as varchar), 'fillId', cast(1000000000 + i as varchar),
            'orderType', case when no_price then '' else 'limit' end,
            'side', side,
            'fillPrice', case when no_price then '' else price_text end,
            'fillQuantity', quantity_text,
            'fillTotalAmount', total_text,
            'fees', fee_text,
            'cTime', cast(ms as varchar)
        ),
        'bench', now()
    from (
        select
            *,
            -- 0.1% fees: a buy's in BTC (units of 1e-9), a sell's in USDT (units of 1e-11, cut to 8 decimals).
            case when side = 'buy' then '0.' || lpad(cast(quantity_units as varchar), 9, '0')
                 else cast(total_units // 100000000000 as varchar) || '.' || lpad(cast(total_units // 1000 % 100000000 as varchar), 8, '0') end as fee_text,
            cast(quantity_units // 1000000 as varchar) || '.' || lpad(cast(quantity_units % 1000000 as varchar), 6, '0') as quantity_text,
            cast(price_cents // 100 as varchar) || '.' || lpad(cast(price_cents % 100 as varchar), 2, '0') as price_text,
            cast(total_units // 100000000 as varchar) || '.' || lpad(cast(total_units % 100000000 as varchar), 8, '0') as total_text
        from (
            select
                i,
                -- Three fills per order share a millisecond; orders 17 s apart.
                1735689600000 + (i // 3) * 17000 as ms,
                case when hash(i // 3, 'side') % 100 < 52 then 'buy' else 'sell' end as side,
                hash(i, 'price') % 50 = 0 as no_price,
                cast(1000 + hash(i, 'qty') % 200000 as hugeint) as quantity_units,
                cast(6000000 + hash(i // 3, 'price') % 4000000 as hugeint) as price_cents,
                cast(1000 + hash(i, 'qty') % 200000 as hugeint) * cast(6000000 + hash(i // 3, 'price') % 4000000 as hugeint) as total_units
            from range(${count}) as r(i)
        )
    )
  `);
}

/** Builds the models with the given cost methods and returns the spot models' results. */
async function buildSpot(db: Database, costMethods: CostMethod[]): Promise<ModelResult[]> {
  const results = await buildModels(db, { ...DEFAULT_MODEL_SETTINGS, costMethods });
  const failed = results.filter((result) => result.status !== 'ok');
  if (failed.length > 0) throw new Error(failed.map((result) => `${result.id}: ${result.message}`).join('\n'));
  return results.filter((result) => /spot/.test(result.id));
}

/** Prints the time of every spot model for each set of cost methods, on `count` fills. */
export async function benchSpotPnl(count = 1_000_000): Promise<void> {
  console.log(`\n== spot PnL models over ${count.toLocaleString('en-US')} fills of one symbol (load average ${loadavg()[0]!.toFixed(2)})`);
  const db = await Database.open(':memory:');
  try {
    await writeSpotBenchFills(db, count);
    const rows: Record<string, string | number>[] = [];
    for (const methods of [['fifo'], ['fifo', 'average'], ['fifo', 'lifo', 'hifo', 'uk']] as CostMethod[][]) {
      const started = performance.now();
      const results = await buildSpot(db, methods);
      for (const result of results) rows.push({ cost_methods: methods.join('+'), model: result.id, seconds: Number((result.ms / 1000).toFixed(2)), rows: result.rows ?? '' });
      rows.push({ cost_methods: methods.join('+'), model: '(whole build, every model)', seconds: Number(((performance.now() - started) / 1000).toFixed(2)), rows: '' });
    }
    console.table(rows);
  } finally {
    db.close();
  }
}

if (process.argv[1]?.endsWith('spot-pnl.ts')) await benchSpotPnl(Number(process.argv[2] ?? 1_000_000));
