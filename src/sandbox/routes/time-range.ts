import { beyondHorizon, invalidParameter, startAfterEnd } from '../api-error.ts';
import type { RouteContext } from '../endpoint.ts';
import type { RangeQuery } from '../paging.ts';

const DAY_MS = 86_400_000;

/**
 * Reads a start/end pair of a history endpoint into a RangeQuery: 40707 when start > end,
 * 40704 when the range begins before the history horizon (exchange-notes.md "Paging and
 * ordering", history depth). Without a start, the horizon silently bounds the answer, as the
 * real exchange no longer has older records.
 */
export function readTimeRange(context: RouteContext, startName: string, endName: string): RangeQuery {
  const start = context.params.time(startName);
  const end = context.params.time(endName);
  return checkedRange(context, startName, endName, start, end);
}

/**
 * The affiliate endpoints' range (exchange-api.md 4.17): endTime defaults to now, startTime to
 * 7 days before endTime; with `maxMonths`, a range longer than that many calendar months is 40017.
 */
export function readAffiliateRange(context: RouteContext, maxMonths: number | null): RangeQuery {
  const end = context.params.time('endTime') ?? context.now;
  const start = context.params.time('startTime') ?? end - 7 * DAY_MS;
  if (start > end) throw startAfterEnd('startTime', 'endTime');
  if (maxMonths !== null && addUtcMonths(start, maxMonths) < end) {
    throw invalidParameter(
      `the range from startTime ${new Date(start).toISOString()} to endTime ${new Date(end).toISOString()} is longer than ${maxMonths} months`,
    );
  }
  return checkedRange(context, 'startTime', 'endTime', start, end);
}

function checkedRange(context: RouteContext, startName: string, endName: string, start: number | undefined, end: number | undefined): RangeQuery {
  if (start !== undefined && end !== undefined && start > end) throw startAfterEnd(startName, endName);
  const notBefore = context.state.historyNotBefore();
  checkHorizon(context, start ?? end);
  return { start, end, bounds: context.state.behaviour.bounds, notBefore, visibleUntil: context.state.visibleUntil };
}

/** 40704 when `time` (the oldest moment a request asks about) is older than the history horizon. */
export function checkHorizon(context: RouteContext, time: number | undefined): void {
  const notBefore = context.state.historyNotBefore();
  const days = context.state.behaviour.historyHorizonDays;
  if (notBefore !== undefined && days !== null && time !== undefined && time < notBefore) throw beyondHorizon(days);
}

/** Adds calendar months in UTC, clamping the day to the target month's last day (Jan 31 + 1 = Feb 28/29). */
export function addUtcMonths(ms: number, months: number): number {
  const date = new Date(ms);
  const monthIndex = date.getUTCMonth() + months;
  const year = date.getUTCFullYear() + Math.floor(monthIndex / 12);
  const month = ((monthIndex % 12) + 12) % 12;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  const day = Math.min(date.getUTCDate(), lastDay);
  const timeOfDay = ms - Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
  return Date.UTC(year, month, day) + timeOfDay;
}
