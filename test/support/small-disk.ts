import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmdirSync, rmSync, statfsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Database } from '../../src/store/database.ts';

/**
 * A real small disk for tests: a tmpfs mounted by the test (root only, as here and in CI), filled
 * to a chosen level with a ballast file. Writes past its size fail with ENOSPC exactly as on a
 * full disk (tmpfs counts whole 4 KiB pages).
 */

/** Why small disks cannot be mounted here, or null when they can (tried once, on a scratch folder). */
export const SMALL_DISK_UNAVAILABLE: string | null = (() => {
  if (process.platform !== 'linux') return `tmpfs mounts need Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root (run the suite as root, as CI does)';
  const probe = mkdtempSync(path.join(os.tmpdir(), 'exledger-mount-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'pipe' });
    execFileSync('umount', [probe], { stdio: 'pipe' });
    return null;
  } catch (error) {
    return `mount -t tmpfs failed: ${((error as { stderr?: Buffer }).stderr?.toString() ?? String(error)).trim()}`;
  } finally {
    rmdirSync(probe);
  }
})();

/** A mounted tmpfs. */
export interface SmallDisk {
  dir: string;
  /** Bytes free now. */
  free(): number;
  /** Fills it until `leaveBytes` are free (rounded down to whole pages), with one ballast file. */
  fill(leaveBytes: number): void;
  /** Removes the ballast. */
  empty(): void;
  unmount(): void;
}

/** Mounts a tmpfs of `size` (mount's syntax: `64k`, `96m`) on `dir` (created). */
export function mountSmallDisk(dir: string, size: string): SmallDisk {
  mkdirSync(dir, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
  const ballast = path.join(dir, 'ballast');
  const free = () => {
    const stats = statfsSync(dir);
    return stats.bavail * stats.bsize;
  };
  return {
    dir,
    free,
    fill(leaveBytes) {
      rmSync(ballast, { force: true });
      const bytes = free() - leaveBytes;
      // fallocate reserves the pages at once (a sparse file would take no room on tmpfs).
      if (bytes > 0) execFileSync('fallocate', ['-l', String(Math.ceil(bytes / 4096) * 4096), ballast], { stdio: 'pipe' });
    },
    empty() {
      rmSync(ballast, { force: true });
    },
    unmount() {
      // Lazy: a test that failed may have left a process with a file open there.
      execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
    },
  };
}

/** Columns that differ between two correct runs made at different times (bookkeeping, snapshot and build instants). */
/** The incremental build's own bookkeeping (src/models/incremental.ts: its state, pending and change record), and the lot matcher's checkpoints. */
const BUILD_BOOKKEEPING = new Set(['settings.model_state', 'settings.model_pending', 'settings.model_changes', 'settings.spot_lot_state', 'settings.spot_lot_open', 'settings.coin_lot_state']);
const RUN_BOUND = /(^_run_id$|_fetched_at$|snapshot_at$|^funding_(from|to)_at$|^built_at$)/;

/**
 * The differences between two databases' stored data: every table of raw, settings,
 * intermediate and marts, row for row (EXCEPT ALL both ways, so duplicates count), without the
 * columns that name a run or the instant a snapshot was taken. Empty when they hold the same data.
 */
export async function compareDatabases(a: string, b: string): Promise<string[]> {
  const db = await Database.open(':memory:');
  try {
    await db.run(`ATTACH '${a.replace(/'/g, "''")}' AS a (READ_ONLY); ATTACH '${b.replace(/'/g, "''")}' AS b (READ_ONLY)`);
    const columnsOf = async (catalog: string) => {
      const rows = await db.all<{ name: string; column_name: string }>(
        `SELECT table_schema || '.' || table_name AS name, column_name FROM information_schema.columns
         WHERE table_catalog = '${catalog}' AND table_schema IN ('raw', 'settings', 'intermediate', 'marts')
           AND table_name IN (SELECT table_name FROM information_schema.tables WHERE table_catalog = '${catalog}' AND table_type = 'BASE TABLE')
         ORDER BY name, ordinal_position`,
      );
      const tables = new Map<string, string[]>();
      // A row keyed by a snapshot's instant names it in its reference (marts' `reference`): run bound too.
      const bySnapshot = new Set(rows.filter((row) => row.column_name.endsWith('snapshot_at')).map((row) => row.name));
      for (const row of rows) {
        // How the incremental build got there (whole or incremental, the log position) is not what it holds.
        if (BUILD_BOOKKEEPING.has(row.name)) continue;
        if (bySnapshot.has(row.name) && row.column_name === 'reference') continue;
        if (!RUN_BOUND.test(row.column_name)) tables.set(row.name, [...(tables.get(row.name) ?? []), `"${row.column_name}"`]);
      }
      return tables;
    };
    const [left, right] = [await columnsOf('a'), await columnsOf('b')];
    const differences: string[] = [];
    for (const name of new Set([...left.keys(), ...right.keys()])) {
      const columns = left.get(name);
      if (columns === undefined || right.get(name) === undefined) {
        differences.push(`${name}: only in ${columns === undefined ? b : a}`);
        continue;
      }
      const list = columns.join(', ');
      const [counts] = await db.all<{ only_a: string; only_b: string; rows: string }>(
        `SELECT (SELECT count(*) FROM (SELECT ${list} FROM a.${name} EXCEPT ALL SELECT ${list} FROM b.${name})) AS only_a,
                (SELECT count(*) FROM (SELECT ${list} FROM b.${name} EXCEPT ALL SELECT ${list} FROM a.${name})) AS only_b,
                (SELECT count(*) FROM a.${name}) AS rows`,
      );
      if (counts!.only_a !== '0' || counts!.only_b !== '0') differences.push(`${name}: ${counts!.only_a} rows only in the first, ${counts!.only_b} only in the second (of ${counts!.rows})`);
    }
    return differences;
  } finally {
    db.close();
  }
}

/** Rows in the marts of a database (a comparison of empty databases proves nothing). */
export async function martRows(file: string): Promise<number> {
  const db = await Database.open(file, { readOnly: true });
  try {
    const tables = await db.all<{ name: string }>("SELECT table_schema || '.' || table_name AS name FROM information_schema.tables WHERE table_schema = 'marts'");
    let rows = 0;
    for (const { name } of tables) rows += Number((await db.all<{ n: string }>(`SELECT count(*) AS n FROM ${name}`))[0]!.n);
    return rows;
  } finally {
    db.close();
  }
}
