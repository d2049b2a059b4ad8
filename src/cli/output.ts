import cliProgress from 'cli-progress';
import { countOf, formatCount } from '../count-text.ts';
import type { StreamResult, SyncProgress } from '../extract/sync.ts';

/** How a command's output is shown. */
export interface OutputOptions {
  /** `--json`: stdout holds only the one JSON object. */
  json: boolean;
  /** `--quiet`: only the summary and errors. */
  quiet: boolean;
  /** Whether stderr is a terminal: progress bars there, else plain timestamped lines. */
  tty: boolean;
  /** Seconds between progress lines for a stream that is still reading. @default 30 */
  heartbeatSeconds?: number;
  /**
   * Where progress lines go without a terminal, instead of stderr (`exledger run` writes them to
   * its log file, so cron's stderr holds only errors). They get their time stamp there.
   */
  progressTo?: (line: string) => void;
}

/**
 * Where each kind of line goes (after wrangler's logger): results on stdout, progress and
 * errors on stderr. Without a terminal (cron, systemd, a pipe) progress is plain lines stamped
 * with the UTC time, so a log shows a long backfill moving; `--quiet` leaves the summary and
 * errors; `--json` leaves stdout to the one JSON object.
 */
export class Output {
  /**
   * stderr as it was when this output was made: progress bars are drawn through it, so a run's
   * log (which copies what is written to stderr from then on) gets progress lines, not redraws.
   */
  private readonly terminal: NodeJS.WriteStream;

  constructor(
    readonly options: OutputOptions,
    terminal?: NodeJS.WriteStream,
  ) {
    const write = process.stderr.write.bind(process.stderr);
    this.terminal = terminal ?? new Proxy(process.stderr, { get: (target, name) => (name === 'write' ? write : Reflect.get(target, name, target)) });
  }

  /** The command's summary for people (stdout; not with --json). */
  summary(text: string): void {
    if (!this.options.json) process.stdout.write(`${text}\n`);
  }

  /** A line per item (a model, a test, a workbook, a step heading): stdout, not with --quiet or --json. */
  detail(text: string): void {
    if (!this.options.json && !this.options.quiet) process.stdout.write(`${text}\n`);
  }

  /** Progress of long work: stderr, stamped without a terminal; not with --quiet. */
  progress(text: string): void {
    if (this.options.quiet) return;
    if (this.options.tty) process.stderr.write(`${text}\n`);
    else if (this.options.progressTo !== undefined) this.options.progressTo(text);
    else process.stderr.write(`${new Date().toISOString()} ${text}\n`);
  }

  /** The same output with progress lines sent to `write` when there is no terminal. */
  withProgressTo(write: (line: string) => void): Output {
    return new Output({ ...this.options, progressTo: write }, this.terminal);
  }

  /** A warning or an error line: stderr, always. */
  error(text: string): void {
    process.stderr.write(`${text}\n`);
  }

  /** The --json object: stdout, one object. */
  json(value: unknown): void {
    process.stdout.write(`${JSON.stringify(value, jsonValue, 2)}\n`);
  }

  /**
   * Progress of a sync: bars per stream on a terminal, lines otherwise, nothing with --quiet.
   * With `progressTo` (a run's log) the lines go there, on a terminal beside the bars.
   */
  syncProgress(): SyncProgress & { stop(): void } {
    if (this.options.quiet) return { start() {}, advance() {}, finish() {}, stop() {} };
    const heartbeatMs = (this.options.heartbeatSeconds ?? 30) * 1000;
    if (!this.options.tty) return progressLines(this, heartbeatMs);
    if (this.options.progressTo === undefined) return progressBars(this.terminal);
    const toLog = new Output({ ...this.options, tty: false }, this.terminal);
    return both(progressBars(this.terminal), progressLines(toLog, heartbeatMs));
  }
}

/** JSON values: bigint as its exact digits (a JSON number would be rounded by most readers). */
function jsonValue(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

/**
 * A line when a stream starts, each time it crosses another tenth of its windows, every
 * `heartbeatMs` while it is still reading without crossing one, and when it ends.
 */
function progressLines(output: Output, heartbeatMs: number): SyncProgress & { stop(): void } {
  const streams = new Map<string, { total: number; done: number; rows: number; tenths: number; lastLineAt: number; startedAt: number }>();
  const id = (account: string, stream: string) => `${account}/${stream}`;
  const line = (name: string, state: { total: number; done: number; rows: number; startedAt: number }, note = '') => {
    const share = state.total === 0 ? 100 : Math.floor((100 * state.done) / state.total);
    const seconds = Math.round((Date.now() - state.startedAt) / 1000);
    output.progress(`sync ${name}: ${formatCount(state.done)}/${countOf(state.total, 'window')} (${share}%), ${countOf(state.rows, 'row')}, ${seconds} s${note}`);
  };
  const heartbeat = setInterval(() => {
    const now = Date.now();
    for (const [name, state] of streams) {
      if (now - state.lastLineAt >= heartbeatMs) {
        state.lastLineAt = now;
        line(name, state, ', still reading');
      }
    }
  }, Math.min(heartbeatMs, 1000));
  // Progress never keeps a process alive: the work it reports on does.
  heartbeat.unref();
  return {
    start(account, stream, total) {
      const now = Date.now();
      streams.set(id(account, stream), { total, done: 0, rows: 0, tenths: 0, lastLineAt: now, startedAt: now });
      output.progress(`sync ${id(account, stream)}: started, ${countOf(total, 'window')} to read`);
    },
    advance(account, stream, rows, windows) {
      const state = streams.get(id(account, stream));
      if (state === undefined) return;
      state.done += windows;
      state.rows += rows;
      const tenths = state.total === 0 ? 10 : Math.floor((10 * state.done) / state.total);
      if (tenths > state.tenths && state.done < state.total) {
        state.tenths = tenths;
        state.lastLineAt = Date.now();
        line(id(account, stream), state);
      }
    },
    finish(account, stream, result: StreamResult) {
      const name = id(account, stream);
      const state = streams.get(name) ?? { total: 0, done: 0, rows: 0, tenths: 0, lastLineAt: 0, startedAt: result.startedAtMs };
      streams.delete(name);
      line(name, state, `: ${result.status === 'ok' ? 'done' : result.status}, ${countOf(result.rowsInserted, 'new row')}`);
    },
    stop() {
      clearInterval(heartbeat);
      streams.clear();
    },
  };
}

/** Tells two progress displays the same. */
function both(first: SyncProgress & { stop(): void }, second: SyncProgress & { stop(): void }): SyncProgress & { stop(): void } {
  return {
    start: (...args) => (first.start(...args), second.start(...args)),
    advance: (...args) => (first.advance(...args), second.advance(...args)),
    finish: (...args) => (first.finish(...args), second.finish(...args)),
    stop: () => (first.stop(), second.stop()),
  };
}

/** Progress bars per stream on a terminal (cli-progress, on stderr). */
function progressBars(stream: NodeJS.WriteStream): SyncProgress & { stop(): void } {
  const bars = new cliProgress.MultiBar(
    {
      stream,
      format: ' {name} |{bar}| {value}/{total} windows | {rows} rows | {status}',
      hideCursor: true,
      clearOnComplete: false,
      stopOnComplete: false,
      etaBuffer: 50,
    },
    cliProgress.Presets.shades_classic,
  );
  const byStream = new Map<string, { bar: cliProgress.SingleBar; rows: number }>();
  const id = (account: string, stream: string) => `${account}/${stream}`;
  return {
    start(account, stream, total) {
      byStream.set(id(account, stream), { bar: bars.create(total, 0, { name: id(account, stream).padEnd(34), rows: 0, status: 'running' }), rows: 0 });
    },
    advance(account, stream, rows, windows) {
      const entry = byStream.get(id(account, stream));
      if (entry === undefined) return;
      entry.rows += rows;
      entry.bar.increment(windows, { rows: entry.rows });
    },
    finish(account, stream, result: StreamResult) {
      byStream.get(id(account, stream))?.bar.update({ status: result.status === 'ok' ? 'done' : result.status });
    },
    stop() {
      bars.stop();
    },
  };
}
