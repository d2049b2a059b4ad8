import { startCli } from './cli-process.ts';
import type { SyncWorkspace } from './sync-harness.ts';

/** How a child `exledger sync` ended. */
export interface SyncProcessRun {
  killed: boolean;
  code: number | null;
  /** stdout, then stderr. */
  output: string;
  /** When the child was spawned and when it was killed (or ended), epoch ms. */
  startedAtMs: number;
  endedAtMs: number;
}

/**
 * Runs `exledger sync` as a child process, the way it is deployed (stdin closed, output to
 * pipes, PATH, HOME and the workspace's settings only); kills it with SIGKILL after
 * `killAfterMs` unless it ends first.
 */
export async function runSyncProcess(workspace: SyncWorkspace, until: string, killAfterMs: number | null, extraArgs: readonly string[] = []): Promise<SyncProcessRun> {
  const startedAtMs = Date.now();
  const { child, done } = startCli(['sync', '--until', until, '--json', ...extraArgs], { cwd: workspace.dir, env: workspace.env });
  let killedAtMs: number | null = null;
  const timer =
    killAfterMs === null
      ? undefined
      : setTimeout(() => {
          killedAtMs = Date.now();
          child.kill('SIGKILL');
        }, killAfterMs);
  const result = await done.finally(() => clearTimeout(timer));
  return { killed: result.signal === 'SIGKILL', code: result.code, output: result.stdout + result.stderr, startedAtMs, endedAtMs: killedAtMs ?? Date.now() };
}
