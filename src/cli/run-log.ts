import { closeSync, ftruncateSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { diskFullOf } from '../disk-full.ts';
import { OutputError, type DiskFullError } from '../errors.ts';

/** A run's log file (`run-<UTC time>-<pid>.log`): what the run printed, with a time on each line. */
export interface RunLog {
  file: string;
  /** Writes a line to the log only (e.g. the error the CLI prints after the run, a line per model). */
  write(line: string): void;
  /** Runs `print` without copying what it prints into the log (a line the log already has, e.g. a step's heading). */
  uncopied(print: () => void): void;
  /** Stops copying the output and closes the file. */
  close(): void;
  /**
   * Why the log stopped part-way (a full disk), if it did. The run goes on without it: its
   * output still reaches stdout and stderr, and the error was said once on stderr.
   */
  readonly failure: DiskFullError | OutputError | undefined;
}

// Progress bars and colours: terminal control sequences, not log text.
// eslint-disable-next-line no-control-regex
const CONTROL = /\x1b\[[0-9;?]*[A-Za-z]|\r/g;

/**
 * Starts `<dir>/run-<UTC time>.log` and copies into it everything the process prints on stdout
 * and stderr until `close()`, each line stamped with the UTC time. Nothing secret is printed
 * anywhere (docs/reference.md "Configuration"), so the log holds none either.
 *
 * It is tried at once: a log that cannot be written at all (a full disk) is an error before the
 * run does anything (the empty file is removed). A log that fills its disk
 * later stops there: one `error:` line on stderr names it, and the run goes on (see `failure`);
 * a write to stdout or stderr never throws because of it.
 */
export function startRunLog(dir: string, now: Date = new Date()): RunLog {
  mkdirSync(dir, { recursive: true });
  // Milliseconds and the pid: two runs started together (a retry after a fast failure) never share a file.
  const file = path.resolve(dir, `run-${now.toISOString().replace(/[-:]/g, '')}-${process.pid}.log`);
  const started = { doing: "starting the run's log", kept: 'the run did not start: nothing was done' };
  let fd: number;
  try {
    fd = openSync(file, 'wx');
  } catch (error) {
    throw logError(file, error, started);
  }
  try {
    // Takes a block and gives it back (a positional write leaves the file offset at 0): a disk
    // with no room at all is found now, and the log stays exactly what the run printed.
    writeSync(fd, '\n', 0);
    ftruncateSync(fd, 0);
  } catch (error) {
    closeSync(fd);
    rmSync(file, { force: true });
    throw logError(file, error, started);
  }
  const originals = { stdout: process.stdout.write.bind(process.stdout), stderr: process.stderr.write.bind(process.stderr) };
  let failure: DiskFullError | OutputError | undefined;
  let open = true;
  let copying = true;
  const restore = () => {
    process.stdout.write = originals.stdout;
    process.stderr.write = originals.stderr;
  };
  /** Writes to the file; on the first failure, stops the log and says so on stderr, once. */
  const writeLine = (line: string) => {
    if (failure !== undefined || !open) return;
    try {
      writeSync(fd, `${new Date().toISOString()} ${line}\n`);
    } catch (error) {
      failure = logError(file, error, { doing: "writing the run's log", kept: 'the run goes on without it (the lines before are in the file)' });
      restore();
      originals.stderr(`error: ${failure.message}\n${failure.hint === undefined ? '' : `  fix: ${failure.hint}\n`}`);
    }
  };
  let pending = '';
  const append = (chunk: string | Uint8Array) => {
    pending += (typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8')).replace(CONTROL, '');
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const line of lines) writeLine(line);
  };
  const tee = (original: typeof process.stdout.write) =>
    ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      if (copying) append(chunk);
      return (original as (...args: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof process.stdout.write;
  process.stdout.write = tee(originals.stdout);
  process.stderr.write = tee(originals.stderr);
  return {
    file,
    get failure() {
      return failure;
    },
    write: writeLine,
    uncopied(print) {
      copying = false;
      try {
        print();
      } finally {
        copying = true;
      }
    },
    close() {
      if (failure === undefined) restore();
      if (pending !== '') writeLine(pending);
      open = false;
      try {
        closeSync(fd);
      } catch {
        // Closing a file whose writes failed can fail too; the failure was said already.
      }
    },
  };
}

/** A log that cannot be written: a full disk, or another file system error, naming the log. */
function logError(file: string, error: unknown, what: { doing: string; kept: string }): DiskFullError | OutputError {
  return (
    diskFullOf(error, { file, ...what }) ??
    new OutputError(file, `could not be written (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}) while ${what.doing}; ${what.kept}`, {
      hint: 'check the folder (logDir in the config file), then run again',
      cause: error,
    })
  );
}
