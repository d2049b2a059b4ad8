/**
 * Sync benchmarks, read from the sandbox's request log:
 * - efficiency: requests made against the minimum (one per window and partition, plus one per
 *   extra full page), for a backfill and for a nightly run with one new day;
 * - budget: during a backfill at a budget that binds, the share of the binding endpoint's budget
 *   used and wall time against total weight / budget rate;
 * - speed: records per second end to end with the budget lifted.
 */
import { ENDPOINTS, type EndpointId } from '../src/exchange/endpoints.ts';
import { splitDays, splitWindows } from '../src/extract/windows.ts';
import { STREAMS } from '../pipelines/index.ts';
import type { RunningSandbox, SandboxOptions } from '../src/sandbox/server.ts';
import type { SandboxScale } from '../src/sandbox/model.ts';
import { startTestSandbox, TEST_END_MS } from '../test/support/sandbox.ts';
import { createWorkspace, DAY, syncNightly, syncOnce } from '../test/support/sync-harness.ts';
import type { HistoryStream } from '../src/extract/stream.ts';
import type { SyncOutcome } from '../src/jobs/sync-job.ts';

const LIFTED = { spotQuota: 10_000_000, futuresQuota: 10_000_000 };

async function withSandbox<T>(options: SandboxOptions, work: (sandbox: RunningSandbox) => Promise<T>): Promise<T> {
  const sandbox = await startTestSandbox(options);
  try {
    return await work(sandbox);
  } finally {
    await sandbox.close();
  }
}

/**
 * The fewest requests that can read the history: for each partition and each window the sync
 * cuts (the same calendar windows), one request plus one per further full page of its records.
 * Spot partitions are the symbols the sync read fills for (pairs the exchange does not list are
 * counted as overhead, not minimum).
 */
function minimumRequests(sandbox: RunningSandbox, outcome: SyncOutcome, readSymbols: readonly string[]): { stream: string; made: number; minimum: number }[] {
  const account = sandbox.exchange.accounts[0]!;
  const { startMs, endMs } = sandbox.exchange;
  const rows: { stream: string; made: number; minimum: number }[] = [];
  for (const declaration of STREAMS) {
    if (declaration.kind !== 'history') continue;
    const stream = declaration as HistoryStream;
    const windows = stream.window.daily === true ? splitDays(startMs, endMs) : splitWindows(startMs, endMs, stream.window.months, 88 * DAY);
    const pageSize = stream.paginator.kind === 'page-number' ? stream.paginator.pageSize : stream.paginator.kind === 'single' ? Infinity : stream.paginator.limit;
    const partitions: { t: number }[][] =
      stream.name === 'spot_fills'
        ? readSymbols.map((symbol) => account.spotFills.get(symbol) ?? [])
        : stream.name === 'funding_bills'
          ? [account.fundingBills]
          : stream.name === 'transfer_records'
            ? [account.transferRecords]
            : stream.name === 'futures_fills'
              ? [account.futuresFills]
              : stream.name === 'affiliate_commissions'
                ? ['SPOT', 'FUTURES'].flatMap((product) => ['USDT', 'BTC'].map((coin) => account.commissions.filter((c) => c.productType === product && c.wire.coin === coin)))
                : [account.referralActivity];
    let minimum = 0;
    for (const records of partitions) {
      for (const window of windows) {
        const inWindow = records.filter((record) => record.t >= window.startMs && record.t < window.endMs);
        const count = stream.name === 'affiliate_referrals' ? new Set((inWindow as typeof account.referralActivity).map((activity) => activity.uid)).size : inWindow.length;
        minimum += Math.max(1, Math.ceil(count / pageSize));
      }
    }
    const made = outcome.results.find((result) => result.stream === stream.name)?.requests ?? 0;
    rows.push({ stream: stream.name, made, minimum });
  }
  return rows;
}

export function table(title: string, header: string[], rows: (string | number)[][]): void {
  console.log(`\n== ${title}`);
  const cells = [header, ...rows.map((row) => row.map(String))];
  const widths = header.map((_, column) => Math.max(...cells.map((row) => row[column]!.length)));
  for (const row of cells) console.log(row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  '));
}

export async function efficiency(scale: SandboxScale): Promise<void> {
  await withSandbox({ scale, ...LIFTED }, async (sandbox) => {
    const workspace = createWorkspace(sandbox);
    const backfill = await syncOnce(workspace, sandbox);
    const readSymbols = [...new Set(sandbox.requestLog.filter((entry) => entry.endpoint === 'spot.fills' && entry.status === 200).map((entry) => String((entry.params as Record<string, unknown>).symbol)))];
    const rows = minimumRequests(sandbox, backfill, readSymbols);
    table(
      `efficiency: full backfill of a ${scale} history (requests made vs minimum: one per window and partition plus one per extra full page)`,
      ['stream', 'made', 'minimum', 'over'],
      rows.map((row) => [row.stream, row.made, row.minimum, `${(((row.made - row.minimum) / row.minimum) * 100).toFixed(1)}%`]),
    );
    const made = rows.reduce((sum, row) => sum + row.made, 0);
    const minimum = rows.reduce((sum, row) => sum + row.minimum, 0);
    console.log(`total: ${made} requests for a minimum of ${minimum} (${(((made - minimum) / minimum) * 100).toFixed(1)}% over)`);
  });

  await withSandbox({ scale, ...LIFTED }, async (sandbox) => {
    const workspace = createWorkspace(sandbox);
    const { nightly, newDayStartMs: dayBefore } = await syncNightly(workspace, sandbox);
    const account = sandbox.exchange.accounts[0]!;
    const fresh = (t: number) => t >= dayBefore && t < TEST_END_MS;
    const read = (t: number) => t >= dayBefore - DAY && t < TEST_END_MS;
    const spotPartitions = nightly.results.find((result) => result.stream === 'spot_fills')!.windows;
    const newPages: Record<string, { partitions: number; pages: number; records: number }> = {
      funding_bills: { partitions: 1, pages: Math.ceil(account.fundingBills.filter((b) => read(b.t)).length / 100), records: account.fundingBills.filter((b) => fresh(b.t)).length },
      spot_fills: {
        partitions: spotPartitions,
        pages: [...account.spotFills.values()].reduce((sum, fills) => sum + Math.ceil(fills.filter((f) => read(f.t)).length / 100), 0),
        records: [...account.spotFills.values()].reduce((sum, fills) => sum + fills.filter((f) => fresh(f.t)).length, 0),
      },
      transfer_records: { partitions: 1, pages: Math.ceil(account.transferRecords.filter((r) => read(r.t)).length / 500), records: account.transferRecords.filter((r) => fresh(r.t)).length },
      futures_fills: { partitions: 1, pages: Math.ceil(account.futuresFills.filter((f) => read(f.t)).length / 100), records: account.futuresFills.filter((f) => fresh(f.t)).length },
      affiliate_commissions: { partitions: 4, pages: 0, records: account.commissions.filter((c) => fresh(c.t)).length },
      affiliate_referrals: { partitions: 1, pages: 2, records: 0 },
    };
    table(
      `nightly run on a ${scale} history with one new day (lookback 1 day): requests beyond the pages of the period read`,
      ['stream', 'partitions', 'new records', 'pages read', 'requests', 'extra per partition'],
      Object.entries(newPages).map(([stream, expected]) => {
        const made = nightly.results.find((result) => result.stream === stream)!.requests;
        return [stream, expected.partitions, expected.records, expected.pages, made, ((made - expected.pages) / expected.partitions).toFixed(2)];
      }),
    );
  });
}

export async function budgetUse(): Promise<void> {
  // The exchange's own quotas and 10 s window (exchange-notes.md "Rate limits"), and the
  // client's default budget. A year of referral totals (one request of weight 20 per day) binds.
  const quotas = { spotQuota: 500, futuresQuota: 1000, windowMs: 10_000 };
  await withSandbox({ scale: 'medium', ...quotas }, async (sandbox) => {
    const workspace = createWorkspace(sandbox, { budget: { spot: { quota: 500, windowMs: 10_000 }, contract: { quota: 1000, windowMs: 10_000 } } });
    const started = Date.now();
    const outcome = await syncOnce(workspace, sandbox);
    const wallMs = Date.now() - started;
    const byEndpoint = new Map<string, { weight: number; first: number; last: number; limited: number }>();
    for (const entry of sandbox.requestLog) {
      const spec = ENDPOINTS[entry.endpoint as EndpointId];
      if (spec === undefined) continue;
      const current = byEndpoint.get(entry.endpoint) ?? { weight: 0, first: entry.at, last: entry.at, limited: 0 };
      current.weight += Math.max(entry.ipWeight, entry.uidWeight);
      current.first = Math.min(current.first, entry.at);
      current.last = Math.max(current.last, entry.at);
      if (entry.status === 429) current.limited += 1;
      byEndpoint.set(entry.endpoint, current);
    }
    const rows = [...byEndpoint.entries()]
      .map(([endpoint, usage]) => {
        const spec = ENDPOINTS[endpoint as EndpointId];
        const rate = (spec.base === 'spot' ? quotas.spotQuota : quotas.futuresQuota) / (quotas.windowMs / 1000);
        const busySeconds = Math.max((usage.last - usage.first) / 1000, 1e-3);
        return { endpoint, weight: usage.weight, rate, busySeconds, minSeconds: usage.weight / rate, limited: usage.limited };
      })
      .sort((a, b) => b.minSeconds - a.minSeconds);
    table(
      'budget during a medium backfill at the exchange quotas (500 / 1000 weight per 10 s per endpoint): per endpoint',
      ['endpoint', 'weight', 'budget/s', 'weight/budget s', 'busy s', 'used while busy', '429s'],
      // Endpoints with less than a second of work fit in the bucket's burst: no rate to speak of.
      rows.map((row) => [row.endpoint, row.weight, row.rate, row.minSeconds.toFixed(1), row.busySeconds.toFixed(1), row.minSeconds < 1 ? 'burst' : `${((row.minSeconds / row.busySeconds) * 100).toFixed(1)}%`, row.limited]),
    );
    const binding = rows[0]!;
    console.log(
      `binding endpoint ${binding.endpoint}: ${binding.weight} weight at ${binding.rate}/s needs ${binding.minSeconds.toFixed(1)} s; ` +
        `the whole sync took ${(wallMs / 1000).toFixed(1)} s = ${(wallMs / 1000 / binding.minSeconds).toFixed(2)}x; ` +
        `${outcome.results.filter((result) => result.status !== 'ok').length} streams failed`,
    );
  });
}

export async function speed(scale: SandboxScale): Promise<void> {
  await withSandbox({ scale, ...LIFTED }, async (sandbox) => {
    const workspace = createWorkspace(sandbox, { budget: { spot: { quota: 10_000_000, windowMs: 1000 }, contract: { quota: 10_000_000, windowMs: 1000 } } });
    const started = Date.now();
    const outcome = await syncOnce(workspace, sandbox);
    const seconds = (Date.now() - started) / 1000;
    const records = outcome.results.reduce((sum, result) => sum + result.rowsInserted, 0);
    table(
      `speed: full sync of a ${scale} history with the budget lifted (HTTP, parsing, validation, DuckDB load)`,
      ['stream', 'records', 'requests', 'seconds'],
      outcome.results.map((result) => [result.stream, result.rowsInserted, result.requests, (((result.finishedAtMs ?? 0) - result.startedAtMs) / 1000).toFixed(1)]),
    );
    console.log(`${records} records in ${seconds.toFixed(1)} s = ${Math.round(records / seconds)} records/s end to end`);
  });
}

export async function benchSync(): Promise<void> {
  await efficiency('medium');
  await budgetUse();
  await speed('medium');
  await speed('large');
}
