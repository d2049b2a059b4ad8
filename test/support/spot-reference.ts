import fc from 'fast-check';

/**
 * A small, obviously correct reference for spot realized PnL (FIFO, LIFO, HIFO and moving
 * weighted-average cost), in exact rational arithmetic on BigInt, walking the fills one by one. The SQL models
 * (sql/intermediate/int_spot_*.sql) must agree with it to 1e-8 of the quote coin.
 *
 * Convention (README): a buy of q at price p with fee f (in the base coin) adds q - f units costing
 * q*p; a sell of q at p with fee f (in the quote coin) disposes of q units for proceeds q*p - f; a
 * fill without a price has q*p = its total amount. Realized PnL = proceeds - cost of the units
 * disposed. Units sold beyond the inventory are unmatched: they carry their share of the proceeds,
 * no cost, and the inventory stays at zero (later buys are not used for them). An opening position
 * is a lot placed before every fill. Order: time, then fill id as a number.
 */

/** A rational number n / d with d > 0, in lowest terms. */
export interface Rational {
  n: bigint;
  d: bigint;
}

function gcd(a: bigint, b: bigint): bigint {
  let x = a < 0n ? -a : a;
  let y = b < 0n ? -b : b;
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
}

export function rational(n: bigint, d = 1n): Rational {
  if (d === 0n) throw new Error('division by zero');
  const sign = d < 0n ? -1n : 1n;
  const g = gcd(n, d) || 1n;
  return { n: (sign * n) / g, d: (sign * d) / g };
}

export const ZERO = rational(0n);
export const add = (a: Rational, b: Rational): Rational => rational(a.n * b.d + b.n * a.d, a.d * b.d);
export const sub = (a: Rational, b: Rational): Rational => rational(a.n * b.d - b.n * a.d, a.d * b.d);
export const mul = (a: Rational, b: Rational): Rational => rational(a.n * b.n, a.d * b.d);
export const div = (a: Rational, b: Rational): Rational => rational(a.n * b.d, a.d * b.n);
export const cmp = (a: Rational, b: Rational): number => {
  const difference = a.n * b.d - b.n * a.d;
  return difference < 0n ? -1 : difference > 0n ? 1 : 0;
};
export const min = (a: Rational, b: Rational): Rational => (cmp(a, b) <= 0 ? a : b);
export const isZero = (a: Rational): boolean => a.n === 0n;

/** '-12.5' -> -25/2 (plain decimal strings only, as the exchange sends them). */
export function parseDecimal(text: string): Rational {
  const match = /^(-?)(\d+)(?:\.(\d*))?$/.exec(text);
  if (match === null) throw new Error(`not a decimal: ${text}`);
  const fraction = match[3] ?? '';
  const value = BigInt(match[2]! + fraction) * (match[1] === '-' ? -1n : 1n);
  return rational(value, 10n ** BigInt(fraction.length));
}

/** An exact decimal string of a rational rounded half away from zero to `scale` digits. */
export function toDecimal(value: Rational, scale: number): string {
  const factor = 10n ** BigInt(scale);
  const negative = value.n < 0n;
  const magnitude = negative ? -value.n : value.n;
  const units = (magnitude * factor * 2n + value.d) / (2n * value.d);
  const digits = units.toString().padStart(scale + 1, '0');
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return negative && units !== 0n ? `-${text}` : text;
}

/** |a - b| <= tolerance, for a decimal string from SQL and an exact rational. */
export function closeTo(sqlValue: string | null | undefined, exact: Rational, tolerance: Rational = rational(1n, 100_000_000n)): boolean {
  if (sqlValue === null || sqlValue === undefined) return false;
  const difference = sub(parseDecimal(sqlValue), exact);
  return cmp(difference.n < 0n ? rational(-difference.n, difference.d) : difference, tolerance) <= 0;
}

/** A spot fill as the exchange sends it (the fields the models read). */
export interface SpotFill {
  fillId: string;
  side: 'buy' | 'sell';
  /** '' when the exchange left it empty. */
  fillPrice: string;
  fillQuantity: string;
  fillTotalAmount: string;
  fees: string;
  cTime: string;
}

/** One account's fills of one symbol, with an optional declared opening position. */
export interface SpotLedger {
  account: string;
  symbol: string;
  baseCoin: string;
  quoteCoin: string;
  fills: SpotFill[];
  opening?: { quantity: string; cost: string };
}

/** What one sell realized. */
export interface SellResult {
  fillId: string;
  quantity: Rational;
  /** Units matched to inventory, their proceeds and their cost. */
  matchedQuantity: Rational;
  matchedProceeds: Rational;
  cost: Rational;
  unmatchedQuantity: Rational;
  unmatchedProceeds: Rational;
  /** Lot methods only: the lots it consumed, in the order taken ('opening' for the opening lot). */
  lots: { lot: string; quantity: Rational; cost: Rational; proceeds: Rational }[];
}

/** The whole ledger under one cost method. */
export interface LedgerResult {
  sells: SellResult[];
  /** Inventory after the last fill, and its cost. */
  openQuantity: Rational;
  openCost: Rational;
}

/** Fills in cost-basis order: time, then fill id as a number. */
export function orderedFills(fills: readonly SpotFill[]): SpotFill[] {
  return [...fills].sort((a, b) => Number(a.cTime) - Number(b.cTime) || (BigInt(a.fillId) < BigInt(b.fillId) ? -1 : BigInt(a.fillId) > BigInt(b.fillId) ? 1 : 0));
}

/** q * p, or the total amount when the price is empty. */
export function notional(fill: SpotFill): Rational {
  return fill.fillPrice === '' ? parseDecimal(fill.fillTotalAmount) : mul(parseDecimal(fill.fillQuantity), parseDecimal(fill.fillPrice));
}

/** FIFO: a queue of lots; a sell takes from the oldest, and what the queue lacks is unmatched. */
export function referenceFifo(ledger: SpotLedger): LedgerResult {
  return referenceLots(ledger, 'fifo');
}

/**
 * A lot method: a sell takes from the oldest lot still holding units (fifo), the latest (lifo), or
 * the one of highest unit cost, the earliest of equal ones (hifo); what the lots lack is unmatched.
 */
export function referenceLots(ledger: SpotLedger, method: 'fifo' | 'lifo' | 'hifo'): LedgerResult {
  const lots: { lot: string; units: Rational; cost: Rational; left: Rational }[] = [];
  if (ledger.opening !== undefined) {
    const units = parseDecimal(ledger.opening.quantity);
    lots.push({ lot: 'opening', units, cost: parseDecimal(ledger.opening.cost), left: units });
  }
  const next = () => {
    const held = lots.filter((lot) => !isZero(lot.left));
    if (method === 'fifo') return held[0];
    if (method === 'lifo') return held.at(-1);
    // The first of the highest unit cost: a later one replaces it only when strictly higher. Unit
    // costs compare the costs the models keep (to 1e-12), so two lots whose exact costs differ by
    // less than that are ordered as the models order them.
    const unitCost = (lot: (typeof held)[number]) => div(parseDecimal(toDecimal(lot.cost, 12)), lot.units);
    return held.reduce<(typeof held)[number] | undefined>((best, lot) => (best === undefined || cmp(unitCost(lot), unitCost(best)) > 0 ? lot : best), undefined);
  };
  const sells: SellResult[] = [];
  for (const fill of orderedFills(ledger.fills)) {
    const quantity = parseDecimal(fill.fillQuantity);
    if (fill.side === 'buy') {
      const units = sub(quantity, parseDecimal(fill.fees));
      if (cmp(units, ZERO) > 0) lots.push({ lot: fill.fillId, units, cost: notional(fill), left: units });
      continue;
    }
    const proceeds = sub(notional(fill), parseDecimal(fill.fees));
    const result: SellResult = { fillId: fill.fillId, quantity, matchedQuantity: ZERO, matchedProceeds: ZERO, cost: ZERO, unmatchedQuantity: ZERO, unmatchedProceeds: ZERO, lots: [] };
    let wanted = quantity;
    for (let lot = next(); lot !== undefined && !isZero(wanted); lot = next()) {
      const taken = min(wanted, lot.left);
      const cost = mul(lot.cost, div(taken, lot.units));
      const share = mul(proceeds, div(taken, quantity));
      result.lots.push({ lot: lot.lot, quantity: taken, cost, proceeds: share });
      result.matchedQuantity = add(result.matchedQuantity, taken);
      result.matchedProceeds = add(result.matchedProceeds, share);
      result.cost = add(result.cost, cost);
      lot.left = sub(lot.left, taken);
      wanted = sub(wanted, taken);
    }
    result.unmatchedQuantity = wanted;
    result.unmatchedProceeds = sub(proceeds, result.matchedProceeds);
    sells.push(result);
  }
  let openQuantity = ZERO;
  let openCost = ZERO;
  for (const lot of lots) {
    openQuantity = add(openQuantity, lot.left);
    if (!isZero(lot.units)) openCost = add(openCost, mul(lot.cost, div(lot.left, lot.units)));
  }
  return { sells, openQuantity, openCost };
}

/** Moving weighted average: one pool; a sell takes its share of the pool's cost. */
export function referenceAverage(ledger: SpotLedger): LedgerResult {
  let units = ledger.opening === undefined ? ZERO : parseDecimal(ledger.opening.quantity);
  let cost = ledger.opening === undefined ? ZERO : parseDecimal(ledger.opening.cost);
  const sells: SellResult[] = [];
  for (const fill of orderedFills(ledger.fills)) {
    const quantity = parseDecimal(fill.fillQuantity);
    if (fill.side === 'buy') {
      units = add(units, sub(quantity, parseDecimal(fill.fees)));
      cost = add(cost, notional(fill));
      continue;
    }
    const proceeds = sub(notional(fill), parseDecimal(fill.fees));
    const matched = min(quantity, units);
    const disposed = isZero(units) ? ZERO : mul(cost, div(matched, units));
    const matchedProceeds = mul(proceeds, div(matched, quantity));
    sells.push({
      fillId: fill.fillId,
      quantity,
      matchedQuantity: matched,
      matchedProceeds,
      cost: disposed,
      unmatchedQuantity: sub(quantity, matched),
      unmatchedProceeds: sub(proceeds, matchedProceeds),
      lots: [],
    });
    units = sub(units, matched);
    cost = sub(cost, disposed);
  }
  return { sells, openQuantity: units, openCost: cost };
}

/** A decimal string of `units` * 10^-scale, trailing zeros kept off. */
function decimalText(units: bigint, scale: number): string {
  const text = toDecimal(rational(units, 10n ** BigInt(scale)), scale);
  return scale === 0 ? text : text.replace(/\.?0+$/, '') || '0';
}

/**
 * Quantities in units of 1e-18: mostly short decimals like an exchange's (a few decimals, up to a
 * few thousand units), sometimes every one of 18 decimals, sometimes up to 1e12 units.
 */
const quantityUnits = fc.oneof(
  { weight: 6, arbitrary: fc.bigInt(1n, 5_000_000n).map((n) => n * 10n ** 12n) },
  { weight: 2, arbitrary: fc.bigInt(1n, 10n ** 19n) },
  { weight: 1, arbitrary: fc.bigInt(10n ** 27n, 10n ** 30n) },
  { weight: 1, arbitrary: fc.constantFrom(1n, 10n ** 30n) },
);

/** Prices in units of 1e-18: ordinary two-decimal prices, 18-decimal ones, and up to 1e9. */
const priceUnits = fc.oneof(
  { weight: 6, arbitrary: fc.bigInt(1n, 10_000_000n).map((n) => n * 10n ** 16n) },
  { weight: 2, arbitrary: fc.bigInt(1n, 10n ** 18n) },
  { weight: 1, arbitrary: fc.bigInt(10n ** 24n, 10n ** 27n) },
  { weight: 1, arbitrary: fc.constant(10n ** 27n) },
);

interface DrawnFill {
  side: 'buy' | 'sell';
  quantity: bigint;
  price: bigint;
  /** Fee rate in units of 1e-6 (0 to 1%). */
  feeRate: bigint;
  emptyPrice: boolean;
  /** Milliseconds after the previous fill (0: the same millisecond). */
  gapMs: number;
  idGap: bigint;
}

const drawnFill: fc.Arbitrary<DrawnFill> = fc.record({
  side: fc.constantFrom('buy', 'sell') as fc.Arbitrary<'buy' | 'sell'>,
  quantity: quantityUnits,
  price: priceUnits,
  feeRate: fc.oneof(fc.constant(0n), fc.bigInt(1n, 10_000n)),
  emptyPrice: fc.integer({ min: 0, max: 9 }).map((draw) => draw < 2),
  gapMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 3 * 86_400_000 })),
  idGap: fc.bigInt(1n, 10n ** 12n),
});

/**
 * A random ledger of one symbol: 1 to 24 fills (sells often beyond the inventory), fees on both
 * sides, 18-decimal quantities, prices up to 1e9 and quantities up to 1e12, empty prices, fills
 * in the same millisecond with ids of different lengths, and sometimes an opening position.
 * `idSuffix` (0-99) ends every fill id: ledgers of one account with different suffixes never share
 * an id, as the exchange's fill ids are unique per account.
 */
export function spotLedgerArbitrary(account: string, symbol: string, idSuffix = 0): fc.Arbitrary<SpotLedger> {
  return fc
    .record({
      fills: fc.array(drawnFill, { minLength: 1, maxLength: 24 }),
      startMs: fc.integer({ min: Date.UTC(2025, 0, 1), max: Date.UTC(2025, 11, 1) }),
      firstId: fc.bigInt(1n, 10n ** 15n),
      opening: fc.option(fc.record({ quantity: quantityUnits, costPerUnit: priceUnits }), { freq: 3 }),
    })
    .map(({ fills, startMs, firstId, opening }) => {
      let at = startMs;
      let id = firstId;
      const ledgerFills = fills.map((drawn): SpotFill => {
        at += drawn.gapMs;
        id += drawn.idGap;
        // q*p in units of 1e-36; the exchange's total is written with 16 decimals (rounded).
        const total36 = drawn.quantity * drawn.price;
        const total16 = (total36 + 10n ** 19n / 2n) / 10n ** 20n;
        const fee =
          drawn.side === 'buy'
            ? decimalText((drawn.quantity * drawn.feeRate) / 1_000_000n, 18) // base coin, below the quantity
            : decimalText((total36 * drawn.feeRate) / 1_000_000n / 10n ** 18n, 18); // quote coin
        return {
          fillId: (id * 100n + BigInt(idSuffix)).toString(),
          side: drawn.side,
          fillPrice: drawn.emptyPrice ? '' : decimalText(drawn.price, 18),
          fillQuantity: decimalText(drawn.quantity, 18),
          fillTotalAmount: decimalText(total16, 16),
          fees: fee,
          cTime: String(at),
        };
      });
      const ledger: SpotLedger = { account, symbol, baseCoin: 'BASE', quoteCoin: 'QUOTE', fills: ledgerFills };
      if (opening !== null) {
        const costUnits = (opening.quantity * opening.costPerUnit) / 10n ** 24n; // money in units of 1e-12
        ledger.opening = { quantity: decimalText(opening.quantity, 18), cost: decimalText(costUnits, 12) };
      }
      return ledger;
    });
}

/**
 * HMRC share pooling (uk), per ledger totals: per calendar day (in `timeZone`) all buys are one
 * acquisition and all sells one disposal; a disposal is matched with the day's acquisition, then
 * with acquisitions of the next 30 days (earliest first, each after its own day's disposal), then
 * with the section 104 pool at average cost (the opening position is the pool at the start); the
 * rest is unmatched. Each day's matched units are the first of its sells in fill order, so the
 * unmatched proceeds are the last sells' share. Returns the sells' totals (no lots) and the pool.
 */
export function referenceUk(ledger: SpotLedger, timeZone: string): LedgerResult {
  const format = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
  const dayOf = (ms: string) => Date.parse(`${format.format(new Date(Number(ms)))}T00:00:00Z`) / 86_400_000;
  interface Day {
    day: number;
    units: Rational;
    cost: Rational;
    sells: { fill: SpotFill; quantity: Rational; proceeds: Rational }[];
    disposed: Rational;
    /** Units left for the 30-day rule and the pool after the same-day match. */
    later: Rational;
  }
  const days: Day[] = [];
  for (const fill of orderedFills(ledger.fills)) {
    const day = dayOf(fill.cTime);
    if (days.at(-1)?.day !== day) days.push({ day, units: ZERO, cost: ZERO, sells: [], disposed: ZERO, later: ZERO });
    const today = days.at(-1)!;
    const quantity = parseDecimal(fill.fillQuantity);
    if (fill.side === 'buy') {
      const units = sub(quantity, parseDecimal(fill.fees));
      if (cmp(units, ZERO) <= 0) continue;
      today.units = add(today.units, units);
      today.cost = add(today.cost, notional(fill));
    } else {
      today.sells.push({ fill, quantity, proceeds: sub(notional(fill), parseDecimal(fill.fees)) });
      today.disposed = add(today.disposed, quantity);
    }
  }
  for (const day of days) day.later = sub(day.units, min(day.units, day.disposed));
  const costOf = (day: Day, units: Rational) => mul(day.cost, div(units, day.units));
  let poolUnits = ledger.opening === undefined ? ZERO : parseDecimal(ledger.opening.quantity);
  let poolCost = ledger.opening === undefined ? ZERO : parseDecimal(ledger.opening.cost);
  const sells: SellResult[] = [];
  days.forEach((today, index) => {
    if (!isZero(today.later)) {
      poolUnits = add(poolUnits, today.later);
      poolCost = add(poolCost, costOf(today, today.later));
      today.later = ZERO;
    }
    if (isZero(today.disposed)) return;
    const sameDay = min(today.units, today.disposed);
    let cost = isZero(sameDay) ? ZERO : costOf(today, sameDay);
    let wanted = sub(today.disposed, sameDay);
    for (let next = index + 1; !isZero(wanted) && next < days.length && days[next]!.day <= today.day + 30; next += 1) {
      const taken = min(wanted, days[next]!.later);
      if (isZero(taken)) continue;
      cost = add(cost, costOf(days[next]!, taken));
      days[next]!.later = sub(days[next]!.later, taken);
      wanted = sub(wanted, taken);
    }
    const fromPool = min(wanted, poolUnits);
    if (!isZero(fromPool)) {
      const poolShare = mul(poolCost, div(fromPool, poolUnits));
      cost = add(cost, poolShare);
      poolUnits = sub(poolUnits, fromPool);
      poolCost = sub(poolCost, poolShare);
      wanted = sub(wanted, fromPool);
    }
    // The day's matched units are its first sells' (fill order); the day's cost is on its first sell.
    let matchedLeft = sub(today.disposed, wanted);
    today.sells.forEach((sell, at) => {
      const matched = min(sell.quantity, matchedLeft);
      matchedLeft = sub(matchedLeft, matched);
      const matchedProceeds = mul(sell.proceeds, div(matched, sell.quantity));
      sells.push({
        fillId: sell.fill.fillId,
        quantity: sell.quantity,
        matchedQuantity: matched,
        matchedProceeds,
        cost: at === 0 ? cost : ZERO,
        unmatchedQuantity: sub(sell.quantity, matched),
        unmatchedProceeds: sub(sell.proceeds, matchedProceeds),
        lots: [],
      });
    });
  });
  // Units the 30-day rule took from later days are out of the pool; what the walk left is the pool.
  return { sells, openQuantity: poolUnits, openCost: poolCost };
}
