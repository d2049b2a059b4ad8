import type { SheetSpec } from '../src/export/report-definition.ts';

/** Where a reporting-currency figure's rows without a price are listed. */
export const UNPRICED = 'listed on the sheet "Needs a price"; add them to the prices file';

/** The "Needs a price" sheet of a report: the coins and days its marts lack a price for (marts.needs_price). */
export function needsPriceSheet(marts: readonly string[]): SheetSpec {
  return {
    name: 'Needs a price',
    description: 'Coins and days this report\'s amounts have no price for in the reporting currency: their reporting-currency values are unknown until the prices file gives one',
    mart: 'marts.needs_price',
    period: { column: 'needed_date', grain: 'day' },
    orderBy: ['coin', 'needed_date', 'account', 'mart'],
    only: { column: 'mart', values: marts },
    emptyText: 'Every row has a price.',
    valuation: true,
    columns: [
      { column: 'account', header: 'Account', format: 'text' },
      { column: 'coin', header: 'Coin', format: 'text' },
      { column: 'needed_date', header: 'Day', format: 'date' },
      { column: 'reporting_currency', header: 'Reporting currency', format: 'text' },
      { column: 'mart', header: 'Rows of', format: 'text', width: 32 },
      { column: 'row_count', header: 'Rows', format: 'integer' },
      { column: 'reference', header: 'Reference (exledger explain)', format: 'id', width: 30 },
    ],
  };
}
