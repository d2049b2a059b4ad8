import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeBuildData } from '../bench/build-data.ts';
import { Database } from '../src/store/database.ts';
import { BIN, cronEnvironment, REPO } from './support/cli-process.ts';
import { makeMemoryCgroup, type MemoryCgroup } from './support/memory-cgroup.ts';

/**
 * Memory bounded by the configuration, not by the data (issue 28, item 3): a full build with
 * every cost method, run as the nightly job runs it (a child process, no terminal) inside a memory
 * cgroup, completes. Node sizes its heap from the cgroup and DuckDB keeps to memoryLimit, so the
 * cap is memoryLimit plus what the process needs besides (the JS heap, Node itself, DuckDB's
 * allocations outside its buffer pool): the lot matching streams each partition's events and holds
 * its open lots only, so a history of more fills needs no more of it.
 */
const MB = 1024 ** 2;
const MEMORY_LIMIT = '1GB';
/** memoryLimit plus 1.5 GiB, the most a build may need beyond it (issue 28); DuckDB's default share of this machine (80%) would not fit. */
const CAP_BYTES = 1e9 + 1536 * MB;

const cgroup = makeMemoryCgroup('exledger-memory-cap', CAP_BYTES);
const unavailable = typeof cgroup === 'string' ? cgroup : undefined;

describe.skipIf(unavailable !== undefined)(`a full build under a memory cap (memoryLimit ${MEMORY_LIMIT}, cap ${CAP_BYTES / MB} MiB)${unavailable === undefined ? '' : ` (skipped: ${unavailable})`}`, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'exledger-memory-cap-'));
  const db = path.join(dir, 'history.duckdb');
  const config = path.join(dir, 'exledger.config.json');

  beforeAll(async () => {
    const raw = await Database.open(db);
    try {
      await writeBuildData(raw, { spotFills: 200_000, futuresFills: 20_000, fundingBills: 2_000 });
      await raw.run('CHECKPOINT');
    } finally {
      raw.close();
    }
    writeFileSync(config, JSON.stringify({ db, memoryLimit: MEMORY_LIMIT }));
  }, 300_000);
  afterAll(() => {
    (cgroup as MemoryCgroup).remove();
    rmSync(dir, { recursive: true, force: true });
  });

  it('builds every model with the five cost methods, exit 0, its peak under the cap', async () => {
    const [command, ...args] = (cgroup as MemoryCgroup).wrap([process.execPath, BIN, 'build', '--config', config, '--full-refresh', '--cost-method', 'fifo', 'average', 'lifo', 'hifo', 'uk']);
    const child = spawn(command!, args, { cwd: REPO, env: cronEnvironment(), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (exit, signal) => resolve(signal === null ? exit : 128 + 9));
    });
    expect(code, output.slice(-2000)).toBe(0);
    expect(output).toMatch(/intermediate\.int_spot_lot_segments\s+table .* rows/);
    expect(output).toMatch(/^build: \d+ models: \d+ rebuilt whole/m);
    const peak = (cgroup as MemoryCgroup).peakBytes();
    expect(peak).toBeLessThanOrEqual(CAP_BYTES);
    const checked = await Database.open(db, { readOnly: true, memoryLimit: MEMORY_LIMIT });
    try {
      const [row] = await checked.all<{ methods: string }>('SELECT count(DISTINCT cost_method) AS methods FROM intermediate.int_spot_lot_segments');
      expect(Number(row!.methods)).toBe(3);
    } finally {
      checked.close();
    }
  }, 600_000);
});
