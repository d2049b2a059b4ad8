import type { CoinFormats } from '../src/export/cell-formats.ts';

/**
 * How many decimals an amount shows, per coin, always that many: stablecoins and fiat show cents,
 * other coins eight (satoshi precision). The cell holds the whole number (a fee of 0.0012 USDT
 * shows 0.00 and holds 0.0012); the format only displays it. Add a coin here to override.
 */
export const COIN_FORMATS: CoinFormats = {
  fixedDecimals: { USDT: 2, USDC: 2, USD: 2, DAI: 2, FDUSD: 2, TUSD: 2, BUSD: 2, EUR: 2, GBP: 2, JPY: 0 },
  defaultDecimals: 8,
  /** The Summary's chart shows the first of these coins that has rows (then the coin with the most months). */
  chartCoins: ['USDT', 'USDC', 'USD', 'EUR', 'BTC', 'ETH'],
};
