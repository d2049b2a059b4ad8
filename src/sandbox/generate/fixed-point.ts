/**
 * Exact money arithmetic for the generator: every amount is a bigint holding the value times
 * 10^18 (18 fractional digits, the most any amount on the exchange carries, exchange-notes
 * "Numbers"). Sums and differences are exact; products are rounded explicitly to a number of
 * decimals that the caller names; text is produced by the formatters here, never by a JS number.
 */

/** Fractional digits of the fixed-point representation. */
const FIXED_DECIMALS = 18;

/** 1 in fixed point. */
const ONE = 10n ** 18n;

const POW10: readonly bigint[] = Array.from({ length: 37 }, (_, i) => 10n ** BigInt(i));
const ZEROS = '0'.repeat(FIXED_DECIMALS + 1);
/** ZERO_RUNS[n] is n zeros. */
const ZERO_RUNS: readonly string[] = Array.from({ length: FIXED_DECIMALS + 1 }, (_, n) => '0'.repeat(n));

/** 10^n as a bigint, for 0 <= n <= 36. */
function pow10(n: number): bigint {
  const p = POW10[n];
  if (p === undefined) throw new RangeError(`pow10(${n}) is out of range`);
  return p;
}

/** The fixed-point value of an integer count of units of 10^-decimals (e.g. 1234 units of 0.01 = 12.34). */
export function fromUnits(units: bigint | number, decimals: number): bigint {
  return BigInt(units) * pow10(FIXED_DECIMALS - decimals);
}

/** The exact number of units of 10^-decimals in a fixed-point value; throws if it is not whole. */
export function toUnits(value: bigint, decimals: number): bigint {
  const step = pow10(FIXED_DECIMALS - decimals);
  if (value % step !== 0n) throw new RangeError(`${value} is not a multiple of 10^-${decimals}`);
  return value / step;
}

/**
 * Rounds a fixed-point value to `decimals` fractional digits, halves away from zero (the usual
 * commercial rounding of fee and funding amounts).
 */
export function roundTo(value: bigint, decimals: number): bigint {
  const step = pow10(FIXED_DECIMALS - decimals);
  return divRound(value, step) * step;
}

/** Rounds a fixed-point value down (toward minus infinity) to `decimals` fractional digits. */
export function floorTo(value: bigint, decimals: number): bigint {
  const step = pow10(FIXED_DECIMALS - decimals);
  const rem = ((value % step) + step) % step;
  return value - rem;
}

/** a * b for two fixed-point values, rounded (halves away from zero) to `decimals` fractional digits. */
export function mulRound(a: bigint, b: bigint, decimals: number): bigint {
  return divRound(a * b, pow10(2 * FIXED_DECIMALS - decimals)) * pow10(FIXED_DECIMALS - decimals);
}

/**
 * The share a * b / c of a non-negative fixed-point amount a (b, c plain non-negative integers,
 * e.g. closed size over position size), rounded down to `decimals` fractional digits.
 */
export function mulDivFloor(a: bigint, b: bigint, c: bigint, decimals: number): bigint {
  if (a < 0n || b < 0n || c <= 0n) throw new RangeError('mulDivFloor takes a >= 0, b >= 0, c > 0');
  const step = pow10(FIXED_DECIMALS - decimals);
  return ((a * b) / (c * step)) * step;
}

/** Integer division rounding halves away from zero. */
function divRound(n: bigint, d: bigint): bigint {
  const q = n / d;
  const r = n % d;
  if (r === 0n) return q;
  const twice = (r < 0n ? -r : r) * 2n;
  if (twice < d) return q;
  return n < 0n ? q - 1n : q + 1n;
}

/**
 * Formats a fixed-point value with exactly `decimals` fractional digits ("-100.00000000"), as
 * funding bills and the futures payloads do. Throws rather than silently dropping a digit.
 */
export function formatFixed(value: bigint, decimals: number): string {
  const negative = value < 0n;
  let digits = (negative ? -value : value).toString();
  if (digits.length <= FIXED_DECIMALS) digits = ZEROS.slice(0, FIXED_DECIMALS + 1 - digits.length) + digits;
  const cut = digits.length - FIXED_DECIMALS;
  if (decimals < FIXED_DECIMALS && !digits.endsWith(ZERO_RUNS[FIXED_DECIMALS - decimals] as string)) {
    throw new RangeError(`${value} has more than ${decimals} decimals`);
  }
  const text = decimals === 0 ? digits.slice(0, cut) : `${digits.slice(0, cut)}.${digits.slice(cut, cut + decimals)}`;
  return negative ? `-${text}` : text;
}

/**
 * Formats a fixed-point value with no trailing fractional zeros ("10", "0.10476"), as the spot
 * fills of the real exchange do (samples/api_v2_trade_fills.json).
 */
export function formatTrimmed(value: bigint): string {
  const negative = value < 0n;
  let digits = (negative ? -value : value).toString();
  if (digits.length <= FIXED_DECIMALS) digits = ZEROS.slice(0, FIXED_DECIMALS + 1 - digits.length) + digits;
  const cut = digits.length - FIXED_DECIMALS;
  let end = digits.length;
  while (end > cut && digits.charCodeAt(end - 1) === 48) end--;
  const text = end === cut ? digits.slice(0, cut) : `${digits.slice(0, cut)}.${digits.slice(cut, end)}`;
  return negative ? `-${text}` : text;
}

/** Parses a decimal string ("-12.5", "0.00001234", "10") into fixed point; throws on anything else. */
export function parseFixed(text: string): bigint {
  const match = /^(-?)(\d+)(?:\.(\d{1,18}))?$/.exec(text);
  if (match === null) throw new SyntaxError(`not a decimal amount: ${JSON.stringify(text)}`);
  const [, sign, whole = '0', fraction = ''] = match;
  const value = BigInt(whole) * ONE + BigInt(fraction.padEnd(FIXED_DECIMALS, '0'));
  return sign === '-' ? -value : value;
}

/** A JS number near a fixed-point value: for sizing decisions only, never for an amount. */
export function toApproxNumber(value: bigint): number {
  return Number(value) / 1e18;
}
