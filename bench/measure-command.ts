import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI = path.join(REPO, 'src', 'cli', 'exledger.js');
const TIME = '/usr/bin/time';

/** A measured run of an exledger command. */
export interface MeasuredRun {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  timedOut: boolean;
  wallSeconds: number;
  /** Peak resident memory of the command, bytes. */
  peakBytes?: number;
  peakSource: string;
  /** User plus system CPU time (GNU time only). */
  cpuSeconds?: number;
  /** The last lines of stderr, without GNU time's report. */
  stderrTail: string;
}

/**
 * Runs `node src/cli/exledger.js <args>` as a child in its own process group and measures it:
 * wall time here, peak RSS from GNU time's "Maximum resident set size" when /usr/bin/time
 * exists, else the child's VmHWM in /proc. /proc is polled as well, since a command stopped at
 * the timeout takes GNU time's report with it.
 */
export function measureCommand(cliArgs: readonly string[], timeoutSeconds: number): Promise<MeasuredRun> {
  return measureProcess([process.execPath, CLI, ...cliArgs], timeoutSeconds);
}

/** A measured run of a script that prints its result as one JSON line, last. */
export interface MeasuredScript<T> extends MeasuredRun {
  /** The last line of its stdout, parsed; undefined when it printed none or not JSON. */
  output?: T;
}

/** Runs a TypeScript script of bench/ (`[file, ...args]`) with tsx in a child process, measured as measureProcess does. */
export async function measureScript<T>(script: readonly string[], timeoutSeconds: number): Promise<MeasuredScript<T>> {
  const run = await measureProcess([process.execPath, '--import', 'tsx', ...script], timeoutSeconds);
  const last = run.stdout.trim().split('\n').at(-1);
  let output: T | undefined;
  try {
    output = last === undefined || last === '' ? undefined : (JSON.parse(last) as T);
  } catch {
    output = undefined;
  }
  return { ...run, output };
}

/**
 * Runs any command (`[file, ...args]`, from the repository's folder) and measures it as
 * measureCommand does, so that a baseline and the command it is compared with are measured alike.
 */
export async function measureProcess(command: readonly string[], timeoutSeconds: number): Promise<MeasuredRun> {
  const useTime = existsSync(TIME);
  const [file, ...args] = useTime ? [TIME, '-v', ...command] : command;
  // Written-back pages of the copies made just before (a 6 GB database) are flushed first, not
  // during the measured command.
  spawnSync('sync');
  const started = performance.now();
  // Its own process group, so a command stopped at the timeout goes with its launcher.
  const child = spawn(file as string, args, { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let polledPeakKb: number | undefined;
  const poll = setInterval(() => {
    for (const pid of processTree(child.pid)) {
      const kb = readVmHwmKb(pid);
      if (kb !== undefined) polledPeakKb = Math.max(polledPeakKb ?? 0, kb);
    }
  }, 100);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  }, timeoutSeconds * 1000);
  const exitCode = await new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const wallSeconds = (performance.now() - started) / 1000;
  clearTimeout(timer);
  clearInterval(poll);

  const timeKb = useTime ? /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr)?.[1] : undefined;
  const peakKb = timeKb === undefined ? polledPeakKb : Number(timeKb);
  const cpu = [/User time \(seconds\): ([\d.]+)/, /System time \(seconds\): ([\d.]+)/].map((pattern) => pattern.exec(stderr)?.[1]);
  return {
    stdout,
    stderr,
    exitCode,
    timedOut,
    wallSeconds,
    peakBytes: peakKb === undefined ? undefined : peakKb * 1024,
    peakSource: timeKb !== undefined ? '/usr/bin/time -v' : '/proc VmHWM, polled every 100 ms',
    cpuSeconds: cpu.includes(undefined) ? undefined : Number(cpu[0]) + Number(cpu[1]),
    stderrTail: stderr.split('\n').filter((line) => !/^\t/.test(line)).slice(-15).join('\n'),
  };
}

/** A process and its descendants (from /proc/<pid>/task/<tid>/children), for the polled peak. */
function processTree(pid: number | undefined): number[] {
  if (pid === undefined) return [];
  const pids = [pid];
  for (let index = 0; index < pids.length; index += 1) {
    try {
      for (const task of readdirSync(`/proc/${pids[index]}/task`)) {
        const children = readFileSync(`/proc/${pids[index]}/task/${task}/children`, 'utf8').trim();
        if (children !== '') pids.push(...children.split(' ').map(Number));
      }
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** The peak resident memory of a process so far (VmHWM), kB; undefined once it is gone. */
function readVmHwmKb(pid: number): number | undefined {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? undefined : Number(match[1]);
  } catch {
    return undefined;
  }
}
