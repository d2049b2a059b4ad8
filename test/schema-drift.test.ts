import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAMS } from '../pipelines/index.ts';
import { ENDPOINTS } from '../src/exchange/endpoints.ts';
import { validateDeclaration, type FieldSpec, type StreamDeclaration } from '../src/extract/stream.ts';
import { Database } from '../src/store/database.ts';
import { readStatus } from '../src/store/stream-status.ts';
import { queryDatabase } from './support/sync-harness.ts';
import { runCli } from './support/cli-process.ts';
import { startProxiedSandbox, type HostileProxy, type ProxiedSandbox } from './support/hostile-proxy.ts';
import type { SandboxProcess } from './support/sandbox-process.ts';

/**
 * Schema drift and load info (issue 14), in the deployed shape: `exledger sync`, `status` and
 * `run` in processes of their own; a proxy in another process, in front of the sandbox in a
 * third, adds fields the declarations do not list to the exchange's answers: `rebateTier` to
 * spot fills (top level) and `bonus_tier` to the futures account's collateral (inside a declared
 * shape). The sync reports them by path and JSON type, never their value, and keeps reporting
 * them until a declaration lists them.
 */

const FILLS = ENDPOINTS['spot.fills'].path;
const FUTURES_ACCOUNT = ENDPOINTS['futures.accounts'].path;
const CONFIG = {
  db: './drift.duckdb',
  budget: { spot: { quota: 500, windowMs: 1000 }, contract: { quota: 1000, windowMs: 1000 } },
  retry: { retries: 8, minTimeoutMs: 50, maxTimeoutMs: 500 },
  timeoutMs: 10_000,
  sync: { startDate: '2026-08-01' },
  reports: { outDir: './out' },
  logDir: './logs',
};
const SOME_STREAMS = 'currencies,spot_assets,funding_bills,spot_fills,futures_accounts';
const ISO = '\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z';
/** The values the proxy sends: stored in raw (the record exactly as sent), never in meta. */
const SECRET_VALUES = ['gold-7f3a', 'platinum-91c2'];

function runIdOf(stdout: string): string {
  const id = /^sync (\d{8}T\d{6}-[0-9a-f]{6}): /m.exec(stdout)?.[1];
  expect(id, stdout).toBeDefined();
  return id!;
}

describe('schema drift: fields the exchange started sending that no declaration lists', () => {
  let sandbox: ProxiedSandbox;
  let exchange: SandboxProcess;
  let proxy: HostileProxy;
  let dir: string;
  const db = () => path.join(dir, 'drift.duckdb');
  const viaProxy = () => sandbox.viaProxy();
  const cli = (args: string[], env: Record<string, string>) => runCli(args, { cwd: dir, env });

  beforeAll(async () => {
    sandbox = await startProxiedSandbox();
    ({ exchange, proxy } = sandbox);
    dir = mkdtempSync(path.join(os.tmpdir(), 'exledger-drift-'));
    writeFileSync(path.join(dir, 'exledger.config.json'), JSON.stringify(CONFIG));
  });
  afterAll(async () => {
    expect(await sandbox?.stop()).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  });

  it('are reported by the sync and by status (text and --json) with their path and type, never their value; an honest night keeps reporting them without duplicating rows; the run ends with its load info', async () => {
    // Night 1, through the proxy: the first fill of every answer and the first collateral entry carry a new field.
    await proxy.setRules([
      { path: FILLS, pattern: '"fillId":', replacement: `"rebateTier":"${SECRET_VALUES[0]}","fillId":` },
      { path: FUTURES_ACCOUNT, pattern: '"cum_deposit_amount":', replacement: `"bonus_tier":"${SECRET_VALUES[1]}","cum_deposit_amount":` },
    ]);
    const first = await cli(['sync', '--streams', SOME_STREAMS], viaProxy());
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect((await proxy.rewrites()).map((rewrite) => rewrite.path)).toEqual(expect.arrayContaining([FILLS, FUTURES_ACCOUNT]));
    const firstRun = runIdOf(first.stdout);
    const driftLine = (stream: string, fields: string, runId: string) =>
      new RegExp(`^drift in main/${stream}: new field\\(s\\) the staging model does not read: ${fields} \\(first seen ${ISO}, sync ${runId}\\); declare them in pipelines/ to read them$`, 'm');
    expect(first.stdout).toMatch(driftLine('spot_fills', 'rebateTier', firstRun));
    expect(first.stdout).toMatch(driftLine('futures_accounts', 'collateral\\[\\]\\.bonus_tier', firstRun));
    // Only the streams that drifted: the sandbox sends what the declarations list.
    expect(first.stdout.split('\n').filter((line) => line.startsWith('drift in '))).toHaveLength(2);
    for (const value of SECRET_VALUES) expect(first.stdout + first.stderr).not.toContain(value);

    // status: the same line under the table, and the fields in --json.
    const table = await cli(['status'], exchange.settings);
    expect(table.code, table.stdout + table.stderr).toBe(0);
    expect(table.stdout).toMatch(driftLine('spot_fills', 'rebateTier', firstRun));
    expect(table.stdout).toMatch(driftLine('futures_accounts', 'collateral\\[\\]\\.bonus_tier', firstRun));
    const json = JSON.parse((await cli(['status', '--json'], exchange.settings)).stdout) as { streams: { stream: string; newFields: Record<string, string>[] }[] };
    const fieldsOf = (stream: string) => json.streams.find((status) => status.stream === stream)?.newFields;
    expect(fieldsOf('spot_fills')).toEqual([{ field: 'rebateTier', jsonType: 'string', firstSeenAt: expect.stringMatching(new RegExp(`^${ISO}$`)), firstSeenRunId: firstRun, lastSeenAt: expect.stringMatching(new RegExp(`^${ISO}$`)), lastSeenRunId: firstRun }]);
    expect(fieldsOf('futures_accounts')?.map((field) => [field.field, field.jsonType])).toEqual([['collateral[].bonus_tier', 'string']]);
    expect(fieldsOf('funding_bills')).toEqual([]);

    // The records are stored exactly as sent (raw keeps unknown fields); meta holds no value.
    const carried = await queryDatabase<{ n: string }>(db(), `SELECT count(*)::VARCHAR AS n FROM raw.spot_fills WHERE _record->>'rebateTier' = '${SECRET_VALUES[0]}'`);
    expect(Number(carried[0]!.n)).toBeGreaterThan(0);
    const metaTables = await queryDatabase<{ table_name: string }>(db(), "SELECT table_name FROM information_schema.tables WHERE table_schema = 'meta' ORDER BY 1");
    expect(metaTables.map((table) => table.table_name)).toContain('schema_drift');
    for (const { table_name } of metaTables) {
      const text = JSON.stringify(await queryDatabase(db(), `SELECT * FROM meta.${table_name}`));
      for (const value of SECRET_VALUES) expect(text, `meta.${table_name}`).not.toContain(value);
    }

    // Night 2, straight to the exchange: the fields are not sent again, still reported as seen before; no row twice.
    const fillsBefore = await queryDatabase<{ n: string; keys: string }>(db(), 'SELECT count(*)::VARCHAR AS n, count(DISTINCT _key)::VARCHAR AS keys FROM raw.spot_fills');
    const second = await cli(['sync', '--streams', SOME_STREAMS], exchange.settings);
    expect(second.code, second.stdout + second.stderr).toBe(0);
    const secondRun = runIdOf(second.stdout);
    expect(secondRun).not.toBe(firstRun);
    expect(second.stdout).toMatch(driftLine('spot_fills', 'rebateTier', firstRun));
    expect(second.stdout).toMatch(driftLine('futures_accounts', 'collateral\\[\\]\\.bonus_tier', firstRun));
    const fillsAfter = await queryDatabase<{ n: string; keys: string; inserted: string }>(
      db(),
      `SELECT count(*)::VARCHAR AS n, count(DISTINCT _key)::VARCHAR AS keys, (SELECT rows_inserted::VARCHAR FROM meta.runs WHERE run_id = '${secondRun}' AND stream = 'spot_fills') AS inserted FROM raw.spot_fills`,
    );
    expect(fillsAfter[0]).toEqual({ ...fillsBefore[0], inserted: '0' });
    expect(fillsAfter[0]!.n).toBe(fillsAfter[0]!.keys);

    // The nightly run, straight to the exchange: every stream, so the ones not synced yet bring new rows.
    const run = await cli(['run'], exchange.settings);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(driftLine('spot_fills', 'rebateTier', firstRun));
    const block = run.stdout.slice(run.stdout.indexOf('\nload info:\n'));
    expect(block, run.stdout).toMatch(/^load info:\n {2}new rows +\S/m);
    const runId = runIdOf(run.stdout);
    const inserted = await queryDatabase<{ stream: string; n: string }>(db(), `SELECT stream, rows_inserted::VARCHAR AS n FROM meta.runs WHERE run_id = '${runId}' ORDER BY stream`);
    expect(inserted).toHaveLength(STREAMS.length);
    const newRowsLine = /^ {2}new rows +(.*)$/m.exec(block)![1]!;
    const named = Object.fromEntries([...newRowsLine.matchAll(/main\/(\w+) ([\d,]+)/g)].map(([, stream, n]) => [stream!, n!.replaceAll(',', '')]));
    const expected = Object.fromEntries(inserted.filter((row) => row.n !== '0').map((row) => [row.stream, row.n]));
    // The streams night 1 did not read came in whole.
    expect(Number(expected.futures_fills)).toBeGreaterThan(0);
    expect(Number(expected.transfer_records)).toBeGreaterThan(0);
    expect(named).toEqual(expected);
    expect(newRowsLine).toContain(`none in the ${STREAMS.length - Object.keys(expected).length} other streams`);
    // The models are on the build line (not counted again in the load info).
    expect(run.stdout).toMatch(/^build +ok +\d+\.\d s {2}\d+ models: \d+ (rebuilt whole|incremental|unchanged)\b/m);
    expect(block).not.toMatch(/^ {2}models /m);
    const reports = /^ {2}reports +(.*)$/m.exec(block)![1]!.split(', ');
    expect(reports.map((file) => path.basename(file)).sort()).toEqual(expect.arrayContaining([expect.stringMatching(/^pnl-\d{4}-\d{2}\.xlsx$/), expect.stringMatching(/^balances-\d{4}-\d{2}\.xlsx$/)]));
    expect(reports).toHaveLength(4);
    for (const file of reports) expect(existsSync(path.resolve(dir, file)), file).toBe(true);
    // Seen in an earlier sync: not new in this run's load info.
    expect(block).not.toMatch(/new fields/);

    // The workbooks' Summary says it where the figures are signed: on the stream's freshness line,
    // and in a note under the headline, of the reports that read those streams only.
    const summaryLines = async (file: string) => {
      const workbook = new ExcelJS.Workbook();
      await workbook.xlsx.readFile(path.resolve(dir, file));
      const lines: string[][] = [];
      workbook.getWorksheet('Summary')!.eachRow((row) => lines.push(((row.values as ExcelJS.CellValue[]).slice(1)).map((value) => (value === null || value === undefined ? '' : String(value)))));
      return lines;
    };
    const pnl = await summaryLines(reports.find((file) => path.basename(file).startsWith('pnl-'))!);
    const freshnessNote = (stream: string) => pnl.find((line) => line[0] === stream && line[1] === 'main')?.at(-1);
    expect(freshnessNote('spot_fills')).toMatch(/; the exchange also sends rebateTier, which no figure reads yet \(exledger status\)$/);
    expect(freshnessNote('futures_accounts')).toMatch(/; the exchange also sends collateral\[\]\.bonus_tier, which no figure reads yet/);
    expect(freshnessNote('futures_fills')).not.toMatch(/also sends/);
    expect(pnl.map((line) => line[0])).toContain('Note: the exchange sends 2 field(s) that no figure reads yet: spot_fills.rebateTier, futures_accounts.collateral[].bonus_tier (see Data freshness).');
    const balances = await summaryLines(reports.find((file) => path.basename(file).startsWith('balances-'))!);
    expect(balances.flat().join('\n')).not.toMatch(/also sends|no figure reads yet/);
    for (const value of SECRET_VALUES) expect(JSON.stringify(pnl)).not.toContain(value);
  });

  it('a field drops out of the report once its declaration lists it, nested ones too', async () => {
    const declare = (name: string, add: (fields: readonly FieldSpec[]) => FieldSpec[]): StreamDeclaration[] =>
      STREAMS.map((stream) => (stream.name === name ? ({ ...stream, fields: add(stream.fields) } as StreamDeclaration) : stream));
    const handle = await Database.open(db(), { readOnly: true });
    try {
      const fieldsOf = async (streams: readonly StreamDeclaration[], name: string) => (await readStatus(handle, streams)).find((status) => status.stream === name)?.newFields.map((field) => field.field);
      expect(await fieldsOf(STREAMS, 'spot_fills')).toEqual(['rebateTier']);
      expect(await fieldsOf(declare('spot_fills', (fields) => [...fields, { name: 'rebateTier', type: 'text' }]), 'spot_fills')).toEqual([]);
      expect(await fieldsOf(STREAMS, 'futures_accounts')).toEqual(['collateral[].bonus_tier']);
      // Declared at the top level is not declared inside the collateral's shape.
      expect(await fieldsOf(declare('futures_accounts', (fields) => [...fields, { name: 'bonus_tier', type: 'text' }]), 'futures_accounts')).toEqual(['collateral[].bonus_tier']);
      const inShape = declare('futures_accounts', (fields) =>
        fields.map((field) => (field.name === 'collateral' && field.shape !== undefined ? { ...field, shape: { ...field.shape, fields: [...field.shape.fields, { name: 'bonus_tier', type: 'text' }] } } : field)),
      );
      expect(await fieldsOf(inShape, 'futures_accounts')).toEqual([]);
      // Or listed as known (read as it comes, or not needed): gone from the report too.
      const known = STREAMS.map((stream) => (stream.name === 'spot_fills' ? { ...stream, knownFields: [...(stream.knownFields ?? []), 'rebateTier'] } : stream));
      expect(await fieldsOf(known, 'spot_fills')).toEqual([]);
      // A known field that is also a typed one is a declaration to fix.
      expect(() => validateDeclaration({ ...STREAMS.find((stream) => stream.name === 'spot_fills')!, knownFields: ['fillId'] })).toThrow(/known field "fillId" is also among its fields/);
    } finally {
      handle.close();
    }
  });
});
