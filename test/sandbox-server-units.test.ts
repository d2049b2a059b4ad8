import { parse } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { DecimalSum, divideToInteger, parseDecimal } from '../src/sandbox/decimal.ts';
import { createPrng, truncateBody } from '../src/sandbox/faults.ts';
import { lowerBound, pageNewestFirst, selectSpan, upperBound } from '../src/sandbox/paging.ts';
import { SlidingWindows } from '../src/sandbox/rate-window.ts';
import { addUtcMonths } from '../src/sandbox/routes/time-range.ts';
import { stringifyWire } from '../src/sandbox/wire-json.ts';

// The sandbox server's building blocks, where a bug would be hard to see through HTTP.

describe('decimal', () => {
  it('sums exactly, keeping the most precise scale', () => {
    const sum = new DecimalSum();
    for (const text of ['0.1', '0.2', '-0.05', '1000.000000000000000001', '3']) sum.add(text);
    // 0.1 + 0.2 - 0.05 + 1000.000000000000000001 + 3 = 1003.250000000000000001
    expect(sum.toString()).toBe('1003.250000000000000001');
    const negative = new DecimalSum();
    negative.add('-0.5');
    negative.add('0.25');
    expect(negative.toString()).toBe('-0.25');
    expect(new DecimalSum().toString()).toBe('0');
    expect(() => new DecimalSum().add('1e5')).toThrow(RangeError);
  });

  it('parses plain decimals only and divides to an integer', () => {
    expect(parseDecimal('12.50')).toEqual({ units: 1250n, scale: 2 });
    expect(parseDecimal('abc')).toBeNull();
    expect(parseDecimal('')).toBeNull();
    expect(divideToInteger('0.01', '0.0001')).toBe(100n);
    expect(divideToInteger('1', '0')).toBeNull();
  });
});

describe('calendar months', () => {
  it('adds months in UTC, clamping to the month end', () => {
    expect(new Date(addUtcMonths(Date.UTC(2025, 0, 31, 12, 30), 1)).toISOString()).toBe('2025-02-28T12:30:00.000Z');
    expect(new Date(addUtcMonths(Date.UTC(2024, 10, 30), 3)).toISOString()).toBe('2025-02-28T00:00:00.000Z');
    expect(new Date(addUtcMonths(Date.UTC(2025, 2, 15), 3)).toISOString()).toBe('2025-06-15T00:00:00.000Z');
  });
});

describe('paging', () => {
  const items = [1, 2, 2, 2, 5, 9].map((t, index) => ({ t, index }));

  it('binary-searches bounds', () => {
    expect([lowerBound(items, 2), upperBound(items, 2), lowerBound(items, 10), upperBound(items, 0)]).toEqual([1, 4, 6, 0]);
    expect(selectSpan(items, { start: 2, end: 5, bounds: 'inclusive', visibleUntil: Infinity })).toEqual({ lo: 1, hi: 5 });
    expect(selectSpan(items, { start: 2, end: 5, bounds: 'exclusive', visibleUntil: Infinity })).toEqual({ lo: 4, hi: 4 });
    expect(selectSpan(items, { start: 2, end: 5, bounds: 'half-open', visibleUntil: Infinity })).toEqual({ lo: 1, hi: 4 });
    expect(selectSpan(items, { bounds: 'inclusive', visibleUntil: 4, notBefore: 2 })).toEqual({ lo: 1, hi: 4 });
    expect(selectSpan(items, { start: 9, end: 1, bounds: 'inclusive', visibleUntil: Infinity })).toEqual({ lo: 5, hi: 5 });
  });

  it('pages newest first, ties in reverse array order', () => {
    const first = pageNewestFirst(items, { lo: 0, hi: 6 }, 0, 4);
    expect(first.items.map((item) => item.index)).toEqual([5, 4, 3, 2]);
    expect(first.remaining).toBe(2);
    const last = pageNewestFirst(items, { lo: 0, hi: 6 }, 4, 4);
    expect(last.items.map((item) => item.index)).toEqual([1, 0]);
    expect(last.remaining).toBe(0);
    expect(pageNewestFirst(items, { lo: 0, hi: 6 }, 10, 4).items).toEqual([]);
  });
});

describe('sliding windows', () => {
  it('counts exactly what was charged in the last window', () => {
    const windows = new SlidingWindows(1000);
    windows.charge('k', 5, 0);
    windows.charge('k', 3, 400);
    expect(windows.used('k', 999)).toBe(8);
    expect(windows.used('k', 1000)).toBe(3);
    expect(windows.fits('k', 7, 10, 1000)).toBe(true);
    expect(windows.fits('k', 8, 10, 1000)).toBe(false);
    expect(windows.used('k', 1400)).toBe(0);
    expect(windows.used('other', 0)).toBe(0);
  });
});

describe('wire JSON and faults', () => {
  it('writes bigint as bare integers and skips undefined members', () => {
    expect(stringifyWire({ a: 2n ** 64n, b: undefined, c: [1, 'x', null, true], d: { e: -1.5 } })).toBe('{"a":18446744073709551616,"c":[1,"x",null,true],"d":{"e":-1.5}}');
    expect(() => stringifyWire({ x: Number.NaN })).toThrow(TypeError);
  });

  it('truncated bodies never parse', () => {
    const random = createPrng(1);
    const body = stringifyWire({ code: '00000', data: { list: [{ id: 1n }], n: 12345 } });
    for (let index = 0; index < 200; index += 1) {
      const cut = truncateBody(body, random());
      expect(cut.length).toBeGreaterThan(0);
      expect(cut.length).toBeLessThan(body.length);
      expect(() => parse(cut)).toThrow();
    }
  });
});
