import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { StreamResult, SyncProgress } from '../extract/sync.ts';
import { isProcessAlive } from '../store/lock.ts';

/**
 * What a running sync is doing, kept beside the database in `<db>.sync-state.json`: the sync
 * holds the database for writing, so DuckDB lets no other process open it, and `exledger status`
 * reads this instead. Written whole (a temporary file renamed over it) when a stream starts or
 * ends and at its progress steps (at most once a second); removed when the sync ends. A file
 * whose process is gone is from a sync that was killed.
 */
export interface SyncState {
  pid: number;
  /** The command that runs the sync: `sync`, or `run` for the nightly job's sync step. */
  command: string;
  runId: string;
  startedAt: string;
  /** When this state was written. */
  updatedAt: string;
  streams: SyncStreamState[];
}

/** One stream of one account, as far as the sync has gone. */
export interface SyncStreamState {
  account: string;
  stream: string;
  status: 'running' | StreamResult['status'];
  windowsDone: number;
  windowsTotal: number;
  /** Rows read in the windows committed so far. */
  rows: number;
  /** The end of the latest window committed (ISO 8601 UTC); null for snapshots and before the first commit. */
  committedUntil: string | null;
  startedAt: string;
  finishedAt: string | null;
}

/** The state file of `database`. */
export function syncStatePath(database: string): string {
  return `${path.resolve(database)}.sync-state.json`;
}

/** The state a sync left beside `database`, and whether its process still runs; null when there is none (or it cannot be read). */
export function readSyncState(database: string): { state: SyncState; alive: boolean; file: string } | null {
  const file = syncStatePath(database);
  try {
    const state = JSON.parse(readFileSync(file, 'utf8')) as SyncState;
    if (typeof state.pid !== 'number' || !Array.isArray(state.streams)) return null;
    return { state, alive: isProcessAlive(state.pid), file };
  } catch {
    return null;
  }
}

/**
 * Keeps the state file of one sync. Only the process holding the database lock makes one.
 * Writing it never fails the sync: on an error (a full disk) it stops writing and removes it.
 */
export class SyncStateFile {
  private readonly file: string;
  private readonly state: SyncState;
  private readonly streams = new Map<string, SyncStreamState>();
  private writtenAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private broken = false;

  constructor(database: string, fields: { command: string; runId: string }) {
    this.file = syncStatePath(database);
    const now = new Date().toISOString();
    this.state = { pid: process.pid, command: fields.command, runId: fields.runId, startedAt: now, updatedAt: now, streams: [] };
    // Under the lock, a temporary file of this name can only be left by a sync killed while writing it.
    const prefix = `${path.basename(this.file)}.tmp-`;
    try {
      for (const name of readdirSync(path.dirname(this.file))) if (name.startsWith(prefix)) rmSync(path.join(path.dirname(this.file), name), { force: true });
    } catch {
      // The folder is the database's: the database tells its own problems.
    }
    this.write();
  }

  /** `progress`, told to this file too. */
  tracking(progress: SyncProgress | undefined): SyncProgress {
    const id = (account: string, stream: string) => `${account}/${stream}`;
    return {
      start: (account, stream, total) => {
        this.streams.set(id(account, stream), { account, stream, status: 'running', windowsDone: 0, windowsTotal: total, rows: 0, committedUntil: null, startedAt: new Date().toISOString(), finishedAt: null });
        this.write();
        progress?.start(account, stream, total);
      },
      advance: (account, stream, rows, windows, committedUntilMs) => {
        const entry = this.streams.get(id(account, stream));
        if (entry !== undefined) {
          entry.windowsDone += windows;
          entry.rows += rows;
          if (committedUntilMs !== undefined && (entry.committedUntil === null || committedUntilMs > Date.parse(entry.committedUntil))) entry.committedUntil = new Date(committedUntilMs).toISOString();
          this.writeSoon();
        }
        progress?.advance(account, stream, rows, windows, committedUntilMs);
      },
      finish: (account, stream, result) => {
        const entry = this.streams.get(id(account, stream)) ?? { account, stream, status: 'running', windowsDone: 0, windowsTotal: 0, rows: 0, committedUntil: null, startedAt: new Date(result.startedAtMs).toISOString(), finishedAt: null };
        entry.status = result.status;
        entry.finishedAt = new Date(result.finishedAtMs ?? Date.now()).toISOString();
        this.streams.set(id(account, stream), entry);
        this.write();
        progress?.finish(account, stream, result);
      },
    };
  }

  /** The sync ended: the file goes (status then reads the database again). */
  remove(): void {
    clearTimeout(this.timer);
    this.broken = true;
    rmSync(this.file, { force: true });
  }

  /** At most once a second: a sync commits many windows a second on a fast exchange. */
  private writeSoon(): void {
    if (this.timer !== undefined) return;
    const wait = Math.max(0, this.writtenAt + 1000 - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.write();
    }, wait);
    // The state never keeps a process alive: the sync does.
    this.timer.unref();
  }

  private write(): void {
    if (this.broken) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.writtenAt = Date.now();
    this.state.updatedAt = new Date().toISOString();
    this.state.streams = [...this.streams.values()];
    const temporary = `${this.file}.tmp-${process.pid}`;
    try {
      writeFileSync(temporary, `${JSON.stringify(this.state, null, 1)}\n`);
      renameSync(temporary, this.file);
    } catch {
      // Only status reads it; the sync goes on without it (a full disk is told by the database).
      this.broken = true;
      rmSync(temporary, { force: true });
      rmSync(this.file, { force: true });
    }
  }
}
