import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PRICES_HEADER } from '../models/prices-file.ts';
import { COINS, SPOT_SYMBOLS } from './generate/catalog.ts';

/**
 * Coins the sandbox account holds (deposits) but never trades, so no fill can price them: a close
 * around a level of their own (whole units of 1e-4 USD), so the books value them (never 0).
 */
const UNTRADED_LEVELS: Readonly<Record<string, number>> = { LTC: 850_000, XRP: 5_200, TRX: 1_200, ADA: 3_800, DOGE: 1_600, TON: 52_000 };

/**
 * A prices file for the sandbox's history (what `exledger demo` values its marts with): a daily
 * close of USDT in USD for every UTC day from `from` to `until`, between 0.9995 and 1.0005,
 * the same for the same days (no clock, no randomness), and one of each coin the account holds but
 * never trades (UNTRADED_LEVELS, within 5% of its level). Every traded coin trades against USDT, so its
 * price is derived from the day's fills (docs/workbooks.md "Reporting currency"): the demo shows both
 * sources, and USDT is never assumed to be worth 1 USD.
 */
export function writeDemoPrices(file: string, from: string, until: string): void {
  const lines = [PRICES_HEADER];
  const last = Date.parse(`${until.slice(0, 10)}T00:00:00Z`);
  const untraded = untradedCoins();
  for (let day = Date.parse(`${from.slice(0, 10)}T00:00:00Z`); day <= last; day += 86_400_000) {
    const index = day / 86_400_000;
    const tenThousandths = 9995 + ((index * 37) % 11);
    const date = new Date(day).toISOString().slice(0, 10);
    lines.push(`${date},USDT,USD,${Math.floor(tenThousandths / 10_000)}.${String(tenThousandths % 10_000).padStart(4, '0')}`);
    for (const coin of untraded) {
      const level = UNTRADED_LEVELS[coin]!;
      const units = level + Math.floor((level * (((index * 53 + coin.length * 17) % 21) - 10)) / 200);
      lines.push(`${date},${coin},USD,${Math.floor(units / 10_000)}.${String(units % 10_000).padStart(4, '0')}`);
    }
  }
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${lines.join('\n')}\n`);
}

/** The sandbox coins with a level and no traded spot pair (a listed pair never traded counts as none). */
function untradedCoins(): string[] {
  const traded = new Set(SPOT_SYMBOLS.filter((symbol) => symbol.tradedDays.length > 0).flatMap((symbol) => [symbol.baseCoin, symbol.quoteCoin]));
  return COINS.map((coin) => coin.name).filter((name) => !traded.has(name) && UNTRADED_LEVELS[name] !== undefined);
}
