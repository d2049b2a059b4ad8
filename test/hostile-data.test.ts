import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENDPOINTS } from '../src/exchange/endpoints.ts';
import { queryDatabase } from './support/sync-harness.ts';
import { runCli, type CliResult } from './support/cli-process.ts';
import { startProxiedSandbox, type HostileProxy, type ProxiedSandbox, type RewriteRule } from './support/hostile-proxy.ts';
import type { SandboxProcess } from './support/sandbox-process.ts';

/**
 * Contract-breaking values from the exchange (issue 12), in the deployed shape: `exledger sync`
 * in a process of its own talks to a hostile proxy in another, in front of the sandbox in a
 * third. A value our types or the models cannot hold refuses its window (or snapshot): the error
 * names the stream, the record, the field and the value; nothing of the window is stored and its
 * cursor holds, so a later build is never poisoned and the next honest night reads the window
 * again and ends with the same data as a clean run.
 */

const FILLS = ENDPOINTS['spot.fills'].path;
const FUTURES_ACCOUNT = ENDPOINTS['futures.accounts'].path;
const CONFIG = {
  budget: { spot: { quota: 500, windowMs: 1000 }, contract: { quota: 1000, windowMs: 1000 } },
  retry: { retries: 8, minTimeoutMs: 50, maxTimeoutMs: 500 },
  timeoutMs: 10_000,
  sync: { startDate: '2026-08-01' },
};
const STREAMS = 'currencies,spot_assets,funding_bills,spot_fills,futures_accounts';

/** The first value of `field` in an answer, as a pattern (quoted or bare). */
function firstValueOf(field: string): string {
  return `"${field}":("[^"]*"|[-0-9.eE+]+)`;
}

function rule(pathname: string, field: string, value: string): RewriteRule {
  return { path: pathname, pattern: firstValueOf(field), replacement: `"${field}":"${value}"` };
}

describe('values the exchange must not send: refused before anything of their window is stored', () => {
  let sandbox: ProxiedSandbox;
  let exchange: SandboxProcess;
  let proxy: HostileProxy;
  let dir: string;
  const clean = () => path.join(dir, 'clean.duckdb');
  const hostile = () => path.join(dir, 'hostile.duckdb');
  const direct = () => exchange.settings;
  const viaProxy = () => sandbox.viaProxy();
  const cli = (args: string[], env: Record<string, string>) => runCli(args, { cwd: dir, env });

  beforeAll(async () => {
    sandbox = await startProxiedSandbox();
    ({ exchange, proxy } = sandbox);
    dir = mkdtempSync(path.join(os.tmpdir(), 'exledger-hostile-'));
    writeFileSync(path.join(dir, 'exledger.config.json'), JSON.stringify(CONFIG));
  });
  afterAll(async () => {
    expect(await sandbox?.stop()).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * A night through the proxy with these rules; the stream's error line. Exit 3 (partly done)
   * when other streams were read, 1 when the refused stream was the only one.
   */
  async function hostileNight(streams: string, rules: RewriteRule[], stream: string): Promise<{ result: CliResult; error: string }> {
    await proxy.setRules(rules);
    const result = await cli(['sync', '--db', hostile(), '--streams', streams], viaProxy());
    expect(result.code, result.stdout + result.stderr).toBe(streams === stream ? 1 : 3);
    expect((await proxy.rewrites()).length).toBeGreaterThan(0);
    const error = result.stdout.split('\n').find((line) => line.startsWith(`error in main/${stream}: `));
    expect(error, result.stdout).toBeDefined();
    return { result, error: error! };
  }

  it('a fill with 10^23 units, a negative one, a 19-decimal price, a time in the year 5138 or before the window asked for, and an unreadable collateral amount are each named and stored nowhere; the build stays ok; an honest night equals a clean run', { timeout: 240_000 }, async () => {
    const cleanSync = await cli(['sync', '--db', clean(), '--streams', STREAMS], direct());
    expect(cleanSync.code, cleanSync.stdout + cleanSync.stderr).toBe(0);

    // Night 1: the first fill of every answer claims 10^23 units, the futures account an exponent.
    const first = await hostileNight(STREAMS, [rule(FILLS, 'fillQuantity', '100000000000000000000000'), rule(FUTURES_ACCOUNT, 'cum_deposit_amount', '1e400')], 'spot_fills');
    expect(first.error).toMatch(
      /^error in main\/spot_fills: spot_fills: the record with fillId \d+ from spot\.fills: "fillQuantity" is "100000000000000000000000": more than 14 digits before the point \(the models are exact below 10\^14\); nothing of the window \S+Z to \S+Z \(symbol=\w+\) was stored and its cursor stays before it, so the next run reads it again$/,
    );
    expect(first.result.stdout).toMatch(
      /^error in main\/futures_accounts: futures_accounts: the record with version \d+ from futures\.accounts: "collateral\[0\]\.cum_deposit_amount" is "1e400": should be a decimal string; nothing of this snapshot was stored and the previous snapshot stays the latest$/m,
    );
    // The named fill is a real one: the clean database has it, with its true quantity.
    const fillId = /fillId (\d+)/.exec(first.error)![1]!;
    const [truth] = await queryDatabase<{ q: string }>(clean(), `SELECT _record->>'fillQuantity' AS q FROM raw.spot_fills WHERE _key = '${fillId}'`);
    expect(truth?.q).toMatch(/^\d+(\.\d+)?$/);
    // The streams the proxy left alone were stored; nothing of the refused ones was.
    const counts = async (file: string) =>
      Object.fromEntries(
        (
          await queryDatabase<{ stream: string; n: string }>(
            file,
            `SELECT 'spot_fills' AS stream, count(*)::VARCHAR AS n FROM raw.spot_fills UNION ALL SELECT 'futures_accounts', count(*)::VARCHAR FROM raw.futures_accounts
             UNION ALL SELECT 'funding_bills', count(*)::VARCHAR FROM raw.funding_bills`,
          )
        ).map((row) => [row.stream, Number(row.n)]),
      );
    const afterFirst = await counts(hostile());
    expect(afterFirst.spot_fills).toBe(0);
    expect(afterFirst.futures_accounts).toBe(0);
    expect(afterFirst.funding_bills).toBe((await counts(clean())).funding_bills);
    // Nothing stored can break a build.
    const build = await cli(['build', '--db', hostile()], direct());
    expect(build.code, build.stdout + build.stderr).toBe(0);

    // Nights 2-4: other values of the same fills, each named as it came.
    const negative = await hostileNight('spot_fills', [rule(FILLS, 'fillQuantity', '-1')], 'spot_fills');
    expect(negative.error).toMatch(/: the record with fillId \d+ from spot\.fills: "fillQuantity" is "-1": should be positive; nothing of the window /);
    const decimals = await hostileNight('spot_fills', [rule(FILLS, 'fillPrice', '0.1234567890123456789')], 'spot_fills');
    expect(decimals.error).toMatch(/: the record with fillId \d+ from spot\.fills: "fillPrice" is "0\.1234567890123456789": more than 18 decimals \(DECIMAL\(38,18\) would round it\)/);
    const future = await hostileNight('spot_fills', [rule(FILLS, 'cTime', '99999999999999')], 'spot_fills');
    expect(future.error).toMatch(/: the record with fillId \d+ from spot\.fills: "cTime" is "99999999999999": outside 2000-01-01 to 2099-12-31 as epoch milliseconds/);
    const earlier = await hostileNight('spot_fills', [rule(FILLS, 'cTime', String(Date.UTC(2025, 0, 1)))], 'spot_fills');
    expect(earlier.error).toMatch(/: the record with fillId \d+ from spot\.fills: "cTime" is 1735689600000 \(2025-01-01T00:00:00\.000Z\), outside the range asked for \(2026-07-31T23:59:59\.999Z to \S+Z\); nothing of the window 2026-08-01T00:00:00\.000Z to /);
    expect((await counts(hostile())).spot_fills).toBe(0);

    // The honest night: straight to the exchange, from the cursors that held.
    const honest = await cli(['sync', '--db', hostile(), '--streams', STREAMS], direct());
    expect(honest.code, honest.stdout + honest.stderr).toBe(0);
    const records = async (file: string) => (await queryDatabase<{ r: string }>(file, 'SELECT _record::VARCHAR AS r FROM raw.spot_fills ORDER BY _key')).map((row) => row.r);
    const cleanFills = await records(clean());
    expect(cleanFills.length).toBeGreaterThan(100);
    expect(await records(hostile())).toEqual(cleanFills);
    const latestAccount = async (file: string) =>
      (await queryDatabase<{ r: string }>(file, 'SELECT _record::VARCHAR AS r FROM raw.futures_accounts WHERE _seq >= 0 AND _snapshot_at = (SELECT max(_snapshot_at) FROM raw.futures_accounts)')).map((row) => row.r);
    expect(await latestAccount(hostile())).toEqual(await latestAccount(clean()));

    // And the models agree: the spot PnL of both databases, row for row.
    for (const file of [clean(), hostile()]) {
      const rebuilt = await cli(['build', '--db', file], direct());
      expect(rebuilt.code, rebuilt.stdout + rebuilt.stderr).toBe(0);
    }
    const pnl = (file: string) => queryDatabase<Record<string, string>>(file, 'SELECT * FROM marts.spot_realized_pnl_daily ORDER BY ALL');
    const cleanPnl = await pnl(clean());
    expect(cleanPnl.length).toBeGreaterThan(10);
    expect(await pnl(hostile())).toEqual(cleanPnl);
  });
});
