import { describe, expect, it } from 'vitest';
import { futuresFills } from '../pipelines/futures-fills.ts';
import { stringifyJsonLossless } from '../src/exchange/lossless-json.ts';
import { fetchHistoryWindow, type ExchangeFacts } from '../src/extract/fetch-window.ts';
import type { SandboxOptions } from '../src/sandbox/server.ts';
import { stringifyWire } from '../src/sandbox/wire-json.ts';
import { clientFor, startTestSandbox } from './support/sandbox.ts';

const DAY = 86_400_000;

describe('futures fills: endTime paging through a millisecond with more fills than a page', () => {
  it.each([['inclusive'], ['exclusive'], ['half-open']] as [NonNullable<SandboxOptions['bounds']>][])(
    'reads every fill of a window that ends right after a crowded millisecond (%s bounds, nothing learned yet)',
    async (bounds) => {
      const sandbox = await startTestSandbox({ bounds, spotQuota: 1_000_000, futuresQuota: 1_000_000 });
      try {
        const fills = sandbox.exchange.accounts[0]!.futuresFills;
        const perMs = new Map<number, number>();
        for (const fill of fills) perMs.set(fill.t, (perMs.get(fill.t) ?? 0) + 1);
        const crowded = [...perMs.entries()].find(([, count]) => count > 100)![0];
        // The window's newest page is the crowded millisecond itself.
        const window = { startMs: crowded - 3 * DAY, endMs: crowded + 1 };
        const facts: ExchangeFacts = {};
        const symbols = [...new Set(fills.map((fill) => fill.wire.symbol))];
        const records = await fetchHistoryWindow(futuresFills, window, {
          client: clientFor(sandbox),
          partitionParams: {},
          facts,
          futuresSymbols: async () => symbols,
          warn: () => undefined,
        });
        const expected = fills.filter((fill) => fill.t >= window.startMs && fill.t < window.endMs).map((fill) => stringifyWire(fill.wire)).sort();
        expect(records.map((record) => stringifyJsonLossless(record)).sort()).toEqual(expected);
        expect(expected.length).toBeGreaterThan(100);
      } finally {
        await sandbox.close();
      }
    },
  );
});
