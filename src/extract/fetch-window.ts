import { DataError } from '../errors.ts';
import type { ExchangeClient } from '../exchange/exchange-client.ts';
import { jsonScalarToString } from '../exchange/lossless-json.ts';
import type { Params } from '../exchange/sign.ts';
import { mapConcurrently } from './map-concurrently.ts';
import { eventTimeOf, recordName, recordsOf, validateRecord } from './records.ts';
import type { HistoryStream, PaginatorSpec, SnapshotStream, StreamDeclaration } from './stream.ts';
import type { TimeWindow } from './windows.ts';

/**
 * Reads one window of one partition completely, with the paging rules of its endpoint.
 *
 * Time bounds: the exchange documents neither ordering nor whether bounds are inclusive
 * (exchange-notes.md "Paging and ordering"). Every request therefore asks for one millisecond
 * more on each side, [start - 1, end], and keeps only records in [start, end): right whether the
 * exchange includes its bounds or not. Totals per range (referrals) cannot be trimmed afterwards
 * and are asked for exactly, [start, end - 1], as the notes' "assume inclusive" says.
 */

/** What the exchange was seen to do, learned per account and kept in meta.facts. */
export interface ExchangeFacts {
  /** Which transferRecords parameter returns older records: 'after' as documented, or 'before'. */
  transferOlderThan?: 'after' | 'before';
  /** Whether futures fills' endTime includes records at exactly endTime. */
  futuresEndInclusive?: boolean;
}

/** Everything a window fetch needs. */
export interface FetchContext {
  client: ExchangeClient;
  /** Parameters that pick the partition (symbol, productType, coin). */
  partitionParams: Params;
  facts: ExchangeFacts;
  /** Futures contract symbols, to narrow a crowded millisecond. */
  futuresSymbols: () => Promise<readonly string[]>;
  /** Called for data-quality notes that are not errors (a crowded millisecond resolved by orders). */
  warn: (message: string) => void;
}

type Rec = Record<string, unknown>;

/** Reads every record of a history stream in `window` for one partition. */
export async function fetchHistoryWindow(stream: HistoryStream, window: TimeWindow, context: FetchContext): Promise<Rec[]> {
  const paginator = stream.paginator;
  switch (paginator.kind) {
    case 'page-number': {
      const exact = stream.identity.kind === 'window-key';
      const bounds = { [stream.window.startParam]: exact ? window.startMs : window.startMs - 1, [stream.window.endParam]: exact ? window.endMs - 1 : window.endMs };
      const records = await fetchPages(stream, paginator, { ...context.partitionParams, ...bounds }, context);
      if (exact) return records;
      withinAsked(stream, records, window.startMs - 1, window.endMs);
      return inWindow(stream, records, window);
    }
    case 'end-time-cursor':
      return fetchByEndTime(stream, paginator, window, context);
    case 'trade-time-cursor':
      return fetchByTradeTime(stream, paginator, window, context);
    case 'single':
      return fetchPages(stream, paginator, context.partitionParams, context);
  }
}

/** Reads a snapshot stream's current state for one partition. */
export async function fetchSnapshot(stream: SnapshotStream, context: FetchContext): Promise<Rec[]> {
  return fetchPages(stream, stream.paginator, context.partitionParams, context);
}

async function fetchPages(stream: StreamDeclaration, paginator: PaginatorSpec, params: Params, context: FetchContext): Promise<Rec[]> {
  if (paginator.kind !== 'page-number') return readPage(stream, await context.client.call(stream.endpoint, { ...stream.params, ...params }));
  const request = (page: number) => context.client.call(stream.endpoint, { ...stream.params, ...params, [paginator.pageParam]: page, [paginator.sizeParam]: paginator.pageSize });
  const all: Rec[] = [];
  let page = paginator.firstPage;
  let payload = await request(page);
  for (;;) {
    const records = readPage(stream, payload);
    all.push(...records);
    if (!hasMore(stream, paginator, payload, page, records.length)) break;
    // Pages a total promises are asked for together; the last one's own signal still decides.
    const pending = plannedPages(paginator, payload, page);
    if (pending > 0) {
      const pages = await mapConcurrently(
        Array.from({ length: pending }, (_, index) => page + 1 + index),
        PAGE_CONCURRENCY,
        request,
      );
      for (const pagePayload of pages.slice(0, -1)) all.push(...readPage(stream, pagePayload));
      page += pending;
      payload = pages.at(-1);
      continue;
    }
    page += 1;
    payload = await request(page);
  }
  return all;
}

/** Pages read at once when a total says how many there are. */
const PAGE_CONCURRENCY = 4;

/**
 * Whether another page may hold records: the endpoint's own signal, or a full page. A full page
 * is always followed up (one request more when the last page is exactly full), so a flag the
 * exchange forgets to set can never drop records.
 */
function hasMore(stream: StreamDeclaration, paginator: Extract<PaginatorSpec, { kind: 'page-number' }>, payload: unknown, page: number, count: number): boolean {
  if (count === 0) return false;
  if (count >= paginator.pageSize) return true;
  const more = paginator.more;
  if ('flag' in more) {
    // A page number (spot open orders) or true both mean "more".
    const flag = field(payload, more.flag);
    return flag === true || (typeof flag === 'number' && flag > page);
  }
  if ('pages' in more) {
    const pages = Number(jsonScalarToString(field(payload, more.pages)));
    if (!Number.isFinite(pages)) throw new DataError(`${stream.name}: "${more.pages}" from ${stream.endpoint} is not a number`, { endpoint: stream.endpoint });
    return page - paginator.firstPage + 1 < pages;
  }
  return false;
}

/** How many further pages the answer's total implies (0 when it has none). */
function plannedPages(paginator: Extract<PaginatorSpec, { kind: 'page-number' }>, payload: unknown, page: number): number {
  const more = paginator.more;
  const total =
    paginator.totalRecords !== undefined
      ? Math.ceil(Number(jsonScalarToString(field(payload, paginator.totalRecords))) / paginator.pageSize)
      : 'pages' in more
        ? Number(jsonScalarToString(field(payload, more.pages)))
        : NaN;
  const read = page - paginator.firstPage + 1;
  return Number.isFinite(total) && total > read ? Math.min(total - read, 10_000) : 0;
}

/**
 * Futures fills have no page parameter: read newest first, then move endTime back to the oldest
 * millisecond read (which may be cut by the page) and read again, deduplicating by tradeId. A
 * millisecond with more fills than a page is read by symbol, then by order
 * (exchange-notes.md "Paging and ordering").
 */
async function fetchByEndTime(stream: HistoryStream, paginator: Extract<PaginatorSpec, { kind: 'end-time-cursor' }>, window: TimeWindow, context: FetchContext): Promise<Rec[]> {
  const byKey = new Map<string, Rec>();
  const keyOf = (record: Rec) => identityKey(stream, record);
  const { startParam, endParam } = stream.window;
  // Records at or after `end` are complete; ask for what lies below.
  let end = window.endMs;
  for (let guard = 0; ; guard += 1) {
    if (guard > 1_000_000) throw new DataError(`${stream.name}: paging did not end`, { endpoint: stream.endpoint });
    const endParamValue = context.facts.futuresEndInclusive === true ? end - 1 : end;
    const payload = await context.client.call(stream.endpoint, {
      ...stream.params,
      ...context.partitionParams,
      [startParam]: window.startMs - 1,
      [endParam]: endParamValue,
      [paginator.limitParam]: paginator.limit,
    });
    const records = readPage(stream, payload);
    withinAsked(stream, records, window.startMs - 1, endParamValue);
    const knewInclusive = context.facts.futuresEndInclusive === true;
    learnEndInclusive(stream, records, endParamValue, context);
    const below = records.filter((record) => eventTimeOf(stream, record) < end);
    for (const record of inWindow(stream, below, window)) byKey.set(keyOf(record), record);
    const full = records.length >= paginator.limit || field(payload, paginator.moreFlag) === true;
    if (!full) break;
    if (below.length === 0) {
      // The page held only records at `end` or later: the exchange includes endTime, which
      // this page just showed. Ask again, now for endTime - 1.
      if (!knewInclusive && context.facts.futuresEndInclusive === true) continue;
      throw new DataError(`${stream.name}: asked for records up to ${endParamValue} and got only later ones`, { endpoint: stream.endpoint });
    }
    const oldest = Math.min(...below.map((record) => eventTimeOf(stream, record)));
    if (oldest < window.startMs) break;
    const newest = Math.max(...below.map((record) => eventTimeOf(stream, record)));
    if (oldest === newest) {
      // A whole page in one millisecond: more fills share it than a page holds.
      for (const record of await readCrowdedMillisecond(stream, paginator, oldest, context)) byKey.set(keyOf(record), record);
      end = oldest;
    } else {
      // The oldest millisecond may be cut by the page: read it again whole on the next request.
      end = oldest + 1;
    }
    if (end <= window.startMs) break;
  }
  return [...byKey.values()];
}

/** Reads every fill of one crowded millisecond, narrowing by symbol, then by order. */
async function readCrowdedMillisecond(stream: HistoryStream, paginator: Extract<PaginatorSpec, { kind: 'end-time-cursor' }>, ms: number, context: FetchContext): Promise<Rec[]> {
  const [symbolParam, orderParam] = paginator.narrowBy;
  const found: Rec[] = [];
  const readAt = async (filters: Params): Promise<{ records: Rec[]; full: boolean }> => {
    const payload = await context.client.call(stream.endpoint, {
      ...stream.params,
      ...filters,
      [stream.window.startParam]: ms - 1,
      [stream.window.endParam]: ms + 1,
      [paginator.limitParam]: paginator.limit,
    });
    const records = readPage(stream, payload);
    return { records: records.filter((record) => eventTimeOf(stream, record) === ms), full: records.length >= paginator.limit || field(payload, paginator.moreFlag) === true };
  };
  if (symbolParam === undefined) throw crowded(stream, ms, 'the endpoint has no filter to narrow it');
  for (const symbol of await context.futuresSymbols()) {
    const bySymbol = await readAt({ [symbolParam]: symbol });
    if (!bySymbol.full) {
      found.push(...bySymbol.records);
      continue;
    }
    if (orderParam === undefined) throw crowded(stream, ms, `${symbol} alone has more than a page`);
    // Orders with fills in this millisecond: those seen, plus orders created in it (a taker
    // order that sweeps the book fills when it is created).
    const orderIds = new Set(bySymbol.records.map((record) => jsonScalarToString(record[orderParam])).filter((id): id is string => id !== null));
    for (let page = 0; ; page += 1) {
      const orders = await context.client.call('futures.currentOrders', { symbol, startTime: ms - 1, endTime: ms + 1, page, limit: 100 });
      const list = Array.isArray(orders) ? (orders as Rec[]) : [];
      for (const order of list) {
        const id = jsonScalarToString(order.order_id);
        if (id !== null) orderIds.add(id);
      }
      if (list.length < 100) break;
    }
    let total = 0;
    for (const orderId of orderIds) {
      const byOrder = await readAt({ [symbolParam]: symbol, [orderParam]: orderId });
      if (byOrder.full) throw crowded(stream, ms, `order ${orderId} alone has more fills in it than a page`);
      found.push(...byOrder.records);
      total += byOrder.records.length;
    }
    context.warn(`${stream.name}: ${total} ${symbol} fills share ${new Date(ms).toISOString()}; read by ${orderIds.size} orders`);
  }
  return found;
}

function crowded(stream: HistoryStream, ms: number, why: string): DataError {
  return new DataError(`${stream.name}: more records at ${new Date(ms).toISOString()} than one page holds and ${why}; cannot read them all`, { endpoint: stream.endpoint });
}

function learnEndInclusive(stream: HistoryStream, records: Rec[], endParamValue: number, context: FetchContext): void {
  if (context.facts.futuresEndInclusive !== undefined) return;
  if (records.some((record) => eventTimeOf(stream, record) === endParamValue)) context.facts.futuresEndInclusive = true;
}

/**
 * Transfer records: `after`/`before` are tradeTime cursors and the page has no flag. Walk older
 * with the "older than" cursor from the window's end; a full page's oldest millisecond may be
 * cut, so it is dropped and read again whole from the next cursor. Which parameter means "older
 * than" is checked against the data (the newer API documents it the other way round).
 */
async function fetchByTradeTime(stream: HistoryStream, paginator: Extract<PaginatorSpec, { kind: 'trade-time-cursor' }>, window: TimeWindow, context: FetchContext): Promise<Rec[]> {
  const kept: Rec[] = [];
  // Everything at or after `cursor` is already read (or outside the window).
  let cursor = window.endMs;
  for (;;) {
    const records = await readOlderThan(stream, paginator, cursor, context);
    const times = records.map((record) => eventTimeOf(stream, record));
    if (times.some((time) => time >= cursor)) {
      throw new DataError(`${stream.name}: asked for records older than ${cursor} and got newer ones; the exchange's cursor semantics changed`, { endpoint: stream.endpoint });
    }
    if (records.length < paginator.limit) {
      kept.push(...records.filter((_, index) => times[index]! >= window.startMs));
      break;
    }
    const oldest = Math.min(...times);
    if (oldest === Math.max(...times)) throw crowded(stream, oldest, 'the endpoint has no other cursor');
    kept.push(...records.filter((_, index) => times[index]! > oldest && times[index]! >= window.startMs));
    if (oldest < window.startMs) break;
    cursor = oldest + 1;
  }
  return kept;
}

async function readOlderThan(stream: HistoryStream, paginator: Extract<PaginatorSpec, { kind: 'trade-time-cursor' }>, cursor: number, context: FetchContext): Promise<Rec[]> {
  const ask = async (param: 'after' | 'before') => readPage(stream, await context.client.call(stream.endpoint, { ...stream.params, ...context.partitionParams, [param]: cursor, [paginator.limitParam]: paginator.limit }));
  const known = context.facts.transferOlderThan;
  if (known !== undefined) return ask(known);
  const isOlder = (records: Rec[]) => records.every((record) => eventTimeOf(stream, record) < cursor);
  const documented = await ask('after');
  if (documented.length > 0) {
    if (isOlder(documented)) {
      context.facts.transferOlderThan = 'after';
      return documented;
    }
    // `after` answered newer records: the exchange uses the newer API's meaning.
    context.facts.transferOlderThan = 'before';
    return ask('before');
  }
  // Nothing older by the documented meaning; check the other one before believing it.
  const other = await ask('before');
  if (other.length === 0) return [];
  if (isOlder(other)) {
    context.facts.transferOlderThan = 'before';
    return other;
  }
  context.facts.transferOlderThan = 'after';
  return [];
}

function readPage(stream: StreamDeclaration, payload: unknown): Rec[] {
  const records = recordsOf(stream, payload);
  for (const record of records) validateRecord(stream, record);
  return records;
}

/**
 * A record outside the time range the request asked for (both bounds included) breaks the
 * contract: the exchange ignored the filter, or the record's time is wrong. Refused like any
 * other bad value, before anything of the window is stored.
 */
function withinAsked(stream: HistoryStream, records: Rec[], fromMs: number, toMs: number): void {
  for (const record of records) {
    const time = eventTimeOf(stream, record);
    if (time >= fromMs && time <= toMs) continue;
    const field = stream.timeFields.find((name) => jsonScalarToString(record[name]) !== null) ?? stream.timeFields[0]!;
    throw new DataError(
      `${stream.name}: ${recordName(stream, record)} from ${stream.endpoint}: "${field}" is ${time} (${new Date(time).toISOString()}), outside the range asked for (${new Date(fromMs).toISOString()} to ${new Date(toMs).toISOString()})`,
      { endpoint: stream.endpoint },
    );
  }
}

function inWindow(stream: HistoryStream, records: Rec[], window: TimeWindow): Rec[] {
  return records.filter((record) => {
    const time = eventTimeOf(stream, record);
    return time >= window.startMs && time < window.endMs;
  });
}

function identityKey(stream: HistoryStream, record: Rec): string {
  const fields = stream.identity.kind === 'content-occurrence' ? [] : stream.identity.fields;
  return fields.map((name) => jsonScalarToString(record[name]) ?? '').join(':');
}

function field(payload: unknown, name: string): unknown {
  return typeof payload === 'object' && payload !== null ? (payload as Rec)[name] : undefined;
}
