import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitDays, splitWindows } from '../src/extract/windows.ts';

const utc = (text: string) => Date.parse(text);

describe('splitWindows', () => {
  it('cuts a year into calendar quarters of at most 3 months, half-open', () => {
    const windows = splitWindows(utc('2025-11-15T00:00:00Z'), utc('2026-11-01T00:00:00Z'), 3);
    expect(windows.map((w) => [new Date(w.startMs).toISOString(), new Date(w.endMs).toISOString()])).toEqual([
      ['2025-11-15T00:00:00.000Z', '2026-02-15T00:00:00.000Z'],
      ['2026-02-15T00:00:00.000Z', '2026-05-15T00:00:00.000Z'],
      ['2026-05-15T00:00:00.000Z', '2026-08-15T00:00:00.000Z'],
      ['2026-08-15T00:00:00.000Z', '2026-11-01T00:00:00.000Z'],
    ]);
  });

  it('clamps month ends (Nov 30 + 3 months is Feb 28)', () => {
    const [first] = splitWindows(utc('2025-11-30T00:00:00Z'), utc('2026-12-01T00:00:00Z'), 3);
    expect(new Date(first!.endMs).toISOString()).toBe('2026-02-28T00:00:00.000Z');
  });

  it('covers any period exactly, without overlap, each window within 3 calendar months', () => {
    const year2020 = utc('2020-01-01T00:00:00Z');
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4 * 365 * 86_400_000 }), fc.integer({ min: 0, max: 3 * 365 * 86_400_000 }), (offset, length) => {
        const start = year2020 + offset;
        const windows = splitWindows(start, start + length, 3);
        expect(windows.length === 0).toBe(length === 0);
        let cursor = start;
        for (const window of windows) {
          expect(window.startMs).toBe(cursor);
          expect(window.endMs).toBeGreaterThan(window.startMs);
          expect(new Date(window.endMs) <= new Date(new Date(window.startMs).setUTCMonth(new Date(window.startMs).getUTCMonth() + 3))).toBe(true);
          cursor = window.endMs;
        }
        expect(cursor).toBe(windows.length === 0 ? start : start + length);
      }),
    );
  });
});

describe('splitDays', () => {
  it('cuts at UTC midnights', () => {
    const days = splitDays(utc('2026-03-31T18:00:00Z'), utc('2026-04-02T06:00:00Z'));
    expect(days.map((d) => new Date(d.startMs).toISOString())).toEqual(['2026-03-31T18:00:00.000Z', '2026-04-01T00:00:00.000Z', '2026-04-02T00:00:00.000Z']);
    expect(new Date(days.at(-1)!.endMs).toISOString()).toBe('2026-04-02T06:00:00.000Z');
  });
});
