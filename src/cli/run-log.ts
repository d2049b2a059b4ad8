import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import path from 'node:path';

/** A run's log file (`run-<UTC time>-<pid>.log`): what the run printed, with a time on each line. */
export interface RunLog {
  file: string;
  /** Writes a line to the log only (e.g. the error the CLI prints after the run). */
  write(line: string): void;
  /** Stops copying the output and closes the file. */
  close(): void;
}

// Progress bars and colours: terminal control sequences, not log text.
// eslint-disable-next-line no-control-regex
const CONTROL = /\x1b\[[0-9;?]*[A-Za-z]|\r/g;


/**
 * Starts `<dir>/run-<UTC time>.log` and copies into it everything the process prints on stdout
 * and stderr until `close()`, each line stamped with the UTC time. Nothing secret is printed
 * anywhere (README "Configuration"), so the log holds none either.
 */
export function startRunLog(dir: string, now: Date = new Date()): RunLog {
  mkdirSync(dir, { recursive: true });
  // Milliseconds and the pid: two runs started together (a retry after a fast failure) never share a file.
  const file = path.resolve(dir, `run-${now.toISOString().replace(/[-:]/g, '')}-${process.pid}.log`);
  const fd = openSync(file, 'wx');
  let pending = '';
  const append = (chunk: string | Uint8Array) => {
    pending += (typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8')).replace(CONTROL, '');
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const line of lines) writeSync(fd, `${new Date().toISOString()} ${line}\n`);
  };
  const originals = { stdout: process.stdout.write.bind(process.stdout), stderr: process.stderr.write.bind(process.stderr) };
  const tee = (original: typeof process.stdout.write) =>
    ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      append(chunk);
      return (original as (...args: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof process.stdout.write;
  process.stdout.write = tee(originals.stdout);
  process.stderr.write = tee(originals.stderr);
  return {
    file,
    write(line) {
      writeSync(fd, `${new Date().toISOString()} ${line}\n`);
    },
    close() {
      process.stdout.write = originals.stdout;
      process.stderr.write = originals.stderr;
      if (pending !== '') writeSync(fd, `${new Date().toISOString()} ${pending}\n`);
      closeSync(fd);
    },
  };
}
