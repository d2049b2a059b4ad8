import { DataError } from '../errors.ts';

/**
 * Rounding journal entries to a ledger currency's minor unit (docs/workbooks.md "Ledger imports"),
 * exactly: amounts are BigInt counts of units, never JS numbers.
 *
 * Rounding each line on its own moves an account away from its exact total (ten lines of
 * 0.004 are 0.04 exact and 0.00 rounded) and can leave an entry of 0.00 / 0.00. Instead each
 * ledger account is rounded cumulatively, in the entries' order: a line's rounded amount is the
 * rounded running total after it less the rounded running total before it. So the rounded lines
 * of an account add up to its exact total rounded once, whatever their number, and no line is
 * off by a whole minor unit or more. What this leaves an entry out of balance by (at most a unit
 * per line) is posted to the rounding account, on a line of its own, so every entry balances to
 * the unit. Rounding is half away from zero (as Excel's ROUND).
 */

/** Decimals of the exact amounts as read: DECIMAL(38,12) (marts.journal_entries) and anything up to 18. */
export const EXACT_SCALE = 18;

/** One line of an entry as the mart holds it: its ledger account and signed amount (debit − credit), exact. */
export interface ExactLine {
  account: string;
  /** Debit − credit, in 10^-EXACT_SCALE units of the entry's currency. */
  amount: bigint;
  memo: string | null;
}

/** One journal entry as the mart holds it: lines that balance exactly. */
export interface ExactEntry {
  id: string;
  /** YYYY-MM-DD. */
  date: string;
  currency: string;
  lines: readonly ExactLine[];
}

/** A line as written to a ledger import. */
export interface RoundedLine {
  account: string;
  /** Debit − credit, in minor units (never 0). */
  amount: bigint;
  memo: string | null;
  /** The line of the entry's rounding difference (on the rounding account). */
  isRounding: boolean;
}

/** An entry as written to a ledger import: its lines balance to the unit, none is 0. */
export interface RoundedEntry {
  id: string;
  date: string;
  currency: string;
  lines: readonly RoundedLine[];
}

/** How entries are rounded. */
export interface LedgerRoundingOptions {
  /** Decimals of the ledger currency's minor unit (2: cents; 0: JPY). */
  minorUnit: number;
  /** The ledger account of each entry's rounding difference. */
  roundingAccount: string;
}

/** An account's figures over the entries rounded so far. */
export interface RoundedTotal {
  currency: string;
  account: string;
  /** The sum of its exact lines, 10^-EXACT_SCALE units. */
  exact: bigint;
  /** The sum of its rounded lines, minor units: `exact` rounded once (the rounding account: the differences posted). */
  rounded: bigint;
}

/** Rounds entries given in order (by date, then id), one at a time: see createLedgerRounder. */
export interface LedgerRounder {
  /** The entry rounded, or null when every line of it rounds to 0 (not written; counted in `dropped`). */
  round(entry: ExactEntry): RoundedEntry | null;
  /** Entries whose lines all rounded to 0 (their amounts are in their accounts' rounded totals all the same). */
  readonly dropped: number;
  /** Rounding lines posted so far. */
  readonly roundingLines: number;
  /** Each account's exact and rounded totals so far, the rounding account among them once it has a line. */
  totals(): RoundedTotal[];
}

/**
 * A rounder of entries to the minor unit (see the module's comment). The entries must come in the
 * order their lines are meant to be rounded in (by date, then id): the same entries in the same
 * order give the same lines.
 */
export function createLedgerRounder(options: LedgerRoundingOptions): LedgerRounder {
  if (!Number.isInteger(options.minorUnit) || options.minorUnit < 0 || options.minorUnit > EXACT_SCALE) throw new RangeError(`minor unit ${options.minorUnit}: an integer from 0 to ${EXACT_SCALE}`);
  const running = new Map<string, RoundedTotal>();
  let dropped = 0;
  let roundingLines = 0;
  const totalOf = (currency: string, account: string): RoundedTotal => {
    const key = `${currency}\u0000${account}`;
    let total = running.get(key);
    if (total === undefined) {
      total = { currency, account, exact: 0n, rounded: 0n };
      running.set(key, total);
    }
    return total;
  };

  return {
    round(entry) {
      const imbalance = entry.lines.reduce((sum, line) => sum + line.amount, 0n);
      if (imbalance !== 0n) {
        throw new DataError(`journal entry ${entry.id} does not balance (debits − credits = ${unitsText(imbalance, EXACT_SCALE)} ${entry.currency}): no rounding is posted for it`, {
          hint: 'run exledger check --select marts.journal_entries, then exledger build; the ledger imports are written from balanced entries only',
        });
      }
      const lines: RoundedLine[] = [];
      for (const line of entry.lines) {
        if (line.account === options.roundingAccount) {
          throw new DataError(`journal entry ${entry.id} posts to "${line.account}", the rounding account: its rounding differences could not be told apart`, {
            hint: 'name a ledger account of its own for the rounding differences (reports.ledger.roundingAccount)',
          });
        }
        const total = totalOf(entry.currency, line.account);
        const before = total.rounded;
        total.exact += line.amount;
        total.rounded = roundUnits(total.exact, EXACT_SCALE, options.minorUnit);
        const amount = total.rounded - before;
        if (amount !== 0n) lines.push({ account: line.account, amount, memo: line.memo, isRounding: false });
      }
      if (lines.length === 0) {
        dropped++;
        return null;
      }
      const difference = lines.reduce((sum, line) => sum + line.amount, 0n);
      if (difference !== 0n) {
        const total = totalOf(entry.currency, options.roundingAccount);
        total.rounded -= difference;
        lines.push({ account: options.roundingAccount, amount: -difference, memo: null, isRounding: true });
        roundingLines++;
      }
      return { id: entry.id, date: entry.date, currency: entry.currency, lines };
    },
    get dropped() {
      return dropped;
    },
    get roundingLines() {
      return roundingLines;
    },
    totals() {
      return [...running.values()].map((total) => ({ ...total }));
    },
  };
}

/**
 * A plain decimal (DuckDB's text of a DECIMAL: `-8243.420815692242`, `0.041577401700`) as a count
 * of 10^-scale units. Throws a DataError for anything else, or for more decimals than `scale`.
 */
export function decimalUnits(text: string, scale: number): bigint {
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (match === null) throw new DataError(`"${text}" is not a plain decimal number`);
  const [, sign, whole, fraction = ''] = match;
  const significant = fraction.replace(/0+$/, '');
  if (significant.length > scale) throw new DataError(`${text} has more than ${scale} decimals`);
  const units = BigInt(whole!) * 10n ** BigInt(scale) + BigInt(significant.padEnd(scale, '0') || '0');
  return sign === '-' ? -units : units;
}

/** A count of 10^-scale units as a plain decimal with exactly `scale` decimals (`-5n, 2` → `-0.05`; scale 0: no point). */
export function unitsText(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return negative ? `-${text}` : text;
}

/** A count of 10^-from units rounded to 10^-to units (to ≤ from), half away from zero. */
export function roundUnits(units: bigint, from: number, to: number): bigint {
  if (to > from) throw new RangeError(`cannot round ${from} decimals to ${to}`);
  const factor = 10n ** BigInt(from - to);
  const magnitude = units < 0n ? -units : units;
  const rounded = (magnitude + factor / 2n) / factor;
  // factor / 2n is exact: factor is 1 (nothing to round) or a multiple of 10.
  return units < 0n ? -rounded : rounded;
}
