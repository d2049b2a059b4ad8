import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BIGINT, DuckDBDataChunk, HUGEINT, VARCHAR } from '@duckdb/node-api';
import { afterAll, describe, expect, it } from 'vitest';
import { Database } from '../src/store/database.ts';

/**
 * A model computed in TypeScript appends its rows in the build's transaction (int_spot_lot_segments,
 * int_coin_lots). A build runs with preserve_insertion_order off, and DuckDB then held every
 * appended row in memory until the commit: the 10M benchmark history's 29M lot segments failed
 * the build at memoryLimit 4GB. Database.withInsertionOrder lets the rows go to the file as row
 * groups fill.
 */
describe('appending in a transaction', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'exledger-append-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  // Without insertion order, how much DuckDB holds over the second half varies from run to run
  // (10.6 to 43 MB over 600k rows, 33 to 78 MB over 1.2M, measured): enough rows that it is always
  // well above the 16 MiB the test asks, while with it the memory stays flat.
  const ROWS = 2_400_000;
  const TYPES = [VARCHAR, BIGINT, HUGEINT, HUGEINT];

  /**
   * Appends ROWS rows in one transaction, as the build does (insertion order off), and returns how
   * much DuckDB's memory of uncommitted table data grew over the second half of them.
   */
  const uncommittedGrowth = async (file: string, wrap: (db: Database, work: () => Promise<number>) => Promise<number>): Promise<number> => {
    const db = await Database.open(path.join(dir, file));
    try {
      await db.run('SET preserve_insertion_order = false');
      await db.run('CREATE TABLE t (pool VARCHAR NOT NULL, seq BIGINT NOT NULL, quantity HUGEINT NOT NULL, cost HUGEINT)');
      return await db.transaction(() =>
        wrap(db, async () => {
          const inMemory = async () => {
            const [memory] = await db.all<{ bytes: string }>("SELECT sum(memory_usage_bytes) AS bytes FROM duckdb_memory() WHERE tag = 'IN_MEMORY_TABLE'");
            return Number(memory?.bytes ?? 0);
          };
          let half = 0;
          const appender = await db.appender('main', 't');
          const chunk = DuckDBDataChunk.create(TYPES, 2048);
          for (let start = 0; start < ROWS; start += 2048) {
            const columns: bigint[][] & string[][] = TYPES.map(() => []) as never;
            for (let row = start; row < start + 2048; row += 1) {
              const seq = BigInt(row);
              (columns[0] as string[]).push('main');
              (columns[1] as bigint[]).push(seq);
              (columns[2] as bigint[]).push(seq * 1_000_000_007n);
              (columns[3] as bigint[]).push(seq * 3n);
            }
            chunk.reset();
            chunk.setColumns(columns);
            appender.appendDataChunk(chunk);
            if (start + 2048 >= ROWS / 2 && half === 0) {
              appender.flushSync();
              half = await inMemory();
            }
          }
          appender.flushSync();
          appender.closeSync();
          return (await inMemory()) - half;
        }),
      );
    } finally {
      db.close();
    }
  };

  it('writes the rows to the file as they come inside withInsertionOrder (its memory stays flat), where without it DuckDB holds them (its memory grows)', async () => {
    const held = await uncommittedGrowth('without.duckdb', (_db, work) => work());
    const written = await uncommittedGrowth('with.duckdb', (db, work) => db.withInsertionOrder(work));
    // Without, the memory grows with the rows; with, it holds the row groups being filled.
    console.log(`uncommitted table memory over the second ${ROWS / 2} rows: ${held} bytes more without, ${written} with`);
    expect(held).toBeGreaterThan(16 * 1024 ** 2);
    expect(written).toBeLessThan(8 * 1024 ** 2);
  });

  it('tells the error that aborted the transaction, and puts the setting back after the rollback', async () => {
    const db = await Database.open(path.join(dir, 'failing.duckdb'));
    try {
      await db.run('SET preserve_insertion_order = false');
      await db.run('CREATE TABLE t (a INTEGER NOT NULL)');
      await expect(db.transaction(() => db.withInsertionOrder(() => db.run('INSERT INTO t VALUES (NULL)')))).rejects.toThrow(/NOT NULL constraint failed/);
      const [setting] = await db.all<{ value: boolean }>("SELECT current_setting('preserve_insertion_order') AS value");
      expect(setting?.value).toBe(false);
      await db.withInsertionOrder(async () => {
        const [inside] = await db.all<{ value: boolean }>("SELECT current_setting('preserve_insertion_order') AS value");
        expect(inside?.value).toBe(true);
      });
    } finally {
      db.close();
    }
  });
});
