import type ExcelJS from 'exceljs';
import { DataError } from '../errors.ts';
import type { ColumnFormat } from './report-definition.ts';

/**
 * From a mart's value (as DuckDB renders it to JSON: DECIMAL and BIGINT as exact strings, DATE
 * as YYYY-MM-DD, datetimes selected as epoch milliseconds) to an Excel cell value and its style.
 */

/** How many decimals an amount shows, per coin (declared in reports/coin-formats.ts). */
export interface CoinFormats {
  /** Decimals shown, per coin (always that many: a column of one coin lines up on its decimal point). */
  readonly fixedDecimals: Readonly<Record<string, number>>;
  /** Decimals shown for the other coins, and for an amount whose coin is not known. */
  readonly defaultDecimals: number;
  /** The Summary's chart shows the first of these coins that has rows (then the coin with the most months). */
  readonly chartCoins: readonly string[];
}

/** The decimals an amount in `coin` shows (undefined: the unit is not known, the default). */
export function decimalsOf(coin: string | undefined, formats: CoinFormats): number {
  return coin === undefined ? formats.defaultDecimals : (formats.fixedDecimals[coin] ?? formats.defaultDecimals);
}

/**
 * The Excel number format of an amount in `coin` (undefined: the unit is not known): a fixed
 * number of decimals, never optional ones (`#`), so a column reads as one unit. The cell keeps
 * the whole value; only its display is rounded.
 */
export function amountFormat(coin: string | undefined, formats: CoinFormats): string {
  const fixed = decimalsOf(coin, formats);
  const decimals = fixed === 0 ? '' : `.${'0'.repeat(fixed)}`;
  return `#,##0${decimals};[Red]-#,##0${decimals}`;
}

/** What a cell shows for an unknown value (NULL where the column's NULL means unknown): never 0. */
export const UNKNOWN_TEXT = 'unknown';

const FIXED_FORMATS: Record<Exclude<ColumnFormat, 'amount' | 'text' | 'id' | 'price' | 'rate'>, string> = {
  date: 'yyyy-mm-dd',
  month: 'yyyy-mm',
  datetime: 'yyyy-mm-dd hh:mm:ss',
  integer: '#,##0',
};

/** Fewest decimals a price shows (278.93), and a rate as a percentage (0.10%). */
export const MIN_PRICE_DECIMALS = 2;

/**
 * The number format of a price (`decimals`: what its column's values have, measured by the
 * detail sheet) or of a rate as a percentage (`decimals` of the ratio: two fewer as a percentage).
 * Fixed, so a column lines up on its decimal point; never fewer than its values have.
 */
export function exactFormat(format: 'price' | 'rate', decimals: number): string {
  const shown = Math.max(MIN_PRICE_DECIMALS, format === 'rate' ? decimals - 2 : decimals);
  return format === 'rate' ? `0.${'0'.repeat(shown)}%` : `#,##0.${'0'.repeat(shown)}`;
}

/**
 * The number format of a column, for an amount given its coin; for a price or rate given the
 * decimals its values have (@default 8 for a price, 6 for a rate: 0.0001%).
 */
export function numberFormat(format: ColumnFormat, formats: CoinFormats, coin?: string, decimals?: number): string | undefined {
  if (format === 'amount') return amountFormat(coin, formats);
  if (format === 'text' || format === 'id') return undefined;
  if (format === 'price' || format === 'rate') return exactFormat(format, decimals ?? (format === 'price' ? 8 : 6));
  return FIXED_FORMATS[format];
}

/** Rows and cells that need a look (a difference, a chain break, a stale stream). */
export const WARNING_FILL: ExcelJS.Fill = { type: 'pattern', pattern: 'solid', fgColor: { argb: 'FFFFC7CE' } };
export const WARNING_FONT: Partial<ExcelJS.Font> = { color: { argb: 'FF9C0006' } };
/** Printed (and converted to PDF) landscape, as wide as the page, as many pages down as needed. */
export const PAGE_SETUP: Partial<ExcelJS.PageSetup> = { orientation: 'landscape', paperSize: 9, fitToPage: true, fitToWidth: 1, fitToHeight: 0 };

/** Default column widths in characters. */
export const DEFAULT_WIDTHS: Record<ColumnFormat, number> = { text: 12, id: 22, date: 12, month: 10, datetime: 20, integer: 10, amount: 20, price: 14, rate: 12 };

const DECIMAL = /^-?\d+(\.\d+)?$/;

/**
 * Converts one value. Strings stay strings (so `=cmd()` from the exchange is text, never a
 * formula). Amounts become numbers here and only here: an Excel cell is a binary double (15
 * significant digits); the exact decimal stays in DuckDB, and totals are computed exactly.
 */
export function cellValue(format: ColumnFormat, value: unknown, where: () => string): ExcelJS.CellValue {
  if (value === null || value === undefined) return null;
  switch (format) {
    case 'text':
    case 'id':
      return String(value);
    case 'date':
    case 'month': {
      const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(String(value));
      if (match === null) throw new DataError(`${where()}: "${String(value)}" is not a date`);
      return new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
    }
    case 'datetime':
      return new Date(Number(value));
    case 'integer':
    case 'amount':
    case 'price':
    case 'rate': {
      const text = String(value);
      if (!DECIMAL.test(text)) throw new DataError(`${where()}: "${text}" is not a decimal number`);
      return Number(text);
    }
  }
}

/** Whether a decimal string is zero ("0", "-0.000"). */
export function isZeroDecimal(text: string): boolean {
  return /^-?0*(\.0*)?$/.test(text);
}

/**
 * Sums decimal strings exactly (BigInt units at the widest scale seen), for the cached results
 * of totals formulas and the Summary's figures.
 */
export class DecimalSum {
  private units = 0n;
  private scale = 0;

  add(text: string): void {
    if (!DECIMAL.test(text)) throw new DataError(`"${text}" is not a decimal number`);
    const negative = text.startsWith('-');
    const [whole, fraction = ''] = (negative ? text.slice(1) : text).split('.');
    if (fraction.length > this.scale) {
      this.units *= 10n ** BigInt(fraction.length - this.scale);
      this.scale = fraction.length;
    }
    const units = BigInt(whole! + fraction.padEnd(this.scale, '0'));
    this.units += negative ? -units : units;
  }

  /** The sum as a decimal string, trailing zeros of the fraction removed. */
  toString(): string {
    const negative = this.units < 0n;
    const digits = (negative ? -this.units : this.units).toString().padStart(this.scale + 1, '0');
    const whole = digits.slice(0, digits.length - this.scale);
    const fraction = digits.slice(digits.length - this.scale).replace(/0+$/, '');
    return `${negative ? '-' : ''}${whole}${fraction === '' ? '' : `.${fraction}`}`;
  }
}
