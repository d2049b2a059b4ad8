/**
 * The benchmark table of issue 16: each measured command beside a baseline measured in the same
 * run, the ratio of their wall times, the target and whether it is met. Pure: bench/ratios.ts
 * measures, this formats (and test/bench-ratio-table.test.ts checks the arithmetic).
 */
import type { MeasuredRun } from './measure-command.ts';

/** One measured child process. */
export interface Figure {
  wallSeconds: number;
  /** Peak resident memory, bytes; undefined when it could not be read. */
  peakBytes?: number;
  /** 1-minute load average when the measurement started. */
  load: number;
  /** Exited 0 (and did what it should) before its timeout. */
  ok: boolean;
  /** Stopped at this timeout, seconds; undefined when it ended by itself. */
  stoppedAfterSeconds?: number;
}

/** A measured child run as a figure of the table (stopped at `timeoutSeconds` when it timed out). */
export function figureOf(run: Pick<MeasuredRun, 'wallSeconds' | 'peakBytes' | 'exitCode' | 'timedOut'>, load: number, timeoutSeconds: number): Figure {
  return {
    wallSeconds: run.wallSeconds,
    ...(run.peakBytes === undefined ? {} : { peakBytes: run.peakBytes }),
    load,
    ok: run.exitCode === 0 && !run.timedOut,
    ...(run.timedOut ? { stoppedAfterSeconds: timeoutSeconds } : {}),
  };
}

/**
 * What a row must meet: absolute limits, a multiple of its baseline's wall time, or (a full build,
 * issue 28) a multiple of its baseline's and its write floor's wall times together, both measured
 * in the same run, with a peak below a limit.
 */
export type Target = { seconds: number; peakBytes?: number } | { timesBaseline: number } | { timesBaselineAndFloor: number; floorSeconds: number; peakBytes?: number };

/** One line of the table. */
export interface RatioRow {
  benchmark: string;
  /** What the measured command did. */
  what: string;
  measured: Figure;
  baseline?: { what: string; figure: Figure };
  /** Undefined: the row is shown for information (no target of its own). */
  target?: Target;
  /** What the result column says of a row without a target (a floor beside its build's target). */
  verdict?: string;
}

const GB = 1024 ** 3;
const MB = 1024 ** 2;

/** Wall time of the command over its baseline's; undefined without a (successful) baseline. */
export function wallRatio(row: RatioRow): number | undefined {
  const baseline = row.baseline?.figure;
  if (baseline === undefined || !baseline.ok || baseline.wallSeconds <= 0) return undefined;
  return row.measured.wallSeconds / baseline.wallSeconds;
}

/**
 * Whether the row meets its target: undefined when it has none. A command that failed or was
 * stopped never meets it; a peak-memory target needs a measured peak; a ratio target needs a baseline.
 */
export function targetMet(row: RatioRow): boolean | undefined {
  const { target, measured } = row;
  if (target === undefined) return undefined;
  if (!measured.ok || measured.stoppedAfterSeconds !== undefined) return false;
  if ('timesBaseline' in target) {
    const ratio = wallRatio(row);
    return ratio !== undefined && ratio <= target.timesBaseline;
  }
  if ('timesBaselineAndFloor' in target) {
    const baseline = row.baseline?.figure;
    if (baseline === undefined || !baseline.ok || measured.wallSeconds > target.timesBaselineAndFloor * (baseline.wallSeconds + target.floorSeconds)) return false;
  } else if (measured.wallSeconds > target.seconds) return false;
  return target.peakBytes === undefined || (measured.peakBytes !== undefined && measured.peakBytes < target.peakBytes);
}

/** The target as the issue states it: "≤ 45 s, < 6 GB", "≤ 1.5 × baseline", "≤ 1.2 × (baseline + write floor 51.9 s), < 5.12 GB". */
export function describeTarget(target: Target | undefined): string {
  if (target === undefined) return '';
  if ('timesBaseline' in target) return `≤ ${target.timesBaseline} × baseline`;
  if ('timesBaselineAndFloor' in target) {
    return `≤ ${target.timesBaselineAndFloor} × (baseline + write floor ${target.floorSeconds.toFixed(1)} s)${target.peakBytes === undefined ? '' : `, < ${formatBytes(target.peakBytes)}`}`;
  }
  return `≤ ${target.seconds} s${target.peakBytes === undefined ? '' : `, < ${formatBytes(target.peakBytes)}`}`;
}

/** Bytes as GB from 1 GB up, else MB: "4.19 GB", "638 MB". */
export function formatBytes(bytes: number | undefined): string {
  if (bytes === undefined) return '?';
  return bytes >= GB ? `${(bytes / GB).toFixed(2)} GB` : `${Math.round(bytes / MB)} MB`;
}

/** Wall seconds, or why there are none: "11.5 s", ">300 s (stopped)", "12.0 s (failed)". */
export function formatWall(figure: Figure): string {
  if (figure.stoppedAfterSeconds !== undefined) return `>${figure.stoppedAfterSeconds} s (stopped)`;
  return `${figure.wallSeconds.toFixed(1)} s${figure.ok ? '' : ' (failed)'}`;
}

/** The rows as one Markdown table (what docs/benchmarks.md holds), loads as 1-minute averages on `cores` cores. */
export function formatRatioTable(rows: readonly RatioRow[], cores: number): string {
  const header = ['benchmark', 'what', 'wall', 'peak RSS', 'load', 'baseline (same run)', 'wall', 'peak RSS', 'load', 'ratio', 'target', 'result'];
  const lines = rows.map((row) => {
    const baseline = row.baseline?.figure;
    const ratio = wallRatio(row);
    const met = targetMet(row);
    return [
      `\`${row.benchmark}\``,
      row.what,
      formatWall(row.measured),
      formatBytes(row.measured.peakBytes),
      row.measured.load.toFixed(1),
      row.baseline?.what ?? '—',
      baseline === undefined ? '' : formatWall(baseline),
      baseline === undefined ? '' : formatBytes(baseline.peakBytes),
      baseline === undefined ? '' : baseline.load.toFixed(1),
      ratio === undefined ? '' : `${ratio.toFixed(2)} ×`,
      describeTarget(row.target),
      met === undefined ? (row.verdict ?? '') : met ? 'met' : '**not met**',
    ];
  });
  const escape = (cell: string) => cell.replaceAll('|', '\\|');
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...lines.map((cells) => `| ${cells.map(escape).join(' | ')} |`),
    '',
    `wall and peak RSS of the whole child process (/usr/bin/time -v); load: the 1-minute load average when it started (${cores} cores); ratio: wall / baseline wall.`,
  ].join('\n');
}

/** The page that holds the table, between these two markers (written by `npm run bench -- ratios`). */
export const BENCHMARKS_PAGE = 'docs/benchmarks.md';
export const RATIO_BLOCK_START = '<!-- bench: ratios -->';
export const RATIO_BLOCK_END = '<!-- /bench: ratios -->';

/** When and where a table was measured. */
export interface Measurement {
  from: Date;
  to: Date;
  /** The commit measured (short hash). */
  commit: string;
}

/** What goes between the markers: when and on what it was measured, then the table. */
export function formatRatioBlock(rows: readonly RatioRow[], cores: number, measurement: Measurement): string {
  const minute = (date: Date) => date.toISOString().slice(11, 16);
  const loads = rows.flatMap((row) => [row.measured.load, ...(row.baseline === undefined ? [] : [row.baseline.figure.load])]);
  const loadRange = loads.length === 0 ? '' : `load average ${Math.min(...loads).toFixed(1)} to ${Math.max(...loads).toFixed(1)} at the starts, `;
  return [
    `Measured ${measurement.from.toISOString().slice(0, 10)}, ${minute(measurement.from)} to ${minute(measurement.to)} UTC, one run of \`npm run bench -- ratios\` on commit ${measurement.commit} (${loadRange}${cores} cores):`,
    '',
    formatRatioTable(rows, cores),
  ].join('\n');
}

/**
 * The page with the text between its two markers replaced by `block`; an error when the page
 * does not hold the markers exactly once each, in order (the table would have nowhere to go).
 */
export function replaceRatioBlock(page: string, block: string): string {
  const start = page.indexOf(RATIO_BLOCK_START);
  const end = page.indexOf(RATIO_BLOCK_END);
  if (start === -1 || end < start || page.indexOf(RATIO_BLOCK_START, start + 1) !== -1 || page.indexOf(RATIO_BLOCK_END, end + 1) !== -1) {
    throw new Error(`${BENCHMARKS_PAGE} must hold ${RATIO_BLOCK_START} and ${RATIO_BLOCK_END} once each, in that order`);
  }
  return `${page.slice(0, start + RATIO_BLOCK_START.length)}\n${block}\n${page.slice(end)}`;
}
