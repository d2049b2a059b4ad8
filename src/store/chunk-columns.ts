import duckdb from '@duckdb/node-bindings';
import { endianness } from 'node:os';
import type { DuckDBDataChunk } from '@duckdb/node-api';

const decoder = new TextDecoder();

/**
 * The columns of one chunk of a query's result, read from DuckDB's vector memory a column at a
 * time, for the models computed in TypeScript that stream millions of events (the lot segments
 * read the 10M benchmark's 10M trades, the moving average as many).
 *
 * What it replaces: `chunk.getRows()` of @duckdb/node-api, which makes an array per row and reads
 * each value through a vector object (a HUGEINT as three bigints and a shift, a string decoded
 * row by row): 13.6 s of the lot segments' 10M events (CPU profile, 2026-11-30). Here a
 * column's values come from one typed array over the vector's bytes: a HUGEINT that fits in 64
 * bits (most amounts) is one bigint, and a string equal to the row before it (a partition's pool
 * and symbol, a side) is not decoded again.
 *
 * A chunk's vectors are flat in a query's result (the C API's), laid out as DuckDB stores them:
 * BIGINT 8 bytes, HUGEINT 16 (the low 64 bits first), BOOLEAN 1, VARCHAR a 16-byte string_t (its
 * length, then the string itself when at most 12 bytes, else a prefix and a pointer).
 */
export class ChunkColumns {
  readonly rows: number;
  private readonly chunk: duckdb.DataChunk;

  constructor(chunk: DuckDBDataChunk) {
    if (endianness() !== 'LE') throw new Error('ChunkColumns reads little-endian vectors only');
    this.chunk = chunk.chunk;
    this.rows = chunk.rowCount;
  }

  /** A VARCHAR column. */
  strings(column: number): (string | null)[] {
    const { bytes, valid } = this.vector(column, duckdb.Type.VARCHAR, 16);
    const words = new Int32Array(bytes.buffer, bytes.byteOffset, this.rows * 4);
    const out = new Array<string | null>(this.rows);
    let previous: string | null = null;
    let previousAt = -1;
    for (let row = 0; row < this.rows; row++) {
      if (!isValid(valid, row)) {
        out[row] = null;
        continue;
      }
      const at = row * 4;
      // The same 16 bytes as the last string read: the same string (inline, or the same pointer).
      if (previousAt >= 0 && words[at] === words[previousAt] && words[at + 1] === words[previousAt + 1] && words[at + 2] === words[previousAt + 2] && words[at + 3] === words[previousAt + 3]) {
        out[row] = previous;
        continue;
      }
      const length = words[at]! >>> 0;
      const offset = bytes.byteOffset + row * 16;
      const text = length <= 12 ? decoder.decode(new Uint8Array(bytes.buffer, offset + 4, length)) : decoder.decode(duckdb.get_data_from_pointer(bytes.buffer as ArrayBuffer, offset + 8, length));
      out[row] = text;
      previous = text;
      previousAt = at;
    }
    return out;
  }

  /** A BIGINT (or TIMESTAMP_TZ: its microseconds) column. */
  bigints(column: number): (bigint | null)[] {
    const { bytes, valid } = this.vector(column, [duckdb.Type.BIGINT, duckdb.Type.TIMESTAMP_TZ], 8);
    const values = new BigInt64Array(bytes.buffer, bytes.byteOffset, this.rows);
    const out = new Array<bigint | null>(this.rows);
    for (let row = 0; row < this.rows; row++) out[row] = isValid(valid, row) ? values[row]! : null;
    return out;
  }

  /** A BIGINT column as numbers: exact where the values are safe integers (|v| < 2^53), else it throws. */
  numbers(column: number): (number | null)[] {
    const { bytes, valid } = this.vector(column, duckdb.Type.BIGINT, 8);
    const words = new Int32Array(bytes.buffer, bytes.byteOffset, this.rows * 2);
    const out = new Array<number | null>(this.rows);
    for (let row = 0; row < this.rows; row++) {
      if (!isValid(valid, row)) {
        out[row] = null;
        continue;
      }
      const value = words[2 * row + 1]! * 2 ** 32 + (words[2 * row]! >>> 0);
      if (!Number.isSafeInteger(value)) throw new RangeError(`column ${column + 1}, row ${row + 1}: ${value} is not a safe integer`);
      out[row] = value;
    }
    return out;
  }

  /** A HUGEINT column. */
  hugeints(column: number): (bigint | null)[] {
    const { bytes, valid } = this.vector(column, duckdb.Type.HUGEINT, 16);
    const halves = new BigInt64Array(bytes.buffer, bytes.byteOffset, this.rows * 2);
    const words = new Int32Array(bytes.buffer, bytes.byteOffset, this.rows * 4);
    const out = new Array<bigint | null>(this.rows);
    for (let row = 0; row < this.rows; row++) {
      if (!isValid(valid, row)) {
        out[row] = null;
        continue;
      }
      // The high half is the low half's sign (0 for a low half of 0 or more, -1 below): the value
      // is the low half read as a signed 64-bit integer. Told from the 32-bit words, so that only
      // one bigint is made.
      const high0 = words[4 * row + 2]!;
      const high1 = words[4 * row + 3]!;
      const lowNegative = words[4 * row + 1]! < 0;
      if ((high0 === 0 && high1 === 0 && !lowNegative) || (high0 === -1 && high1 === -1 && lowNegative)) out[row] = halves[2 * row]!;
      else out[row] = (halves[2 * row + 1]! << 64n) + BigInt.asUintN(64, halves[2 * row]!);
    }
    return out;
  }

  /** A BOOLEAN column. */
  booleans(column: number): (boolean | null)[] {
    const { bytes, valid } = this.vector(column, duckdb.Type.BOOLEAN, 1);
    const out = new Array<boolean | null>(this.rows);
    for (let row = 0; row < this.rows; row++) out[row] = isValid(valid, row) ? bytes[row] !== 0 : null;
    return out;
  }

  /** The vector's bytes (aligned to 8, copied where they are not) and its validity mask (null: every row valid). */
  private vector(column: number, types: duckdb.Type | readonly duckdb.Type[], width: number): { bytes: Uint8Array; valid: Uint8Array | null } {
    const vector = duckdb.data_chunk_get_vector(this.chunk, column);
    const type = duckdb.get_type_id(duckdb.vector_get_column_type(vector));
    const expected = typeof types === 'number' ? [types] : types;
    if (!expected.includes(type)) throw new TypeError(`column ${column + 1} is of DuckDB type ${duckdb.Type[type]}, not ${expected.map((t) => duckdb.Type[t]).join(' or ')}`);
    let bytes = duckdb.vector_get_data(vector, this.rows * width);
    if (bytes.byteOffset % 8 !== 0) bytes = bytes.slice();
    const valid = duckdb.vector_get_validity(vector, Math.ceil(this.rows / 64) * 8) as Uint8Array | null;
    return { bytes, valid };
  }
}

function isValid(valid: Uint8Array | null, row: number): boolean {
  return valid === null || (valid[row >> 3]! & (1 << (row & 7))) !== 0;
}
