import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../errors.ts';

/**
 * The prices file (docs/workbooks.md "Reporting currency"): a CSV the user controls, header
 * `date,coin,currency,price`, one price a line. `date` is a calendar day (YYYY-MM-DD: that day's
 * close, the day cut in the reporting time zone) or an ISO 8601 instant with its offset (it counts
 * for the reporting-zone day it falls in; the day's last instant is its close). Only the rows in
 * the reporting currency are used; the others are kept, so switching currency needs no new file.
 * A coin written contract:<symbol> is that futures contract's mark price, in its quote coin.
 */

/** One line of the prices file, as validated text (amounts stay strings until DuckDB). */
export interface PriceRow {
  /** Its line number in the file (1 is the header). */
  line: number;
  /** YYYY-MM-DD for a daily close, else null. */
  date: string | null;
  /** An ISO 8601 instant with offset, else null. */
  at: string | null;
  coin: string;
  currency: string;
  /** A plain positive decimal string, at most 18 decimals. */
  price: string;
}

/** A read prices file. */
export interface PricesFile {
  /** Absolute path. */
  file: string;
  /** SHA-256 of its bytes, hex: stamps the models built with it (settings.model_builds). */
  sha256: string;
  rows: readonly PriceRow[];
}

export const PRICES_HEADER = 'date,coin,currency,price';
const CODE = /^[A-Z0-9]{1,20}$/;
/** A futures contract's mark price (docs/workbooks.md "Open futures positions"): contract:<symbol>, in its quote coin. */
const CONTRACT = /^contract:[A-Za-z0-9_.-]{1,40}$/;
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
const PRICE = /^\d{1,20}(\.\d{1,18})?$/;

/**
 * Reads and validates a prices file. Every line is checked before anything is used: the first bad
 * one is ONE ConfigError naming `file:line`, what is wrong and the form expected.
 */
export function readPricesFile(file: string): PricesFile {
  if (!existsSync(file)) throw new ConfigError('models.pricesFile', `the file ${file} does not exist`, { hint: `give a CSV with the header ${PRICES_HEADER}` });
  const bytes = readFileSync(file);
  const lines = bytes.toString('utf8').replace(/^\uFEFF/, '').split('\n').map((line) => line.replace(/\r$/, ''));
  const fail = (line: number, message: string): never => {
    throw new ConfigError(`${file}:${line}`, message, { hint: `each line is ${PRICES_HEADER}, e.g. 2026-10-01,BTC,USD,61234.5 (fix the line, then build again; nothing was built)` });
  };
  if (lines[0]?.trim() !== PRICES_HEADER) fail(1, `the first line must be the header ${PRICES_HEADER}`);
  const rows: PriceRow[] = [];
  const seen = new Map<string, number>();
  lines.forEach((text, index) => {
    const line = index + 1;
    if (index === 0 || text.trim() === '') return;
    const fields = text.split(',').map((field) => field.trim());
    if (fields.length !== 4) fail(line, `has ${fields.length} fields, not 4 (no quotes or thousands separators)`);
    const [when, coin, currency, price] = fields as [string, string, string, string];
    const isDay = DAY.test(when) && validDay(when);
    const isInstant = !isDay && INSTANT.test(when) && !Number.isNaN(Date.parse(when)) && validDay(when.slice(0, 10));
    if (!isDay && !isInstant) fail(line, `date "${when}" is neither a day (YYYY-MM-DD) nor an ISO instant with offset (2026-10-01T16:00:00Z)`);
    if (!CODE.test(coin) && !CONTRACT.test(coin)) fail(line, `coin "${coin}" is neither an upper-case coin code (letters and digits, e.g. BTC) nor a futures contract's mark price (contract:<symbol>, e.g. contract:cmt_btcusdt)`);
    if (!CODE.test(currency)) fail(line, `currency "${currency}" is not an upper-case currency code (e.g. USD, EUR)`);
    if (!PRICE.test(price) || !/[1-9]/.test(price)) fail(line, `price "${price}" is not a positive plain decimal (digits, one point, at most 18 decimals, no exponent)`);
    const key = `${when}\u0000${coin}\u0000${currency}`;
    const earlier = seen.get(key);
    if (earlier !== undefined) fail(line, `repeats the price of ${coin} in ${currency} at ${when} (line ${earlier}); give one`);
    seen.set(key, line);
    rows.push({ line, date: isDay ? when : null, at: isDay ? null : when, coin, currency, price });
  });
  return { file: path.resolve(file), sha256: createHash('sha256').update(bytes).digest('hex'), rows };
}

function validDay(day: string): boolean {
  const date = new Date(`${day}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === day;
}
