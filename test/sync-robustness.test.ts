import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readStatus } from '../src/store/stream-status.ts';
import { STREAMS } from '../pipelines/index.ts';
import { syncJob } from '../src/jobs/sync-job.ts';
import { resolveConfig } from '../src/config/config.ts';
import { generateExchange } from '../src/sandbox/generate.ts';
import { Database } from '../src/store/database.ts';
import { DatabaseLock } from '../src/store/lock.ts';
import type { RunningSandbox, SandboxOptions } from '../src/sandbox/server.ts';
import { expectedRecordTexts } from './support/expected-records.ts';
import { clientFor, startTestSandbox, TEST_END_MS } from './support/sandbox.ts';
import { createWorkspace, DAY, fingerprint, isoDay, queryWorkspace, syncNightly, syncOnce, type SyncWorkspace } from './support/sync-harness.ts';

const HISTORY_STREAMS = ['spot_fills', 'funding_bills', 'transfer_records', 'futures_fills', 'affiliate_commissions'] as const;
const LIFTED = { spotQuota: 1_000_000, futuresQuota: 1_000_000 };

async function storedTexts(workspace: SyncWorkspace): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const stream of HISTORY_STREAMS) {
    out[stream] = (await queryWorkspace<{ r: string }>(workspace, `SELECT _record::VARCHAR AS r FROM raw.${stream}`)).map((row) => row.r).sort();
  }
  return out;
}

async function withSandbox<T>(options: SandboxOptions, work: (sandbox: RunningSandbox) => Promise<T>): Promise<T> {
  const sandbox = await startTestSandbox({ ...LIFTED, ...options });
  try {
    return await work(sandbox);
  } finally {
    await sandbox.close();
  }
}

describe('sync is right whatever the exchange does with its bounds and cursors', () => {
  it.each([
    ['exclusive time bounds', { bounds: 'exclusive' }],
    ['half-open time bounds', { bounds: 'half-open' }],
    ['transfer cursors the other way round', { transferCursor: 'reversed' }],
  ] as [string, SandboxOptions][])('stores every record with %s', async (_name, options) => {
    await withSandbox(options, async (sandbox) => {
      const workspace = createWorkspace(sandbox);
      const outcome = await syncOnce(workspace, sandbox, { streams: HISTORY_STREAMS.join(',') });
      expect(outcome.results.filter((result) => result.status !== 'ok')).toEqual([]);
      expect(await storedTexts(workspace)).toEqual(expectedRecordTexts(sandbox.exchange.accounts[0]!));
    });
  });
});

describe('sync under faults', () => {
  it('with --faults heavy stores exactly what it stores with --faults none', async () => {
    const clean = await withSandbox({}, async (sandbox) => {
      const workspace = createWorkspace(sandbox);
      await syncOnce(workspace, sandbox);
      return fingerprint(workspace);
    });
    const faulty = await withSandbox({ faults: 'heavy', faultSeed: 3, slowFaultMs: [100, 400] }, async (sandbox) => {
      const workspace = createWorkspace(sandbox);
      const outcome = await syncOnce(workspace, sandbox);
      expect(outcome.results.filter((result) => result.status !== 'ok')).toEqual([]);
      const faults = sandbox.requestLog.filter((entry) => entry.fault !== null).length;
      console.log(`heavy faults during sync: ${faults} of ${sandbox.requestLog.length} requests faulted`);
      expect(faults).toBeGreaterThan(20);
      return fingerprint(workspace);
    });
    expect(faulty).toEqual(clean);
  });
});

describe('nightly runs', () => {
  it('a run with one new day reads the lookback and the new day, with at most one request per partition beyond their pages', async () => {
    await withSandbox({}, async (sandbox) => {
      const workspace = createWorkspace(sandbox);
      const { nightly, newDayStartMs: dayBefore } = await syncNightly(workspace, sandbox);
      expect(nightly.results.every((result) => result.status === 'ok')).toBe(true);

      // Pages needed: the records of [cursor - lookback, now) in each partition, 100 a page
      // (500 for transfers). Everything above that is overhead; allow one per partition.
      const account = sandbox.exchange.accounts[0]!;
      const from = dayBefore - DAY;
      const inRange = (t: number) => t >= from && t < TEST_END_MS;
      const pages = (records: number, size: number) => Math.max(1, Math.ceil(records / size));
      const spotResult = nightly.results.find((result) => result.stream === 'spot_fills')!;
      const spotWithFills = [...account.spotFills.values()];
      const budget: Record<string, number> = {
        funding_bills: pages(account.fundingBills.filter((b) => inRange(b.t)).length, 100) + 1,
        transfer_records: pages(account.transferRecords.filter((r) => inRange(r.t)).length, 500) + 1,
        affiliate_commissions: 4 * 2,
        affiliate_referrals: 2 + 1,
        // One window per discovered symbol; symbols without fills need one page.
        spot_fills:
          spotWithFills.reduce((sum, fills) => sum + pages(fills.filter((f) => inRange(f.t)).length, 100) + 1, 0) + (spotResult.windows - spotWithFills.length) * 2,
      };
      for (const [stream, limit] of Object.entries(budget)) {
        const made = nightly.results.find((result) => result.stream === stream)!.requests;
        expect(made, stream).toBeLessThanOrEqual(limit);
      }
    });
  });
});

describe('bad input leaves the database as it was', () => {
  it('names an unknown stream, a bad date and a missing credential before touching anything', async () => {
    await withSandbox({}, async (sandbox) => {
      const workspace = createWorkspace(sandbox);
      await expect(syncOnce(workspace, sandbox, { streams: 'spot_fills,spot_fils' })).rejects.toThrow(/--streams: unknown stream "spot_fils"/);
      await expect(syncOnce(workspace, sandbox, { since: '2026-02-30' })).rejects.toThrow(/--since: "2026-02-30" is not a date/);
      expect(() => resolveConfig({}, { ...workspace.env, EXLEDGER_API_KEY: 'k', EXLEDGER_API_SECRET: 's' }, workspace.dir)).toThrow(/EXLEDGER_API_PASSPHRASE: is not set/);
      const noAccounts = createWorkspace(sandbox, { accounts: [] });
      await expect(syncOnce(noAccounts, sandbox)).rejects.toThrow(/EXLEDGER_API_KEY: no account is configured/);
      expect(existsSync(workspace.db)).toBe(false);
      expect(existsSync(noAccounts.db)).toBe(false);
    });
  });

  it('stops at an unreachable URL before creating the database', async () => {
    const sandbox = await startTestSandbox({ ...LIFTED });
    const workspace = createWorkspace(sandbox);
    await sandbox.close();
    const config = resolveConfig({}, workspace.env, workspace.dir);
    await expect(syncJob(config, STREAMS, {})).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(existsSync(workspace.db)).toBe(false);
  });

  it('refuses a response missing a required field, names it, and keeps what was stored', async () => {
    const exchange = generateExchange({ seed: 7, scale: 'small', endMs: TEST_END_MS });
    await withSandbox({ exchange }, async (sandbox) => {
      const workspace = createWorkspace(sandbox);
      const cut = TEST_END_MS - 10 * DAY;
      sandbox.setVisibleUntil(cut - 1);
      await syncOnce(workspace, sandbox, { until: isoDay(cut) });
      const before = await fingerprint(workspace);

      // A bill after the cut loses its deltaAmount: the exchange broke the contract.
      const bill = exchange.accounts[0]!.fundingBills.find((b) => b.t >= cut)!;
      delete (bill.wire as Record<string, unknown>).deltaAmount;
      sandbox.setVisibleUntil(TEST_END_MS - 1);
      const outcome = await syncOnce(workspace, sandbox, { streams: 'funding_bills' });
      const result = outcome.results[0]!;
      expect(result.status).toBe('failed');
      expect(result.errorMessage).toBe(
        `funding_bills: the record with billId ${String((bill.wire as Record<string, unknown>).billId)} from spot.fundingBills: has no "deltaAmount" (a required field); ` +
          `nothing of the window ${new Date(cut - DAY).toISOString()} to ${new Date(TEST_END_MS).toISOString()} was stored and its cursor stays before it, so the next run reads it again`,
      );
      expect(outcome.status).toBe('failed');
      expect(await fingerprint(workspace)).toEqual(before);

      // No credential reached the database: not in any text column, not in the file's bytes.
      const account = sandbox.exchange.accounts[0]!;
      const secrets = [account.apiKey, account.secret, account.passphrase];
      const texts = await queryWorkspace<{ t: string }>(
        workspace,
        `SELECT concat_ws('|', run_id, account, stream, status, error_message) AS t FROM meta.runs
         UNION ALL SELECT concat_ws('|', account, fact, value) FROM meta.facts
         UNION ALL SELECT concat_ws('|', account, stream, partition_key, run_id) FROM meta.cursors`,
      );
      const bytes = readFileSync(workspace.db).toString('latin1');
      for (const secret of secrets) {
        expect(texts.some((row) => row.t.includes(secret))).toBe(false);
        expect(bytes.includes(secret)).toBe(false);
      }
    });
  });
});


describe('accounts, lock and status', () => {
  it('syncs two accounts through one shared IP budget, each with exactly its own records', async () => {
    await withSandbox({ accounts: 2 }, async (sandbox) => {
      const workspace = createWorkspace(sandbox, { accounts: [0, 1] });
      const outcome = await syncOnce(workspace, sandbox, { streams: 'funding_bills,transfer_records,futures_fills' });
      expect(outcome.results.filter((result) => result.status !== 'ok')).toEqual([]);
      for (const [index, name] of ['acct0', 'acct1'].entries()) {
        const expected = expectedRecordTexts(sandbox.exchange.accounts[index]!);
        for (const stream of ['funding_bills', 'transfer_records', 'futures_fills']) {
          const stored = (await queryWorkspace<{ r: string }>(workspace, `SELECT _record::VARCHAR AS r FROM raw.${stream} WHERE _account = '${name}'`)).map((row) => row.r).sort();
          expect(stored, `${name} ${stream}`).toEqual(expected[stream]);
        }
      }
      // Both accounts' requests were counted by the sandbox against one IP and two UIDs.
      const uids = new Set(sandbox.requestLog.map((entry) => entry.uid).filter((uid) => uid !== null));
      expect(uids.size).toBe(2);
    });
  });

  it('refuses a second sync on the same database, and takes over the lock of a killed one', async () => {
    await withSandbox({}, async (sandbox) => {
      const workspace = createWorkspace(sandbox);
      const held = DatabaseLock.acquire(workspace.db, 'sync');
      try {
        await expect(syncOnce(workspace, sandbox, { streams: 'currencies' })).rejects.toThrow(/is in use by another exledger sync \(pid \d+/);
      } finally {
        held.release();
      }
      // A lock file whose process is gone (a SIGKILLed sync) does not block.
      writeFileSync(`${workspace.db}.lock`, JSON.stringify({ pid: 2 ** 22 + 12345, purpose: 'sync', since: 'earlier' }));
      const outcome = await syncOnce(workspace, sandbox, { streams: 'currencies' });
      expect(outcome.status).toBe('ok');
      expect(existsSync(`${workspace.db}.lock`)).toBe(false);
    });
  });

  it('reports rows, coverage, last run and last error per stream', async () => {
    await withSandbox({}, async (sandbox) => {
      const workspace = createWorkspace(sandbox);
      await syncOnce(workspace, sandbox, { streams: 'funding_bills,currencies' });
      const db = await Database.open(workspace.db, { readOnly: true });
      try {
        const statuses = await readStatus(db, STREAMS);
        const bills = statuses.find((status) => status.stream === 'funding_bills')!;
        expect(bills).toMatchObject({ account: 'acct0', rows: sandbox.exchange.accounts[0]!.fundingBills.length, partitions: 1, lastStatus: 'ok', lastError: null });
        expect(bills.coveredUntil).toBe(new Date(TEST_END_MS).toISOString());
        expect(statuses.find((status) => status.stream === 'spot_fills')).toMatchObject({ rows: 0, coveredUntil: null, lastStatus: null });
      } finally {
        db.close();
      }
    });
  });
});

describe('history horizon', () => {
  it('reads what an exchange that keeps only 90 days of history still serves, and says where it starts', async () => {
    await withSandbox({ historyHorizonDays: 90 }, async (sandbox) => {
      const workspace = createWorkspace(sandbox);
      const outcome = await syncOnce(workspace, sandbox, { streams: 'funding_bills,spot_fills' });
      expect(outcome.results.filter((result) => result.status !== 'ok')).toEqual([]);
      const warnings = outcome.results.flatMap((result) => result.warnings);
      expect(warnings.some((warning) => /beyond what the exchange keeps \(40704\)/.test(warning))).toBe(true);
      // Every bill the exchange still serves is stored: those of the days inside the horizon.
      const horizon = Date.now() - 90 * DAY;
      const servable = sandbox.exchange.accounts[0]!.fundingBills.filter((bill) => bill.t >= horizon + DAY);
      const [stored] = await queryWorkspace<{ n: string; oldest: string }>(workspace, 'SELECT count(*)::VARCHAR AS n, min(_event_ms)::VARCHAR AS oldest FROM raw.funding_bills');
      expect(Number(stored!.n)).toBeGreaterThanOrEqual(servable.length);
      expect(Number(stored!.oldest)).toBeGreaterThanOrEqual(horizon - DAY);
    });
  });
});

describe('snapshots', () => {
  it('keeps one row set per change, and records a state that became empty', async () => {
    await withSandbox({}, async (sandbox) => {
      const workspace = createWorkspace(sandbox);
      await syncOnce(workspace, sandbox, { streams: 'futures_open_orders' });
      await syncOnce(workspace, sandbox, { streams: 'futures_open_orders' });
      // Unchanged: the second run stored nothing new.
      const before = await queryWorkspace<{ n: string }>(workspace, "SELECT count(*)::VARCHAR AS n FROM staging.snapshots WHERE stream = 'futures_open_orders'");
      expect(before[0]!.n).toBe('1');
      // Every open order is canceled through the API: the next snapshot is an empty state.
      const open = await queryWorkspace<{ symbol: string; order_id: string }>(workspace, 'SELECT symbol, order_id FROM staging.futures_open_orders');
      expect(open.length).toBeGreaterThan(0);
      const client = clientFor(sandbox);
      for (const symbol of new Set(open.map((order) => order.symbol))) {
        const ids = open.filter((order) => order.symbol === symbol).map((order) => order.order_id);
        await client.call('futures.cancelBatchOrders', { symbol, ids });
      }
      await syncOnce(workspace, sandbox, { streams: 'futures_open_orders' });
      const states = await queryWorkspace<{ records: string; is_empty: boolean }>(
        workspace,
        "SELECT records::VARCHAR AS records, is_empty FROM staging.snapshots WHERE stream = 'futures_open_orders' ORDER BY snapshot_at",
      );
      expect(states.map((state) => state.is_empty)).toEqual([false, true]);
      expect(Number(states[0]!.records)).toBeGreaterThan(0);
    });
  });
});
