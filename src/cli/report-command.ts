import { existsSync } from 'node:fs';
import path from 'node:path';
import { STREAMS } from '../../pipelines/index.ts';
import { REPORTS } from '../../reports/index.ts';
import { resolveConfig, type Config } from '../config/config.ts';
import { ConfigError } from '../errors.ts';
import { parsePeriod, parseRange, type ReportPeriod } from '../export/period.ts';
import { validateReports, type ReportSpec } from '../export/report-definition.ts';
import { writeReport, type ReportResult } from '../export/write-report.ts';
import { Database } from '../store/database.ts';
import { defineCommand } from './command.ts';
import { withConfigOptions } from './config-options.ts';
import { EXIT } from './exit-codes.ts';

/** The reports named (`all` for every one), checked against reports/ with the declarations validated. */
export function selectReports(names: readonly string[]): ReportSpec[] {
  validateReports(REPORTS, STREAMS.map((stream) => stream.name));
  if (names.includes('all')) return [...REPORTS];
  return names.map((name) => {
    const report = REPORTS.find((candidate) => candidate.name === name);
    if (report === undefined) throw new ConfigError('report', `"${name}" is not a report; the reports are ${REPORTS.map((candidate) => candidate.name).join(', ')} (or all)`);
    return report;
  });
}

/** `--period` or `--from`/`--to`, exactly one of them. */
export function periodFromArgs(args: { period?: string; from?: string; to?: string }): ReportPeriod {
  if (args.period !== undefined) {
    if (args.from !== undefined || args.to !== undefined) throw new ConfigError('--period', 'give either --period or --from and --to, not both');
    return parsePeriod(args.period);
  }
  if (args.from === undefined || args.to === undefined) throw new ConfigError('--period', 'say which period: --period 2026-10 (or 2026-Q3, 2026), or --from 2026-10-01 --to 2026-10-31');
  return parseRange(args.from, args.to);
}

/**
 * Writes the reports from the configured database, opened read-only (a sync writing it
 * meanwhile gives one clear error). Prints a line per workbook.
 */
export async function writeReportsWithConfig(
  config: Readonly<Config>,
  reports: readonly ReportSpec[],
  period: ReportPeriod,
  options: { print: boolean; notes?: readonly string[] },
): Promise<ReportResult[]> {
  if (!existsSync(config.db)) throw new ConfigError(config.db, 'no database here yet', { hint: 'run exledger run (or sync and build) first, or point --db / EXLEDGER_DB at the database' });
  const db = await Database.open(config.db, { readOnly: true });
  try {
    const results: ReportResult[] = [];
    for (const report of reports) {
      const result = await writeReport(db, report, { period, outDir: config.reports.outDir, notes: options.notes, onProgress: options.print ? printProgress(report.name) : undefined });
      results.push(result);
      if (options.print) console.log(formatReportResult(result));
    }
    return results;
  } finally {
    db.close();
  }
}

/** A line per 250,000 rows of a big sheet (a million rows take most of a minute to write). */
function printProgress(report: string): (sheet: string, written: number, total: number) => void {
  return (sheet, written, total) => {
    if (total >= 250_000 && (written % 250_000 === 0 || written === total)) console.log(`${report}: ${sheet}: ${written.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} rows written`);
  };
}

/** `pnl  2026-10  out/pnl-2026-10.xlsx  3 sheets, 1,234 rows  0.8 s`, and a line per freshness warning. */
export function formatReportResult(result: ReportResult): string {
  const rows = result.sheets.reduce((sum, sheet) => sum + sheet.rows, 0);
  const relative = path.relative(process.cwd(), result.file);
  const file = relative.startsWith('..') ? path.resolve(result.file) : relative;
  const line = `${result.report.padEnd(9)} ${result.period.label.padEnd(9)} ${file}  ${result.sheets.length} sheets, ${rows.toLocaleString('en-US')} rows  ${(result.ms / 1000).toFixed(1)} s`;
  return [line, ...result.warnings.map((warning) => `          warning: ${warning}`)].join('\n');
}

/** `exledger report`. */
export const reportCommand = defineCommand({
  command: 'report <name..>',
  describe: 'Write Excel workbooks (pnl, fees, rebates, balances, or all) for a period from the built models',
  builder: (yargs) =>
    withConfigOptions(yargs)
      .positional('name', { type: 'string', array: true, describe: 'Reports to write: pnl, fees, rebates, balances, or all', demandOption: true })
      .option('period', { type: 'string', describe: 'A month (2026-10), quarter (2026-Q3) or year (2026), in the reporting time zone' })
      .option('from', { type: 'string', describe: 'First day, YYYY-MM-DD (with --to)' })
      .option('to', { type: 'string', describe: 'Last day, YYYY-MM-DD, included (with --from)' })
      .option('out', { type: 'string', describe: 'Folder of the workbooks [default: reports.outDir, else ./out]' })
      .option('json', { type: 'boolean', default: false, describe: 'Print JSON instead of lines' }),
  handler: async (args) => {
    const reports = selectReports(args.name.map(String));
    const period = periodFromArgs(args);
    const config = resolveConfig({ configPath: args.config, db: args.db, outDir: args.out });
    const results = await writeReportsWithConfig(config, reports, period, { print: !args.json });
    if (args.json) console.log(JSON.stringify(results.map((result) => ({ ...result, ms: Math.round(result.ms) })), null, 2));
    return EXIT.ok;
  },
});
