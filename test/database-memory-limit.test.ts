import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Database } from '../src/store/database.ts';

/**
 * Every opening of a database is bounded (issue 28: `check` once took DuckDB's default of 80% of
 * the machine, 14.3 GB): the configured memoryLimit where a command passes it, else the config's
 * default, never DuckDB's own. DuckDB reports the limit in binary units (4GB is 3.7 GiB).
 */
describe('the memory limit of a database opening', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'exledger-memory-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const limitOf = async (options: Parameters<typeof Database.open>[1]) => {
    const db = await Database.open(path.join(dir, 'limit.duckdb'), options);
    try {
      const [row] = await db.all<{ limit: string }>("SELECT current_setting('memory_limit') AS limit");
      return row!.limit;
    } finally {
      db.close();
    }
  };

  it('is the one given, for writing and read-only', async () => {
    expect(await limitOf({ memoryLimit: '1GB' })).toBe('953.6 MiB');
    expect(await limitOf({ readOnly: true, memoryLimit: '512MB' })).toBe('488.2 MiB');
  });

  it('is 4GB when none is given, not DuckDB\'s share of the machine', async () => {
    expect(await limitOf({})).toBe('3.7 GiB');
    expect(await limitOf({ readOnly: true })).toBe('3.7 GiB');
  });
});
