// Prices in the reporting currency per coin and reporting-zone day (docs/workbooks.md "Reporting currency"):
// the prices file's (source 'file'), else one derived from that day's spot fills (source 'derived').
// Key: (coin, price_date). Inputs: settings.prices, settings.reporting, staging.spot_fills.
// The reporting currency itself (price 1, 'identity') has no rows: the marts value it directly.
// File: a day's close line (a date) wins over instants of that day; else the day's last instant.
// Derived, where the file has no price of coin C on day D: every spot fill of day D (all accounts)
// in a pair of C with a coin that has a file price on D (or is the reporting currency), in either
// direction (C bought or sold as the base, or paid or received as the quote):
//   price(C) = sum(value of the other side in the reporting currency) / sum(units of C),
// volume-weighted, exact with BigInt on the integer units, rounded half up to 18 decimals.
// A derived price is never derived from another derived one.
import { declareProgramModel } from '../../src/models/program-model.ts';
import type { Database } from '../../src/store/database.ts';

const FILE_PRICES = `
with reporting as (
    select time_zone, reporting_currency from settings.reporting
),

lines as (
    select
        p.coin,
        coalesce(p.price_date, local_date(p.price_at, r.time_zone)) as price_date,
        p.price,
        p.price_date is not null as is_close,
        p.price_at,
        p.line
    from settings.prices as p
    inner join reporting as r on p.currency = r.reporting_currency and p.coin <> r.reporting_currency
    -- A futures contract's mark price (contract:<symbol>) is no coin's price: marts.futures_positions_valued reads it.
    where p.coin not like 'contract:%'
),

ranked as (
    select *, row_number() over (partition by coin, price_date order by is_close desc, price_at desc nulls first, line desc) as rank
    from lines
)

select
    coin,
    price_date,
    (select reporting_currency from reporting) as currency,
    price,
    'file' as price_source,
    'prices file line ' || line as price_basis
from ranked
where rank = 1`;

/**
 * Per coin without a file price, day and pair: the fills' summed units of that coin, and the
 * summed units of the other coin with the other coin's price (the reporting currency: 1).
 */
const DERIVABLE = `
with reporting as (
    select time_zone, reporting_currency from settings.reporting
),

known as (
    select coin, price_date, price from intermediate.int_prices
    union all
    select reporting_currency, null, 1 from reporting
),

fills as (
    select f.symbol, f.base_coin, f.quote_coin, local_date(f.c_time_at, r.time_zone) as fill_date, f.fill_quantity_e18, f.fill_total_amount_e16
    from staging.spot_fills as f
    cross join reporting as r
    where f.fill_quantity_e18 > 0 and f.fill_total_amount_e16 > 0
),

-- Each fill from both sides: the coin to price against the other coin, each in its own units (the
-- quantity in 1e-18, the total in 1e-16: a total near 1e21 is 1e37 units, and times 100 it would
-- not fit a HUGEINT).
sides as (
    select symbol, base_coin as coin, fill_date, fill_quantity_e18 as coin_units, 18 as coin_scale, fill_total_amount_e16 as other_units, 16 as other_scale, quote_coin as other from fills
    union all
    select symbol, quote_coin as coin, fill_date, fill_total_amount_e16, 16, fill_quantity_e18, 18, base_coin from fills
)

-- Sums as a high part (units // 1e18) and a low part (units % 1e18), each far from overflowing a
-- HUGEINT however many fills, added up exactly with BigInt.
select
    s.coin,
    s.fill_date as price_date,
    s.symbol,
    s.other,
    cast(sum(s.coin_units // 1000000000000000000) as varchar) as coin_high,
    cast(sum(s.coin_units % 1000000000000000000) as varchar) as coin_low,
    any_value(s.coin_scale) as coin_scale,
    cast(sum(s.other_units // 1000000000000000000) as varchar) as other_high,
    cast(sum(s.other_units % 1000000000000000000) as varchar) as other_low,
    any_value(s.other_scale) as other_scale,
    cast(any_value(k.price) as varchar) as other_price
from sides as s
inner join known as k on k.coin = s.other and (k.price_date = s.fill_date or k.price_date is null)
where s.coin <> (select reporting_currency from reporting)
    and not exists (select 1 from intermediate.int_prices as p where p.coin = s.coin and p.price_date = s.fill_date)
    and s.fill_date >= coalesce(cast($1 as date), date '-infinity')
group by s.coin, s.fill_date, s.symbol, s.other
order by s.coin, s.fill_date, s.symbol`;

const ROWS_PER_INSERT = 500;

export default declareProgramModel({
  name: 'int_prices',
  layer: 'intermediate',
  references: ['staging.spot_fills'],
  columns: 'coin VARCHAR NOT NULL, price_date DATE NOT NULL, currency VARCHAR NOT NULL, price DECIMAL(38, 18) NOT NULL, price_source VARCHAR NOT NULL, price_basis VARCHAR NOT NULL',
  async build(db: Database) {
    const currency = await reportingCurrency(db);
    if (currency === null) return;
    await db.run(`INSERT INTO intermediate.int_prices ${FILE_PRICES}`);
    await insertDerived(db, currency, null);
  },
  // A day's derived prices come from that day's fills alone (and the file's prices, whose change
  // rebuilds the model whole): the days from the earliest changed fill's are derived again, and
  // the readers are told that every account's and symbol's prices may have changed from that day's start.
  async incremental(db: Database) {
    const currency = await reportingCurrency(db);
    if (currency === null) {
      await db.run('DELETE FROM temp.main.model_pending');
      return;
    }
    const [changed] = await db.all<{ from_day: string | null; from_start: boolean }>(`
      SELECT CAST(local_date(min(from_at), (SELECT time_zone FROM settings.reporting)) AS VARCHAR) AS from_day, bool_or(from_at IS NULL) AS from_start
      FROM temp.main.model_pending`);
    const fromDay = changed?.from_start === true ? null : (changed?.from_day ?? null);
    await db.run("DELETE FROM intermediate.int_prices WHERE price_source = 'derived' AND price_date >= coalesce(CAST($1 AS DATE), DATE '-infinity')", [fromDay]);
    await insertDerived(db, currency, fromDay);
    await db.run(
      `CREATE OR REPLACE TEMP TABLE model_pending AS
       SELECT '*' AS account, CAST(NULL AS VARCHAR) AS symbol, local_day_start(CAST($1 AS DATE), (SELECT time_zone FROM settings.reporting)) AS from_at`,
      [fromDay],
    );
  },
});

async function reportingCurrency(db: Database): Promise<string | null> {
  const [reporting] = await db.all<{ reporting_currency: string | null }>('SELECT reporting_currency FROM settings.reporting');
  return reporting?.reporting_currency ?? null;
}

/** Derives the prices of the days from fromDay on (every day: null) where the file has none. */
async function insertDerived(db: Database, currency: string, fromDay: string | null): Promise<void> {
  const parts = await db.all<{ coin: string; price_date: string; symbol: string; other: string; coin_high: string; coin_low: string; coin_scale: number; other_high: string; other_low: string; other_scale: number; other_price: string }>(
    DERIVABLE,
    [fromDay],
  );
  const derived = new Map<string, { coin: string; day: string; value: bigint; units: bigint; symbols: string[] }>();
  for (const part of parts) {
    const key = `${part.coin}\u0000${part.price_date}`;
    const entry = derived.get(key) ?? { coin: part.coin, day: part.price_date, value: 0n, units: 0n, symbols: [] };
    // value in 1e-36 of the reporting currency: units of the other coin (1e-18) times its price (1e-18).
    entry.value += unitsE18(part.other_high, part.other_low, part.other_scale) * decimalUnits(part.other_price);
    entry.units += unitsE18(part.coin_high, part.coin_low, part.coin_scale);
    entry.symbols.push(part.symbol);
    derived.set(key, entry);
  }
  const rows = [...derived.values()];
  for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
    const batch = rows.slice(start, start + ROWS_PER_INSERT);
    const values = batch.map((_, index) => `($${index * 5 + 1}, CAST($${index * 5 + 2} AS DATE), $${index * 5 + 3}, CAST($${index * 5 + 4} AS DECIMAL(38, 18)), 'derived', $${index * 5 + 5})`);
    await db.run(
      `INSERT INTO intermediate.int_prices VALUES ${values.join(', ')}`,
      batch.flatMap((row) => [row.coin, row.day, currency, decimalText(roundDiv(row.value, row.units)), `fills of ${[...new Set(row.symbols)].join(', ')}`]),
    );
  }
}

/** A sum split as DERIVABLE gives it (high * 1e18 + low, in units of 10^-scale) as units of 1e-18. */
function unitsE18(high: string, low: string, scale: number): bigint {
  return (BigInt(high) * 10n ** 18n + BigInt(low)) * 10n ** BigInt(18 - scale);
}

/** A DECIMAL's text ('61234.5', '1.000000000000000000') as integer units of 1e-18. */
function decimalUnits(text: string): bigint {
  const [whole, fraction = ''] = text.split('.');
  return BigInt(whole!) * 10n ** 18n + BigInt(fraction.padEnd(18, '0').slice(0, 18));
}

/** round(n / d) for n >= 0, d > 0, half up. */
function roundDiv(n: bigint, d: bigint): bigint {
  return (n * 2n + d) / (2n * d);
}

/** Units of 1e-18 as a plain decimal string. */
function decimalText(units: bigint): string {
  const text = units.toString().padStart(19, '0');
  return `${text.slice(0, -18)}.${text.slice(-18)}`;
}
