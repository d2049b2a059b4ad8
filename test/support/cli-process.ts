import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository, and the `exledger` executable as npm installs it (package.json "bin"). */
export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.join(REPO, 'src/cli/exledger.js');

/** What a finished command left. */
export interface CliResult {
  /** The exit code (null when a signal ended it: see `signal`). */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Options of runCli. */
export interface CliOptions {
  /** Working folder. @default a folder of no consequence (the OS's temp folder) */
  cwd?: string;
  /** The settings (EXLEDGER_*): the environment is PATH, HOME and these, nothing else. */
  env?: Record<string, string>;
  /** Written to stdin, then closed. @default stdin closed at once */
  input?: string;
}

/**
 * The environment cron gives a job, plus settings: PATH and HOME only, so nothing of this
 * machine's shell (a terminal, an EXLEDGER_ variable) reaches the command.
 */
export function cronEnvironment(settings: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...settings };
}

/**
 * Starts the `exledger` executable as cron or systemd would: its own process, stdin closed (or
 * fed `input`), stdout and stderr pipes (not a terminal), the environment reduced to PATH, HOME
 * and the settings.
 */
export function startCli(args: readonly string[], options: CliOptions = {}): { child: ChildProcess; done: Promise<CliResult> } {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? REPO,
    env: cronEnvironment(options.env),
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  if (options.input !== undefined) child.stdin!.end(options.input);
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done };
}

/** Runs the `exledger` executable to its end (see startCli). */
export function runCli(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  return startCli(args, options).done;
}

/**
 * Waits until `pid` catches `signal` (Linux: the SigCgt mask of /proc/<pid>/status), so a test
 * signals a command once it listens, however long a loaded machine takes to start it.
 */
export async function waitForSignalHandler(pid: number, signal: 'SIGTERM' | 'SIGINT', timeoutMs = 30_000): Promise<void> {
  const bit = 1n << BigInt((signal === 'SIGTERM' ? 15 : 2) - 1);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const caught = /^SigCgt:\s*([0-9a-f]+)$/m.exec(status)?.[1];
    if (caught !== undefined && (BigInt(`0x${caught}`) & bit) !== 0n) return;
    if (Date.now() > deadline) throw new Error(`process ${pid} did not start catching ${signal} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
