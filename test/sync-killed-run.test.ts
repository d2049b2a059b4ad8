import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { STREAMS } from '../pipelines/index.ts';
import { DEFAULT_COMMIT_INTERVAL_MS } from '../src/extract/sync.ts';
import type { HistoryStream } from '../src/extract/stream.ts';
import type { SandboxAccount } from '../src/sandbox/model.ts';
import type { RequestLogEntry } from '../src/sandbox/request-log.ts';
import { stringifyWire } from '../src/sandbox/wire-json.ts';
import { startTestSandbox } from './support/sandbox.ts';
import { createWorkspace, fingerprint, isoDay, queryWorkspace, syncOnce, type SyncWorkspace } from './support/sync-harness.ts';
import { runSyncProcess } from './support/sync-process.ts';

const LIFTED_BUDGET = { spot: { quota: 1_000_000, windowMs: 1000 }, contract: { quota: 1_000_000, windowMs: 1000 } };

/** Gives the workspace's config file another budget (the next run reads it). */
function setBudget(workspace: SyncWorkspace, budget: object): void {
  const file = path.join(workspace.dir, 'exledger.config.json');
  writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), budget }));
}

/** Every history record of the sandbox account, by stream and cursor partition key, with its event time. */
function sandboxRecords(account: SandboxAccount): Record<string, Map<string, { t: number; text: string }[]>> {
  const one = (records: readonly { t: number; wire: object }[]) => new Map([['', records.map((record) => ({ t: record.t, text: stringifyWire(record.wire as never) }))]]);
  const commissions = new Map<string, { t: number; text: string }[]>();
  for (const record of account.commissions) {
    const key = `productType=${record.productType},coin=${record.wire.coin}`;
    commissions.set(key, [...(commissions.get(key) ?? []), { t: record.t, text: stringifyWire(record.wire) }]);
  }
  return {
    spot_fills: new Map([...account.spotFills].map(([symbol, fills]) => [`symbol=${symbol}`, fills.map((fill) => ({ t: fill.t, text: stringifyWire(fill.wire) }))])),
    funding_bills: one(account.fundingBills),
    transfer_records: one(account.transferRecords),
    futures_fills: one(account.futuresFills),
    affiliate_commissions: commissions,
  };
}

/**
 * For each partition of a paged history stream, the start parameter of the last window of the
 * longest run of windows, from the first, that the sandbox had answered completely (a short page
 * among its answers) by `beforeMs`: what the sync had read by then.
 */
function readWindows(log: readonly RequestLogEntry[], stream: HistoryStream, beforeMs: number): Map<string, number> {
  const paginator = stream.paginator;
  if (paginator.kind !== 'page-number' && paginator.kind !== 'end-time-cursor') return new Map();
  const pageSize = paginator.kind === 'page-number' ? paginator.pageSize : paginator.limit;
  const partitionParams = stream.partitions.kind === 'spot-symbols' ? [stream.partitions.param] : stream.partitions.kind === 'values' ? stream.partitions.dimensions.map((dimension) => dimension.param) : [];
  const paging = paginator.kind === 'page-number' ? [paginator.pageParam, paginator.sizeParam] : [paginator.limitParam];
  const known = new Set([stream.window.startParam, stream.window.endParam, ...paging, ...partitionParams, ...Object.keys(stream.params ?? {})]);
  const windows = new Map<string, Map<number, { complete: boolean; answeredAt: number }>>();
  for (const entry of log) {
    // Requests that narrow a crowded millisecond (futures fills by symbol, by order) are part of a window, not one.
    if (entry.endpoint !== stream.endpoint || !Object.keys(entry.params).every((name) => known.has(name))) continue;
    const partition = partitionParams.map((param) => `${param}=${String(entry.params[param])}`).join(',');
    const start = Number(entry.params[stream.window.startParam]);
    const byStart = windows.get(partition) ?? new Map<number, { complete: boolean; answeredAt: number }>();
    const window = byStart.get(start) ?? { complete: false, answeredAt: 0 };
    window.complete ||= entry.status === 200 && entry.rows !== null && entry.rows < pageSize;
    window.answeredAt = Math.max(window.answeredAt, entry.at + entry.durationMs);
    byStart.set(start, window);
    windows.set(partition, byStart);
  }
  const read = new Map<string, number>();
  for (const [partition, byStart] of windows) {
    for (const [start, window] of [...byStart].sort(([a], [b]) => a - b)) {
      if (!window.complete || window.answeredAt > beforeMs) break;
      read.set(partition, start);
    }
  }
  return read;
}

describe('a killed sync keeps what it read', () => {
  it('commits on time while the budget binds: a sync killed after 16 s kept every window it had read 6.5 s before, rows and cursors together, and a rerun completes it exactly', async () => {
    const sandbox = await startTestSandbox({ spotQuota: 1_000_000, futuresQuota: 1_000_000 });
    try {
      const until = isoDay(sandbox.exchange.endMs);
      const reference = createWorkspace(sandbox);
      await syncOnce(reference, sandbox);
      const expected = await fingerprint(reference);

      // The client's own budget binds: futures fills at 12 weight per second (about one request
      // of weight 5 a second; the small history's futures fills take 22 requests), rebate
      // endpoints (weight 20) at about one request a second. No partition gets near 5,000 rows
      // or 31 windows before the kill, so only the commit interval (5 s) commits anything.
      const killed = createWorkspace(sandbox, { budget: { spot: { quota: 50, windowMs: 1000 }, contract: { quota: 12, windowMs: 1000 } } });
      sandbox.clearRequestLog();
      const run = await runSyncProcess(killed, until, 16_000);
      expect(run.killed, run.output).toBe(true);
      const log = [...sandbox.requestLog];
      expect(log.filter((entry) => entry.status === 429)).toHaveLength(0);

      // Rows and the cursors covering them committed together: each partition holds exactly the
      // exchange's records of its covered period, nothing of a window half read.
      const cursors = await queryWorkspace<{ stream: string; partition_key: string; from_ms: string; until_ms: string }>(
        killed,
        'SELECT stream, partition_key, covered_from_ms::VARCHAR AS from_ms, covered_until_ms::VARCHAR AS until_ms FROM meta.cursors',
      );
      const records = sandboxRecords(sandbox.exchange.accounts[0]!);
      const committed: Record<string, number> = {};
      for (const [stream, partitions] of Object.entries(records)) {
        const stored = await queryWorkspace<{ partition: string; r: string }>(killed, `SELECT _partition AS partition, _record::VARCHAR AS r FROM raw.${stream}`);
        committed[stream] = stored.length;
        for (const [partition, all] of partitions) {
          const cursor = cursors.find((row) => row.stream === stream && row.partition_key === partition);
          const covered = cursor === undefined ? [] : all.filter((record) => record.t >= Number(cursor.from_ms) && record.t < Number(cursor.until_ms));
          const rows = stored.filter((row) => row.partition === partition).map((row) => row.r);
          expect(rows.sort(), `${stream} ${partition}`).toEqual(covered.map((record) => record.text).sort());
        }
      }

      // Every window the sandbox had answered completely 5 s (the commit interval) and 1.5 s
      // (commit and scheduling) before the kill is covered by its partition's cursor.
      const cutoff = run.endedAtMs - DEFAULT_COMMIT_INTERVAL_MS - 1_500;
      const checked: string[] = [];
      for (const stream of STREAMS) {
        if (stream.kind !== 'history') continue;
        for (const [partition, lastStart] of readWindows(log, stream, cutoff)) {
          const cursor = cursors.find((row) => row.stream === stream.name && row.partition_key === partition);
          expect(cursor, `${stream.name} ${partition}`).toBeDefined();
          // Window starts are asked for 1 ms early (or exactly); a covered window ends a day or more later.
          expect(Number(cursor!.until_ms), `${stream.name} ${partition}`).toBeGreaterThan(lastStart + 1);
          checked.push(`${stream.name}${partition === '' ? '' : ` ${partition}`}`);
        }
      }
      console.log(`killed after 16 s: committed ${JSON.stringify(committed)}; windows read by ${((cutoff - run.startedAtMs) / 1000).toFixed(1)} s checked in: ${checked.join(', ')}`);
      expect(checked).toContain('futures_fills');
      // Futures fills were still being read (22 requests at about one a second) when the run was killed.
      expect(committed.futures_fills).toBeGreaterThan(0);
      expect(committed.futures_fills).toBeLessThan(records.futures_fills!.get('')!.length);

      // The rerun reads the rest: nothing lost, nothing twice.
      setBudget(killed, LIFTED_BUDGET);
      const rerun = await runSyncProcess(killed, until, null);
      expect(rerun.code, rerun.output).toBe(0);
      expect(await fingerprint(killed)).toEqual(expected);
    } finally {
      await sandbox.close();
    }
  }, 120_000);
});

describe('a sync remembers the rate the exchange taught it', () => {
  it('stores the rate a 429 taught in meta.facts, and the next sync starts at it instead of tripping the limit again', async () => {
    // The exchange allows futures 40 weight per second; the client believes 200.
    const sandbox = await startTestSandbox({ spotQuota: 1_000_000, futuresQuota: 40, windowMs: 1000 });
    try {
      const workspace = createWorkspace(sandbox, { budget: { spot: { quota: 1_000_000, windowMs: 1000 }, contract: { quota: 200, windowMs: 1000 } } });
      const limited = () => sandbox.requestLog.filter((entry) => entry.endpoint === 'futures.fills' && entry.status === 429).length;

      sandbox.clearRequestLog();
      const first = await syncOnce(workspace, sandbox, { streams: 'futures_fills' });
      expect(first.status).toBe('ok');
      const firstLimited = limited();
      expect(firstLimited).toBeGreaterThan(0);
      const facts = await queryWorkspace<{ account: string; value: string }>(workspace, "SELECT account, value FROM meta.facts WHERE fact = 'learned_rate:futures.fills' ORDER BY account");
      // The IP budget ('*', shared by every account) and acct0's key's UID budget both learned;
      // a rate in weight per second at or under the exchange's 40.
      expect(facts.map((fact) => fact.account)).toEqual(['*', 'acct0']);
      for (const fact of facts) {
        expect(Number(fact.value)).toBeGreaterThan(0);
        expect(Number(fact.value)).toBeLessThanOrEqual(40);
      }

      // A second process (a new budget) reads the same history again from the start.
      sandbox.clearRequestLog();
      const second = await syncOnce(workspace, sandbox, { streams: 'futures_fills', fullRefresh: true });
      expect(second.status).toBe('ok');
      const secondLimited = limited();
      console.log(`futures.fills 429s: first sync ${firstLimited}, second sync ${secondLimited}; learned ${facts.map((fact) => `${fact.account} ${fact.value}`).join(', ')} weight/s`);
      expect(secondLimited).toBeLessThan(firstLimited);
      expect(sandbox.requestLog.filter((entry) => entry.endpoint === 'futures.fills' && entry.status === 200).length).toBeGreaterThan(10);
    } finally {
      await sandbox.close();
    }
  });
});
