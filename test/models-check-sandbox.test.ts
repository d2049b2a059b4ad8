import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildModels } from '../src/models/build.ts';
import { checkModels, type TestResult } from '../src/models/check.ts';
import { DEFAULT_MODEL_SETTINGS, type ModelSettings } from '../src/models/settings.ts';
import type { RunningSandbox } from '../src/sandbox/server.ts';
import { Database } from '../src/store/database.ts';
import { recordRawChange } from '../src/store/raw-store.ts';
import { startTestSandbox } from './support/sandbox.ts';
import { createWorkspace, syncOnce, type SyncWorkspace } from './support/sync-harness.ts';
import { runCli } from './support/cli-process.ts';


/** Both cost methods and a non-UTC zone, so every model variant is built and checked. */
const SETTINGS: ModelSettings = { ...DEFAULT_MODEL_SETTINGS, reportingTimeZone: 'Europe/Berlin', costMethods: ['fifo', 'average'] };

/** Builds every model; fails the test naming each model that did not build. */
async function buildEverything(db: Database): Promise<number> {
  const started = performance.now();
  const results = await buildModels(db, SETTINGS);
  expect(results.filter((result) => result.status !== 'ok').map((result) => `${result.id} ${result.status}: ${result.message}`)).toEqual([]);
  return performance.now() - started;
}

function notPassing(results: readonly TestResult[]): string[] {
  return results.filter((result) => result.status !== 'pass').map((result) => `${result.id} ${result.status} (${result.offending}) ${result.message ?? JSON.stringify(result.sample.slice(0, 2))}`);
}

describe('exledger check on a synced sandbox medium history', () => {
  let sandbox: RunningSandbox;
  let workspace: SyncWorkspace;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ scale: 'medium', spotQuota: 1_000_000, futuresQuota: 1_000_000 });
    workspace = createWorkspace(sandbox);
    const started = performance.now();
    const sync = await syncOnce(workspace, sandbox);
    expect(sync.results.filter((result) => result.status !== 'ok')).toEqual([]);
    console.log(`medium sync: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }, 120_000);
  afterAll(async () => {
    await sandbox?.close();
  });

  it('passes every SQL test; a bill whose afterAmount was altered makes balance_chain_unbroken fail showing that bill', async () => {
    const db = await Database.open(workspace.db);
    let brokenBillId: string;
    try {
      const buildMs = await buildEverything(db);
      const checkStarted = performance.now();
      const clean = await checkModels(db);
      console.log(`build: ${(buildMs / 1000).toFixed(2)} s, check: ${((performance.now() - checkStarted) / 1000).toFixed(2)} s, ${clean.length} tests`);
      expect(notPassing(clean)).toEqual([]);
      expect(clean.map((result) => result.id)).toEqual(expect.arrayContaining(['marts/balance_chain_unbroken', 'marts/balance_vs_assets_unique']));

      // The sandbox history is a real one: thousands of bills, every coin's chain whole from 0,
      // months carried. Its funding bills and assets snapshot happen to agree coin by coin, so the
      // reconciliation (a mart, not a check: on a real exchange they are separate accounts) shows no difference.
      const [shape] = await db.all<{ bills: string; coins: string; months: string; different: string }>(
        'SELECT (SELECT count(*) FROM intermediate.int_ledger_events)::VARCHAR AS bills, (SELECT count(*) FROM marts.balance_vs_assets WHERE found_in = \'both\')::VARCHAR AS coins, (SELECT count(*) FROM marts.balance_reconciliation WHERE bill_count = 0)::VARCHAR AS months, (SELECT count(*) FROM marts.balance_vs_assets WHERE is_different IS DISTINCT FROM false)::VARCHAR AS different',
      );
      expect(Number(shape!.bills)).toBeGreaterThan(1000);
      expect(Number(shape!.coins)).toBeGreaterThan(3);
      expect(Number(shape!.months)).toBeGreaterThan(0);
      expect(shape!.different).toBe('0');

      // Alter the afterAmount of one USDT bill in the middle of its chain, as a corrupted record would:
      // +1 on its balance after, so it no longer follows from the bill before it, nor leads to the bill after it.
      const [victim] = await db.all<{ bill_id: string; previous_bill_id: string; after_amount: string }>(
        "SELECT bill_id, previous_bill_id, after_amount::VARCHAR AS after_amount FROM intermediate.int_ledger_events WHERE coin_name = 'USDT' AND chain_seq = 100",
      );
      brokenBillId = victim!.bill_id;
      const changed = await db.run(
        "UPDATE raw.funding_bills SET _record = json_merge_patch(_record, json_object('afterAmount', CAST(CAST(_record->>'afterAmount' AS DECIMAL(38, 18)) + 1 AS VARCHAR))) WHERE _record->>'billId' = $1",
        [brokenBillId],
      );
      expect(changed).toBe(1);
      // Logged as a sync logs a window it read again, so the incremental build takes the bill again.
      const [bill] = await db.all<{ account: string; at: string }>("SELECT _account AS account, _event_ms AS at FROM raw.funding_bills WHERE _record->>'billId' = $1", [brokenBillId]);
      await recordRawChange(db, { account: bill!.account, table: 'funding_bills', kind: 'window', minEventMs: Number(bill!.at), maxEventMs: Number(bill!.at), rows: 0 });

      await buildEverything(db);
      const broken = await checkModels(db);
      const chain = broken.find((result) => result.id === 'marts/balance_chain_unbroken')!;
      expect(chain.status).toBe('fail');
      // The altered bill (found 1 more than the previous bill left) and the bill after it (found 1 less).
      expect(chain.offending).toBe(2);
      const shown = chain.sample.find((row) => row.bill_id === brokenBillId);
      expect(shown).toMatchObject({ coin_name: 'USDT', previous_bill_id: victim!.previous_bill_id, gap: '1.000000000000000000' });
      expect(Number(shown!.found_before_amount) - Number(shown!.expected_before_amount)).toBe(1);
      expect(chain.sample.some((row) => row.previous_bill_id === brokenBillId && row.gap === '-1.000000000000000000')).toBe(true);
    } finally {
      db.close();
    }

    // Through the CLI: exit code 1, the failing test named and the broken bill printed.
    const cliStarted = performance.now();
    const { code, stdout, stderr } = await runCli(['check', '--db', workspace.db], { cwd: workspace.dir });
    const cli = { code, output: stdout + stderr };
    console.log(`exledger check (CLI): ${((performance.now() - cliStarted) / 1000).toFixed(2)} s`);
    expect(cli.code, cli.output).toBe(1);
    expect(cli.output).toMatch(/FAIL\s+marts\/balance_chain_unbroken\s.*2 offending rows/);
    expect(cli.output).toContain(brokenBillId);
    expect(cli.output).toMatch(/^check: [1-9]\d* failed \([^)]*marts\/balance_chain_unbroken[^)]*\), \d+ passed; checked everything$/m);
  }, 180_000);
});
