import duckdb from '@duckdb/node-bindings';
import { endianness } from 'node:os';
import { DuckDBDataChunk, DuckDBTimestampTZValue, DuckDBTypeId, type DuckDBAppender, type DuckDBType, type DuckDBValue } from '@duckdb/node-api';

/** Rows of one data chunk (DuckDB's vector size). */
const CHUNK_ROWS = 2048;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const INT128_MIN = -(2n ** 127n);
const INT128_MAX = 2n ** 127n - 1n;

/**
 * A column's values for the chunk being filled, kept as DuckDB stores them: strings as they are,
 * numbers in a typed array (HUGEINT as its two 64-bit halves, low first, as DuckDB's hugeint_t),
 * with a byte per row saying whether it is not NULL.
 */
type Column =
  | { kind: 'varchar'; values: (string | null)[] }
  | { kind: 'int64'; data: BigInt64Array; valid: Uint8Array }
  | { kind: 'int128'; data: BigInt64Array; valid: Uint8Array }
  | { kind: 'bool'; data: Uint8Array; valid: Uint8Array };

/** The column types RowChunks writes (those of the models computed in TypeScript). */
function columnOf(type: DuckDBType): Column {
  switch (type.typeId) {
    case DuckDBTypeId.VARCHAR:
      return { kind: 'varchar', values: new Array<string | null>(CHUNK_ROWS).fill(null) };
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.TIMESTAMP_TZ:
      return { kind: 'int64', data: new BigInt64Array(CHUNK_ROWS), valid: new Uint8Array(CHUNK_ROWS) };
    case DuckDBTypeId.HUGEINT:
      return { kind: 'int128', data: new BigInt64Array(CHUNK_ROWS * 2), valid: new Uint8Array(CHUNK_ROWS) };
    case DuckDBTypeId.BOOLEAN:
      return { kind: 'bool', data: new Uint8Array(CHUNK_ROWS), valid: new Uint8Array(CHUNK_ROWS) };
    default:
      throw new Error(`RowChunks writes VARCHAR, BIGINT, TIMESTAMPTZ, HUGEINT and BOOLEAN columns, not ${type.toString()}`);
  }
}

/**
 * Rows appended a data chunk at a time, for the models computed in TypeScript (the lot segments
 * append 29M rows on the 10M benchmark's full build, the moving average 10M).
 *
 * Each value goes straight into a typed array laid out as DuckDB's vector, and each full chunk is
 * copied into DuckDB's vectors with one call per column (`copy_data_to_vector` of
 * @duckdb/node-bindings, the C API under @duckdb/node-api). A string column whose rows in the
 * chunk all hold one string (a partition's pool, symbol or cost method) becomes a constant
 * vector, one string instead of 2,048. Until 2026-11-30 the chunk was filled through node-api's
 * vectors, value by value (`setColumns`): per HUGEINT three BigInts made and checked, per string
 * a call into the binding, per row a validity bit computed with BigInts. On 3M rows of the lot
 * segments' ten columns, appending took 6.1 s that way and 3.6 s this way, most of it DuckDB's own
 * append; the 10M benchmark's lot segments, built whole, 160 to 165 s that way and 127 s this way
 * (docs/benchmarks.md).
 */
export class RowChunks {
  private readonly columns: Column[];
  private rows = 0;
  /** A chunk's validity mask, 64 rows per word, built where a column holds a NULL. */
  private readonly validity = new Uint8Array(CHUNK_ROWS / 8);
  /**
   * One chunk, reset and refilled: a chunk's native memory is not freed with its JS object
   * (measured: a new chunk per 2,048 rows held 180 MB per million rows appended, 5 GB over a 10M
   * history's 29M segments, outside DuckDB's memory_limit; one chunk reused stays flat).
   */
  private readonly chunk: DuckDBDataChunk;

  /** `types`: the table's columns, in order. */
  constructor(
    private readonly appender: DuckDBAppender,
    types: readonly DuckDBType[],
  ) {
    // The typed arrays are in the machine's byte order, as DuckDB's vectors are; the validity
    // mask is written byte by byte as little-endian 64-bit words.
    if (endianness() !== 'LE') throw new Error('RowChunks writes validity masks for little-endian machines only');
    this.columns = types.map(columnOf);
    this.chunk = DuckDBDataChunk.create([...types], CHUNK_ROWS);
  }

  /**
   * Adds one row (a value per column, in order: a string, a bigint, a DuckDBTimestampTZValue, a
   * boolean, or null); a full chunk goes to the appender. A value of another JS type than its
   * column's throws (a number for a BIGINT: BigInt64Array refuses it), as does a HUGEINT out of
   * its range.
   */
  add(row: readonly DuckDBValue[]): void {
    const at = this.rows;
    for (let index = 0; index < this.columns.length; index++) {
      const column = this.columns[index]!;
      const value = row[index] ?? null;
      if (column.kind === 'varchar') {
        if (value !== null && typeof value !== 'string') throw new TypeError(`column ${index + 1}: a string, not ${typeof value}`);
        column.values[at] = value;
        continue;
      }
      if (value === null) {
        column.valid[at] = 0;
        continue;
      }
      column.valid[at] = 1;
      if (column.kind === 'int64') column.data[at] = value instanceof DuckDBTimestampTZValue ? value.micros : (value as bigint);
      else if (column.kind === 'bool') column.data[at] = value === true ? 1 : 0;
      else {
        const number = value as bigint;
        // The low half: a BigInt64Array keeps a bigint's low 64 bits (no new bigint made). The
        // high half: the sign's for a value inside int64 (most amounts), else the value shifted.
        column.data[2 * at] = number;
        column.data[2 * at + 1] = number >= INT64_MIN && number <= INT64_MAX ? (number < 0n ? -1n : 0n) : highHalf(number);
      }
    }
    this.rows = at + 1;
    if (this.rows === CHUNK_ROWS) this.appendChunk();
  }

  /** Appends what is held, then flushes the appender (its rows go to the table). */
  flushSync(): void {
    this.appendChunk();
    this.appender.flushSync();
  }

  closeSync(): void {
    this.appender.closeSync();
  }

  private appendChunk(): void {
    const rows = this.rows;
    if (rows === 0) return;
    this.chunk.reset();
    const chunk = this.chunk.chunk;
    for (let index = 0; index < this.columns.length; index++) {
      const column = this.columns[index]!;
      const vector = duckdb.data_chunk_get_vector(chunk, index);
      if (column.kind === 'varchar') {
        const values = column.values;
        const first = values[0]!;
        let same = first !== null;
        for (let row = 1; same && row < rows; row++) same = values[row] === first;
        if (same) {
          duckdb.vector_reference_value(vector, duckdb.create_varchar(first));
          continue;
        }
        let nulls = false;
        for (let row = 0; row < rows; row++) {
          const value = values[row];
          if (value === null || value === undefined) nulls = true;
          else duckdb.vector_assign_string_element(vector, row, value);
        }
        if (nulls) this.copyValidity(vector, rows, (row) => values[row] !== null);
        continue;
      }
      const width = column.kind === 'int128' ? 16 : column.kind === 'int64' ? 8 : 1;
      duckdb.copy_data_to_vector(vector, 0, column.data.buffer as ArrayBuffer, column.data.byteOffset, rows * width);
      const valid = column.valid;
      if (valid.subarray(0, rows).includes(0)) this.copyValidity(vector, rows, (row) => valid[row] === 1);
    }
    duckdb.data_chunk_set_size(chunk, rows);
    this.appender.appendDataChunk(this.chunk);
    this.rows = 0;
  }

  /** A vector's validity mask: bit `row % 64` of word `row / 64` set where the row is not NULL (little-endian words). */
  private copyValidity(vector: duckdb.Vector, rows: number, isValid: (row: number) => boolean): void {
    const bytes = Math.ceil(rows / 64) * 8;
    const mask = this.validity;
    mask.fill(0, 0, bytes);
    for (let row = 0; row < rows; row++) if (isValid(row)) mask[row >> 3]! |= 1 << (row & 7);
    duckdb.vector_ensure_validity_writable(vector);
    duckdb.copy_data_to_vector_validity(vector, 0, mask.buffer, mask.byteOffset, bytes);
  }
}

/** A HUGEINT's high 64 bits (signed), for a value outside int64. */
function highHalf(value: bigint): bigint {
  if (value < INT128_MIN || value > INT128_MAX) throw new RangeError(`${value} is outside the HUGEINT range`);
  return value >> 64n;
}

/**
 * Closes an appender (or RowChunks) of a transaction that failed: closing one of an aborted
 * transaction fails too ("Current transaction is aborted"), and the error that aborted it is the
 * one to tell.
 */
export function closeQuietly(appender: { closeSync(): void }): void {
  try {
    appender.closeSync();
  } catch {
    // The caller's transaction is rolled back; the first error is thrown.
  }
}
