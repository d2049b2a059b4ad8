import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../src/sandbox/server.ts';
import { summarizeExchange } from '../src/sandbox/generate.ts';
import type { ReferralActivity } from '../src/sandbox/model.ts';
import { Database } from '../src/store/database.ts';
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

    // Records exactly on a UTC month boundary made it, in every stream that has them.
    for (const stream of HISTORY_STREAMS) {
      const [boundary] = await queryWorkspace<{ n: string }>(
        workspace,
        `SELECT count(*)::VARCHAR AS n FROM raw.${stream} WHERE make_timestamptz(_event_ms * 1000) = date_trunc('month', make_timestamptz(_event_ms * 1000))`,
      );
      expect(Number(boundary!.n), stream).toBeGreaterThan(0);
    }

    // Referral figures are totals per day and user: they equal the day's activity summed exactly.
    expect(await referralMismatches(workspace, account.referralActivity)).toEqual([]);
    const [referrals] = await queryWorkspace<{ n: string }>(workspace, 'SELECT count(*)::VARCHAR AS n FROM staging.affiliate_referrals');
    expect(Number(referrals!.n)).toBeGreaterThan(1000);

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

/**
 * Rows where staging.affiliate_referrals differs from the sandbox's activity summed per UTC day
 * and user (both sides in DuckDB DECIMAL, so the sums are exact).
 */
async function referralMismatches(workspace: SyncWorkspace, activity: readonly ReferralActivity[]): Promise<unknown[]> {
  const db = await Database.open(':memory:');
  try {
    await db.run(`ATTACH '${workspace.db}' AS synced (READ_ONLY)`);
    await db.run('CREATE TABLE activity (t BIGINT, uid VARCHAR, deposit VARCHAR, withdrawal VARCHAR, spot VARCHAR, futures VARCHAR, commission VARCHAR)');
    const appender = await db.connection.createAppender('activity');
    for (const row of activity) {
      appender.appendBigInt(BigInt(row.t));
      for (const value of [row.uid, row.depositAmount, row.withdrawalAmount, row.spotTradingAmount, row.futuresTradingAmount, row.commission]) appender.appendVarchar(value);
      appender.endRow();
    }
    appender.closeSync();
    return await db.all(`
      WITH expected AS (
        SELECT uid, cast(make_timestamptz(t * 1000) AT TIME ZONE 'UTC' AS DATE) AS activity_date,
          sum(deposit::DECIMAL(38, 18)) AS deposit, sum(withdrawal::DECIMAL(38, 18)) AS withdrawal, sum(spot::DECIMAL(38, 18)) AS spot,
          sum(futures::DECIMAL(38, 18)) AS futures, sum(commission::DECIMAL(38, 18)) AS commission
        FROM activity GROUP BY ALL
      ),
      stored AS (
        SELECT uid, activity_date, deposit_amount AS deposit, withdrawal_amount AS withdrawal, spot_trading_amount AS spot,
          futures_trading_amount AS futures, commission
        FROM synced.staging.affiliate_referrals
      )
      SELECT 'missing' AS problem, * FROM (SELECT * FROM expected EXCEPT SELECT * FROM stored)
      UNION ALL
      SELECT 'unexpected', * FROM (SELECT * FROM stored EXCEPT SELECT * FROM expected)
      LIMIT 5`);
  } finally {
    db.close();
  }
}
