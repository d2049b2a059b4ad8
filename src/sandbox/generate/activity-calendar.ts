/**
 * When one account is active over its year: trading sessions clustered in days, idle days,
 * one long quiet period with no record in any stream, and per-pair and per-contract trading
 * windows (some pairs stop for months). The month boundaries that get a record exactly on
 * their first millisecond (and one ms before) are chosen here too.
 */
import type { DayRange } from './catalog.ts';
import type { Rng } from './random.ts';

/** A stretch of a day during which the account places orders. */
export interface Session {
  startMs: number;
  endMs: number;
  /** Relative amount of activity (intensity times length). */
  weight: number;
}

/** The activity plan of one account. */
export interface ActivityCalendar {
  startMs: number;
  endMs: number;
  days: number;
  /** The long quiet period [quietStartMs, quietEndMs): no record of any stream falls inside. */
  quietStartMs: number;
  quietEndMs: number;
  /** Sessions of each day, by day index (empty on idle days and in the quiet period). */
  sessionsByDay: Session[][];
  /** First ms of the months that get records at t and t - 1 in every stream. */
  monthBoundaries: number[];
  /** Trading windows per spot symbol and per contract symbol, in day indices. */
  tradedDays: Map<string, readonly DayRange[]>;
}

/** Milliseconds in a day. */
export const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/** No session may end later than this before the quiet period (room for fills and the futures flattening). */
export const QUIET_MARGIN_MS = 4 * HOUR_MS;
/** No session may end later than this before the end of the history. */
const END_MARGIN_MS = 2 * HOUR_MS;

/**
 * Plans one account's year.
 * @param tradables - spot pairs and contracts with their nominal trading windows
 */
export function planActivityCalendar(rng: Rng, startMs: number, days: number, tradables: ReadonlyArray<{ symbol: string; tradedDays: readonly DayRange[] }>): ActivityCalendar {
  const endMs = startMs + days * DAY_MS;
  // Four to six weeks, somewhere in the middle of the year.
  const quietStartDay = rng.int(Math.floor(days * 0.41), Math.floor(days * 0.54));
  const quietStartMs = startMs + quietStartDay * DAY_MS + rng.int(0, 24) * HOUR_MS;
  const quietEndMs = quietStartMs + rng.int(28, 43) * DAY_MS + rng.int(0, 24) * HOUR_MS;

  const sessionsByDay: Session[][] = [];
  let weekFactor = 1;
  for (let day = 0; day < days; day++) {
    if (day % 7 === 0) weekFactor = rng.range(0.4, 1.6);
    const dayStart = startMs + day * DAY_MS;
    const sessions: Session[] = [];
    sessionsByDay.push(sessions);
    const kind = day === 0 ? 'normal' : rng.chance(0.28) ? 'idle' : rng.chance(0.15) ? 'busy' : 'normal';
    const sessionCount = 1 + rng.int(0, 3);
    for (let i = 0; i < sessionCount; i++) {
      const length = rng.int(20, 240) * 60_000;
      const start = dayStart + rng.int(0, DAY_MS - length);
      if (kind === 'idle') continue;
      const end = start + length;
      const allowedEnd = Math.min(endMs - END_MARGIN_MS, dayStart + DAY_MS);
      if (end > allowedEnd || (end > quietStartMs - QUIET_MARGIN_MS && start < quietEndMs)) continue;
      const intensity = (kind === 'busy' ? 3 : rng.range(0.5, 1.5)) * weekFactor;
      sessions.push({ startMs: start, endMs: end, weight: (intensity * length) / HOUR_MS });
    }
    sessions.sort((a, b) => a.startMs - b.startMs);
  }
  // Day 0 always has a session: the opening deposits and transfers happen in it.
  const first = sessionsByDay[0];
  if (first !== undefined && first.length === 0) first.push({ startMs: startMs + 9 * HOUR_MS, endMs: startMs + 11 * HOUR_MS, weight: 2 });

  const monthBoundaries: number[] = [];
  const date = new Date(startMs);
  for (let m = 1; ; m++) {
    const boundary = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + m, 1);
    if (boundary >= endMs - DAY_MS) break;
    if (boundary < startMs + 7 * DAY_MS) continue;
    if (boundary > quietStartMs - QUIET_MARGIN_MS - HOUR_MS && boundary - 1 < quietEndMs + HOUR_MS) continue;
    monthBoundaries.push(boundary);
  }

  const tradedDays = new Map<string, readonly DayRange[]>();
  for (const t of tradables) tradedDays.set(t.symbol, t.tradedDays.map(([from, to]) => [jitter(rng, from, days), jitter(rng, to, days)] as const));

  return { startMs, endMs, days, quietStartMs, quietEndMs, sessionsByDay, monthBoundaries, tradedDays };
}

/** Moves an inner window edge by up to a week, so accounts differ; the year's ends stay put. */
function jitter(rng: Rng, day: number, days: number): number {
  if (day <= 1 || day >= days) return Math.min(day, days);
  return Math.max(1, Math.min(days - 1, day + rng.int(-7, 8)));
}

/** Whether a symbol is in one of its trading windows on a day. */
export function isTradedOn(calendar: ActivityCalendar, symbol: string, day: number): boolean {
  const ranges = calendar.tradedDays.get(symbol);
  if (ranges === undefined) return false;
  for (const [from, to] of ranges) if (day >= from && day < to) return true;
  return false;
}

/** Day index of an epoch ms within the history. */
export function dayIndexOf(calendar: ActivityCalendar, t: number): number {
  return Math.floor((t - calendar.startMs) / DAY_MS);
}

/** Whether no record may fall at t (inside the quiet period, with its margin before it). */
export function isInQuietPeriod(calendar: ActivityCalendar, t: number): boolean {
  return t >= calendar.quietStartMs - QUIET_MARGIN_MS && t < calendar.quietEndMs;
}
