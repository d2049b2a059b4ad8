import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SyncWorkspace } from './sync-harness.ts';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/cli/exledger.js');

/** How a child `exledger sync` ended. */
export interface SyncProcessRun {
  killed: boolean;
  code: number | null;
  output: string;
  /** When the child was spawned and when it was killed (or ended), epoch ms. */
  startedAtMs: number;
  endedAtMs: number;
}

/**
 * Runs `exledger sync` as a child process, the way it is deployed (stdin closed, output to
 * pipes); kills it with SIGKILL after `killAfterMs` unless it ends first.
 */
export function runSyncProcess(workspace: SyncWorkspace, until: string, killAfterMs: number | null, extraArgs: readonly string[] = []): Promise<SyncProcessRun> {
  return new Promise((resolve, reject) => {
    const startedAtMs = Date.now();
    const child = spawn(process.execPath, [CLI, 'sync', '--until', until, '--json', ...extraArgs], {
      cwd: workspace.dir,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...workspace.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    let killedAtMs: number | null = null;
    const timer =
      killAfterMs === null
        ? undefined
        : setTimeout(() => {
            killedAtMs = Date.now();
            child.kill('SIGKILL');
          }, killAfterMs);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ killed: signal === 'SIGKILL', code, output, startedAtMs, endedAtMs: killedAtMs ?? Date.now() });
    });
  });
}
