import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SQL_DIR } from '../src/models/project.ts';
import { Database } from '../src/store/database.ts';

/**
 * The exact-arithmetic macros of sql/macros/exact_arith.sql against BigInt arithmetic, on random
 * operands over their whole documented range (fast-check). Each property checks a batch of cases
 * in one query.
 */

let db: Database;
beforeAll(async () => {
  db = await Database.open(':memory:');
  await db.run(readFileSync(path.join(SQL_DIR, 'macros', 'exact_arith.sql'), 'utf8'));
});
afterAll(() => db?.close());

const ONE = 1n << 120n;
const INT128_MAX = (1n << 127n) - 1n;

const hugeint = (value: bigint) => `cast('${value}' as hugeint)`;

/** Evaluates `expression` (over columns a, b, c) on every case, in one query; results as strings. */
async function evaluate(expression: string, cases: readonly (readonly (bigint | string)[])[]): Promise<(string | null)[]> {
  const literal = (value: bigint | string) => (typeof value === 'bigint' ? hugeint(value) : `'${value}'`);
  const width = cases[0]!.length;
  const columns = ['a', 'b', 'c'].slice(0, width);
  const rows = cases.map((values, index) => `(${index}, ${values.map(literal).join(', ')})`).join(', ');
  const result = await db.all<{ r: string | null }>(`select cast(${expression} as varchar) as r from (values ${rows}) as t(i, ${columns.join(', ')}) order by i`);
  return result.map((row) => row.r);
}

/** floor(n / d) for d > 0. */
const floorDiv = (n: bigint, d: bigint) => (n >= 0n ? n / d : -((-n + d - 1n) / d));
/** round(n / d), halves up (toward +infinity), d > 0. */
const roundHalfUp = (n: bigint, d: bigint) => floorDiv(2n * n + d, 2n * d);
/** round(n / d), halves away from zero, d > 0. */
const roundHalfAway = (n: bigint, d: bigint) => (n >= 0n ? (2n * n + d) / (2n * d) : -((-2n * n + d) / (2n * d)));
/** A decimal string of units * 10^-scale. */
const decimal = (units: bigint, scale: number) => {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  return `${negative ? '-' : ''}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
};

const int128 = fc.bigInt(-INT128_MAX, INT128_MAX);
/** Magnitudes spread over every bit length, not just the top ones. */
const anyBits = (maxBits: number) => fc.integer({ min: 1, max: maxBits }).chain((bits) => fc.bigInt(0n, (1n << BigInt(bits)) - 1n));
const runs = { numRuns: 20 };

describe('exact arithmetic macros (sql/macros/exact_arith.sql) against BigInt', () => {
  it('exact_floor_div is floor division over the whole int128 range', async () => {
    const pair = fc.tuple(fc.oneof(int128, anyBits(127), anyBits(127).map((n) => -n)), anyBits(126).map((d) => d + 1n));
    await fc.assert(
      fc.asyncProperty(fc.array(pair, { minLength: 50, maxLength: 50 }), async (cases) => {
        expect(await evaluate('exact_floor_div(a, b)', cases)).toEqual(cases.map(([n, d]) => floorDiv(n, d).toString()));
      }),
      runs,
    );
  });

  it('exact_units_to_money rounds units of 1e-18 and 1e-16 to 1e-12, halves up', async () => {
    const units = fc.oneof(fc.bigInt(-(10n ** 38n), 10n ** 38n), fc.bigInt(-(10n ** 8n), 10n ** 8n), fc.bigInt(0n, 10n ** 8n).map((n) => n * 1_000_000n + 500_000n));
    await fc.assert(
      fc.asyncProperty(fc.array(units, { minLength: 50, maxLength: 50 }), async (cases) => {
        const rows = cases.map((u) => [u] as const);
        expect(await evaluate('exact_units_to_money(a, 18)', rows)).toEqual(cases.map((u) => roundHalfUp(u, 1_000_000n).toString()));
        expect(await evaluate('exact_units_to_money(a, 16)', rows)).toEqual(cases.map((u) => roundHalfUp(u, 10_000n).toString()));
      }),
      runs,
    );
  });

  it('exact_mul_units is q * p rounded to 1e-12 for quantities up to 1e14 and prices up to 1e12 (1e12 x 1e9 = 1e21 included)', async () => {
    const quantity = fc.oneof(fc.bigInt(-(10n ** 32n), 10n ** 32n), anyBits(106), fc.constantFrom(0n, 1n, 10n ** 30n, 10n ** 32n - 1n));
    const price = fc.oneof(fc.bigInt(-(10n ** 30n), 10n ** 30n), anyBits(99), fc.constantFrom(0n, 1n, 10n ** 27n, 10n ** 30n - 1n));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(quantity, price), { minLength: 50, maxLength: 50 }), async (cases) => {
        expect(await evaluate('exact_mul_units(a, b)', cases)).toEqual(cases.map(([a, b]) => roundHalfAway(a * b, 10n ** 24n).toString()));
      }),
      runs,
    );
  });

  it('exact_fraction is round(n / d * 2^120), exact below 2^106 and within 2^17 of it above', async () => {
    const small = anyBits(105).chain((d) => fc.bigInt(0n, d + 1n).map((n) => [n, d + 1n] as const));
    const large = fc.bigInt(1n << 106n, INT128_MAX).chain((d) => fc.bigInt(0n, d).map((n) => [n, d] as const));
    const edges = anyBits(126).map((d) => [d + 1n, d + 1n] as const);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(small, large, edges), { minLength: 50, maxLength: 50 }), async (cases) => {
        const found = (await evaluate('exact_fraction(a, b)', cases)).map((value) => BigInt(value!));
        cases.forEach(([n, d], index) => {
          const exact = roundHalfUp(n * ONE, d);
          const error = found[index]! - exact;
          if (d < 1n << 106n || n === d) expect({ n, d, fraction: found[index] }).toEqual({ n, d, fraction: exact });
          else expect(error <= 1n << 17n && error >= -(1n << 17n)).toBe(true);
        });
      }),
      runs,
    );
  });

  it('exact_mul_fraction is round(m * t / 2^120) for |m| < 2^120 and 0 <= t <= 2^120', async () => {
    const m = fc.oneof(fc.bigInt(-(ONE - 1n), ONE - 1n), anyBits(119), anyBits(119).map((n) => -n));
    const t = fc.oneof(fc.bigInt(0n, ONE), fc.constantFrom(0n, ONE, ONE / 2n));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(m, t), { minLength: 50, maxLength: 50 }), async (cases) => {
        expect(await evaluate('exact_mul_fraction(a, b)', cases)).toEqual(cases.map(([value, fraction]) => roundHalfAway(value * fraction, ONE).toString()));
      }),
      runs,
    );
  });

  it('exact_share(m, n, d) is m * n / d within one unit, exactly m at n = d and 0 at n = 0', async () => {
    const share = fc.tuple(fc.oneof(fc.bigInt(-(10n ** 35n), 10n ** 35n), anyBits(100)), anyBits(105).map((d) => d + 1n)).chain(([money, d]) => fc.tuple(fc.constant(money), fc.oneof(fc.bigInt(0n, d), fc.constantFrom(0n, d)), fc.constant(d)));
    await fc.assert(
      fc.asyncProperty(fc.array(share, { minLength: 50, maxLength: 50 }), async (cases) => {
        const found = (await evaluate('exact_share(a, b, c)', cases)).map((value) => BigInt(value!));
        cases.forEach(([money, n, d], index) => {
          const value = found[index]!;
          if (n === d) expect(value).toBe(money);
          else if (n === 0n) expect(value).toBe(0n);
          else {
            const error = value * d - money * n; // (value - m*n/d) * d
            expect(error <= d && error >= -d).toBe(true);
          }
        });
      }),
      runs,
    );
  });

  it('exact_parse_units reads decimal strings exactly (fast 64-bit, digit and DECIMAL fallback paths)', async () => {
    const text = fc.tuple(fc.boolean(), fc.bigInt(0n, 10n ** 20n - 1n), fc.integer({ min: 0, max: 18 }), fc.bigInt(0n, 10n ** 18n - 1n)).map(([negative, whole, digits, fraction]) => {
      const fractionText = digits === 0 ? '' : (fraction % 10n ** BigInt(digits)).toString().padStart(digits, '0');
      const units = whole * 10n ** 18n + (digits === 0 ? 0n : (fraction % 10n ** BigInt(digits)) * 10n ** BigInt(18 - digits));
      return { text: `${negative ? '-' : ''}${whole}${digits === 0 ? '' : `.${fractionText}`}`, units: negative ? -units : units };
    });
    await fc.assert(
      fc.asyncProperty(fc.array(text, { minLength: 50, maxLength: 50 }), async (cases) => {
        expect(await evaluate('exact_parse_units(a, 18)', cases.map(({ text: value }) => [value]))).toEqual(cases.map(({ units }) => units.toString()));
        expect(await evaluate('exact_decimal_18(exact_parse_units(a, 18))', cases.map(({ text: value }) => [value]))).toEqual(cases.map(({ units }) => decimal(units, 18)));
      }),
      runs,
    );
    // More digits than the scale, or an exponent: through DECIMAL, rounded.
    expect(await evaluate('exact_parse_units(a, 12)', [['0.1234567890125'], ['1e-8'], ['2.5E3'], ['12']])).toEqual(['123456789013', '10000', '2500000000000000', '12000000000000']);
  });

  it('the decimal layer used by the fees model: exact_qty_units, exact_money_units, exact_round_div, exact_ratio (1e-36), exact_mul', async () => {
    const quantity = fc.bigInt(-(10n ** 38n) + 1n, 10n ** 38n - 1n);
    const ratio = anyBits(105).chain((d) => fc.bigInt(0n, d + 1n).map((n) => [n, d + 1n] as const));
    const product = fc.tuple(fc.bigInt(0n, 10n ** 30n), fc.bigInt(0n, 10n ** 27n));
    await fc.assert(
      fc.asyncProperty(fc.array(quantity, { minLength: 30, maxLength: 30 }), fc.array(ratio, { minLength: 30, maxLength: 30 }), fc.array(product, { minLength: 30, maxLength: 30 }), async (quantities, ratios, products) => {
        expect(await evaluate('exact_qty_units(cast(a as decimal(38, 18)))', quantities.map((u) => [decimal(u, 18)]))).toEqual(quantities.map(String));
        const money = quantities.map((u) => u / 10n ** 12n);
        expect(await evaluate('exact_money_units(cast(a as decimal(38, 12)))', money.map((u) => [decimal(u, 12)]))).toEqual(money.map(String));
        expect(await evaluate('exact_round_div(a, b)', quantities.map((u) => [u, 1_000_000n]))).toEqual(quantities.map((u) => roundHalfAway(u, 1_000_000n).toString()));
        // Exact for d < 1e32; above, n and d are cut to d's 32 leading digits first.
        const expectedRatios = ratios.map(([n, d]) => {
          const cut = d < 10n ** 32n ? 1n : 10n ** BigInt(d.toString().length - 32);
          return roundHalfUp((n / cut) * 10n ** 36n, d / cut);
        });
        expect(await evaluate('exact_ratio(a, b)', ratios)).toEqual(expectedRatios.map(String));
        expect(await evaluate('exact_mul(cast(a as decimal(38, 18)), cast(b as decimal(38, 18)))', products.map(([q, p]) => [decimal(q, 18), decimal(p, 18)]))).toEqual(
          products.map(([q, p]) => decimal(roundHalfAway(q * p, 10n ** 24n), 12)),
        );
      }),
      { numRuns: 10 },
    );
  });

  it('exact_mul_money is money (DECIMAL(38,12), past 1e20 too) times a price, rounded to 1e-12, wherever the product fits', async () => {
    // Units of 1e-12 (money) and 1e-18 (price): prices up to 1 with any money, up to 1e9 with money up to 1e16.
    const large = fc.tuple(fc.bigInt(-(10n ** 38n) + 1n, 10n ** 38n - 1n), fc.bigInt(0n, 10n ** 18n));
    const priced = fc.tuple(fc.bigInt(-(10n ** 28n), 10n ** 28n), fc.bigInt(0n, 10n ** 27n));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(large, priced), { minLength: 40, maxLength: 40 }), async (cases) => {
        expect(await evaluate('exact_mul_money(cast(a as decimal(38, 12)), cast(b as decimal(38, 18)))', cases.map(([m, p]) => [decimal(m, 12), decimal(p, 18)]))).toEqual(
          cases.map(([m, p]) => decimal(roundHalfAway(m * p, 10n ** 18n), 12)),
        );
      }),
      runs,
    );
    // 199999999000000000000 USDT (a spot PnL past DECIMAL(38,18)) at 0.998; a half away from zero.
    expect(
      await evaluate('exact_mul_money(cast(a as decimal(38, 12)), cast(b as decimal(38, 18)))', [
        ['199999999000000000000', '0.998'],
        ['-100000000000000000000.000000000001', '0.5'],
      ]),
    ).toEqual(['199599999002000000000.000000000000', '-50000000000000000000.000000000001']);
  });

  it('leaves no DOUBLE in a result and overflows nowhere at the extremes', async () => {
    const types = await db.all<{ t1: string; t2: string; t3: string; t4: string }>(`
      select typeof(exact_mul_units(${hugeint(10n ** 30n)}, ${hugeint(10n ** 27n)})) as t1,
             typeof(exact_decimal_12(exact_share(${hugeint(10n ** 35n)}, 1, 3))) as t2,
             typeof(exact_fraction(1, 3)) as t3,
             typeof(exact_mul(cast('1000000000000' as decimal(38, 18)), cast('1000000000' as decimal(38, 18)))) as t4`);
    expect(types).toEqual([{ t1: 'HUGEINT', t2: 'DECIMAL(38,12)', t3: 'HUGEINT', t4: 'DECIMAL(38,12)' }]);
    expect(await evaluate('exact_decimal_12(exact_mul_units(a, b))', [[10n ** 30n, 10n ** 27n]])).toEqual(['1000000000000000000000.000000000000']);
  });
});
