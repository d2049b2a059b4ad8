import { describe, expect, it } from 'vitest';
import type { ExchangeClient } from '../src/exchange/exchange-client.ts';
import { stringifyJsonLossless } from '../src/exchange/lossless-json.ts';
import type { RunningSandbox } from '../src/sandbox/server.ts';
import { clientFor, startTestSandbox } from './support/sandbox.ts';

const DAY = 86_400_000;

/** Pages through whole histories with the endpoints' page numbers (no time cursors needed). */
async function collectHistory(sandbox: RunningSandbox, client: ExchangeClient): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = { spotFills: [], fundingBills: [], commissions: [] };
  for (const { symbol } of sandbox.exchange.spotSymbols) {
    for (let pageIndex = 0; ; pageIndex += 1) {
      const page = await client.call<{ fillsOrderResultList: unknown[]; nextPage: boolean }>('spot.fills', { symbol, pageIndex, pageSize: 100 });
      out.spotFills!.push(...page.fillsOrderResultList);
      if (!page.nextPage) break;
    }
  }
  for (let pageIndex = 1; ; pageIndex += 1) {
    const page = await client.call<{ items: unknown[]; hasNextPage: boolean }>('spot.fundingBills', { pageIndex, pageSize: 100 });
    out.fundingBills!.push(...page.items);
    if (!page.hasNextPage) break;
  }
  // Commission ranges are capped at 3 months: walk the year in 60-day windows.
  for (const productType of ['SPOT', 'FUTURES']) {
    for (let start = sandbox.exchange.startMs; start < sandbox.exchange.endMs; start += 60 * DAY) {
      const end = Math.min(start + 60 * DAY, sandbox.exchange.endMs) - 1;
      for (let page = 1; ; page += 1) {
        const data = await client.call<{ channelCommissionInfoItems: unknown[]; pages: number }>('rebate.commission', { productType, startTime: start, endTime: end, page, pageSize: 100 });
        out.commissions!.push(...data.channelCommissionInfoItems);
        if (page >= data.pages) break;
      }
    }
  }
  return out;
}

describe('faults', () => {
  it('a client paging through a full history with --faults heavy collects exactly what it collects with --faults none', async () => {
    const clean = await startTestSandbox({ faults: 'none' });
    const faulty = await startTestSandbox({ faults: 'heavy', faultSeed: 5, slowFaultMs: [100, 1500] });
    try {
      const expected = await collectHistory(clean, clientFor(clean));
      const faultyClient = clientFor(faulty, { timeoutMs: 1_000 });
      const actual = await collectHistory(faulty, faultyClient);

      const account = clean.exchange.accounts[0]!;
      const spotFillCount = [...account.spotFills.values()].reduce((sum, fills) => sum + fills.length, 0);
      expect(expected.spotFills).toHaveLength(spotFillCount);
      expect(expected.fundingBills).toHaveLength(account.fundingBills.length);
      expect(stringifyJsonLossless(actual)).toBe(stringifyJsonLossless(expected));

      const faults = faulty.requestLog.filter((entry) => entry.fault !== null);
      console.log(`heavy faults: ${faulty.requestLog.length} requests, ${faults.length} faulted (${new Set(faults.map((entry) => entry.fault)).size} kinds), ${faultyClient.stats().failedAttempts} retried`);
      expect(faults.length).toBeGreaterThan(5);
    } finally {
      await Promise.all([clean.close(), faulty.close()]);
    }
  });
});
