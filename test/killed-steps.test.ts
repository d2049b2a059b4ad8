import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, watch, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startCli, type CliResult } from './support/cli-process.ts';
import { BUILD_MODELS, BUILD_STEPS } from './support/model-db.ts';
import { startSandboxProcess, type SandboxProcess } from './support/sandbox-process.ts';
import { compareDatabases, martRows } from './support/small-disk.ts';

/**
 * Build, report and publish killed outright (SIGKILL: a power cut, the OOM killer) at chosen
 * points, in the deployed shape (the `exledger` executable in its own process, the sandbox in
 * another): no half table, no half workbook, no half published copy; the next command completes,
 * removes what the killed one left, and ends with the same data as a clean run.
 */

const PERIOD = '2026-10';
const WORKBOOKS = ['balances', 'fees', 'pnl', 'rebates'].map((name) => `${name}-${PERIOD}.xlsx`);

/** Starts a command and kills it (SIGKILL) once `point` says so (given its stdout so far, or a file that appeared in `watched`). */
async function killAt(args: string[], options: { cwd: string; env: Record<string, string> }, point: { stdout?: RegExp; file?: { dir: string; name: RegExp } }): Promise<CliResult & { pid: number }> {
  const command = startCli(args, options);
  const kill = () => command.child.kill('SIGKILL');
  let seen = '';
  if (point.stdout !== undefined) {
    command.child.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (point.stdout!.test(seen)) kill();
    });
  }
  const watcher = point.file === undefined ? undefined : watch(point.file.dir, (_event, name) => {
    if (name !== null && point.file!.name.test(name)) kill();
  });
  try {
    return { ...(await command.done), pid: command.child.pid! };
  } finally {
    watcher?.close();
  }
}

/**
 * Opens a workbook (a half-written file does not open) and returns its sheets with the row counts
 * of the detail sheets (the Summary's notes differ between a run's workbooks and a report's).
 */
async function sheetsOf(file: string): Promise<string[]> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.readFile(file);
  return workbook.worksheets.map((sheet) => (sheet.name === 'Summary' ? sheet.name : `${sheet.name}: ${sheet.actualRowCount}`));
}

describe('build, report and publish killed outright (SIGKILL): the next run completes and equals a clean run', () => {
  let exchange: SandboxProcess;
  let dir: string;
  let db: string;
  let out: string;
  let reference: string;
  let referenceSheets: Record<string, string[]>;
  const options = () => ({ cwd: dir, env: exchange.settings });
  const cli = (args: string[]) => runCli(args, options());
  const leftovers = () => [...readdirSync(dir), ...readdirSync(out)].filter((name) => /\.tmp-|\.lock$|\.wal$/.test(name));

  beforeAll(async () => {
    exchange = await startSandboxProcess(['--end', '2026-11-01', '--window-ms', '1000', '--spot-quota', '1000000', '--futures-quota', '1000000']);
    dir = mkdtempSync(path.join(os.tmpdir(), 'exledger-killed-'));
    db = path.join(dir, 'exledger.duckdb');
    out = path.join(dir, 'out');
    writeFileSync(
      path.join(dir, 'exledger.config.json'),
      JSON.stringify({ db, reports: { outDir: out }, logDir: path.join(dir, 'logs'), sync: { startDate: '2026-08-01' }, budget: { spot: { quota: 1_000_000, windowMs: 1000 }, contract: { quota: 1_000_000, windowMs: 1000 } } }),
    );
    expect(await cli(['run', '--quiet', '--period', PERIOD])).toMatchObject({ code: 0, stderr: '' });
    // The clean run's data and workbooks, to compare with after each kill.
    reference = path.join(dir, 'clean.duckdb.copy');
    copyFileSync(db, reference);
    expect(await martRows(reference)).toBeGreaterThan(500);
    referenceSheets = Object.fromEntries(await Promise.all(WORKBOOKS.map(async (name) => [name, await sheetsOf(path.join(out, name))] as const)));
  });
  afterAll(async () => {
    await exchange?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('build killed after its 20th model: no half table (the database equals a clean run at once), and the next build completes', async () => {
    const killed = await killAt(['build'], options(), { stdout: new RegExp(`^\\[20/${BUILD_STEPS}\\]`, 'm') });
    expect(killed.signal).toBe('SIGKILL');
    expect(killed.stdout).not.toMatch(/^build:/m);
    // Each model is replaced in its own transaction: what the kill left reads as a whole build.
    expect(await compareDatabases(db, reference)).toEqual([]);
    const next = await cli(['build', '--quiet']);
    expect(next).toMatchObject({ code: 0, stderr: '' });
    expect(next.stdout).toMatch(new RegExp(`^build: ${BUILD_MODELS} models: `, 'm'));
    expect(await compareDatabases(db, reference)).toEqual([]);
    expect(leftovers()).toEqual([]);
  });

  it('report killed while writing its second workbook: every workbook there opens whole; the next report removes the half file and writes them all', async () => {
    const killed = await killAt(['report', 'all', '--period', PERIOD], options(), { file: { dir: out, name: /^\.fees-.*\.tmp-\d+$/ } });
    expect(killed.signal).toBe('SIGKILL');
    // Killed mid-write: its half workbook is there, under its temporary name only.
    expect(readdirSync(out).filter((name) => name.includes('.tmp-'))).toEqual([`.fees-${PERIOD}.xlsx.tmp-${killed.pid}`]);
    for (const name of WORKBOOKS) expect(await sheetsOf(path.join(out, name)), name).toEqual(referenceSheets[name]);
    const next = await cli(['report', 'all', '--period', PERIOD, '--quiet']);
    expect(next).toMatchObject({ code: 0, stderr: '' });
    expect(readdirSync(out).sort()).toEqual([...WORKBOOKS].sort());
    for (const name of WORKBOOKS) expect(await sheetsOf(path.join(out, name)), name).toEqual(referenceSheets[name]);
  });

  it('run killed while publishing (its temporary copy just appeared): the published copy is whole; the next run removes the partial copy and publishes again', async () => {
    const published = path.join(dir, 'exledger.published.duckdb');
    const killed = await killAt(['run', '--period', PERIOD], options(), { file: { dir, name: /^\.exledger\.published\.duckdb\.tmp-/ } });
    expect(killed.signal).toBe('SIGKILL');
    // It got to the publish: the last heading of its log (stdout shows a heading only over something).
    const log = readdirSync(path.join(dir, 'logs')).find((name) => name.endsWith(`-${killed.pid}.log`))!;
    expect([...readFileSync(path.join(dir, 'logs', log), 'utf8').matchAll(/ == (\w+)$/gm)].at(-1)?.[1]).toBe('publish');
    // Either the previous copy or the new one, never a part of one.
    expect(await compareDatabases(published, reference)).toEqual([]);
    const next = await cli(['run', '--quiet', '--period', PERIOD]);
    expect(next).toMatchObject({ code: 0, stderr: '' });
    expect(existsSync(published)).toBe(true);
    expect(await compareDatabases(published, reference)).toEqual([]);
    expect(await compareDatabases(db, reference)).toEqual([]);
    expect(leftovers()).toEqual([]);
  });
});
