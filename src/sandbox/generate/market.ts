/**
 * The market the sandbox account trades in: one hourly USD price path per asset and one
 * funding rate per contract and 8-hour period. It depends on the seed only, not on the
 * account, so every account of one sandbox sees the same prices.
 *
 * Prices are JS numbers on purpose: they only pick a level. Every traded price is then snapped
 * to an integer count of ticks, and all amounts are computed exactly from those integers.
 */
import { createRng, type Rng } from './random.ts';

/** An asset with a USD price path. */
export type MarketAsset = 'BTC' | 'ETH' | 'SOL' | 'WXT' | 'SHIB';

interface AssetModel {
  start: number;
  /** Soft bounds: the path is pulled back inside and reflected at them. */
  low: number;
  high: number;
  /** Standard deviation of one hourly relative step. */
  hourlyVolatility: number;
}

/** Realistic levels: BTC 60k-110k, ETH 1.5k-4.8k, SOL ~95-290, tiny WXT and SHIB prices. */
const ASSETS: Record<MarketAsset, AssetModel> = {
  BTC: { start: 84_000, low: 60_000, high: 110_000, hourlyVolatility: 0.0055 },
  ETH: { start: 3_000, low: 1_500, high: 4_800, hourlyVolatility: 0.0075 },
  SOL: { start: 160, low: 95, high: 290, hourlyVolatility: 0.009 },
  WXT: { start: 0.0105, low: 0.006, high: 0.025, hourlyVolatility: 0.011 },
  SHIB: { start: 0.0000152, low: 0.0000078, high: 0.000031, hourlyVolatility: 0.011 },
};

const HOUR_MS = 3_600_000;
const FUNDING_PERIOD_MS = 8 * HOUR_MS;

/** Prices and funding rates over [startMs, startMs + days). */
export class Market {
  private readonly paths = new Map<MarketAsset, Float64Array>();
  private readonly fundingRates = new Map<string, Int32Array>();

  /**
   * @param seed - the sandbox seed
   * @param startMs - first ms of the history (a UTC midnight)
   * @param days - length of the history in days
   * @param contractSymbols - the contracts that need funding rates
   */
  constructor(
    seed: number,
    private readonly startMs: number,
    days: number,
    contractSymbols: readonly string[],
  ) {
    const hours = days * 24 + 2;
    for (const [asset, model] of Object.entries(ASSETS) as Array<[MarketAsset, AssetModel]>) {
      this.paths.set(asset, buildPath(createRng(seed, 'market', asset), model, hours));
    }
    const periods = days * 3 + 1;
    for (const symbol of contractSymbols) {
      const rng = createRng(seed, 'funding', symbol);
      const rates = new Int32Array(periods);
      let level = 100;
      for (let i = 0; i < periods; i++) {
        // Millionths: around +0.01% per 8 h, the usual perpetual baseline, drifting, sometimes negative.
        level += Math.round(rng.normal() * 25 + (100 - level) * 0.1);
        rates[i] = Math.max(-400, Math.min(900, level + Math.round(rng.normal() * 15)));
      }
      this.fundingRates.set(symbol, rates);
    }
  }

  /** USD price of an asset at epoch ms t (linear between hourly points). */
  usdPrice(asset: MarketAsset, t: number): number {
    const path = this.path(asset);
    const x = (t - this.startMs) / HOUR_MS;
    const i = Math.max(0, Math.min(path.length - 2, Math.floor(x)));
    const f = Math.max(0, Math.min(1, x - i));
    return (path[i] ?? 0) * (1 - f) + (path[i + 1] ?? 0) * f;
  }

  /** Price of `base` in units of `quote` (USDT counts as 1 USD). */
  price(base: MarketAsset, quote: MarketAsset | 'USDT', t: number): number {
    const b = this.usdPrice(base, t);
    return quote === 'USDT' ? b : b / this.usdPrice(quote, t);
  }

  /** Lowest and highest hourly USD price of an asset over [fromMs, toMs]. */
  usdRange(asset: MarketAsset, fromMs: number, toMs: number): { min: number; max: number } {
    const path = this.path(asset);
    const from = Math.max(0, Math.floor((fromMs - this.startMs) / HOUR_MS));
    const to = Math.min(path.length - 1, Math.ceil((toMs - this.startMs) / HOUR_MS));
    let min = Number.POSITIVE_INFINITY;
    let max = 0;
    for (let i = from; i <= to; i++) {
      const p = path[i] ?? 0;
      if (p < min) min = p;
      if (p > max) max = p;
    }
    return { min, max };
  }

  /** Funding rate in millionths (100 = 0.0100%) of a contract for the 8-hour period starting at or before t. */
  fundingRateMicros(contractSymbol: string, t: number): number {
    const rates = this.fundingRates.get(contractSymbol);
    if (rates === undefined) throw new RangeError(`no funding rates for ${contractSymbol}`);
    const i = Math.max(0, Math.min(rates.length - 1, Math.floor((t - this.startMs) / FUNDING_PERIOD_MS)));
    return rates[i] ?? 0;
  }

  private path(asset: MarketAsset): Float64Array {
    const path = this.paths.get(asset);
    if (path === undefined) throw new RangeError(`no price path for ${asset}`);
    return path;
  }
}

/** A mean-reverting multiplicative random walk, reflected at the soft bounds. */
function buildPath(rng: Rng, model: AssetModel, hours: number): Float64Array {
  const path = new Float64Array(hours);
  const center = (model.low + model.high) / 2;
  let p = model.start;
  // Regimes of a few days with a drift make trends and ranges instead of pure noise.
  let drift = 0;
  for (let h = 0; h < hours; h++) {
    if (h % 96 === 0) drift = rng.normal() * model.hourlyVolatility * 0.15;
    const pull = ((center - p) / center) * 0.002;
    p *= 1 + drift + pull + rng.normal() * model.hourlyVolatility;
    if (p < model.low) p = model.low * (1 + (model.low - p) / model.low);
    if (p > model.high) p = model.high * (1 - (p - model.high) / model.high);
    path[h] = p;
  }
  return path;
}
