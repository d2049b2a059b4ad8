import type { Params } from '../exchange/sign.ts';
import type { Database } from '../store/database.ts';
import type { PartitionSpec } from './stream.ts';

/** One partition of a stream: the parameters that select it and a stable key for its cursor. */
export interface Partition {
  /** `''` for unpartitioned streams, else `param=value,…` (e.g. `productType=SPOT,coin=USDT`). */
  key: string;
  params: Params;
}

/** The partitions of a stream, given the spot symbols to use for symbol-partitioned streams. */
export function partitionsOf(spec: PartitionSpec, spotSymbols: readonly string[]): Partition[] {
  switch (spec.kind) {
    case 'none':
      return [{ key: '', params: {} }];
    case 'spot-symbols':
      return spotSymbols.map((symbol) => ({ key: `${spec.param}=${symbol}`, params: { [spec.param]: symbol } }));
    case 'values': {
      let combos: Params[] = [{}];
      for (const dimension of spec.dimensions) {
        combos = combos.flatMap((combo) => dimension.values.map((value) => ({ ...combo, [dimension.param]: value })));
      }
      return combos.map((params) => ({
        key: Object.entries(params)
          .map(([name, value]) => `${name}=${String(value)}`)
          .join(','),
        params,
      }));
    }
  }
}

/**
 * Spot symbols that can have fills for an account, without a products listing (our API has
 * none). A spot trade posts one funding bill per leg at the same millisecond (bizType buy or
 * sell): the coin received and the coin paid. So:
 * 1. a millisecond with exactly two coins in buy (or sell) bills names a traded pair exactly:
 *    on a buy the base coin's delta is positive and the quote's negative, on a sell the reverse;
 * 2. a coin with buy/sell bills that no such millisecond pairs (legs that always coincide with
 *    other trades) is paired with every configured quote coin the account also traded;
 * 3. with no buy/sell bills at all (an exchange that keeps trades out of funding bills), every
 *    listed coin the account holds is paired with every quote coin it holds.
 * Candidates the exchange does not list answer 40102 and are skipped (see sync.ts).
 */
export async function discoverSpotSymbols(db: Database, account: string, quoteCoins: readonly string[]): Promise<string[]> {
  const quotes = quoteCoins.map((coin) => coin.toUpperCase());
  const legs = await db.all<{ base: string | null; quote: string | null; coins: string }>(
    `WITH trades AS (
       SELECT _record->>'cTime' AS t, _record->>'bizType' AS biz, upper(_record->>'coinName') AS coin,
              cast(_record->>'deltaAmount' AS DECIMAL(38, 18)) AS delta
       FROM raw.funding_bills
       WHERE _account = $1 AND (_record->>'bizType') IN ('buy', 'sell')
     )
     SELECT
       max(coin) FILTER (WHERE (biz = 'buy' AND delta > 0) OR (biz = 'sell' AND delta < 0)) AS base,
       max(coin) FILTER (WHERE (biz = 'buy' AND delta < 0) OR (biz = 'sell' AND delta > 0)) AS quote,
       string_agg(DISTINCT coin, ',') AS coins
     FROM trades GROUP BY t, biz`,
    [account],
  );
  const symbols = new Set<string>();
  const traded = new Set<string>();
  const paired = new Set<string>();
  for (const leg of legs) {
    const coins = leg.coins.split(',');
    for (const coin of coins) traded.add(coin);
    if (coins.length === 2 && leg.base !== null && leg.quote !== null && leg.base !== leg.quote) {
      symbols.add(`${leg.base}${leg.quote}_SPBL`);
      paired.add(leg.base).add(leg.quote);
    }
  }
  if (traded.size > 0) {
    const tradedQuotes = quotes.filter((coin) => traded.has(coin));
    for (const coin of traded) if (!paired.has(coin)) for (const quote of tradedQuotes) if (quote !== coin) symbols.add(`${coin}${quote}_SPBL`);
    return [...symbols].sort();
  }
  const held = await db.all<{ coin: string }>(
    `SELECT DISTINCT upper(_record->>'coinName') AS coin FROM raw.spot_assets
     WHERE _account = $1 AND _seq >= 0
       AND (upper(_record->>'coinName') IN (SELECT upper(_record->>'coinName') FROM raw.currencies WHERE _seq >= 0)
            OR NOT EXISTS (SELECT 1 FROM raw.currencies WHERE _seq >= 0))
     ORDER BY coin`,
    [account],
  );
  const heldCoins = held.map((row) => row.coin);
  const heldQuotes = quotes.filter((coin) => heldCoins.includes(coin));
  for (const base of heldCoins) for (const quote of heldQuotes) if (base !== quote) symbols.add(`${base}${quote}_SPBL`);
  return [...symbols].sort();
}
