import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bytesOf, Database } from '../src/store/database.ts';

/**
 * Every opening of a database is bounded (issue 28: `check` once took DuckDB's default of 80% of
 * the machine, 14.3 GB): the configured memoryLimit where a command passes it, else the config's
 * default, never DuckDB's own. DuckDB reports the limit in binary units (4GB is 3.7 GiB).
 */
describe('the memory limit of a database opening', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'exledger-memory-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const settingOf = async (options: Parameters<typeof Database.open>[1], setting: string) => {
    const db = await Database.open(path.join(dir, 'limit.duckdb'), options);
    try {
      const [row] = await db.all<{ value: unknown }>(`SELECT current_setting('${setting}') AS value`);
      return row!.value;
    } finally {
      db.close();
    }
  };
  const limitOf = (options: Parameters<typeof Database.open>[1]) => settingOf(options, 'memory_limit');

  it('is the one given, for writing and read-only', async () => {
    expect(await limitOf({ memoryLimit: '1GB' })).toBe('953.6 MiB');
    expect(await limitOf({ readOnly: true, memoryLimit: '512MB' })).toBe('488.2 MiB');
  });

  it('frees through jemalloc\'s background threads, for writing and read-only (the RSS stays near the limit)', async () => {
    expect(await settingOf({}, 'allocator_background_threads')).toBe(true);
    expect(await settingOf({ readOnly: true }, 'allocator_background_threads')).toBe(true);
  });

  it('is 4GB when none is given, not DuckDB\'s share of the machine', async () => {
    expect(await limitOf({})).toBe('3.7 GiB');
    expect(await limitOf({ readOnly: true })).toBe('3.7 GiB');
  });

  it('is lowered while a TypeScript model works (withMemoryReserved: the limit less the reserve, never below half), and put back after, also when the work fails', async () => {
    const db = await Database.open(path.join(dir, 'reserved.duckdb'), { memoryLimit: '4GB' });
    const limit = async () => (await db.all<{ limit: string }>("SELECT current_setting('memory_limit') AS limit"))[0]!.limit;
    try {
      expect(await db.withMemoryReserved(1e9, limit)).toBe('2.7 GiB');
      expect(await limit()).toBe('3.7 GiB');
      expect(await db.withMemoryReserved(3e9, limit)).toBe('1.8 GiB');
      await expect(db.withMemoryReserved(1e9, () => db.run('SELECT error(\'boom\')'))).rejects.toThrow(/boom/);
      expect(await limit()).toBe('3.7 GiB');
      await expect(db.transaction(() => db.withMemoryReserved(1e9, () => db.run('SELECT error(\'boom\')')))).rejects.toThrow(/boom/);
      expect(await limit()).toBe('3.7 GiB');
    } finally {
      db.close();
    }
  });

  it('reads sizes as DuckDB does: GB in powers of 1000, GiB of 1024', () => {
    expect(bytesOf('4GB')).toBe(4e9);
    expect(bytesOf('4 GiB')).toBe(4 * 1024 ** 3);
    expect(bytesOf('512MB')).toBe(512e6);
    expect(bytesOf('1.5GB')).toBe(1.5e9);
    expect(bytesOf('lots')).toBeUndefined();
  });
});
