import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../src/sandbox/server.ts';
import { summarizeExchange } from '../src/sandbox/generate.ts';
import { expectedRecordTexts } from './support/expected-records.ts';
import { startTestSandbox } from './support/sandbox.ts';
import { createWorkspace, fingerprint, queryWorkspace, syncOnce, type SyncWorkspace } from './support/sync-harness.ts';

const HISTORY_STREAMS = ['spot_fills', 'funding_bills', 'transfer_records', 'futures_fills', 'affiliate_commissions'] as const;

async function storedRecordTexts(workspace: SyncWorkspace): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const stream of HISTORY_STREAMS) {
    const rows = await queryWorkspace<{ record: string }>(workspace, `SELECT _record::VARCHAR AS record FROM raw.${stream}`);
    out[stream] = rows.map((row) => row.record).sort();
  }
  return out;
}

describe('sync: completeness against a medium sandbox history', () => {
  let sandbox: RunningSandbox;
  let workspace: SyncWorkspace;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ scale: 'medium', spotQuota: 1_000_000, futuresQuota: 1_000_000 });
    workspace = createWorkspace(sandbox);
  });
  afterAll(async () => {
    await sandbox.close();
  });

  it('stores exactly the sandbox records of every history stream, and a second run changes nothing', async () => {
    const first = await syncOnce(workspace, sandbox);
    expect(first.results.filter((result) => result.status !== 'ok')).toEqual([]);

    const account = sandbox.exchange.accounts[0]!;
    const expected = expectedRecordTexts(account);
    const stored = await storedRecordTexts(workspace);
    for (const stream of HISTORY_STREAMS) {
      expect(stored[stream]!.length, stream).toBe(expected[stream]!.length);
      expect(stored[stream], stream).toEqual(expected[stream]);
    }

    // The hard cases are in there: >100 fills in one millisecond, month-boundary records,
    // ids above 2^53, identical twins.
    const [burst] = await queryWorkspace<{ n: string }>(workspace, 'SELECT max(n)::VARCHAR AS n FROM (SELECT count(*) AS n FROM staging.futures_fills GROUP BY created_time_at)');
    expect(Number(burst!.n)).toBeGreaterThan(100);
    const [twins] = await queryWorkspace<{ n: string }>(
      workspace,
      'SELECT count(*)::VARCHAR AS n FROM (SELECT coin_name, amount, trade_time_at, count(*) AS c FROM staging.transfer_records GROUP BY ALL HAVING c > 1)',
    );
    expect(Number(twins!.n)).toBeGreaterThan(0);
    const [bigIds] = await queryWorkspace<{ n: string }>(workspace, "SELECT count(*)::VARCHAR AS n FROM staging.futures_fills WHERE trade_id::HUGEINT > 9007199254740992");
    expect(Number(bigIds!.n)).toBe(account.futuresFills.length);

    // Sums per coin, in exact decimals, equal the generator's own totals.
    const summary = summarizeExchange(sandbox.exchange)[0]!;
    const coins = await queryWorkspace<{ coin: string; delta: string; fees: string; n: string }>(
      workspace,
      'SELECT coin_name AS coin, sum(delta_amount)::VARCHAR AS delta, sum(fees)::VARCHAR AS fees, count(*)::VARCHAR AS n FROM staging.funding_bills GROUP BY coin_name',
    );
    expect(coins).toHaveLength(Object.keys(summary.coins).length);
    for (const row of coins) {
      const totals = summary.coins[row.coin]!;
      expect(Number(row.n), row.coin).toBe(totals.bills);
      expect(trimZeros(row.delta), row.coin).toBe(trimZeros(totals.deltaSum));
      expect(trimZeros(row.fees), row.coin).toBe(trimZeros(totals.feeSum));
    }
    const [futures] = await queryWorkspace<{ fee: string; pnl: string; value: string }>(
      workspace,
      'SELECT sum(fill_fee)::VARCHAR AS fee, sum(realize_pnl)::VARCHAR AS pnl, sum(fill_value)::VARCHAR AS value FROM staging.futures_fills',
    );
    expect(trimZeros(futures!.fee)).toBe(trimZeros(summary.futures.fillFee));
    expect(trimZeros(futures!.pnl)).toBe(trimZeros(summary.futures.realizePnl));
    expect(trimZeros(futures!.value)).toBe(trimZeros(summary.futures.fillValue));

    const before = await fingerprint(workspace);
    const second = await syncOnce(workspace, sandbox);
    expect(second.results.every((result) => result.status === 'ok')).toBe(true);
    const newHistoryRows = second.results.filter((result) => isHistory(result.stream)).reduce((sum, result) => sum + result.rowsInserted, 0);
    expect(newHistoryRows).toBe(0);
    expect(await fingerprint(workspace)).toEqual(before);
  });
});

function isHistory(stream: string): boolean {
  return (HISTORY_STREAMS as readonly string[]).includes(stream) || stream === 'affiliate_referrals';
}

function trimZeros(decimal: string): string {
  return decimal.includes('.') ? decimal.replace(/0+$/, '').replace(/\.$/, '') : decimal;
}
