import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createLedgerRounder, decimalUnits, EXACT_SCALE, roundUnits, unitsText, type ExactEntry, type RoundedEntry } from '../src/export/ledger-rounding.ts';

/**
 * The rounding of the ledger imports (src/export/ledger-rounding.ts) on hand-made entries: each
 * account's rounded lines add up to its exact total rounded once, each entry balances to the
 * unit, no line is 0.00, an entry of nothing but 0.00 is left out and counted.
 */

const ROUNDING = 'Rounding differences';
const GAINS = 'Realized gains and losses';
const USDT = 'Digital assets:USDT';

/** An exact amount from its text (debit − credit). */
const exact = (text: string) => decimalUnits(text, EXACT_SCALE);

/** An entry of lines [account, debit − credit], in USD. */
function entry(id: string, lines: [string, string][], date = '2026-10-05'): ExactEntry {
  return { id, date, currency: 'USD', lines: lines.map(([account, amount]) => ({ account, amount: exact(amount), memo: id })) };
}

/** The rounded lines as [account, amount text] (the rounding line marked). */
const shown = (rounded: RoundedEntry | null, minorUnit = 2) => rounded?.lines.map((line) => [line.account, unitsText(line.amount, minorUnit), ...(line.isRounding ? ['rounding'] : [])]) ?? null;

describe('exact decimals', () => {
  it('reads DuckDB\'s text of a DECIMAL and writes units back without a float', () => {
    expect(decimalUnits('-8243.420815692242', 12)).toBe(-8243420815692242n);
    expect(decimalUnits('0.041577401700', 12)).toBe(41577401700n);
    expect(decimalUnits('12', 2)).toBe(1200n);
    expect(decimalUnits('1.5000', 2)).toBe(150n);
    expect(() => decimalUnits('1.005', 2)).toThrow('more than 2 decimals');
    expect(() => decimalUnits('1e-7', 12)).toThrow('not a plain decimal');
    expect(unitsText(-5n, 2)).toBe('-0.05');
    expect(unitsText(123456n, 2)).toBe('1234.56');
    expect(unitsText(7n, 0)).toBe('7');
    expect(unitsText(0n, 2)).toBe('0.00');
  });

  it('rounds half away from zero, as Excel\'s ROUND does', () => {
    expect(roundUnits(5n, 1, 0)).toBe(1n); // 0.5 → 1
    expect(roundUnits(-5n, 1, 0)).toBe(-1n); // -0.5 → -1
    expect(roundUnits(4n, 1, 0)).toBe(0n);
    expect(roundUnits(-4n, 1, 0)).toBe(0n);
    expect(roundUnits(exact('3016.218'), EXACT_SCALE, 2)).toBe(301622n);
    expect(roundUnits(exact('-149.167314394871'), EXACT_SCALE, 2)).toBe(-14917n);
    expect(roundUnits(1234n, 2, 2)).toBe(1234n);
  });
});

describe('cumulative rounding per account (the issue\'s example)', () => {
  // Eight spot sales credit the realized gains (and debit USDT): seven of 377.0235 and one of
  // 377.0535. Exact total 7 × 377.0235 + 377.0535 = 2639.1645 + 377.0535 = 3016.218, rounded once
  // 3016.22. Each line rounded on its own: 7 × 377.02 + 377.05 = 3016.19, three cents off.
  const sales = [...Array.from({ length: 7 }, () => '377.0235'), '377.0535'].map((amount, index) =>
    entry(`spot-pnl/main/fifo/WXTUSDT_SPBL/2026-10-${String(index + 1).padStart(2, '0')}`, [
      [USDT, amount],
      [GAINS, `-${amount}`],
    ], `2026-10-${String(index + 1).padStart(2, '0')}`),
  );

  it('rounding each line alone drifts: 3016.19 where the workbook says 3016.218 (3016.22 rounded once)', () => {
    const perLine = sales.reduce((sum, sale) => sum + roundUnits(sale.lines[0]!.amount, EXACT_SCALE, 2), 0n);
    expect(unitsText(perLine, 2)).toBe('3016.19');
  });

  it('the cumulative lines add up to the exact total rounded once, and each entry balances', () => {
    const rounder = createLedgerRounder({ minorUnit: 2, roundingAccount: ROUNDING });
    const written = sales.map((sale) => rounder.round(sale)!);
    // Running totals 377.0235, 754.047, 1131.0705, 1508.094, 1885.1175, 2262.141, 2639.1645, 3016.218
    // round to 377.02, 754.05, 1131.07, 1508.09, 1885.12, 2262.14, 2639.16, 3016.22; each line is
    // the difference of two of them.
    expect(written.map((sale) => unitsText(sale.lines[0]!.amount, 2))).toEqual(['377.02', '377.03', '377.02', '377.02', '377.03', '377.02', '377.02', '377.06']);
    expect(written.map((sale) => unitsText(sale.lines[1]!.amount, 2))).toEqual(['-377.02', '-377.03', '-377.02', '-377.02', '-377.03', '-377.02', '-377.02', '-377.06']);
    for (const sale of written) expect(sale.lines.reduce((sum, line) => sum + line.amount, 0n)).toBe(0n);
    const totals = new Map(rounder.totals().map((total) => [total.account, total]));
    expect(unitsText(totals.get(GAINS)!.rounded, 2)).toBe('-3016.22');
    expect(unitsText(totals.get(USDT)!.rounded, 2)).toBe('3016.22');
    expect(totals.get(GAINS)!.exact).toBe(exact('-3016.218'));
    // The two sides rounded alike: nothing to post to the rounding account.
    expect(rounder.roundingLines).toBe(0);
    expect(totals.has(ROUNDING)).toBe(false);
  });

  it('where the accounts of an entry round apart, the entry\'s difference goes to the rounding account', () => {
    const rounder = createLedgerRounder({ minorUnit: 2, roundingAccount: ROUNDING });
    // A fee of 0.004 first: Trading fees +0.004, USDT -0.004. Both round to 0.00: the entry is
    // left out (counted), and its 0.004 stays in each account's running total.
    expect(rounder.round(entry('fees/main/futures/USDT/2026-10-01', [['Trading fees', '0.004'], [USDT, '-0.004']], '2026-10-01'))).toBeNull();
    expect(rounder.dropped).toBe(1);
    // A gain of 1.003: USDT runs -0.004 + 1.003 = 0.999 → 1.00, line 1.00; gains -1.003 → -1.00,
    // line -1.00. Balanced: no rounding line.
    expect(shown(rounder.round(entry('gain-1', [[USDT, '1.003'], [GAINS, '-1.003']])))).toEqual([[USDT, '1.00'], [GAINS, '-1.00']]);
    // A gain of 0.002: USDT runs 1.001 → 1.00, line 0.00 (left out); gains -1.005 → -1.01 (half
    // away from zero), line -0.01. The entry is 0.01 short of balancing: the rounding account takes +0.01.
    expect(shown(rounder.round(entry('gain-2', [[USDT, '0.002'], [GAINS, '-0.002']])))).toEqual([[GAINS, '-0.01'], [ROUNDING, '0.01', 'rounding']]);
    // A fee of 0.001 more: fees run 0.005 → 0.01, line 0.01; USDT 1.000 → 1.00, line 0.00.
    expect(shown(rounder.round(entry('fee-2', [['Trading fees', '0.001'], [USDT, '-0.001']])))).toEqual([['Trading fees', '0.01'], [ROUNDING, '-0.01', 'rounding']]);
    const totals = new Map(rounder.totals().map((total) => [total.account, unitsText(total.rounded, 2)]));
    // Exact totals: fees 0.005 → 0.01; USDT 1.000 → 1.00; gains -1.005 → -1.01; rounding what is left: 0.00.
    expect(Object.fromEntries(totals)).toEqual({ 'Trading fees': '0.01', [USDT]: '1.00', [GAINS]: '-1.01', [ROUNDING]: '0.00' });
    expect(rounder.roundingLines).toBe(2);
  });

  it('a three-line entry whose halves all round up gets a rounding line of its own', () => {
    const rounder = createLedgerRounder({ minorUnit: 2, roundingAccount: ROUNDING });
    // 0.005 + 0.005 − 0.010: 0.01 + 0.01 − 0.01 = 0.01 too much, credited to the rounding account.
    expect(shown(rounder.round(entry('adjustment/2026-11-01/x', [['A', '0.005'], ['B', '0.005'], ['C', '-0.010']])))).toEqual([['A', '0.01'], ['B', '0.01'], ['C', '-0.01'], [ROUNDING, '-0.01', 'rounding']]);
  });

  it('rounds to the configured minor unit: JPY has none', () => {
    const rounder = createLedgerRounder({ minorUnit: 0, roundingAccount: ROUNDING });
    // 100.5 → 101 (half away from zero); then running 100.9 → 101: nothing to write, the entry is
    // left out; then 102.3 → 102: a line of 1 (0.4 + 1.4 rounded together).
    expect(shown(rounder.round(entry('jpy', [[USDT, '100.5'], [GAINS, '-100.5']])), 0)).toEqual([[USDT, '101'], [GAINS, '-101']]);
    expect(rounder.round(entry('jpy-2', [[USDT, '0.4'], [GAINS, '-0.4']]))).toBeNull();
    expect(shown(rounder.round(entry('jpy-3', [[USDT, '1.4'], [GAINS, '-1.4']])), 0)).toEqual([[USDT, '1'], [GAINS, '-1']]);
    expect(rounder.dropped).toBe(1);
  });

  it('refuses an entry that does not balance, and the rounding account among the lines', () => {
    const rounder = createLedgerRounder({ minorUnit: 2, roundingAccount: ROUNDING });
    expect(() => rounder.round(entry('broken', [[USDT, '1.00'], [GAINS, '-0.99']]))).toThrow('journal entry broken does not balance (debits − credits = 0.010000000000000000 USD)');
    expect(() => rounder.round(entry('mine', [[ROUNDING, '1.00'], [GAINS, '-1.00']]))).toThrow('posts to "Rounding differences", the rounding account');
  });
});

describe('any entries (fast-check)', () => {
  const accounts = ['A', 'B', 'C', 'D', 'E'];
  // An amount of up to ±1,000,000 with 12 decimals, as the mart holds them; small ones often.
  const amount = fc.oneof(fc.bigInt({ min: -(10n ** 18n), max: 10n ** 18n }), fc.bigInt({ min: -(10n ** 11n), max: 10n ** 11n })).map((units) => units * 10n ** 6n);
  const entries = fc
    .array(fc.record({ lines: fc.array(fc.tuple(fc.constantFrom(...accounts), amount), { minLength: 1, maxLength: 4 }), last: fc.constantFrom(...accounts) }), { maxLength: 60 })
    .map((drawn) =>
      drawn.map(({ lines, last }, index): ExactEntry => {
        // The last line balances the others, as every entry of the mart does.
        const balance = lines.reduce((sum, [, units]) => sum + units, 0n);
        return { id: `e${index}`, date: '2026-10-01', currency: 'USD', lines: [...lines, [last, -balance] as const].map(([account, units]) => ({ account, amount: units, memo: null })) };
      }),
    );

  it('every account\'s rounded lines add up to its exact total rounded once; every entry balances, has two lines at least and none of 0', () => {
    fc.assert(
      fc.property(entries, fc.constantFrom(0, 2, 3), (list, minorUnit) => {
        const rounder = createLedgerRounder({ minorUnit, roundingAccount: ROUNDING });
        const sums = new Map<string, bigint>();
        const exactSums = new Map<string, bigint>();
        let written = 0;
        for (const item of list) {
          for (const line of item.lines) exactSums.set(line.account, (exactSums.get(line.account) ?? 0n) + line.amount);
          const rounded = rounder.round(item);
          if (rounded === null) continue;
          written++;
          expect(rounded.lines.reduce((sum, line) => sum + line.amount, 0n)).toBe(0n);
          expect(rounded.lines.length).toBeGreaterThanOrEqual(2);
          for (const line of rounded.lines) {
            expect(line.amount).not.toBe(0n);
            sums.set(line.account, (sums.get(line.account) ?? 0n) + line.amount);
          }
        }
        expect(written + rounder.dropped).toBe(list.length);
        for (const [account, total] of exactSums) expect(sums.get(account) ?? 0n).toBe(roundUnits(total, EXACT_SCALE, minorUnit));
        // What the accounts' totals rounded once leave over (their exact totals add up to 0) is the rounding account's.
        const others = [...sums].filter(([account]) => account !== ROUNDING).reduce((sum, [, total]) => sum + total, 0n);
        expect(sums.get(ROUNDING) ?? 0n).toBe(-others);
      }),
      { numRuns: 300 },
    );
  });
});
