import dayjs from 'dayjs';
import utc from 'dayjs/plugin/utc.js';
import timezone from 'dayjs/plugin/timezone.js';
import { ConfigError } from '../errors.ts';
import type { Database } from '../store/database.ts';
import type { SheetSpec } from './report-definition.ts';

dayjs.extend(utc);
dayjs.extend(timezone);

/** A reporting period: whole local days in the reporting time zone, both ends included. */
export interface ReportPeriod {
  /** First day, YYYY-MM-DD. */
  from: string;
  /** Last day, YYYY-MM-DD (included). */
  to: string;
  /** What the period is called in file names and titles: `2026-10`, `2026-Q3`, `2026`, or `2026-10-05_2026-11-04`. */
  label: string;
}

/** The kinds of period `exledger run` reports on. */
export type PeriodKind = 'month' | 'quarter' | 'year';

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** Parses `--period`: `2026-10` (a month), `2026-Q3` (a quarter) or `2026` (a year). */
export function parsePeriod(text: string): ReportPeriod {
  const month = /^(\d{4})-(\d{2})$/.exec(text);
  if (month !== null && Number(month[2]) >= 1 && Number(month[2]) <= 12) return spanOf(dayjs.utc(`${text}-01`), 'month', text);
  const quarter = /^(\d{4})-Q([1-4])$/i.exec(text);
  if (quarter !== null) {
    const start = dayjs.utc(`${quarter[1]}-${String((Number(quarter[2]) - 1) * 3 + 1).padStart(2, '0')}-01`);
    return { from: start.format('YYYY-MM-DD'), to: start.add(3, 'month').subtract(1, 'day').format('YYYY-MM-DD'), label: `${quarter[1]}-Q${quarter[2]}` };
  }
  if (/^\d{4}$/.test(text)) return spanOf(dayjs.utc(`${text}-01-01`), 'year', text);
  throw new ConfigError('--period', `"${text}" is not a period: use a month (2026-10), a quarter (2026-Q3) or a year (2026)`);
}

/** Parses `--from`/`--to`, both YYYY-MM-DD and included. */
export function parseRange(from: string, to: string): ReportPeriod {
  for (const [flag, value] of [['--from', from], ['--to', to]] as const) {
    if (!DAY.test(value) || dayjs.utc(value).format('YYYY-MM-DD') !== value) throw new ConfigError(flag, `"${value}" is not a date (YYYY-MM-DD)`);
  }
  if (to < from) throw new ConfigError('--to', `${to} is before --from ${from}`);
  return { from, to, label: `${from}_${to}` };
}

/** The last period of this kind that has ended, as of `now`, in the reporting time zone. */
export function lastClosedPeriod(kind: PeriodKind, timeZone: string, now: Date = new Date()): ReportPeriod {
  const today = dayjs(now).tz(timeZone);
  const local = dayjs.utc(today.format('YYYY-MM-DD'));
  if (kind === 'month') {
    const start = local.startOf('month').subtract(1, 'month');
    return spanOf(start, 'month', start.format('YYYY-MM'));
  }
  if (kind === 'quarter') {
    const thisQuarter = local.startOf('month').subtract(local.month() % 3, 'month');
    const start = thisQuarter.subtract(3, 'month');
    return { from: start.format('YYYY-MM-DD'), to: thisQuarter.subtract(1, 'day').format('YYYY-MM-DD'), label: `${start.year()}-Q${Math.floor(start.month() / 3) + 1}` };
  }
  const start = local.startOf('year').subtract(1, 'year');
  return spanOf(start, 'year', String(start.year()));
}

function spanOf(start: dayjs.Dayjs, unit: 'month' | 'year', label: string): ReportPeriod {
  return { from: start.format('YYYY-MM-DD'), to: start.add(1, unit).subtract(1, 'day').format('YYYY-MM-DD'), label };
}

/** The first day of the month of a day (monthly rows are kept when their month overlaps the period). */
export function monthOf(day: string): string {
  return `${day.slice(0, 7)}-01`;
}

/** The WHERE clause that keeps a sheet's rows of the period, and its parameters. */
export function periodFilter(sheet: Pick<SheetSpec, 'period' | 'mart'>, period: ReportPeriod): { where: string; values: string[] } {
  if (sheet.period === null) return { where: 'true', values: [] };
  if (sheet.period.grain === 'nearest') {
    // Per account, the rows of the instant nearest the end of the period (midnight UTC after its
    // last day), before or after it (the earlier of two as near); rows without an instant (an
    // account with no snapshot) are kept: they say there is nothing to compare with.
    const column = sheet.period.column;
    const end = 'CAST(CAST($1 AS DATE) + 1 AS TIMESTAMP) AT TIME ZONE \'UTC\'';
    return {
      where: `(${column} IS NULL OR (account, ${column}) IN (SELECT account, ${column} FROM ${sheet.mart} WHERE ${column} IS NOT NULL QUALIFY row_number() OVER (PARTITION BY account ORDER BY abs(epoch(${column}) - epoch(${end})), ${column}) = 1))`,
      values: [period.to],
    };
  }
  if (sheet.period.grain === 'booked') {
    return { where: `${sheet.period.column} BETWEEN CAST($1 AS DATE) AND CAST($2 AS DATE) AND adjusted_date < CAST($1 AS DATE)`, values: [period.from, period.to] };
  }
  const [from, to] = sheet.period.grain === 'day' ? [period.from, period.to] : [monthOf(period.from), monthOf(period.to)];
  return { where: `${sheet.period.column} BETWEEN CAST($1 AS DATE) AND CAST($2 AS DATE)`, values: [from, to] };
}

/**
 * The WHERE clause that keeps the rows a workbook shows of a sheet: those of the period, and with
 * `account` (`exledger report --account`) only that account's (every mart has an `account` column).
 */
export function rowFilter(sheet: Pick<SheetSpec, 'period' | 'only' | 'mart'>, period: ReportPeriod, account?: string): { where: string; values: string[] } {
  const filter = periodFilter(sheet, period);
  if (sheet.only !== undefined) {
    // The sheet's own subset of its mart (the report's rows of marts.needs_price).
    const first = filter.values.length + 1;
    filter.where = `(${filter.where}) AND CAST(${sheet.only.column} AS VARCHAR) IN (${sheet.only.values.map((_, index) => `$${first + index}`).join(', ')})`;
    filter.values = [...filter.values, ...sheet.only.values];
  }
  if (account === undefined) return filter;
  return { where: `(${filter.where}) AND account = $${filter.values.length + 1}`, values: [...filter.values, account] };
}

/** A period's edges as instants (epoch ms): the local midnights, in the time zone, of its first day and of the day after its last. */
export async function periodEdgesMs(db: Database, period: Pick<ReportPeriod, 'from' | 'to'>, timeZone: string): Promise<{ startMs: number; endMs: number }> {
  const [edges] = await db.all<{ start_ms: string; end_ms: string }>(
    "SELECT epoch_ms(timezone($1, CAST($2 AS DATE)::TIMESTAMP)) AS start_ms, epoch_ms(timezone($1, (CAST($3 AS DATE) + 1)::TIMESTAMP)) AS end_ms",
    [timeZone, period.from, period.to],
  );
  return { startMs: Number(edges!.start_ms), endMs: Number(edges!.end_ms) };
}
