import { createHash } from 'node:crypto';
import { LosslessNumber } from 'lossless-json';
import { DataError } from '../errors.ts';
import { jsonScalarToString, stringifyJsonLossless } from '../exchange/lossless-json.ts';
import type { FieldSpec, HistoryStream, StreamDeclaration } from './stream.ts';

/** One record ready for the raw table. */
export interface RawRecord {
  /** Unique per stream and account: the id, or (time, content hash, occurrence) for id-less streams. */
  key: string;
  /** The record's time, epoch ms (for referral totals: the start of their day). */
  eventMs: number;
  /** The record exactly as sent (lossless JSON text, unknown fields included). */
  json: string;
}

const DECIMAL = /^-?\d+(\.\d+)?$/;
const DIGITS = /^-?\d+$/;

/** Takes the record array (or single record) out of a payload; a missing array breaks the contract. */
export function recordsOf(stream: StreamDeclaration, payload: unknown): Record<string, unknown>[] {
  let node: unknown = payload;
  for (const part of stream.recordsPath === '' ? [] : stream.recordsPath.split('.')) {
    node = isRecord(node) ? node[part] : undefined;
  }
  if (stream.singleRecord === true) {
    if (!isRecord(node)) throw new DataError(`${stream.name}: expected an object from ${stream.endpoint}, got ${describe(node)}`, { endpoint: stream.endpoint });
    return [node];
  }
  // A null list is how some endpoints say "nothing" (spot open orders show `nextPage: null`).
  if (node === null) return [];
  if (!Array.isArray(node)) {
    const where = stream.recordsPath === '' ? 'the payload' : `"${stream.recordsPath}"`;
    throw new DataError(`${stream.name}: expected ${where} of ${stream.endpoint} to be an array, got ${describe(node)}`, { endpoint: stream.endpoint });
  }
  return node.map((item, index) => {
    if (!isRecord(item)) throw new DataError(`${stream.name}: record ${index} from ${stream.endpoint} is ${describe(item)}, not an object`, { endpoint: stream.endpoint });
    return item;
  });
}

/** Checks a record against its declaration: required fields present, values of the declared type. */
export function validateRecord(stream: StreamDeclaration, record: Record<string, unknown>): void {
  for (const field of stream.fields) {
    const value = record[field.name];
    if (value === undefined || value === null) {
      if (field.required === false) continue;
      throw new DataError(`${stream.name}: a record from ${stream.endpoint} has no "${field.name}" (required by pipelines/${stream.name}); nothing of this window was stored`, {
        endpoint: stream.endpoint,
      });
    }
    if (!hasType(field, value)) {
      throw new DataError(
        `${stream.name}: "${field.name}" from ${stream.endpoint} should be ${describeType(field)}, got ${describe(value)}; nothing of this window was stored`,
        { endpoint: stream.endpoint },
      );
    }
  }
  if (stream.kind === 'history' && stream.timeFields.length > 0 && stream.timeFields.every((name) => record[name] === undefined || record[name] === null)) {
    throw new DataError(`${stream.name}: a record from ${stream.endpoint} has none of the time fields ${stream.timeFields.join(', ')}`, { endpoint: stream.endpoint });
  }
}

/** The record's time, epoch ms, from the first time field present. */
export function eventTimeOf(stream: HistoryStream, record: Record<string, unknown>): number {
  for (const name of stream.timeFields) {
    const text = jsonScalarToString(record[name]);
    if (text !== null && DIGITS.test(text)) return Number(text);
  }
  throw new DataError(`${stream.name}: a record has no usable time in ${stream.timeFields.join(' or ')}`, { endpoint: stream.endpoint });
}

/**
 * Builds raw records for everything read in one window. Keys of id-less records number
 * identical records within their millisecond (0, 1, …), so two genuine twins stay two rows and a
 * re-read of the same window yields the same keys.
 */
export function toRawRecords(stream: HistoryStream, records: readonly Record<string, unknown>[], windowStartMs: number): RawRecord[] {
  const identity = stream.identity;
  const occurrences = new Map<string, number>();
  const raw = records.map((record): RawRecord => {
    const json = stringifyJsonLossless(record);
    if (identity.kind === 'window-key') {
      return { key: `${windowStartMs}:${keyFields(identity.fields, record)}`, eventMs: windowStartMs, json };
    }
    const eventMs = eventTimeOf(stream, record);
    if (identity.kind === 'key') return { key: keyFields(identity.fields, record), eventMs, json };
    const digest = createHash('sha256').update(canonicalJson(record)).digest('base64url').slice(0, 22);
    const base = `${eventMs}:${digest}`;
    const occurrence = occurrences.get(base) ?? 0;
    occurrences.set(base, occurrence + 1);
    return { key: `${base}:${occurrence}`, eventMs, json };
  });
  if (identity.kind === 'content-occurrence') return raw;
  // A record read twice in one window (pages that shifted while being read) is one record.
  return [...new Map(raw.map((record) => [record.key, record])).values()];
}

/** Exact key text from the identity fields. */
function keyFields(fields: readonly string[], record: Record<string, unknown>): string {
  return fields.map((name) => jsonScalarToString(record[name]) ?? '').join(':');
}

/** JSON with sorted keys, so field order on the wire does not change a content hash. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isRecord(value) && !(value instanceof LosslessNumber)) {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`)
      .join(',')}}`;
  }
  return stringifyJsonLossless(value);
}

function hasType(field: FieldSpec, value: unknown): boolean {
  const text = jsonScalarToString(value);
  switch (field.type) {
    case 'amount':
      // Optional amounts may be empty strings (spot fillPrice, exchange-notes.md "Numbers").
      return text !== null && typeof value !== 'boolean' && (DECIMAL.test(text) || (field.required === false && text === ''));
    case 'id':
    case 'integer':
    case 'time_ms':
      return text !== null && typeof value !== 'boolean' && DIGITS.test(text);
    case 'text':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean' || value === 'true' || value === 'false';
    case 'json':
      return true;
  }
}

function describeType(field: FieldSpec): string {
  return { amount: 'a decimal string', id: 'an integer id', integer: 'an integer', time_ms: 'epoch milliseconds', text: 'a string', boolean: 'a boolean', json: 'JSON' }[field.type];
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (value instanceof LosslessNumber || typeof value === 'bigint' || typeof value === 'number') return `the number ${String(value)}`;
  if (typeof value === 'string') return `"${value.length > 40 ? `${value.slice(0, 40)}…` : value}"`;
  return typeof value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
