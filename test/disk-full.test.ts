import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from './support/cli-process.ts';
import { BUILD_MODELS } from './support/model-db.ts';
import { startSandboxProcess, type SandboxProcess } from './support/sandbox-process.ts';
import { compareDatabases, martRows, mountSmallDisk, SMALL_DISK_UNAVAILABLE, type SmallDisk } from './support/small-disk.ts';

/**
 * Full disks (issue 12), in the deployed shape: each command is the `exledger` executable in a
 * process of its own, against `exledger sandbox` in another, with the database and the workbooks
 * on a real small disk (a tmpfs this test mounts) and the run logs on another. A ballast file
 * fills a disk to the level that makes the chosen step meet ENOSPC; then the ballast goes, the
 * command is run again, and what it stored is compared row for row with a clean run made on an
 * ordinary disk. At every full disk: one error line naming the file and ENOSPC, then its fix,
 * exit 1, and nothing stored or written before is lost or changed.
 */

const PERIOD = '2026-10';
const WORKBOOKS = ['balances', 'fees', 'pnl', 'rebates'].map((name) => `${name}-${PERIOD}.xlsx`);
const FIX = '  fix: free space on that disk (or give it a larger one), then run the same command again\n';
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const md5 = (file: string) => createHash('md5').update(readFileSync(file)).digest('hex');

describe.skipIf(SMALL_DISK_UNAVAILABLE !== null)(`a full disk at any step: one error naming the file, nothing lost${SMALL_DISK_UNAVAILABLE === null ? '' : ` (skipped: ${SMALL_DISK_UNAVAILABLE})`}`, () => {
  let exchange: SandboxProcess;
  let root: string;
  let disk: SmallDisk;
  let logDisk: SmallDisk;
  let db: string;
  let out: string;
  let reference: string;
  const cli = (args: string[]) => runCli(args, { cwd: root, env: exchange.settings });
  /** Everything a full disk must leave as it was: the workbooks and the published copy, by content. */
  const outputs = () => Object.fromEntries([...WORKBOOKS.map((name) => path.join(out, name)), `${db.slice(0, -'.duckdb'.length)}.published.duckdb`].map((file) => [file, md5(file)]));
  const leftovers = () => [...readdirSync(path.dirname(db)), ...readdirSync(out)].filter((name) => /\.tmp-|\.lock$|\.wal$/.test(name));

  beforeAll(async () => {
    exchange = await startSandboxProcess(['--end', '2026-11-01', '--window-ms', '1000', '--spot-quota', '1000000', '--futures-quota', '1000000']);
    root = mkdtempSync(path.join(os.tmpdir(), 'exledger-disk-full-'));
    disk = mountSmallDisk(path.join(root, 'disk'), '96m');
    // Room for the logs of the file's runs (each keeps a line per model and check: ~20 KB).
    logDisk = mountSmallDisk(path.join(root, 'logs'), '256k');
    db = path.join(disk.dir, 'data', 'exledger.duckdb');
    out = path.join(disk.dir, 'out');
    const settings = {
      budget: { spot: { quota: 1_000_000, windowMs: 1000 }, contract: { quota: 1_000_000, windowMs: 1000 } },
      sync: { startDate: '2026-08-01' },
    };
    writeFileSync(path.join(root, 'exledger.config.json'), JSON.stringify({ ...settings, db, reports: { outDir: out }, logDir: logDisk.dir }));
    // The clean run to compare with, on an ordinary disk.
    const clean = path.join(root, 'clean');
    mkdirSync(clean);
    reference = path.join(clean, 'exledger.duckdb');
    writeFileSync(path.join(clean, 'exledger.config.json'), JSON.stringify({ ...settings, db: reference, reports: { outDir: path.join(clean, 'out') }, logDir: path.join(clean, 'logs') }));
    const [ours, theirs] = await Promise.all([cli(['run', '--quiet', '--period', PERIOD]), runCli(['run', '--quiet', '--period', PERIOD], { cwd: clean, env: exchange.settings })]);
    expect(ours.stderr + theirs.stderr).toBe('');
    expect([ours.code, theirs.code]).toEqual([0, 0]);
    expect(await martRows(reference)).toBeGreaterThan(500);
  });
  // Each test fills the disk it means to; none inherits a ballast from the one before.
  beforeEach(() => {
    disk.empty();
    logDisk.empty();
  });
  afterAll(async () => {
    for (const mounted of [disk, logDisk]) {
      try {
        mounted?.unmount();
      } catch {
        // not mounted
      }
    }
    await exchange?.stop();
    if (root !== undefined) rmSync(root, { recursive: true, force: true });
  });

  it('build: stops at the first model it cannot write (never "ok", never "cannot rollback"), twice; status and sql still answer; with room again it completes and equals a clean run', async () => {
    const before = outputs();
    // 64 KiB: room for the lock file and the start of the build's write-ahead log, not for the whole build.
    disk.fill(64 * 1024);
    for (const attempt of [1, 2]) {
      const build = await cli(['build', '--quiet']);
      expect(build.stderr, `attempt ${attempt}`).toMatch(
        new RegExp(`^error: ${escape(db)}: no space left on the device \\(ENOSPC\\) while (building \\S+|recording the build settings \\(settings\\.reporting\\)|checkpointing the built models into the database file)( \\(writing ${escape(db)}(\\.wal)?\\))?; (nothing of this build was lost|the build is committed)[^\\n]*\\n${escape(FIX)}$`),
      );
      expect(build.code, `attempt ${attempt}`).toBe(1);
      expect(build.stdout, `attempt ${attempt}`).not.toMatch(new RegExp(`^build: ${BUILD_MODELS} models: `, 'm'));
    }
    // Readers write nothing: they work on a full disk.
    const readers = await Promise.all([cli(['status']), cli(['sql', 'select count(*) as n from marts.fees_daily', '--csv'])]);
    for (const reader of readers) expect(reader).toMatchObject({ code: 0, stderr: '' });
    // The database reopens with its last committed state (models not rebuilt keep their tables).
    expect(await compareDatabases(db, reference)).toEqual([]);
    expect(outputs()).toEqual(before);

    disk.empty();
    const again = await cli(['build', '--quiet']);
    expect(again).toMatchObject({ code: 0, stderr: '' });
    expect(again.stdout).toMatch(new RegExp(`^build: ${BUILD_MODELS} models: `, 'm'));
    expect(await compareDatabases(db, reference)).toEqual([]);
    expect(leftovers()).toEqual([]);
  });

  it('sync: one error for the whole sync, not one per stream; the rows stored stay; with room again it completes and equals a clean run', async () => {
    // One page: the lock file fits, the first write to the database does not.
    disk.fill(4096);
    const sync = await cli(['sync', '--quiet']);
    expect(sync.stderr).toMatch(new RegExp(`^error: ${escape(db)}: no space left on the device \\(ENOSPC\\) while syncing( \\(writing ${escape(db)}(\\.wal)?\\))?; nothing of this sync was lost[^\\n]*\\n${escape(FIX)}$`));
    expect(sync.code).toBe(1);
    expect(await compareDatabases(db, reference)).toEqual([]);

    disk.empty();
    expect(await cli(['sync', '--quiet'])).toMatchObject({ code: 0, stderr: '' });
    expect(await compareDatabases(db, reference)).toEqual([]);
    expect(leftovers()).toEqual([]);
  });

  it('report: the error names the workbook; the previous workbooks are unchanged and no half-written file is left', async () => {
    const before = outputs();
    // Less than a workbook (~30 KB).
    disk.fill(16 * 1024);
    const report = await cli(['report', 'all', '--period', PERIOD]);
    expect(report.stderr).toBe(
      `error: ${path.join(out, `pnl-${PERIOD}.xlsx`)}: no space left on the device (ENOSPC) while writing this workbook; the previous pnl-${PERIOD}.xlsx, if any, is unchanged and no half-written file is left\n${FIX}`,
    );
    expect(report.code).toBe(1);
    expect(outputs()).toEqual(before);
    expect(readdirSync(out).sort()).toEqual([...WORKBOOKS].sort());

    disk.empty();
    expect(await cli(['report', 'all', '--period', PERIOD, '--quiet'])).toMatchObject({ code: 0, stderr: '' });
    expect(readdirSync(out).sort()).toEqual([...WORKBOOKS].sort());
  });

  it('run, publish: the run stops at the publish; the previous published copy is unchanged and no partial copy is left', async () => {
    const published = `${db.slice(0, -'.duckdb'.length)}.published.duckdb`;
    const before = md5(published);
    // Room for the sync, the build and the workbooks (a few MB at most), not for a copy of the database (~17 MB).
    disk.fill(8 * 1024 * 1024);
    const run = await cli(['run', '--period', PERIOD]);
    expect(run.stderr).toMatch(
      new RegExp(`^error: ${escape(published)}: no space left on the device \\(ENOSPC\\) while publishing the read-only copy; the previous published copy is unchanged and no partial copy is left\\n${escape(FIX)}$`),
    );
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^== publish$/m);
    expect(md5(published)).toBe(before);
    expect(leftovers()).toEqual([]);
  });

  it('run log: a log disk with no room stops the run before it starts; one that fills during the run is said once and makes the run partial', async () => {
    const logs = readdirSync(logDisk.dir);
    logDisk.fill(0);
    const refused = await cli(['run', '--period', PERIOD]);
    expect(refused.stderr).toMatch(
      new RegExp(`^error: ${escape(logDisk.dir)}/run-\\S+\\.log: no space left on the device \\(ENOSPC\\) while starting the run's log; the run did not start: nothing was done\\n${escape(FIX)}$`),
    );
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    // The empty log it could not write is removed.
    expect(readdirSync(logDisk.dir).sort()).toEqual([...logs, 'ballast'].sort());

    // One page: the first lines of the log fit, the rest of the run's output does not.
    logDisk.fill(4096);
    const run = await cli(['run', '--period', PERIOD]);
    expect(run.stderr).toMatch(
      new RegExp(`^error: ${escape(logDisk.dir)}/run-\\S+\\.log: no space left on the device \\(ENOSPC\\) while writing the run's log; the run goes on without it \\(the lines before are in the file\\)\\n${escape(FIX)}$`),
    );
    expect(run.stdout).toMatch(/^publish +ok /m);
    expect(run.stdout).toMatch(/^log +failed +\S+run-\S+\.log: no space left on the device \(ENOSPC\)/m);
    expect(run.code).toBe(3);
  });

  it('with room again, the next run completes: the database and the published copy equal a clean run, nothing is left over', async () => {
    const run = await cli(['run', '--quiet', '--period', PERIOD]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(await compareDatabases(db, reference)).toEqual([]);
    expect(await compareDatabases(`${db.slice(0, -'.duckdb'.length)}.published.duckdb`, reference)).toEqual([]);
    expect(leftovers()).toEqual([]);
    expect(existsSync(path.join(out, `pnl-${PERIOD}.xlsx`))).toBe(true);
  });
});
