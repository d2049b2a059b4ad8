import dayjs from 'dayjs';
import utc from 'dayjs/plugin/utc.js';

dayjs.extend(utc);

/** A half-open time window [startMs, endMs), epoch ms. */
export interface TimeWindow {
  startMs: number;
  endMs: number;
}

/**
 * Splits [startMs, endMs) into consecutive half-open windows of at most `months` calendar months
 * (UTC), each also at most `maxMs` long when given. Windows never overlap and cover the period
 * exactly, so a record belongs to exactly one window whatever its time.
 */
export function splitWindows(startMs: number, endMs: number, months: number, maxMs = Infinity): TimeWindow[] {
  if (!(months >= 1) || !Number.isInteger(months)) throw new RangeError(`window months must be a positive integer, got ${months}`);
  const windows: TimeWindow[] = [];
  let start = startMs;
  while (start < endMs) {
    const byMonths = dayjs.utc(start).add(months, 'month').valueOf();
    const end = Math.min(byMonths, start + maxMs, endMs);
    windows.push({ startMs: start, endMs: end });
    start = end;
  }
  return windows;
}

/** Splits [startMs, endMs) at UTC midnights: one window per calendar day (the first and last may be partial). */
export function splitDays(startMs: number, endMs: number): TimeWindow[] {
  const windows: TimeWindow[] = [];
  let start = startMs;
  while (start < endMs) {
    const end = Math.min(dayjs.utc(start).startOf('day').add(1, 'day').valueOf(), endMs);
    windows.push({ startMs: start, endMs: end });
    start = end;
  }
  return windows;
}
