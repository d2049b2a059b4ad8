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
 * none): a pair BASE+QUOTE is a candidate when BASE is a listed currency the account holds or
 * bought or sold (assets, funding bills of type buy/sell), and QUOTE is a configured quote coin
 * the account also holds or traded. Pairs the exchange does not list answer 40102 and are
 * skipped (see sync-account.ts).
 */
export async function discoverSpotSymbols(db: Database, account: string, quoteCoins: readonly string[]): Promise<string[]> {
  const rows = await db.all<{ coin: string }>(
    `WITH listed AS (
       SELECT DISTINCT upper(_record->>'coinName') AS coin FROM raw.currencies WHERE _seq >= 0
     ),
     held AS (
       SELECT DISTINCT upper(_record->>'coinName') AS coin FROM raw.spot_assets WHERE _account = $1 AND _seq >= 0
     ),
     traded AS (
       SELECT DISTINCT upper(_record->>'coinName') AS coin FROM raw.funding_bills
       WHERE _account = $1 AND (_record->>'bizType') IN ('buy', 'sell')
     )
     SELECT coin FROM (SELECT coin FROM held UNION SELECT coin FROM traded)
     WHERE coin IN (SELECT coin FROM listed) OR NOT EXISTS (SELECT 1 FROM listed)
     ORDER BY coin`,
    [account],
  );
  const active = rows.map((row) => row.coin);
  const quotes = quoteCoins.map((coin) => coin.toUpperCase()).filter((coin) => active.includes(coin));
  const symbols: string[] = [];
  for (const base of active) {
    for (const quote of quotes) if (base !== quote) symbols.push(`${base}${quote}_SPBL`);
  }
  return symbols;
}
