/**
 * Decimals of a currency's minor unit, after ISO 4217's list of currency codes (the "minor unit"
 * column): the currencies without a minor unit or with three or four decimals are listed, every
 * other code (USD, EUR, GBP, and codes ISO does not list, such as USDT) has two. Used when
 * reports.ledger.minorUnit is not set.
 */
const MINOR_UNITS: Readonly<Record<string, number>> = {
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
  CLF: 4,
  UYW: 4,
};

/** The decimals of `currency`'s minor unit (ISO 4217; 2 for a code it does not list). */
export function minorUnitOf(currency: string): number {
  return MINOR_UNITS[currency] ?? 2;
}
