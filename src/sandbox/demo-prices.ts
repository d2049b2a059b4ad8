import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PRICES_HEADER } from '../models/prices-file.ts';

/**
 * A prices file for the sandbox's history (what `exledger demo` values its marts with): a daily
 * close of USDT in USD for every UTC day from `from` to `until`, between 0.9995 and 1.0005,
 * the same for the same days (no clock, no randomness). Every other sandbox coin trades against
 * USDT, so its price is derived from the day's fills (docs/workbooks.md "Reporting currency"): the demo
 * shows both sources, and USDT is never assumed to be worth 1 USD.
 */
export function writeDemoPrices(file: string, from: string, until: string): void {
  const lines = [PRICES_HEADER];
  const last = Date.parse(`${until.slice(0, 10)}T00:00:00Z`);
  for (let day = Date.parse(`${from.slice(0, 10)}T00:00:00Z`); day <= last; day += 86_400_000) {
    const index = day / 86_400_000;
    const tenThousandths = 9995 + ((index * 37) % 11);
    lines.push(`${new Date(day).toISOString().slice(0, 10)},USDT,USD,${Math.floor(tenThousandths / 10_000)}.${String(tenThousandths % 10_000).padStart(4, '0')}`);
  }
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${lines.join('\n')}\n`);
}
