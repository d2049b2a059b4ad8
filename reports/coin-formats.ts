import type { CoinFormats } from '../src/export/cell-formats.ts';

/**
 * How many decimals an amount shows, per coin: stablecoins and fiat show cents (and up to six
 * more decimals where the amount has them, so a small fee is never shown as 0.00); other coins
 * show eight (satoshi precision). The cell holds the whole number; the format only displays it.
 */
export const COIN_FORMATS: CoinFormats = {
  fixedDecimals: { USDT: 2, USDC: 2, USD: 2, DAI: 2, FDUSD: 2, TUSD: 2, BUSD: 2, EUR: 2, GBP: 2, JPY: 0 },
  defaultDecimals: 8,
  /** Shown after the fixed ones when the amount has them (Excel's `#`). */
  optionalDecimals: 6,
  /** The Summary's chart shows the first of these coins that has rows (then the coin with the most months). */
  chartCoins: ['USDT', 'USDC', 'USD', 'EUR', 'BTC', 'ETH'],
};
