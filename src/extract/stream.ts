import { z } from 'zod';
import { ConfigError } from '../errors.ts';
import { ENDPOINTS, isEndpointId, type EndpointId } from '../exchange/endpoints.ts';
import { declaredPaths } from './schema-drift.ts';

/**
 * What a stream declaration says (after dlt's REST API source): one typed literal per stream in
 * pipelines/, read by the extraction machinery in src/extract, which is written once for all.
 */

/** How a field is typed in staging; also what validation checks on the way in. */
export type FieldType = 'id' | 'amount' | 'time_ms' | 'text' | 'integer' | 'boolean' | 'json';

/** One field of a record. */
export interface FieldSpec {
  /** The exchange's field name (camelCase or snake_case as sent). */
  name: string;
  type: FieldType;
  /** A record without it breaks the contract: the run stops before storing anything of that window. @default true */
  required?: boolean;
  /**
   * For amounts: the sign the exchange's documents promise (a fill's quantity is positive, a
   * price never negative). A value of the other sign breaks the contract like a missing field.
   */
  sign?: 'positive' | 'non-negative';
  /**
   * For `json` fields that staging reads into: the value is an object (`object`) or an array of
   * objects (`list`) with these fields, checked like the record's own (futures collateral and
   * positions). An optional nested amount may not be an empty string (staging casts it directly).
   */
  shape?: { kind: 'object' | 'list'; fields: readonly FieldSpec[] };
}

/** How a stream's requests are split by a query parameter. */
export type PartitionSpec =
  /** One partition. */
  | { kind: 'none' }
  /** One partition per spot symbol (configured or discovered; see docs/operating.md "Spot symbols"). */
  | { kind: 'spot-symbols'; param: string }
  /** The cross product of fixed values, e.g. productType x coin. */
  | { kind: 'values'; dimensions: readonly { param: string; values: readonly string[] }[] };

/** How one window is paged. */
export type PaginatorSpec =
  /** Page numbers: spot fills (from 0, `nextPage`), funding bills (from 1, `hasNextPage`), rebates (from 1, `pages`). */
  | {
      kind: 'page-number';
      pageParam: string;
      firstPage: 0 | 1;
      sizeParam: string;
      pageSize: number;
      /** How the answer says there is more: a boolean field, a field with the number of pages, or only a full page. A short page always ends. */
      more: { flag: string } | { pages: string } | { fullPage: true };
      /**
       * A field with the number of records, when the endpoint has one worth trusting: the pages
       * it implies are read concurrently, and the `more` signal of the last one is still obeyed.
       */
      totalRecords?: string;
    }
  /**
   * No page parameter (futures fills): move the end time back to the oldest record read, and
   * narrow a millisecond with more records than a page by the `narrowBy` filters
   * (exchange-notes.md "Paging and ordering").
   */
  | { kind: 'end-time-cursor'; limitParam: string; limit: number; moreFlag: string; narrowBy: readonly string[] }
  /** tradeTime cursors without ids or a paging flag (transfer records). */
  | { kind: 'trade-time-cursor'; limitParam: string; limit: number }
  /** One request returns everything. */
  | { kind: 'single' };

/** How records are identified, so re-reading a period never duplicates a row. */
export type IdentitySpec =
  /** A field (or fields) unique per record. */
  | { kind: 'key'; fields: readonly string[] }
  /**
   * No id: two genuine records may be identical. The key is (time, content hash, occurrence
   * number among identical records of that millisecond), which is stable because a window
   * always reads a millisecond whole.
   */
  | { kind: 'content-occurrence' }
  /** Totals per requested range (referrals): the key is the window plus these fields. */
  | { kind: 'window-key'; fields: readonly string[] };

interface StreamBase {
  /** Stream name = raw table = staging relation. */
  name: string;
  description: string;
  endpoint: EndpointId;
  /** Parameters sent with every request of the stream. */
  params?: Readonly<Record<string, string | number>>;
  /** Dotted path of the record array inside the payload; '' when the payload is the array. */
  recordsPath: string;
  /** Path of a single record object instead of an array (futures account). */
  singleRecord?: boolean;
  partitions: PartitionSpec;
  fields: readonly FieldSpec[];
  /**
   * Fields the exchange is known to send that `fields` does not list, as paths (`fillRole`, and
   * `position[].side` inside a shape): staging reads some of them as they come (nested text
   * needs no check) and the others not at all. Listed so that schema drift (schema-drift.ts)
   * reports only fields nobody has looked at yet. Not checked. @default none
   */
  knownFields?: readonly string[];
  /**
   * Pairs of amount fields the models multiply (a fill's quantity by its price): their product
   * must stay within the amount limit too (records.ts VALUE_LIMITS), or a sum of notionals could
   * overflow the models' 128-bit arithmetic.
   */
  products?: readonly (readonly [string, string])[];
}

/** A history stream: records with a time, read incrementally by window. */
export interface HistoryStream extends StreamBase {
  kind: 'history';
  /** The record's time field(s), epoch ms; the first one present is used (the commission record names it `dealTime`, the spec `date`). */
  timeFields: readonly string[];
  window: {
    /** Longest window, in calendar months. */
    months: number;
    /** Cut windows at UTC midnights (referral totals are per requested range: never overlap them). */
    daily?: boolean;
    startParam: string;
    endParam: string;
    /**
     * Read only up to this many minutes before now. Offset pages of id-less records shift when
     * a new record arrives while they are read, and a shifted page repeats a record that could
     * not be told from a genuine twin; the lookback reads the settled minutes on the next run.
     */
    settleMinutes?: number;
  };
  paginator: PaginatorSpec;
  identity: IdentitySpec;
  /** Days re-read before the cursor on every run, to catch late records. @default the config's lookbackDays */
  lookbackDays?: number;
}

/** A snapshot stream: the current state, stored as one row set per snapshot time when it changed. */
export interface SnapshotStream extends StreamBase {
  kind: 'snapshot';
  paginator: PaginatorSpec;
}

export type StreamDeclaration = HistoryStream | SnapshotStream;

const identifier = z.string().regex(/^[a-z][a-z0-9_]*$/, 'snake_case');

/** Checks a declaration at start-up; throws with the stream and field to fix. */
export function validateDeclaration(declaration: StreamDeclaration): void {
  const where = `pipelines/${declaration.name}`;
  const problems: string[] = [];
  if (!identifier.safeParse(declaration.name).success) problems.push(`name "${declaration.name}" must be snake_case`);
  if (!isEndpointId(declaration.endpoint)) problems.push(`unknown endpoint "${declaration.endpoint}"`);
  if (declaration.fields.length === 0) problems.push('declares no fields');
  const names = new Set(declaration.fields.map((field) => field.name));
  if (names.size !== declaration.fields.length) problems.push('declares a field twice');
  const misplaced = (fields: readonly FieldSpec[]): string[] =>
    fields.flatMap((field) => [
      ...(field.sign !== undefined && field.type !== 'amount' ? [`field "${field.name}" has a sign but is not an amount`] : []),
      ...(field.shape !== undefined && field.type !== 'json' ? [`field "${field.name}" has a shape but is not json`] : []),
      ...(field.shape === undefined ? [] : misplaced(field.shape.fields)),
    ]);
  problems.push(...misplaced(declaration.fields));
  const typed = declaredPaths({ fields: declaration.fields });
  for (const known of declaration.knownFields ?? []) if (typed.has(known)) problems.push(`known field "${known}" is also among its fields`);
  for (const pair of declaration.products ?? []) {
    for (const name of pair) if (declaration.fields.find((field) => field.name === name)?.type !== 'amount') problems.push(`product field "${name}" is not an amount among its fields`);
  }
  if (declaration.kind === 'history') {
    for (const field of declaration.timeFields) if (!names.has(field)) problems.push(`time field "${field}" is not among its fields`);
    if (declaration.window.months < 1 || declaration.window.months > 3) problems.push('window.months must be 1 to 3 (the exchange caps ranges at 3 months)');
    if (declaration.identity.kind !== 'content-occurrence') {
      for (const field of declaration.identity.fields) if (!names.has(field)) problems.push(`identity field "${field}" is not among its fields`);
    }
    if (declaration.paginator.kind === 'single' && declaration.identity.kind !== 'window-key') problems.push('a single-request history stream needs a window-key identity');
  }
  const paginator = declaration.paginator;
  if ((paginator.kind === 'page-number' && paginator.pageSize < 1) || ((paginator.kind === 'end-time-cursor' || paginator.kind === 'trade-time-cursor') && paginator.limit < 1)) {
    problems.push('page size must be positive');
  }
  if (isEndpointId(declaration.endpoint) && ENDPOINTS[declaration.endpoint].method === 'POST' && declaration.kind === 'history' && declaration.paginator.kind === 'trade-time-cursor') {
    problems.push('trade-time cursors are GET parameters');
  }
  if (problems.length > 0) throw new ConfigError(where, problems.join('; '));
}
