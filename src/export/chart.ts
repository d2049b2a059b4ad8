import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Resvg } from '@resvg/resvg-js';
import { DataError } from '../errors.ts';

/**
 * The Summary sheet's monthly bar chart: an SVG written by hand (it is small, and a charting
 * library would pull in a DOM) and rendered to PNG by resvg with the bundled DejaVu Sans, so the
 * picture is the same on every machine whatever fonts it has installed.
 */

/** One bar of a chart. */
export interface ChartBar {
  /** x label, e.g. '2026-10' */
  label: string;
  /** exact decimal string from DuckDB, may be negative, e.g. '-1234.5678' */
  value: string;
}

/** What to draw. */
export interface BarChartSpec {
  title: string;
  /** unit shown on the axis, e.g. 'USDT' */
  unit: string;
  bars: readonly ChartBar[];
  /** @default 900 */
  width?: number;
  /** @default 420 */
  height?: number;
}

const FONT_FAMILY = 'DejaVu Sans';
const POSITIVE_FILL = '#2f6fb0';
const NEGATIVE_FILL = '#c0504d';
const TEXT_FILL = '#222222';
const MUTED_FILL = '#595959';
const GRID_STROKE = '#e3e3e3';
const ZERO_STROKE = '#595959';

const OUTER_PAD = 16;
const TITLE_SIZE = 16;
const MIN_TITLE_SIZE = 12;
const LABEL_SIZE = 11;
const MIN_VALUE_SIZE = 8;
const CAPTION_SIZE = 12;
/** A bar takes this share of its slot; the rest is the gap between bars. */
const BAR_SHARE = 0.64;
const MAX_BAR_WIDTH = 64;
const MAX_LABEL_CHARS = 18;
const MIN_WIDTH = 240;
const MIN_HEIGHT = 160;

const DECIMAL = /^-?\d+(\.\d+)?$/;

/** Renders the chart as SVG text (width × height pixels, white background). */
export function renderBarChartSvg(spec: BarChartSpec): string {
  const width = spec.width ?? 900;
  const height = spec.height ?? 420;
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < MIN_WIDTH || height < MIN_HEIGHT) {
    // A caller's bug, not bad data: the Excel writer picks the size.
    throw new RangeError(`chart size must be whole pixels of at least ${MIN_WIDTH}×${MIN_HEIGHT}, got ${width}×${height}`);
  }
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="${FONT_FAMILY}">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    drawTitle(spec.title, width),
  ];
  if (spec.bars.length === 0) {
    parts.push(
      `<text class="no-data" x="${fmt(width / 2)}" y="${fmt(height / 2)}" font-size="14" fill="${MUTED_FILL}" text-anchor="middle">No data for this period</text>`,
    );
  } else {
    parts.push(drawPlot(spec, width, height));
  }
  parts.push('</svg>');
  return parts.join('\n');
}

/** Renders the chart as PNG bytes (width × height pixels), for exceljs's `addImage`. */
export function renderBarChartPng(spec: BarChartSpec): Buffer {
  const resvg = new Resvg(renderBarChartSvg(spec), {
    font: { fontFiles: resolveFontFiles(), loadSystemFonts: false, defaultFontFamily: FONT_FAMILY },
    background: '#ffffff',
  });
  return resvg.render().asPng();
}

let fontFiles: string[] | undefined;

/** The DejaVu Sans files from the `dejavu-fonts-ttf` package, found once. */
function resolveFontFiles(): string[] {
  if (fontFiles !== undefined) return fontFiles;
  // The package has no "exports" map, so its package.json resolves like any file of it.
  const root = path.dirname(createRequire(import.meta.url).resolve('dejavu-fonts-ttf/package.json'));
  const files = ['DejaVuSans.ttf', 'DejaVuSans-Bold.ttf'].map((name) => path.join(root, 'ttf', name));
  const missing = files.find((file) => !existsSync(file));
  // resvg skips a missing font file silently and then draws no text at all, so check here.
  if (missing !== undefined) throw new Error(`chart font ${missing} is missing; reinstall dependencies (npm ci)`);
  fontFiles = files;
  return files;
}

function drawTitle(title: string, width: number): string {
  const room = width - 2 * OUTER_PAD;
  let size = TITLE_SIZE;
  while (size > MIN_TITLE_SIZE && estimateTextWidth(title, size, true) > room) size -= 1;
  let text = title;
  while (text.length > 1 && estimateTextWidth(text, size, true) > room) text = `${text.slice(0, -2)}…`;
  return `<text class="title" x="${fmt(width / 2)}" y="${OUTER_PAD + TITLE_SIZE}" font-size="${size}" font-weight="bold" fill="${TEXT_FILL}" text-anchor="middle">${escapeXml(text)}</text>`;
}

/** Where a row of labels goes and how big it is. */
interface LabelLayout {
  size: number;
  rotated: boolean;
  /** Pixels the row needs across its reading direction's perpendicular (height on the page). */
  room: number;
  /** Draw every `every`-th label, so rotated labels never touch; 0 draws none. */
  every: number;
  /** How far a rotated label reaches left of its anchor. */
  reach: number;
}

function drawPlot(spec: BarChartSpec, width: number, height: number): string {
  const values = spec.bars.map((bar) => {
    if (!DECIMAL.test(bar.value)) throw new DataError(`chart "${spec.title}": bar "${bar.label}" has value "${bar.value}", not a decimal`);
    // A JS number only because this is pixel geometry for a picture; the exact string is kept and never flows back into data.
    return Number(bar.value);
  });
  const ticks = computeTicks(Math.min(0, ...values), Math.max(0, ...values));
  const tickLabels = ticks.map(formatCompact);
  const valueLabels = values.map(formatCompact);
  const monthLabels = spec.bars.map((bar) => truncate(bar.label, MAX_LABEL_CHARS));
  const hasNegative = values.some((value) => value < 0);
  const hasNonNegative = values.some((value) => value >= 0);

  const tickLabelWidth = Math.max(...tickLabels.map((label) => estimateTextWidth(label, LABEL_SIZE)));
  const plotRight = width - OUTER_PAD;
  let plotLeft = OUTER_PAD + CAPTION_SIZE + 10 + tickLabelWidth + 8;
  let slot = (plotRight - plotLeft) / values.length;
  let monthLayout = layoutMonthLabels(monthLabels, slot);
  // The first 45° label hangs left of its bar; move the plot right rather than cut the label at the edge.
  const overhang = monthLayout.rotated ? OUTER_PAD + monthLayout.reach - slot / 2 - plotLeft : 0;
  if (overhang > 0) {
    plotLeft += overhang;
    slot = (plotRight - plotLeft) / values.length;
    monthLayout = layoutMonthLabels(monthLabels, slot);
  }
  const barWidth = Math.min(slot * BAR_SHARE, MAX_BAR_WIDTH);
  const valueLayout = layoutValueLabels(valueLabels, slot);
  const titleBottom = OUTER_PAD + TITLE_SIZE + 10;
  // The tallest bar may reach the top gridline and the deepest the bottom one: their value labels sit outside the grid.
  const plotTop = titleBottom + Math.max(hasNonNegative ? valueLayout.room : 0, 8);
  const negativeRoom = hasNegative ? valueLayout.room : 0;
  const plotBottom = height - OUTER_PAD - monthLayout.room - negativeRoom;
  if (plotBottom - plotTop < 40) {
    throw new RangeError(`chart height ${height} leaves no room for the plot under the labels of ${values.length} bars`);
  }

  const top = ticks[ticks.length - 1] ?? 1;
  const bottom = ticks[0] ?? 0;
  const toY = (value: number): number => plotTop + ((top - value) / (top - bottom)) * (plotBottom - plotTop);
  const zeroY = toY(0);
  const parts: string[] = [];

  // Gridlines and their labels.
  parts.push(`<g class="grid" stroke="${GRID_STROKE}" stroke-width="1" shape-rendering="crispEdges">`);
  for (const tick of ticks) {
    if (tick !== 0) parts.push(`<line x1="${fmt(plotLeft)}" x2="${fmt(plotRight)}" y1="${fmt(toY(tick))}" y2="${fmt(toY(tick))}"/>`);
  }
  parts.push('</g>');
  parts.push(`<g class="ticks" font-size="${LABEL_SIZE}" fill="${MUTED_FILL}" text-anchor="end">`);
  ticks.forEach((tick, index) => {
    parts.push(`<text x="${fmt(plotLeft - 8)}" y="${fmt(toY(tick) + LABEL_SIZE * 0.36)}">${escapeXml(tickLabels[index] ?? '')}</text>`);
  });
  parts.push('</g>');
  const captionX = OUTER_PAD + CAPTION_SIZE;
  const captionY = (plotTop + plotBottom) / 2;
  parts.push(
    `<text class="caption" transform="translate(${fmt(captionX)} ${fmt(captionY)}) rotate(-90)" font-size="${CAPTION_SIZE}" fill="${MUTED_FILL}" text-anchor="middle">${escapeXml(spec.unit)}</text>`,
  );

  // Bars grow from the zero line, up for gains and down for losses.
  parts.push('<g class="bars" shape-rendering="crispEdges">');
  values.forEach((value, index) => {
    const bar = spec.bars[index];
    const x = plotLeft + index * slot + (slot - barWidth) / 2;
    const y = value >= 0 ? toY(value) : zeroY;
    const barHeight = Math.abs(toY(value) - zeroY);
    parts.push(
      `<rect class="bar" data-label="${escapeXml(bar?.label ?? '')}" data-value="${escapeXml(bar?.value ?? '')}" x="${fmt(x)}" y="${fmt(y)}" width="${fmt(barWidth)}" height="${fmt(barHeight)}" fill="${value < 0 ? NEGATIVE_FILL : POSITIVE_FILL}"/>`,
    );
  });
  parts.push('</g>');
  parts.push(`<line class="zero-line" x1="${fmt(plotLeft)}" x2="${fmt(plotRight)}" y1="${fmt(zeroY)}" y2="${fmt(zeroY)}" stroke="${ZERO_STROKE}" stroke-width="1" shape-rendering="crispEdges"/>`);

  // Value labels: above gains, below losses.
  if (valueLayout.every > 0) {
    parts.push(`<g class="values" font-size="${fmt(valueLayout.size)}" fill="${TEXT_FILL}">`);
    values.forEach((value, index) => {
      const centre = plotLeft + (index + 0.5) * slot;
      const text = escapeXml(valueLabels[index] ?? '');
      const size = valueLayout.size;
      if (valueLayout.rotated) {
        // Reads bottom to top; the baseline sits right of the bar's centre line so the glyphs are centred on it.
        const anchorY = value >= 0 ? toY(value) - 4 : toY(value) + 4;
        parts.push(`<text transform="translate(${fmt(centre + size * 0.36)} ${fmt(anchorY)}) rotate(-90)" text-anchor="${value >= 0 ? 'start' : 'end'}">${text}</text>`);
      } else {
        const baseline = value >= 0 ? toY(value) - 4 : toY(value) + 3 + size * 0.76;
        parts.push(`<text x="${fmt(centre)}" y="${fmt(baseline)}" text-anchor="middle">${text}</text>`);
      }
    });
    parts.push('</g>');
  }

  // Month labels under the plot (under the losses' labels too), every n-th when they would touch.
  const monthTop = plotBottom + negativeRoom + 6;
  parts.push(`<g class="labels" font-size="${LABEL_SIZE}" fill="${TEXT_FILL}">`);
  monthLabels.forEach((label, index) => {
    if (index % monthLayout.every !== 0) return;
    const centre = plotLeft + (index + 0.5) * slot;
    if (monthLayout.rotated) {
      parts.push(`<text transform="translate(${fmt(centre + 4)} ${fmt(monthTop + 4)}) rotate(-45)" text-anchor="end">${escapeXml(label)}</text>`);
    } else {
      parts.push(`<text x="${fmt(centre)}" y="${fmt(monthTop + LABEL_SIZE)}" text-anchor="middle">${escapeXml(label)}</text>`);
    }
  });
  parts.push('</g>');
  return parts.join('\n');
}

/** Horizontal labels when they fit the slot (shrinking to 8px), else rotated; none at all when even those would touch. */
function layoutValueLabels(labels: readonly string[], slot: number): LabelLayout {
  const widest = Math.max(...labels.map((label) => estimateTextWidth(label, LABEL_SIZE)));
  const fitted = (LABEL_SIZE * (slot - 4)) / widest;
  if (fitted >= LABEL_SIZE) return { size: LABEL_SIZE, rotated: false, room: LABEL_SIZE + 8, every: 1, reach: 0 };
  if (fitted >= MIN_VALUE_SIZE) return { size: fitted, rotated: false, room: fitted + 8, every: 1, reach: 0 };
  const size = 10;
  if (slot < size * 1.2) return { size, rotated: true, room: 8, every: 0, reach: 0 };
  return { size, rotated: true, room: (widest * size) / LABEL_SIZE + 8, every: 1, reach: 0 };
}

/** Horizontal labels when they fit the slot, else at 45° and thinned so neighbours keep apart. */
function layoutMonthLabels(labels: readonly string[], slot: number): LabelLayout {
  const widest = Math.max(...labels.map((label) => estimateTextWidth(label, LABEL_SIZE)));
  if (widest <= slot - 6) return { size: LABEL_SIZE, rotated: false, room: LABEL_SIZE + 10, every: 1, reach: 0 };
  // Two neighbouring 45° labels are slot·sin45° apart across their baselines.
  const every = Math.max(1, Math.ceil((LABEL_SIZE * 1.5) / (slot * Math.SQRT1_2)));
  return { size: LABEL_SIZE, rotated: true, room: (widest + LABEL_SIZE) * Math.SQRT1_2 + 12, every, reach: widest * Math.SQRT1_2 };
}

/**
 * Gridline values from a "nice" step (1, 2 or 5 × 10^k) that cover [min, max] with 4 to 6
 * ticks, including 0 since bars start there. min ≤ 0 ≤ max.
 */
function computeTicks(min: number, max: number): number[] {
  const span = max - min === 0 ? 1 : max - min;
  const upper = max - min === 0 ? 1 : max;
  const firstExponent = Math.floor(Math.log10(span)) - 1;
  let fallback: number[] | undefined;
  for (let exponent = firstExponent; exponent <= firstExponent + 3; exponent += 1) {
    for (const multiple of [1, 2, 5]) {
      const step = multiple * 10 ** exponent;
      // The epsilon keeps a value a float hair above a tick (0.30000000000000004) from opening another step.
      const low = Math.floor(min / step + 1e-9);
      const high = Math.ceil(upper / step - 1e-9);
      const intervals = high - low;
      const ticks = Array.from({ length: intervals + 1 }, (_, index) => Number(((low + index) * step).toPrecision(12)));
      if (intervals >= 3 && intervals <= 5) return ticks;
      if (intervals <= 5 && fallback === undefined) fallback = ticks;
    }
  }
  return fallback ?? [min, max];
}

const COMPACT_UNITS: readonly (readonly [number, string])[] = [
  [1e12, 'T'],
  [1e9, 'B'],
  [1e6, 'M'],
  [1e3, 'k'],
];
const SIGNIFICANT = new Intl.NumberFormat('en-US', { maximumSignificantDigits: 3, useGrouping: false });

/** A short label for a number: 3 significant digits and k/M/B/T (12500 → '12.5k', -0.00042 → '-0.00042'). */
function formatCompact(value: number): string {
  if (value === 0) return '0';
  // Round first, so 999.6 becomes '1k' rather than '1000'.
  const rounded = Number(Math.abs(value).toPrecision(3));
  const sign = value < 0 ? '-' : '';
  const unit = COMPACT_UNITS.find(([size]) => rounded >= size);
  return unit === undefined ? `${sign}${SIGNIFICANT.format(rounded)}` : `${sign}${SIGNIFICANT.format(rounded / unit[0])}${unit[1]}`;
}

const XML_ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/** Escapes text for SVG content and attribute values; symbols and titles may hold `&` or `<`. */
function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => XML_ENTITIES[char] ?? char);
}

/** Roughly how wide DejaVu Sans draws `text`: close enough to lay out labels, never to typeset. */
function estimateTextWidth(text: string, size: number, bold = false): number {
  let em = 0;
  for (const char of text) {
    if ('.,:;|!\'il'.includes(char)) em += 0.3;
    else if (char === ' ' || char === '-') em += 0.34;
    else if (char === 'M' || char === 'W' || char === 'm' || char === 'w') em += 0.9;
    else if (char >= 'A' && char <= 'Z') em += 0.72;
    else em += 0.63;
  }
  return em * size * (bold ? 1.1 : 1);
}

function truncate(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : `${text.slice(0, maxChars - 1)}…`;
}

/** Coordinates to 2 decimals: sub-pixel enough, and keeps the SVG short. */
function fmt(value: number): string {
  return String(Math.round(value * 100) / 100);
}
