/**
 * The compression methods DuckDB leaves out when exledger writes the models' tables: the build
 * (src/models/build.ts), the publish's update of the standby copy (src/store/publish-delta.ts) and
 * the benchmark's write floor (bench/write-floor.ts), which measures what writing those tables
 * costs and so must write them as the build does.
 *
 * Bitpacking: the models' amounts are HUGEINT units (and DECIMAL(38,x), the same 128-bit
 * integers), and analysing them for bitpacking is most of the time DuckDB 1.5 takes to write such
 * a column (measured: copying int_spot_trades, 1M rows, 3.4 s with it, 1.9 s without); the integer
 * and date columns it would have packed stay as RLE, constant or plain values.
 */
export const WRITE_DISABLED_COMPRESSION = 'bitpacking';

/** The statement that sets {@link WRITE_DISABLED_COMPRESSION} on a connection. */
export const SET_WRITE_COMPRESSION = `SET disabled_compression_methods = '${WRITE_DISABLED_COMPRESSION}'`;
