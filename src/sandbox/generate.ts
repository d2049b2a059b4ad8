/**
 * The sandbox exchange's data generator: a deterministic, realistic year of one or more
 * accounts (spot, funding account, transfers, futures, affiliate), fast enough to make a
 * million records in a few seconds.
 *
 * Determinism: everything derives from (seed, scale, endMs, accounts) through seeded sfc32
 * streams (generate/random.ts); nothing reads the clock except the endMs default, computed once
 * here. Money is exact: bigint fixed point (generate/fixed-point.ts), never a JS number.
 *
 * Hard cases, present at every scale (asserted in test/sandbox-generate.test.ts):
 * - Same-millisecond bursts: one spot symbol gets two orders in one ms, the first with 105-140
 *   fills (more than the page size of 100), so that ms also holds more than 200 funding bills;
 *   one contract (cmt_ethusdt) gets three orders in one ms with 30-60 fills each (more than
 *   100 fills in the ms, at most 80 per order, so filtering by orderId pages through).
 * - Month boundaries: for every month start inside the history (except near its start, end and
 *   quiet period) there are spot fills (BTCUSDT_SPBL), funding bills, transfer records, futures
 *   fills (cmt_btcusdt) and commission records (SPOT and FUTURES) exactly at the first ms of the
 *   month and at the ms before it.
 * - Identical twins: pairs of transfer records equal in every field (same ms, amount, types,
 *   symbols) and commission records equal in every field. Never more than 20 transfer records
 *   share a ms.
 * - Empty fillPrice and orderType on about 4% of spot orders' fills (the price is still
 *   fillTotalAmount / fillQuantity exactly).
 * - Unlisted fields: spot fills carry "fillRole" and funding bills "fillSize": null,
 *   "fillValue": null from a release day on; futures orders carry "filledQtyContracts".
 * - A quiet period of four to six weeks with no record in any stream (no open futures position
 *   either), idle days, and pairs that stop trading for months (WXTUSDT_SPBL, ETHBTC_SPBL,
 *   SHIBUSDT_SPBL; cmt_solusdt); pairs and contracts listed but never traded, currencies with
 *   no pair at all, and an airdropped coin (DOGE) with a balance but no trades.
 * - Numbers: ETH amounts with 18 decimals, BTC prices near 1e5, SHIB prices like 0.00001234
 *   with quantities in the millions, ids above 2^53 (futures tradeId/orderId are bigint).
 * - Forced liquidations (liquidateType FORCE_LIQUIDATE, liquidateFee > 0; at least one per
 *   account), canceled and partly filled futures orders, futures orders still
 *   open/pending/untriggered at the end, spot orders still open at the end (their amounts
 *   frozen in the assets).
 */
import type { GenerateOptions, SandboxExchange } from './model.ts';
import { simulateAccount } from './generate/account-simulation.ts';
import { DAY_MS } from './generate/activity-calendar.ts';
import { buildContractsWire, buildCurrenciesWire, CONTRACTS, listSpotSymbols } from './generate/catalog.ts';
import { createCredentials, type AccountCredentials } from './generate/credentials.ts';
import { MAX_PARTITIONS } from './generate/id-allocator.ts';
import { Market } from './generate/market.ts';
import { createRng } from './generate/random.ts';

export { summarizeExchange, type AccountSummary, type CoinTotals, type StreamCounts } from './generate/summarize-exchange.ts';

/** Length of the generated history. */
export const HISTORY_DAYS = 365;

/**
 * Generates a sandbox exchange. Same options, same data, byte for byte.
 *
 * @param options - see {@link GenerateOptions}; `endMs` must be a UTC midnight (the history is
 *   made of whole UTC days: funding settles at 00:00, 08:00 and 16:00 UTC), `accounts` between 1
 *   and 64 (the id layout has room for 64 partitions)
 * @throws RangeError on an invalid option
 */
export function generateExchange(options: GenerateOptions = {}): SandboxExchange {
  const seed = options.seed ?? 1;
  const scale = options.scale ?? 'small';
  const endMs = options.endMs ?? Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const accountCount = options.accounts ?? 1;
  if (!Number.isSafeInteger(seed)) throw new RangeError(`seed must be a safe integer, got ${seed}`);
  if (scale !== 'small' && scale !== 'medium' && scale !== 'large') throw new RangeError(`unknown scale ${String(scale)}`);
  if (!Number.isSafeInteger(endMs) || endMs % DAY_MS !== 0) throw new RangeError(`endMs must be a UTC midnight in epoch ms, got ${endMs}`);
  if (!Number.isInteger(accountCount) || accountCount < 1 || accountCount > MAX_PARTITIONS) {
    throw new RangeError(`accounts must be an integer in [1, ${MAX_PARTITIONS}], got ${accountCount}`);
  }
  const startMs = endMs - HISTORY_DAYS * DAY_MS;
  const market = new Market(seed, startMs, HISTORY_DAYS, CONTRACTS.map((c) => c.symbol));
  return {
    seed,
    scale,
    startMs,
    endMs,
    currencies: buildCurrenciesWire(),
    contracts: buildContractsWire(),
    spotSymbols: listSpotSymbols(),
    accounts: drawCredentials(seed, accountCount).map((credentials, index) => simulateAccount({ seed, index, scale, credentials, startMs, days: HISTORY_DAYS, market })),
  };
}

/** One identity per account; draws again on the (unlikely) clash of a UID or API key. */
function drawCredentials(seed: number, count: number): AccountCredentials[] {
  const uids = new Set<string>();
  const keys = new Set<string>();
  const out: AccountCredentials[] = [];
  for (let index = 0; index < count; index++) {
    const rng = createRng(seed, 'account', index, 'credentials');
    let c = createCredentials(rng);
    while (uids.has(c.uid) || keys.has(c.apiKey)) c = createCredentials(rng);
    uids.add(c.uid);
    keys.add(c.apiKey);
    out.push(c);
  }
  return out;
}
