import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const HERE = path.dirname(fileURLToPath(import.meta.url));

describe('closing a database while a statement runs', () => {
  it('interrupts the statement, refuses the queued one and lets the process exit (it used to hang forever in DuckDB)', () => {
    // In a process of its own: the hang was the process's exit waiting on DuckDB's lock.
    const child = spawnSync(process.execPath, ['--import', 'tsx', path.join(HERE, 'support/close-while-running.ts')], { encoding: 'utf8', timeout: 30_000 });
    expect(child.signal, 'killed at the 30 s timeout: the process did not exit').toBeNull();
    expect(child.stderr).toBe('');
    expect(child.stdout).toMatch(/^closed\nstatement: INTERRUPT Error: Interrupted!\nqueued: \S+: the database was closed before this statement ran\n$/);
    expect(child.status).toBe(0);
  });
});
