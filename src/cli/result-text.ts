import path from 'node:path';
import { countOf, formatCount } from '../count-text.ts';
import type { ReportResult } from '../export/write-report.ts';
import type { StreamResult } from '../extract/sync.ts';
import { loadInfoOf, type LoadInfo, type RunOutcome, type RunStatus } from '../jobs/run-job.ts';
import type { SyncOutcome, SyncStatus } from '../jobs/sync-job.ts';
import { describeBuild } from '../jobs/build-job.ts';
import type { ModelResult } from '../models/build.ts';
import type { TestResult } from '../models/check.ts';
import type { ArchivedPart } from '../store/archive.ts';
import type { SchemaDrift } from '../store/schema-drift.ts';
import { EXIT } from './exit-codes.ts';
import type { Output } from './output.ts';
import { formatTextTable } from './text-table.ts';
import { isoInstant } from './time-text.ts';

/**
 * How the jobs' results look: as text for people (tables, a line per model, test or
 * workbook), as the details of `--json` (times as ISO 8601 UTC), and as exit codes. Shared by
 * the commands, so no command imports another.
 */

/** The exit code of a sync: 0 all streams ok, 3 some failed, 1 all failed, 130 interrupted. */
export function syncExitCode(status: SyncStatus): number {
  return { ok: EXIT.ok, partial: EXIT.partial, failed: EXIT.failure, interrupted: EXIT.interrupted }[status];
}

/** The summary table printed after a sync. */
export function formatSyncSummary(outcome: SyncOutcome): string {
  const header = ['account', 'stream', 'status', 'windows', 'requests', 'weight', 'fetched', 'new rows', 'seconds'];
  const rows = outcome.results.map((result) => [
    result.account,
    result.stream,
    result.status,
    formatCount(result.windows),
    formatCount(result.requests),
    formatCount(result.weight),
    formatCount(result.rowsFetched),
    formatCount(result.rowsInserted),
    (((result.finishedAtMs ?? result.startedAtMs) - result.startedAtMs) / 1000).toFixed(1),
  ]);
  const out = [`sync ${outcome.runId}: ${outcome.status}`, ...formatTextTable(header, rows, { alignRight: header.map((_, column) => column >= 3) })];
  for (const result of outcome.results) {
    // A stream stopped by a signal says so in the table; the stop itself is the command's one error line.
    if (result.errorMessage !== null && result.status !== 'interrupted') out.push(`error in ${result.account}/${result.stream}: ${result.errorMessage}`);
    for (const warning of result.warnings) out.push(`note in ${result.account}/${result.stream}: ${warning}`);
  }
  out.push(...formatDrift(outcome.drift));
  if (outcome.recoveredRuns > 0) out.push(`note: ${countOf(outcome.recoveredRuns, 'stream run')} of an earlier sync were still marked running (its process was killed); they are marked interrupted, and this sync continued from what they had committed`);
  if (outcome.status === 'interrupted') out.push('sync interrupted: what was read is committed; run the sync again to continue');
  return out.join('\n');
}

/**
 * A line per account and stream with fields its declaration does not list:
 * `drift in main/spot_fills: new field(s) the staging model does not read: rebateTier (first seen …, run …)`,
 * fields first seen in the same run together.
 */
export function formatDrift(drift: readonly Pick<SchemaDrift, 'account' | 'stream' | 'field' | 'firstSeenAt' | 'firstSeenRunId'>[]): string[] {
  const streams = new Map<string, Map<string, { at: string; fields: string[] }>>();
  for (const entry of drift) {
    const key = `${entry.account}/${entry.stream}`;
    const runs = streams.get(key) ?? new Map<string, { at: string; fields: string[] }>();
    streams.set(key, runs);
    const run = runs.get(entry.firstSeenRunId) ?? { at: entry.firstSeenAt, fields: [] };
    runs.set(entry.firstSeenRunId, run);
    run.fields.push(entry.field);
  }
  return [...streams].map(
    ([stream, runs]) =>
      `drift in ${stream}: new field(s) the staging model does not read: ${[...runs].map(([runId, run]) => `${run.fields.join(', ')} (first seen ${run.at}, sync ${runId})`).join('; ')}; declare them in pipelines/ to read them`,
  );
}

/** A stream's result for --json: times as ISO 8601 UTC. */
export function streamResultJson(result: StreamResult): Record<string, unknown> {
  const { startedAtMs, finishedAtMs, ...rest } = result;
  return { ...rest, startedAt: new Date(startedAtMs).toISOString(), finishedAt: finishedAtMs === null ? null : new Date(finishedAtMs).toISOString() };
}

/** A sync's details for --json. */
export function syncJson(outcome: SyncOutcome): Record<string, unknown> {
  return { runId: outcome.runId, status: outcome.status, recoveredRuns: outcome.recoveredRuns, results: outcome.results.map(streamResultJson), drift: outcome.drift };
}

/** `ok      marts.fees_daily           table     0.41 s      1,234 rows`. */
export function formatModelResult(result: ModelResult, index: number, total: number): string {
  const counter = `[${String(index).padStart(String(total).length)}/${total}]`;
  const rows = result.rows === undefined ? '' : countOf(result.rows, 'row');
  const time = result.status === 'skipped' ? '' : `${(result.ms / 1000).toFixed(2)} s`;
  const how = result.how === undefined ? '' : result.how === 'whole' && result.why !== undefined ? `  whole (${result.why})` : `  ${result.how}`;
  const line = `${counter} ${result.status.padEnd(7)} ${result.id.padEnd(42)} ${result.materialization.padEnd(5)} ${time.padStart(8)}  ${rows.padStart(16)}${how}`.trimEnd();
  return result.message === undefined ? line : `${line}\n        ${result.message}`;
}

/** One line: what the build did to the models (describeBuild), and the total time. */
export function summarizeBuild(results: readonly ModelResult[], ms: number): string {
  return `build: ${describeBuild(results)} (${(ms / 1000).toFixed(2)} s)`;
}

/** `pass  marts/balance_chain_unbroken  0.01 s`, and for a failure the offending rows below it. */
export function formatTestResult(result: TestResult): string {
  // A check of what changed says what each test read (a whole check reads everything: nothing to say).
  const scope = result.scope === 'changed' ? '  changed rows' : result.scope === 'unchanged' ? '  unchanged since its last pass' : result.why === undefined ? '' : `  whole (${result.why})`;
  const head = `${result.status === 'pass' ? 'pass' : result.status === 'fail' ? 'FAIL' : 'ERROR'}  ${result.id.padEnd(44)} ${(result.ms / 1000).toFixed(2).padStart(6)} s${scope}`;
  if (result.status === 'pass') return head;
  if (result.status === 'error') return `${head}\n      ${result.message}`;
  const more = result.offending > result.sample.length ? `\n      ... ${formatCount(result.offending - result.sample.length)} more` : '';
  return `${head}  ${countOf(result.offending, 'offending row')}\n${formatRows(result.sample)}${more}`;
}

/** Rows as an indented table, values exactly as DuckDB returned them. */
function formatRows(rows: readonly Record<string, unknown>[]): string {
  const columns = Object.keys(rows[0] ?? {});
  const cells = rows.map((row) => columns.map((column) => (row[column] === null ? 'null' : typeof row[column] === 'object' ? JSON.stringify(row[column]) : isoInstant(String(row[column])))));
  return formatTextTable(columns, cells, { indent: '      ' }).join('\n');
}

/** A progress line per 250,000 rows of a big sheet (a million rows take most of a minute to write). */
export function reportRowsProgress(output: Output): (report: string, sheet: string, written: number, total: number) => void {
  return (report, sheet, written, total) => {
    if (total >= 250_000 && (written % 250_000 === 0 || written === total)) output.progress(`report ${report}: ${sheet}: ${formatCount(written)} of ${countOf(total, 'row')} written`);
  };
}

/** `pnl  2026-10  out/pnl-2026-10.xlsx  3 sheets, 1,234 rows  0.8 s`, and a line per freshness warning. */
export function formatReportResult(result: ReportResult): string {
  if (result.closed !== undefined) {
    const csv = result.csv === undefined ? '' : ` and ${displayPath(result.csv.file)}`;
    return [`${result.report.padEnd(9)} ${result.period.label.padEnd(9)} ${displayPath(result.file)}${csv}  closed on ${result.closed.at} by ${result.closed.by}: as signed (SHA-256 ${result.closed.sha256.slice(0, 12)}…)`, ...ledgerLines(result)].join('\n');
  }
  const indent = `${''.padEnd(9)} ${''.padEnd(9)} `;
  if (result.unchanged !== undefined) {
    // Nothing was written: the files at these paths are those of the same figures.
    const besides = [...(result.csv === undefined ? [] : [result.csv.file]), ...result.sheets.flatMap((sheet) => sheet.rolledUp?.files.map((written) => written.file) ?? []), ...(result.ledger?.exports.flatMap((exported) => exported.files.map((written) => written.file)) ?? [])];
    const files = besides.length === 0 ? '' : ` (and the ${countOf(besides.length, 'file')} beside it)`;
    return `${result.report.padEnd(9)} ${result.period.label.padEnd(9)} ${displayPath(result.file)}  unchanged since ${result.unchanged.since}: not written again${files}`;
  }
  // The rows shown: a rolled-up sheet's lines (its detail rows are in its files, a line each below).
  const rows = result.sheets.reduce((sum, sheet) => sum + sheet.rows, 0);
  const rolled = result.sheets.filter((sheet) => sheet.rolledUp !== undefined);
  const rolledText = rolled.length === 0 ? '' : `, ${countOf(rolled.length, 'sheet')} rolled up`;
  const line = `${result.report.padEnd(9)} ${result.period.label.padEnd(9)} ${displayPath(result.file)}  ${countOf(result.sheets.length, 'sheet')}, ${countOf(rows, 'row')}${rolledText}  ${(result.ms / 1000).toFixed(1)} s`;
  const csv = result.csv === undefined ? [] : [`${indent}${displayPath(result.csv.file)}  ${countOf(result.csv.rows, 'line')}${result.csv.omitted > 0 ? `, ${countOf(result.csv.omitted, 'source row')} not valued in full` : ''}`];
  const details = rolled.map((sheet) => {
    const [first, ...others] = sheet.rolledUp!.files.map((written) => displayPath(written.file));
    return `${indent}${[first, ...others.map((file) => path.extname(file))].join(' and ')}  ${countOf(sheet.rolledUp!.detailRows, 'row')}: the full detail of "${sheet.name}" (rolled up to ${countOf(sheet.rows, 'line')})`;
  });
  return [line, ...csv, ...details, ...ledgerLines(result), ...result.warnings.map((warning) => `          warning: ${warning}`)].join('\n');
}

/**
 * A line per ledger import file (its lines and entries), then how they were rounded: e.g.
 * `rounded to 0.01 USD: 12 rounding lines on "Rounding differences"; 1 entry under 0.01 not written`.
 */
function ledgerLines(result: ReportResult): string[] {
  const ledger = result.ledger;
  if (ledger === undefined) return [];
  const indent = `${''.padEnd(9)} ${''.padEnd(9)} `;
  const files = ledger.exports.flatMap((written) => written.files.map((file) => `${indent}${displayPath(file.file)}  ${countOf(file.lines, 'line')}, ${countOf(file.entries, 'entry', 'entries')} (${written.title})`));
  const unit = `${ledger.minorUnit === 0 ? '1' : `0.${'1'.padStart(ledger.minorUnit, '0')}`}`;
  const dropped = ledger.dropped === 0 ? '' : `; ${countOf(ledger.dropped, 'entry', 'entries')} under ${unit} not written (in the rounded totals all the same)`;
  return [...files, `${indent}rounded to ${unit} ${ledger.currency}: ${countOf(ledger.roundingLines, 'rounding line')} on "${ledger.roundingAccount}"${dropped}${ledger.omitted > 0 ? `; ${countOf(ledger.omitted, 'source row')} not valued in full` : ''}`];
}

/** A path relative to the working folder when it is inside it, else whole. */
export function displayPath(file: string): string {
  const relative = path.relative(process.cwd(), file);
  return relative.startsWith('..') || path.isAbsolute(relative) ? path.resolve(file) : relative;
}

/** A workbook's result for --json. */
export function reportResultJson(result: ReportResult): Record<string, unknown> {
  return {
    ...result,
    file: path.resolve(result.file),
    sheets: result.sheets.map((sheet) => (sheet.rolledUp === undefined ? sheet : { ...sheet, rolledUp: { ...sheet.rolledUp, files: sheet.rolledUp.files.map((written) => ({ ...written, file: path.resolve(written.file) })) } })),
    ...(result.csv === undefined ? {} : { csv: { ...result.csv, file: path.resolve(result.csv.file) } }),
    ...(result.ledger === undefined ? {} : { ledger: { ...result.ledger, exports: result.ledger.exports.map((written) => ({ ...written, files: written.files.map((file) => ({ ...file, file: path.resolve(file.file) })) })) } }),
    ms: Math.round(result.ms),
  };
}

/** The exit code of a run (docs/reference.md "Exit codes"). */
export function runExitCode(status: RunStatus): number {
  return { ok: EXIT.ok, partial: EXIT.partial, failed: EXIT.failure, interrupted: EXIT.interrupted }[status];
}

/** The run's closing table: a line per step (and `extra` lines, e.g. the log's failure), then the verdict. */
export function formatRunSummary(outcome: RunOutcome, extra: readonly string[] = []): string {
  const lines = [...outcome.steps.map((step) => `${step.step.padEnd(8)} ${step.status.padEnd(8)} ${(step.ms / 1000).toFixed(1).padStart(6)} s  ${step.detail}`), ...extra, ...formatLoadInfo(loadInfoOf(outcome.outputs))];
  const verdict = {
    ok: 'run: ok',
    partial: 'run: partly done (exit 3): see the steps above',
    failed: 'run: FAILED (exit 1): see the steps above',
    interrupted: 'run: INTERRUPTED (exit 130): what was committed stays; run again to continue',
  }[outcome.status];
  return ['', '== summary', ...lines, verdict].join('\n');
}

/**
 * The run's load info as a compact block (what the step lines do not already say: the models are
 * on the build line, the published copy on the publish line), e.g.
 * ```
 * load info:
 *   new rows     main/spot_fills 12, main/funding_bills 3; none in the 10 other streams
 *   reports      out/pnl-2026-10.xlsx, out/fees-2026-10.xlsx
 *   new fields   main/spot_fills: rebateTier (the staging model does not read it: exledger status)
 * ```
 */
export function formatLoadInfo(info: LoadInfo): string[] {
  const lines: string[] = [];
  const line = (label: string, text: string) => lines.push(`  ${label.padEnd(12)} ${text}`);
  if (info.newRows !== null) {
    const added = info.newRows.filter((stream) => stream.rows > 0);
    const rest = info.newRows.length - added.length;
    const listed = added.map((stream) => `${stream.account}/${stream.stream} ${formatCount(stream.rows)}`).join(', ');
    line('new rows', added.length === 0 ? `none in the ${countOf(rest, 'stream')}` : `${listed}${rest === 0 ? '' : `; none in the ${countOf(rest, 'other stream')}`}`);
  }
  if (info.reports !== null) line('reports', info.reports.length === 0 ? 'none written' : info.reports.map(displayPath).join(', '));
  if (info.newFields !== null && info.newFields.length > 0) {
    const byStream = new Map<string, string[]>();
    for (const field of info.newFields) byStream.set(`${field.account}/${field.stream}`, [...(byStream.get(`${field.account}/${field.stream}`) ?? []), field.field]);
    line('new fields', `${[...byStream].map(([stream, fields]) => `${stream}: ${fields.join(', ')}`).join('; ')} (the staging models do not read them: see exledger status)`);
  }
  if (info.adjustments !== null) {
    const { openPeriod, figures, unknown, perMart } = info.adjustments;
    line(
      'adjustments',
      figures === 0
        ? `none to closed periods pending in ${openPeriod}`
        : `${countOf(figures, 'figure')} of closed periods changed since their close, booked in ${openPeriod}${unknown === 0 ? '' : ` (${formatCount(unknown)} unknown: a price is missing)`}: ${perMart.map((mart) => `${mart.mart} ${formatCount(mart.figures)}`).join(', ')}`,
    );
  }
  return lines.length === 0 ? [] : ['load info:', ...lines];
}

/** A run's details for --json. */
export function runJson(outcome: RunOutcome): Record<string, unknown> {
  return {
    status: outcome.status,
    period: outcome.period,
    steps: outcome.steps.map((step) => ({ ...step, ms: Math.round(step.ms) })),
    sync: outcome.outputs.sync === undefined ? null : syncJson(outcome.outputs.sync),
    reports: outcome.reports.map(reportResultJson),
    loadInfo: loadInfoOf(outcome.outputs),
    checkScope: outcome.outputs.checkScope ?? null,
    // Where the publish's time went (phases) is for benchmarks, not the envelope.
    published: outcome.published === null ? null : (({ phases: _, ...published }) => ({ ...published, path: path.resolve(published.path), ms: Math.round(published.ms) }))(outcome.published),
  };
}

/** `[ 3/40] added      raw.spot_fills main 2026-10  12 rows  raw/stream=spot_fills/…/part-2.parquet`. */
export function formatArchivedPart(part: ArchivedPart, index: number, total: number): string {
  const counter = `[${String(index).padStart(String(total).length)}/${total}]`;
  const where = part.account === undefined ? part.table : `${part.table} ${part.account} ${part.month}`;
  return `${counter} ${part.how.padEnd(9)} ${where.padEnd(44)} ${countOf(part.rows, 'row').padStart(12)}  ${part.file ?? ''}${part.why === undefined ? '' : `  (${part.why})`}`.trimEnd();
}
