/**
 * The benchmark table of issue 16: each measured command beside a baseline measured in the same
 * run, the ratio of their wall times, the target and whether it is met. Pure: bench/ratios.ts
 * measures, this formats (and test/bench-ratio-table.test.ts checks the arithmetic).
 */

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

/** What a row must meet: absolute limits, or a multiple of its baseline's wall time. */
export type Target = { seconds: number; peakBytes?: number } | { timesBaseline: number };

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
  if (measured.wallSeconds > target.seconds) return false;
  return target.peakBytes === undefined || (measured.peakBytes !== undefined && measured.peakBytes < target.peakBytes);
}

/** The target as the issue states it: "≤ 45 s, < 6 GB", "≤ 1.5 × baseline". */
export function describeTarget(target: Target | undefined): string {
  if (target === undefined) return '';
  if ('timesBaseline' in target) return `≤ ${target.timesBaseline} × baseline`;
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

/** The rows as one Markdown table (what the README holds), loads as 1-minute averages on `cores` cores. */
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
