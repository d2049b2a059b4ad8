import { DataError } from '../errors.ts';

/**
 * DuckDB's error when a sum passes what its widest exact number holds: a DECIMAL(38, s) or
 * HUGEINT sum adds in 128-bit integers, and past ±1.7e38 units (1.7e20 coins at 18 decimals,
 * 1.7e26 at 12) it fails with "Overflow in HUGEINT addition" rather than round.
 */
const OVERFLOW = /Overflow in HUGEINT (?:addition|subtraction)|Overflow in (?:SUM|addition) of DECIMAL/;

/**
 * The error to tell for a sum DuckDB could not compute exactly (`what`: the figure or workbook it
 * was for), or undefined when `error` is another one. A report shows no figure it cannot compute
 * exactly, and no real account holds such an amount: the rows summed are what to look at.
 */
export function beyondExactSum(error: unknown, what: string): DataError | undefined {
  // One already told (a Summary figure names itself) is not told again by its workbook.
  if (error instanceof DataError) return undefined;
  const message = error instanceof Error ? error.message : String(error);
  if (!OVERFLOW.test(message)) return undefined;
  return new DataError(`${what}: its rows sum past what DuckDB adds exactly (38 digits: 1.7e26 coins at 12 decimals, 1.7e20 at 18), so it is not shown rounded (${message.replace(/^Out of Range Error: /, '')})`, {
    hint: 'look at the rows it sums (exledger query): no real account holds such an amount, so a price or a quantity in the raw data is wrong',
    cause: error,
  });
}
