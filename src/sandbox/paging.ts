/**
 * Time ranges and pages over history arrays sorted ascending by `t` (see model.ts).
 *
 * Every history endpoint serves newest first: descending by t, and records sharing a
 * millisecond in the reverse of their array order. exchange-notes.md "Paging and ordering"
 * says neither ordering nor bound inclusivity is documented, so the bound semantics are an
 * option (BoundsMode) that tests flip to prove client code does not depend on them.
 */

/** Something with an event time in epoch ms. */
export interface HasTime {
  t: number;
}

/**
 * How a [start, end] time filter treats its bounds.
 * inclusive: start <= t <= end; exclusive: start < t < end; half-open: start <= t < end.
 */
export type BoundsMode = 'inclusive' | 'exclusive' | 'half-open';

/** Index of the first item with t >= time (items.length when none). */
export function lowerBound(items: readonly HasTime[], time: number): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((items[mid] as HasTime).t < time) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Index of the first item with t > time (items.length when none). */
export function upperBound(items: readonly HasTime[], time: number): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((items[mid] as HasTime).t <= time) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A half-open span of array indexes [lo, hi). */
export interface IndexSpan {
  lo: number;
  hi: number;
}

/** What a query asks for, and what the server lets it see. */
export interface RangeQuery {
  /** Requested start (per `bounds`). */
  start?: number | undefined;
  /** Requested end (per `bounds`). */
  end?: number | undefined;
  bounds: BoundsMode;
  /** Oldest visible time, inclusive (the history horizon); none when undefined. */
  notBefore?: number | undefined;
  /** Newest visible time, inclusive (the server's visibility horizon). */
  visibleUntil: number;
}

/** The indexes of the records a range query selects, by binary search (no scan). */
export function selectSpan(items: readonly HasTime[], query: RangeQuery): IndexSpan {
  let lo = 0;
  let hi = upperBound(items, query.visibleUntil);
  if (query.notBefore !== undefined) lo = Math.max(lo, lowerBound(items, query.notBefore));
  if (query.start !== undefined) {
    lo = Math.max(lo, query.bounds === 'exclusive' ? upperBound(items, query.start) : lowerBound(items, query.start));
  }
  if (query.end !== undefined) {
    hi = Math.min(hi, query.bounds === 'inclusive' ? upperBound(items, query.end) : lowerBound(items, query.end));
  }
  return { lo, hi: Math.max(lo, hi) };
}

/** Whether one time passes a range query (for small lists that are filtered, not searched). */
export function inRange(time: number, query: RangeQuery): boolean {
  if (time > query.visibleUntil) return false;
  if (query.notBefore !== undefined && time < query.notBefore) return false;
  if (query.start !== undefined && (query.bounds === 'exclusive' ? time <= query.start : time < query.start)) return false;
  if (query.end !== undefined && (query.bounds === 'inclusive' ? time > query.end : time >= query.end)) return false;
  return true;
}

/** One page of a span, newest first. */
export interface Page<T> {
  items: T[];
  /** Records of the span after this page. */
  remaining: number;
}

/**
 * Page `offset`..`offset + size` of a span counted from its newest end: items hi-1, hi-2, ...
 * so equal times come out in reverse array order.
 */
export function pageNewestFirst<T>(items: readonly T[], span: IndexSpan, offset: number, size: number): Page<T> {
  const total = span.hi - span.lo;
  const out: T[] = [];
  const first = span.hi - 1 - offset;
  const last = Math.max(span.lo, span.hi - offset - size);
  for (let index = first; index >= last; index -= 1) out.push(items[index] as T);
  return { items: out, remaining: Math.max(0, total - offset - out.length) };
}
