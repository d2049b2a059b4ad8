import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../src/store/database.ts';
import type { ArchiveManifest } from '../src/store/archive-manifest.ts';
import { runCli, startCli, type CliResult } from './support/cli-process.ts';
import { startSandboxProcess, type SandboxProcess } from './support/sandbox-process.ts';
import { compareDatabases, martRows } from './support/small-disk.ts';

/**
 * The raw history archived and restored (issue 28, item 5), as deployed: the `exledger`
 * executable in its own process (no terminal), the sandbox exchange in another, real DuckDB files
 * and a real archive folder. A restored database equals the original row for row (raw tables,
 * cursors, the bookkeeping kept), its build equals the original's, and its next sync reads only
 * what is newer; a killed archive leaves the archive as it was; a flipped bit is named, never
 * restored.
 */

/** The tables a restore brings back exactly, every column (run ids and instants included). */
const KEPT = ['meta.cursors', 'meta.facts', 'meta.schema_drift', 'meta.runs', 'meta.period_closes', 'meta.closed_workbooks', 'settings.closed_periods'];

/** Differences between the raw tables and kept bookkeeping of two databases, every column compared. */
async function compareArchived(a: string, b: string): Promise<string[]> {
  const db = await Database.open(':memory:');
  try {
    await db.run(`ATTACH '${a}' AS a (READ_ONLY); ATTACH '${b}' AS b (READ_ONLY)`);
    const tablesOf = async (catalog: string) =>
      (await db.all<{ name: string }>(`SELECT table_schema || '.' || table_name AS name FROM information_schema.tables WHERE table_catalog = '${catalog}' AND table_type = 'BASE TABLE' AND (table_schema IN ('raw', 'closed') OR table_schema || '.' || table_name IN (${KEPT.map((t) => `'${t}'`).join(', ')})) ORDER BY 1`)).map((row) => row.name);
    const [left, right] = [await tablesOf('a'), await tablesOf('b')];
    expect(right).toEqual(left);
    const differences: string[] = [];
    for (const name of left) {
      const [counts] = await db.all<{ only_a: string; only_b: string; n: string }>(
        `SELECT (SELECT count(*) FROM (SELECT * FROM a.${name} EXCEPT ALL SELECT * FROM b.${name})) AS only_a,
                (SELECT count(*) FROM (SELECT * FROM b.${name} EXCEPT ALL SELECT * FROM a.${name})) AS only_b,
                (SELECT count(*) FROM a.${name}) AS n`,
      );
      if (counts!.only_a !== '0' || counts!.only_b !== '0') differences.push(`${name}: ${counts!.only_a} rows only in the first, ${counts!.only_b} only in the second (of ${counts!.n})`);
    }
    return differences;
  } finally {
    db.close();
  }
}

/** Rows of the raw tables, all together. */
async function rawRows(file: string): Promise<number> {
  const db = await Database.open(file, { readOnly: true });
  try {
    const tables = await db.all<{ name: string }>("SELECT 'raw.' || table_name AS name FROM information_schema.tables WHERE table_schema = 'raw' AND table_type = 'BASE TABLE'");
    let rows = 0;
    for (const { name } of tables) rows += Number((await db.all<{ n: string }>(`SELECT count(*) AS n FROM ${name}`))[0]!.n);
    return rows;
  } finally {
    db.close();
  }
}

const LATE_MS = 5 * 86_400_000;

const manifestOf = (dir: string) => JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as ArchiveManifest;

/** Every file under a folder, relative, with `/`. */
function filesUnder(dir: string): string[] {
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[])
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .sort();
}

describe('the raw history archived and restored (issue 28, item 5)', () => {
  let exchange: SandboxProcess;
  let root: string;

  beforeAll(async () => {
    // Late records: one spot fill in ten is published 5 days after its time (the two nights' syncs re-read a week).
    exchange = await startSandboxProcess(['--end', '2026-11-01', '--window-ms', '1000', '--spot-quota', '1000000', '--futures-quota', '1000000', '--late-spot-fills-ms', String(LATE_MS)]);
    root = mkdtempSync(path.join(os.tmpdir(), 'exledger-archive-'));
  });
  afterAll(async () => {
    await exchange?.stop();
    if (root !== undefined) rmSync(root, { recursive: true, force: true });
  });

  /** A folder with a config file (database, logs, workbooks, archive folder created) and the CLI run in it. */
  function workspace(name: string, sync: object = { startDate: '2026-08-01' }) {
    const dir = path.join(root, name);
    const archive = path.join(dir, 'archive');
    mkdirSync(archive, { recursive: true });
    const db = path.join(dir, 'exledger.duckdb');
    writeFileSync(
      path.join(dir, 'exledger.config.json'),
      JSON.stringify({ db, reports: { outDir: path.join(dir, 'out') }, logDir: path.join(dir, 'logs'), sync, budget: { spot: { quota: 1_000_000, windowMs: 1000 }, contract: { quota: 1_000_000, windowMs: 1000 } }, archive: { dir: archive } }),
    );
    const cli = (args: string[], env: Record<string, string> = {}) => runCli(args, { cwd: dir, env: { ...exchange.settings, ...env } });
    return { dir, archive, db, cli };
  }

  const visibleUntil = async (night: string | null) => {
    const moved = await fetch(`${exchange.url}/__sandbox/visible-until`, { method: 'POST', body: JSON.stringify({ ms: night === null ? null : Date.parse(`${night}T00:00:00Z`) }) });
    expect(moved.status).toBe(200);
  };

  let first: ReturnType<typeof workspace>;

  it('run archives after the sync; restore into a new file equals the original row for row, its build equals the original\'s, and its next sync reads only what is newer', async () => {
    first = workspace('nightly');
    const { dir, archive, db, cli } = first;
    const run = await cli(['run', '--period', '2026-10']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^archive +ok +[\d.]+ s {2}first archive: \d+ files written \(/m);
    const manifest = manifestOf(archive);
    expect(manifest.files.length).toBeGreaterThan(10);
    // Hive partitions by stream, account and month; a file per partition on a first archive.
    expect(manifest.files.map((file) => file.path)).toContain('raw/stream=spot_fills/account=main/month=2026-10/part-1.parquet');
    expect(filesUnder(archive)).toEqual([...manifest.files.map((file) => file.path), 'manifest.json'].sort());
    // Exact values: the record's JSON and the ids as text, never a DOUBLE.
    const types = await Database.open(':memory:');
    try {
      const schema = await types.all<{ name: string; type: string }>(`SELECT name, type FROM parquet_schema('${path.join(archive, 'raw/stream=spot_fills/account=main/month=2026-10/part-1.parquet')}') WHERE type IS NOT NULL`);
      expect(schema.filter((column) => column.type === 'DOUBLE' || column.type === 'FLOAT')).toEqual([]);
    } finally {
      types.close();
    }

    const restored = path.join(dir, 'restored.duckdb');
    const restore = await cli(['restore', '--quiet', '--from', archive, '--db', restored]);
    expect(restore.stderr).toBe('');
    expect(restore.code).toBe(0);
    expect(restore.stdout).toMatch(/^raw\.spot_fills +[\d,]+ +main [\d,]+$/m);
    expect(restore.stdout).toContain('next: exledger build --db restored.duckdb');
    expect(await compareArchived(db, restored)).toEqual([]);
    expect(await rawRows(restored)).toBe(await rawRows(db));

    // A second restore into the same file is refused: it never overwrites a database.
    const again = await cli(['restore', '--from', archive, '--db', restored]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`error: ${restored}: already exists: restore never overwrites a database`);

    // The models are not archived: a build of the restored database equals the original's.
    expect(await cli(['build', '--quiet', '--db', restored])).toMatchObject({ code: 0, stderr: '' });
    expect(await martRows(restored)).toBeGreaterThan(500);
    expect(await compareDatabases(db, restored)).toEqual([]);

    // The next sync on each reads from its cursors: the same requests, nothing new.
    const syncOf = async (file: string) => {
      const result = await cli(['sync', '--json', '--db', file]);
      expect(result.code, result.stderr).toBe(0);
      return (JSON.parse(result.stdout) as { results: { account: string; stream: string; requests: number; rowsInserted: number; windows: number }[] }).results.map(({ account, stream, windows, rowsInserted }) => ({ account, stream, windows, rowsInserted }));
    };
    const before = (await exchange.requests()).length;
    const fromRestored = await syncOf(restored);
    const restoredRequests = (await exchange.requests()).length - before;
    const fromOriginal = await syncOf(db);
    expect(fromRestored).toEqual(fromOriginal);
    expect(fromRestored.every((stream) => stream.rowsInserted === 0)).toBe(true);
    // A handful of requests per stream (the lookback day), not the months the first sync read.
    expect(restoredRequests).toBeLessThan(before / 3);
  }, 180_000);

  it('a signed period survives a restore: its close, its workbooks byte for byte and its frozen figures; the restored build equals the original\'s', async () => {
    const { dir, archive, db, cli } = first;
    const close = await cli(['close', '--period', '2026-10', '--by', 'Jane Doe', '--note', 'signed', '--quiet']);
    expect(close.code, close.stderr).toBe(0);
    const archived = await cli(['archive']);
    expect(archived).toMatchObject({ code: 0, stderr: '' });
    // The close changed the bookkeeping, not the raw history: only tables written again.
    expect(archived.stdout).toMatch(/^\[ *\d+\/\d+\] added +meta\.period_closes /m);
    expect(archived.stdout).toMatch(/^\[ *\d+\/\d+\] added +meta\.closed_workbooks /m);
    expect(archived.stdout).toMatch(/^\[ *\d+\/\d+\] added +closed\./m);
    expect(archived.stdout).not.toMatch(/ raw\./);
    const restored = path.join(dir, 'restored-closed.duckdb');
    expect(await cli(['restore', '--quiet', '--from', archive, '--db', restored])).toMatchObject({ code: 0, stderr: '' });
    expect(await compareArchived(db, restored)).toEqual([]);
    expect(await cli(['build', '--quiet', '--db', restored])).toMatchObject({ code: 0, stderr: '' });
    expect(await compareDatabases(db, restored)).toEqual([]);
  }, 180_000);

  it('a bit flipped in a Parquet file: restore names the file and both checksums, and writes no database', async () => {
    const archive = path.join(root, 'flipped');
    cpSync(first.archive, archive, { recursive: true });
    const manifest = manifestOf(archive);
    const victim = manifest.files.find((file) => file.table === 'raw.spot_fills')!;
    const file = path.join(archive, ...victim.path.split('/'));
    const bytes = readFileSync(file);
    bytes[Math.floor(bytes.length / 2)]! ^= 0x10;
    writeFileSync(file, bytes);
    const target = path.join(root, 'from-flipped.duckdb');
    const restore = await first.cli(['restore', '--from', archive, '--db', target]);
    expect(restore.code).toBe(1);
    expect(restore.stderr).toMatch(new RegExp(`^error: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: is corrupted: its SHA-256 is [0-9a-f]{64}, the manifest says ${victim.sha256} `, 'm'));
    expect(restore.stderr).toContain('nothing was written');
    expect(readdirSync(root).filter((name) => name.includes('from-flipped'))).toEqual([]);

    // A file gone is named too.
    rmSync(file);
    const missing = await first.cli(['restore', '--from', archive, '--db', target]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`error: ${file}: is missing: the manifest lists it (raw.spot_fills, ${victim.rows} rows, SHA-256 ${victim.sha256})`);
    expect(existsSync(target)).toBe(false);
  });

  describe('two nights', () => {
    let nights: ReturnType<typeof workspace>;
    let firstNight: ArchiveManifest;
    let firstNightText: string;
    let killed: CliResult;

    beforeAll(() => {
      nights = workspace('nights', { startDate: '2026-08-01', lookbackDays: 7 });
    });
    afterAll(() => visibleUntil(null));

    it('night 1: sync and archive', async () => {
      // Mid-September: the second night adds to September's partitions (and makes October's).
      await visibleUntil('2026-09-16');
      expect(await nights.cli(['sync', '--quiet', '--until', '2026-09-16'])).toMatchObject({ code: 0, stderr: '' });
      const archived = await nights.cli(['archive']);
      expect(archived).toMatchObject({ code: 0, stderr: '' });
      expect(archived.stdout).toMatch(/^archive [\w-]+: first archive: \d+ files written/m);
      firstNight = manifestOf(nights.archive);
      firstNightText = readFileSync(path.join(nights.archive, 'manifest.json'), 'utf8');
      // History by the month of its records; snapshots by the month they were taken (today).
      expect(firstNight.files.filter((file) => file.table === 'raw.spot_fills').map((file) => file.month)).toEqual(['2026-08', '2026-09']);
    });

    it('night 2: the archive killed (SIGKILL) after writing files, before its manifest: the archive is as it was', async () => {
      await visibleUntil('2026-11-01');
      expect(await nights.cli(['sync', '--quiet', '--until', '2026-11-01'])).toMatchObject({ code: 0, stderr: '' });
      // Killed once its first file is written (the line is printed after the file is fsynced).
      const command = startCli(['archive'], { cwd: nights.dir, env: exchange.settings });
      let seen = '';
      command.child.stdout!.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        if (/^\[ *1\/\d+\] (added|rewritten)/m.test(seen)) command.child.kill('SIGKILL');
      });
      killed = await command.done;
      expect(killed.signal).toBe('SIGKILL');
      // The manifest is the first night's, byte for byte; the file written is not listed, so it is ignored.
      expect(readFileSync(path.join(nights.archive, 'manifest.json'), 'utf8')).toBe(firstNightText);
      const unlisted = filesUnder(nights.archive).filter((file) => file.endsWith('.parquet') && !firstNight.files.some((entry) => entry.path === file));
      expect(unlisted.length).toBeGreaterThan(0);
      // What the archive holds is still whole: a restore of it gives the first night.
      const restored = path.join(nights.dir, 'night-1.duckdb');
      expect(await nights.cli(['restore', '--quiet', '--from', nights.archive, '--db', restored])).toMatchObject({ code: 0, stderr: '' });
      expect(await rawRows(restored)).toBe(Object.entries(firstNight.tables).filter(([name]) => name.startsWith('raw.')).reduce((sum, [, table]) => sum + table.rows, 0));
    });

    it('night 2 again: the archive completes, removes what the killed one left, writes only new files; a restore equals the database', async () => {
      const archived = await nights.cli(['archive']);
      expect(archived).toMatchObject({ code: 0, stderr: '' });
      expect(archived.stdout).toMatch(/files? a killed archive left removed/);
      const secondNight = manifestOf(nights.archive);
      expect(secondNight.archiveId).not.toBe(firstNight.archiveId);
      expect(BigInt(secondNight.rawChangeSeq)).toBeGreaterThan(BigInt(firstNight.rawChangeSeq));
      expect(filesUnder(nights.archive)).toEqual([...secondNight.files.map((file) => file.path), 'manifest.json'].sort());
      // The first night's raw files stay as they were (same name, same checksum), unless their
      // partition had to be written again whole (rows the database no longer has).
      const rewritten = secondNight.files.filter((file) => file.archiveId === secondNight.archiveId && file.account !== undefined && !/part-1\.parquet$/.test(file.path));
      const kept = firstNight.files.filter((file) => file.account !== undefined && secondNight.files.some((entry) => entry.path === file.path));
      for (const file of kept) expect(secondNight.files.find((entry) => entry.path === file.path)).toEqual(file);
      expect(kept.length).toBeGreaterThan(firstNight.files.filter((file) => file.account !== undefined).length * 0.8);
      // New rows went into new files: October's partitions (new), September's part 2.
      const written = secondNight.files.filter((file) => file.archiveId === secondNight.archiveId && file.account !== undefined);
      expect(written.some((file) => file.month === '2026-10')).toBe(true);
      // The rest of September (and its fills published late) is added to September as its part 2.
      expect(written.some((file) => file.table === 'raw.spot_fills' && file.month === '2026-09' && file.path.endsWith('/part-2.parquet')), written.map((file) => `${file.path} ${file.rows}`).join('\n')).toBe(true);
      expect(rewritten.every((file) => !firstNight.files.some((entry) => entry.path === file.path))).toBe(true);

      const restored = path.join(nights.dir, 'restored.duckdb');
      expect(await nights.cli(['restore', '--quiet', '--from', nights.archive, '--db', restored])).toMatchObject({ code: 0, stderr: '' });
      expect(await compareArchived(nights.db, restored)).toEqual([]);

      // A third archive with nothing new writes nothing.
      const idle = await nights.cli(['archive']);
      expect(idle).toMatchObject({ code: 0, stderr: '' });
      expect(idle.stdout).toContain('nothing new to write');
    });

    it('rows the database no longer has (sync --full-refresh of a stream): their partitions are written again whole, the old files leave the manifest; a restore equals the database', async () => {
      const before = manifestOf(nights.archive);
      const old = before.files.filter((file) => file.table === 'raw.transfer_records');
      expect(old.length).toBeGreaterThan(0);
      expect(await nights.cli(['sync', '--quiet', '--full-refresh', '--streams', 'transfer_records', '--until', '2026-11-01'])).toMatchObject({ code: 0, stderr: '' });
      const archived = await nights.cli(['archive']);
      expect(archived).toMatchObject({ code: 0, stderr: '' });
      expect(archived.stdout).toMatch(/^\[ *\d+\/\d+\] rewritten +raw\.transfer_records main 2026-\d\d .*\(\d+ archived rows are no longer in the database\)$/m);
      const after = manifestOf(nights.archive);
      for (const file of old) {
        expect(after.files.some((entry) => entry.path === file.path), file.path).toBe(false);
        expect(existsSync(path.join(nights.archive, ...file.path.split('/'))), file.path).toBe(false);
      }
      // The other streams' files are untouched.
      expect(after.files.filter((file) => file.table === 'raw.spot_fills')).toEqual(before.files.filter((file) => file.table === 'raw.spot_fills'));
      const restored = path.join(nights.dir, 'after-refresh.duckdb');
      expect(await nights.cli(['restore', '--quiet', '--from', nights.archive, '--db', restored])).toMatchObject({ code: 0, stderr: '' });
      expect(await compareArchived(nights.db, restored)).toEqual([]);
    });
  });

  it('archive.dir that does not exist: archive is one error naming it (exit 2), a run a failed archive step (exit 3); without archive.dir, archive says how to set it', async () => {
    const missing = path.join(root, 'not-mounted');
    const result = await first.cli(['archive'], { EXLEDGER_ARCHIVE_DIR: missing });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`error: archive.dir ${missing}: does not exist (exledger never creates it`);
    expect(existsSync(missing)).toBe(false);
    const copy = path.join(root, 'plain.duckdb');
    copyFileSync(first.db, copy);
    const none = await runCli(['archive', '--db', copy], { cwd: root, env: exchange.settings });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('error: archive.dir: is not set');

    // In a run, the archive is a failed step with one line naming it; the later steps still run, and the run is partial (exit 3).
    const run = await first.cli(['run', '--period', '2026-10'], { EXLEDGER_ARCHIVE_DIR: missing });
    expect(run.code).toBe(3);
    expect(run.stdout).toContain(`archive failed: archive.dir ${missing}: does not exist (exledger never creates it`);
    expect(run.stdout).toMatch(/^archive +failed +[\d.]+ s {2}archive\.dir .*: does not exist/m);
    expect(run.stdout).toMatch(/^publish +ok /m);
    expect(run.stdout).toMatch(/^run: partly done \(exit 3\)/m);
    expect(existsSync(missing)).toBe(false);
  }, 180_000);
});
