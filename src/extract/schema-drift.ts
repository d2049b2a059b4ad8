import { LosslessNumber } from 'lossless-json';
import type { FieldSpec, StreamDeclaration } from './stream.ts';

/**
 * Schema drift, as dlt reports it: fields the exchange sends that the stream's declaration does
 * not list, so its staging model does not read them. Only their path and the JSON type of a value
 * are kept, never the value (it could be anything, a secret included).
 */

/** The JSON type of a value, as `typeof` would name it in JSON terms. */
export type JsonType = 'string' | 'number' | 'boolean' | 'null' | 'object' | 'array';

/** An undeclared field seen in a batch: its path (`rebateTier`, `collateral[].cum_bonus_amount`) and a value's JSON type. */
export interface UndeclaredField {
  path: string;
  jsonType: JsonType;
}

/**
 * The paths a declaration lists: its fields, the fields of each `shape` under its parent's
 * path (`collateral[].amount` for a list, `account.x` for an object), and its `knownFields`.
 */
export function declaredPaths(stream: Pick<StreamDeclaration, 'fields'> & Partial<Pick<StreamDeclaration, 'knownFields'>>): Set<string> {
  const paths = new Set<string>();
  const walk = (fields: readonly FieldSpec[], prefix: string) => {
    for (const field of fields) {
      paths.add(`${prefix}${field.name}`);
      if (field.shape !== undefined) walk(field.shape.fields, `${prefix}${field.name}${field.shape.kind === 'list' ? '[].' : '.'}`);
    }
  };
  walk(stream.fields, '');
  for (const known of stream.knownFields ?? []) paths.add(known);
  return paths;
}

/**
 * Adds to `found` the undeclared fields of these records: top-level fields the declaration does
 * not list, and fields inside a declared `shape` that the shape does not list (`knownFields`
 * excepted). Fields nested in
 * a `json` field without a shape are not looked into (staging reads such a field whole). The
 * first JSON type seen for a path is kept.
 */
export function collectUndeclared(stream: Pick<StreamDeclaration, 'fields' | 'knownFields'>, records: readonly Record<string, unknown>[], found: Map<string, JsonType>): void {
  const known = new Set(stream.knownFields ?? []);
  // One lookup per field list, not per record (a window can hold thousands of records).
  const lookups = new Map<readonly FieldSpec[], Map<string, FieldSpec>>();
  const visit = (fields: readonly FieldSpec[], record: Record<string, unknown>, prefix: string) => {
    let byName = lookups.get(fields);
    if (byName === undefined) {
      byName = new Map(fields.map((field) => [field.name, field]));
      lookups.set(fields, byName);
    }
    for (const [name, value] of Object.entries(record)) {
      const field = byName.get(name);
      if (field === undefined) {
        const path = `${prefix}${name}`;
        if (!found.has(path) && !known.has(path)) found.set(path, jsonTypeOf(value));
        continue;
      }
      if (field.shape === undefined) continue;
      const items = field.shape.kind === 'list' ? (Array.isArray(value) ? value : []) : [value];
      const nestedPrefix = `${prefix}${name}${field.shape.kind === 'list' ? '[].' : '.'}`;
      for (const item of items) if (isPlainObject(item)) visit(field.shape.fields, item, nestedPrefix);
    }
  };
  for (const record of records) visit(stream.fields, record, '');
}

/** The JSON type of a parsed value (numbers may be LosslessNumber or bigint: see lossless-json.ts). */
export function jsonTypeOf(value: unknown): JsonType {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'array';
  if (value instanceof LosslessNumber || typeof value === 'number' || typeof value === 'bigint') return 'number';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'boolean';
  return 'object';
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof LosslessNumber);
}
