/**
 * Exact decimal arithmetic on the exchange's amount strings (exchange-notes.md "Numbers":
 * up to 18 fractional digits, never a JS number). Just what the sandbox needs: parse,
 * sum (referral totals) and divide-to-integer (contracts of an order), on bigint units.
 */

/** A decimal as an integer count of 10^-scale units. */
export interface Decimal {
  units: bigint;
  scale: number;
}

const DECIMAL_PATTERN = /^([+-]?)(\d+)(?:\.(\d*))?$|^([+-]?)\.(\d+)$/;

/** Parses a plain decimal string ("12", "-0.5", "3."); null for anything else (exponents, blanks). */
export function parseDecimal(text: string): Decimal | null {
  const match = DECIMAL_PATTERN.exec(text.trim());
  if (match === null) return null;
  const sign = match[1] ?? match[4] ?? '';
  const whole = match[2] ?? '0';
  const fraction = match[3] ?? match[5] ?? '';
  const units = BigInt(whole + fraction);
  return { units: sign === '-' ? -units : units, scale: fraction.length };
}

function rescale(value: Decimal, scale: number): bigint {
  return value.units * 10n ** BigInt(scale - value.scale);
}

/** Writes a decimal with exactly `scale` fractional digits. */
export function formatDecimal(value: Decimal): string {
  const negative = value.units < 0n;
  const digits = (negative ? -value.units : value.units).toString().padStart(value.scale + 1, '0');
  const whole = digits.slice(0, digits.length - value.scale);
  const fraction = digits.slice(digits.length - value.scale);
  return (negative ? '-' : '') + whole + (value.scale > 0 ? `.${fraction}` : '');
}

/** Whether a string is a plain decimal greater than zero. */
export function isPositiveDecimal(text: string): boolean {
  const value = parseDecimal(text);
  return value !== null && value.units > 0n;
}

/** floor(a / b) for positive decimals; null when b is zero or either is not a decimal. */
export function divideToInteger(a: string, b: string): bigint | null {
  const left = parseDecimal(a);
  const right = parseDecimal(b);
  if (left === null || right === null || right.units === 0n) return null;
  const scale = Math.max(left.scale, right.scale);
  return rescale(left, scale) / rescale(right, scale);
}

/** A running exact sum of decimal strings, formatted once at the end (cheaper than repeated addDecimals). */
export class DecimalSum {
  private units = 0n;
  private scale = 0;

  /** Adds a decimal string. Throws RangeError on a string that is not a plain decimal. */
  add(text: string): void {
    const value = parseDecimal(text);
    if (value === null) throw new RangeError(`not a decimal: "${text}"`);
    if (value.scale > this.scale) {
      this.units *= 10n ** BigInt(value.scale - this.scale);
      this.scale = value.scale;
    }
    this.units += rescale(value, this.scale);
  }

  /** The sum with as many fractional digits as the most precise addend. */
  toString(): string {
    return formatDecimal({ units: this.units, scale: this.scale });
  }
}
