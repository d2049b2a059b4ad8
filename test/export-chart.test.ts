import { Resvg } from '@resvg/resvg-js';
import { describe, expect, it } from 'vitest';
import { DataError } from '../src/errors.ts';
import { renderBarChartPng, renderBarChartSvg, type BarChartSpec, type ChartBar } from '../src/export/chart.ts';

/**
 * The Summary sheet's bar chart: geometry read back from the SVG's attributes, and the PNG's own
 * header and pixels, rendered by resvg with the bundled font only.
 */

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

interface Rect {
  label: string;
  value: string;
  y: number;
  height: number;
}

/** The `class="bar"` rects, in drawing order, with their geometry and the untouched value strings. */
function readBars(svg: string): Rect[] {
  return [...svg.matchAll(/<rect class="bar" ([^>]*)\/>/g)].map((match) => {
    const attributes = Object.fromEntries([...(match[1] ?? '').matchAll(/([\w-]+)="([^"]*)"/g)].map((pair) => [pair[1], pair[2]]));
    return { label: attributes['data-label'] ?? '', value: attributes['data-value'] ?? '', y: Number(attributes.y), height: Number(attributes.height) };
  });
}

function readZeroY(svg: string): number {
  const match = /<line class="zero-line"[^>]* y1="([\d.]+)"/.exec(svg);
  if (match === null) throw new Error('no zero line');
  return Number(match[1]);
}

/** The y axis labels, lowest first. */
function readTicks(svg: string): string[] {
  const group = /<g class="ticks"[^>]*>([\s\S]*?)<\/g>/.exec(svg)?.[1] ?? '';
  return [...group.matchAll(/>([^<]*)<\/text>/g)].map((match) => match[1] ?? '');
}

/** Width and height from the PNG's IHDR chunk, which always comes first, right after the signature. */
function readPngSize(png: Buffer): { width: number; height: number } {
  expect(png.subarray(12, 16).toString('latin1')).toBe('IHDR');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

function months(values: readonly string[]): ChartBar[] {
  return values.map((value, index) => ({ label: `2026-${String(index + 1).padStart(2, '0')}`, value }));
}

const MIXED: BarChartSpec = { title: 'Realized PnL', unit: 'USDT', bars: months(['100', '200', '-100', '0', '-1234.5678']) };

describe('renderBarChartPng', () => {
  it('returns a PNG of the requested size, 900×420 by default', () => {
    const sized = renderBarChartPng({ ...MIXED, width: 640, height: 300 });
    expect(sized.subarray(0, 8)).toEqual(PNG_SIGNATURE);
    expect(readPngSize(sized)).toEqual({ width: 640, height: 300 });
    expect(readPngSize(renderBarChartPng(MIXED))).toEqual({ width: 900, height: 420 });
  });

  it('draws text with the bundled font (system fonts are off, so without it no text would appear)', () => {
    const titled = renderBarChartPng({ title: 'Realized PnL by month, all spot symbols', unit: 'USDT', bars: [] });
    const untitled = renderBarChartPng({ title: '', unit: 'USDT', bars: [] });
    expect(titled.equals(untitled)).toBe(false);
  });
});

describe('renderBarChartSvg', () => {
  it('draws one bar per month, heights proportional to the values, losses below the zero line', () => {
    const svg = renderBarChartSvg(MIXED);
    const bars = readBars(svg);
    const zeroY = readZeroY(svg);
    expect(bars.map((bar) => bar.label)).toEqual(['2026-01', '2026-02', '2026-03', '2026-04', '2026-05']);
    const [hundred, twoHundred, minusHundred, zero, loss] = bars as [Rect, Rect, Rect, Rect, Rect];
    expect(Math.abs(twoHundred.height - 2 * hundred.height)).toBeLessThanOrEqual(1);
    expect(Math.abs(minusHundred.height - hundred.height)).toBeLessThanOrEqual(1);
    expect(zero.height).toBe(0);
    // Gains end at the zero line, losses start there.
    expect(hundred.y + hundred.height).toBeCloseTo(zeroY, 1);
    for (const bar of [minusHundred, loss]) {
      expect(bar.y).toBeCloseTo(zeroY, 1);
      expect(bar.y + bar.height).toBeGreaterThan(zeroY);
    }
  });

  it('keeps the exact value strings and prints compact labels', () => {
    const svg = renderBarChartSvg(MIXED);
    expect(readBars(svg).map((bar) => bar.value)).toEqual(['100', '200', '-100', '0', '-1234.5678']);
    expect(svg).toContain('>-1.23k</text>');
    expect(svg).toContain('>200</text>');
  });

  it('labels 4 to 6 gridlines at 1, 2 or 5 × 10^k, compactly', () => {
    // -1234.5678 .. 200: steps of 500 from -1.5k to 500.
    expect(readTicks(renderBarChartSvg(MIXED))).toEqual(['-1.5k', '-1k', '-500', '0', '500']);
    expect(readTicks(renderBarChartSvg({ ...MIXED, bars: months(['12500', '1234567.89']) }))).toEqual(['0', '500k', '1M', '1.5M']);
    expect(readTicks(renderBarChartSvg({ ...MIXED, bars: months(['-0.00042', '-0.0012']) }))).toEqual(['-0.0015', '-0.001', '-0.0005', '0']);
  });

  it('handles all zeros, one bar, all losses and three years of months', () => {
    const zeros = renderBarChartSvg({ ...MIXED, bars: months(['0', '0.000']) });
    expect(readBars(zeros).map((bar) => bar.height)).toEqual([0, 0]);
    expect(readTicks(zeros)).toEqual(['0', '0.2', '0.4', '0.6', '0.8', '1']);

    expect(readBars(renderBarChartSvg({ ...MIXED, bars: months(['42']) }))).toHaveLength(1);

    const losses = renderBarChartSvg({ ...MIXED, bars: months(['-5', '-17.25', '-3']) });
    expect(readBars(losses).every((bar) => bar.y === readZeroY(losses) && bar.height > 0)).toBe(true);

    const long = Array.from({ length: 36 }, (_, index) => ({ label: `${2024 + Math.floor(index / 12)}-${String((index % 12) + 1).padStart(2, '0')}`, value: String((index % 7) * 1000 - 3000) }));
    const svg = renderBarChartSvg({ ...MIXED, bars: long });
    expect(readBars(svg)).toHaveLength(36);
    expect(svg).not.toMatch(/NaN|Infinity/);
    expect(readPngSize(renderBarChartPng({ ...MIXED, bars: long }))).toEqual({ width: 900, height: 420 });
  });

  it('escapes XML in the title, labels and unit, so the SVG still parses', () => {
    const svg = renderBarChartSvg({ title: 'PnL <spot> & "futures"', unit: 'A&B', bars: [{ label: 'X<Y & Z', value: '1' }] });
    expect(svg).toContain('PnL &lt;spot&gt; &amp; &quot;futures&quot;');
    expect(svg).toContain('>A&amp;B</text>');
    expect(svg).toContain('X&lt;Y &amp; Z');
    expect(svg).not.toContain('<spot>');
    expect(svg).not.toContain('X<Y');
    // resvg's XML parser is strict: it throws on a raw '<' or '&'.
    expect(() => new Resvg(svg)).not.toThrow();
  });

  it('says there is no data when there are no bars', () => {
    const svg = renderBarChartSvg({ title: 'Fees', unit: 'USDT', bars: [] });
    expect(svg).toContain('No data for this period');
    expect(readBars(svg)).toEqual([]);
  });

  it('refuses a value that is not a decimal string', () => {
    expect(() => renderBarChartSvg({ ...MIXED, bars: [{ label: '2026-01', value: '1e3' }] })).toThrow(DataError);
  });
});
