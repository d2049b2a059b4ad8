/**
 * Golden cases for valuing crypto in the reporting (functional) currency: the cost of
 * crypto-to-crypto trades, fees paid in a coin, and income valued at receipt, transcribed from
 * published worked examples (see /work/shared/ACCOUNTING.md, "Valuing in the reporting (functional)
 * currency"). This file is research data: nothing in it was produced by exledger, and it imports
 * nothing from the project.
 *
 * Conventions a harness must follow:
 * - Every amount is a decimal string exactly as the source gives it, or arithmetic on source
 *   numbers (the arithmetic is written next to each expectation). Where a source gives a total
 *   ("1,000 token B for £800") the trade's `price` is that total divided by the quantity.
 * - Events are in time order; events on one day keep the order the source gives them.
 * - A trade's `quantity` is the amount traded. A fee is a separate outflow of `fee.coin`: it is
 *   never netted out of `quantity` (RP2, rotki and HMRC CRYPTO22280 all count it this way: a buy
 *   of 1 B1 with a 0.1 B1 fee leaves 0.9 B1).
 * - A trade against the case's currency (or another fiat) is valued at the fiat amount on both
 *   sides. `tradeValue` only matters for crypto-to-crypto trades:
 *     'received' (HMRC CRYPTO22257): the disposal of the coin given has proceeds equal to the value
 *       of the coin received, and the coin received costs the value of the coin given (the
 *       example states the two values separately; see `legValues`).
 *     'given' (rotki, rotkehlchen/accounting/pot.py get_prices_for_swap): both legs are valued at
 *       the price of the asset spent (rotki falls back to the received asset's price only when the
 *       spent asset has none).
 * - `legValues` on a trade, when present, are the values in the case currency of the base leg and
 *   of the quote leg as the source states them; they take precedence over `prices`.
 * - `feesInCost`: true, a buy's fee value is added to the lot's cost and a sale's fee value is
 *   taken from its proceeds; false, a fee in a coin is a disposal of that coin (and a fiat fee is a
 *   plain expense). `feeCoinDisposed` says whether, with `feesInCost` true, the fee coins are ALSO
 *   a disposal at their value (HMRC CRYPTO22280, RP2, Koinly: yes; rotki
 *   include_fees_in_cost_basis=true: no, the fee coins just leave the holding with their cost).
 * - A fee row that a source books as a net expense (rotki with include_fees_in_cost_basis=false:
 *   minus the fee's value as an expense, plus value minus cost on the coins, net minus their cost)
 *   is written as a disposal with proceeds '0'. Compare gains (proceeds minus cost) when a source
 *   and an engine present the same disposal gross or net of a fee; each such row says which form.
 * - costMethod 'uk': same day, then the next 30 days (earliest acquisition first), then the section
 *   104 pool (CRYPTO22200-22250). All disposals of one coin on one day are one disposal and all
 *   acquisitions of it on one day one acquisition (TCGA92/S105(1)), so 'uk' expectations are per
 *   coin per day.
 * - Rounding: when `roundTo` is set the expected figures are rounded to that many decimals by
 *   `rounding` (default 'half-away-from-zero'). 'hmrc-cost-up' is what the HMRC examples show: a
 *   disposal's allowable cost is rounded UP to the pound, the gain is proceeds less that rounded
 *   cost, and a pool (or an acquisition's unmatched remainder) keeps its cost less the rounded
 *   costs taken from it (CRYPTO22252: £937.50 -> £938, gain £462, the other 100 tokens £62 =
 *   £1,000 - £938). `exact` holds the unrounded arithmetic, as a decimal or as a fraction 'p/q'
 *   when it does not terminate.
 * - Dates: HMRC writes "20XX" and "holds ... in a section 104 pool"; Koinly gives no dates. Those
 *   cases use 2024 (HMRC) or 2021 (Koinly) and an opening purchase on a placeholder date, said in
 *   `notes`. rotki timestamps are converted to UTC dates.
 */

/** One published worked example, as events of one holder, valued in the example's currency. */
export interface GoldenCase {
  name: string; // short id, e.g. 'hmrc-crypto22257-exchange'
  source: string; // exact page/file (URL or repo path + commit) and section
  quote: string; // the sentences/figures of the source the case encodes (verbatim, short)
  currency: string; // 'GBP' | 'USD' | 'EUR'
  costMethod: 'fifo' | 'lifo' | 'hifo' | 'average' | 'uk'; // the method the source applies (uk: same day, 30 days, s104 pool)
  tradeValue: 'received' | 'given'; // which side sets a crypto-to-crypto trade's value in this source (HMRC: received token's value; rotki: asset spent)
  feesInCost: boolean; // true: a buy's fee added to the lot's cost and a sale's fee taken from proceeds (rotki include_fees_in_cost_basis, HMRC allowable costs); false: a fee in a coin is a disposal of that coin
  /** With feesInCost true: whether the fee coins are also a disposal at their value (see the file comment). */
  feeCoinDisposed?: boolean;
  events: GoldenEvent[];
  prices: GoldenPrice[];
  expected: GoldenExpectation[];
  /** The expected figures are rounded to this many decimals, by `rounding`. */
  roundTo?: number;
  /** How the source rounds; default 'half-away-from-zero'. */
  rounding?: 'half-away-from-zero' | 'hmrc-cost-up';
  /** Caveats: placeholders, parts of the source that could not be read, where sources disagree. */
  notes?: string;
}
export type GoldenEvent =
  // A spot trade on a market base/quote: side buy = base acquired, quote given up. quantity in base, price in quote per base, fee amount and coin.
  | {
      kind: 'trade';
      date: string /* YYYY-MM-DD */;
      base: string;
      quote: string;
      side: 'buy' | 'sell';
      quantity: string;
      price: string;
      fee?: { amount: string; coin: string };
      /** Values in the case currency of the base leg and the quote leg, as the source states them. */
      legValues?: { base: string; quote: string };
    }
  // Income received in a coin (staking, commission, rebate, funding received), valued at receipt.
  | { kind: 'income'; date: string; coin: string; quantity: string }
  // A fee paid alone in a coin (not part of a trade).
  | { kind: 'fee'; date: string; coin: string; quantity: string };
/** The market value of one unit of a coin in the case's currency on a day, as the source states it (for the fiat currency itself, omit). */
export interface GoldenPrice {
  date: string;
  coin: string;
  price: string;
}
export interface GoldenExpectation {
  // A disposal's figures in the case's currency, the holding left after all events, or income booked at receipt.
  what: 'disposal' | 'holding' | 'income';
  date: string;
  coin: string;
  quantity: string; // units disposed, held or received
  proceeds?: string; // disposal: proceeds (net of fees where the source nets them)
  cost?: string; // disposal: allowable cost / cost basis; holding: pool cost / remaining cost
  gain?: string; // disposal: gain (negative: loss)
  value?: string; // income: value at receipt (the lot's cost)
  /** Unrounded arithmetic when the expected figures are rounded: a decimal, or 'p/q'. */
  exact?: { proceeds?: string; cost?: string; gain?: string; value?: string };
  note?: string;
}

export const GOLDEN_CASES: GoldenCase[] = [
  // ---------------------------------------------------------------------------------------------
  {
    name: 'hmrc-crypto22252-same-day',
    source:
      'https://www.gov.uk/hmrc-internal-manuals/cryptoassets-manual/crypto22252 (HMRC Cryptoassets Manual, CRYPTO22252 "Capital Gains Tax: pooling examples: example 2 - application of the same day rule"; read in full)',
    quote:
      'Martyn holds 5,000 token B in a section 104 pool. He spent a total of £500 acquiring them ... On 23 June 20XX ... Morning – he disposes of 1,000 token B for £800. Afternoon – he acquires 1,600 token B for £1,000. Evening – he disposes of 500 token B for £600. ... Consideration | £800 + £600 | £1,400 | Less allowable costs | £1,000 x (1,500 / 1,600) | (£938) | Gain | £462 ... those100 token B and their associated cost of £62 (£1,000 x (100 / 1,600)) will go into the section 104 pool. The section 104 pool now contains 5,100 token B and total pooled costs of £562. [HMRC states figures in whole pounds: £937.50 is shown as £938 and £62.50 as £62.]',
    currency: 'GBP',
    costMethod: 'uk',
    tradeValue: 'received',
    feesInCost: true,
    feeCoinDisposed: true,
    roundTo: 0,
    rounding: 'hmrc-cost-up',
    notes:
      'The opening pool (5,000 for £500) is entered as one purchase on 2024-01-01, a placeholder; 20XX is taken as 2024. No fees and no crypto-to-crypto trade: tradeValue and fee flags are the HMRC ones and do not affect this case.',
    events: [
      { kind: 'trade', date: '2024-01-01', base: 'TOKENB', quote: 'GBP', side: 'buy', quantity: '5000', price: '0.1' }, // £500 / 5,000
      { kind: 'trade', date: '2024-06-23', base: 'TOKENB', quote: 'GBP', side: 'sell', quantity: '1000', price: '0.8' }, // morning, £800
      { kind: 'trade', date: '2024-06-23', base: 'TOKENB', quote: 'GBP', side: 'buy', quantity: '1600', price: '0.625' }, // afternoon, £1,000
      { kind: 'trade', date: '2024-06-23', base: 'TOKENB', quote: 'GBP', side: 'sell', quantity: '500', price: '1.2' }, // evening, £600
    ],
    prices: [],
    expected: [
      // One disposal of 1,500 (same day): proceeds 800 + 600 = 1,400; cost 1,000 x 1,500/1,600 = 937.50 -> 938 (HMRC);
      // gain 1,400 - 938 = 462 (exact 462.50).
      { what: 'disposal', date: '2024-06-23', coin: 'TOKENB', quantity: '1500', proceeds: '1400', cost: '938', gain: '462', exact: { cost: '937.5', gain: '462.5' } },
      // Pool: 5,000 + 100 = 5,100; cost 500 + (1,000 - 938) = 562 (HMRC); exact 500 + 1,000 x 100/1,600 = 562.50.
      { what: 'holding', date: '2024-06-23', coin: 'TOKENB', quantity: '5100', cost: '562', exact: { cost: '562.5' } },
    ],
  },
  // ---------------------------------------------------------------------------------------------
  {
    name: 'hmrc-crypto22253-30-day',
    source:
      'https://www.gov.uk/hmrc-internal-manuals/cryptoassets-manual/crypto22253 (HMRC Cryptoassets Manual, CRYPTO22253 "pooling examples: example 3 - application of the 30 day rule"; the stored copy ends in the last sentence, before the pool table)',
    quote:
      'Rachel holds 2,000 token C in a section 104 pool. She spent a total of £1,000 ... On 31 March 20XX Rachel disposes of 1,000 token C for £400. On 20 April 20XX Rachel disposes of 500 token C for £150 On 21 April 20XX Rachel acquires 700 token C for £175 On 28 April 20XX Rachel acquires 500 token C for £100 On 1 May 20XX Rachel acquires 500 token C for £150 ... 31 March 20XX Consideration | £400 | Less allowable costs – 30 day (21/04 – 700 token C) | (£175) | Less allowable costs – 30 day (28/04 – 300 token C) | £100 x (300 / 500) | (£60) | Gain | £165 | 20 April 20XX Consideration | £150 | Less allowable costs – 30 day (28/04 – 200 token C) | £100 x (200 / 500) | (£40) | Less allowable costs – 30 day (01/05 – 300 token C) | £150 x (300 / 500) | (£90) | Gain | £20 | Rachel is unable to match the remaining 200 token C to acquisitions within 30 days of the disposal on 20 April 20XX. Instead those 200 token C and their associated cost o[f ...]',
    currency: 'GBP',
    costMethod: 'uk',
    tradeValue: 'received',
    feesInCost: true,
    feeCoinDisposed: true,
    notes:
      'Opening pool entered as a purchase on 2024-01-01 (placeholder); 20XX = 2024. 1 May is day 31 after 31 March, so it cannot match the 31 March disposal. The holding is arithmetic: the stored page is cut off before HMRC\'s pool table. All figures are whole pounds, no rounding arises.',
    events: [
      { kind: 'trade', date: '2024-01-01', base: 'TOKENC', quote: 'GBP', side: 'buy', quantity: '2000', price: '0.5' }, // £1,000
      { kind: 'trade', date: '2024-03-31', base: 'TOKENC', quote: 'GBP', side: 'sell', quantity: '1000', price: '0.4' }, // £400
      { kind: 'trade', date: '2024-04-20', base: 'TOKENC', quote: 'GBP', side: 'sell', quantity: '500', price: '0.3' }, // £150
      { kind: 'trade', date: '2024-04-21', base: 'TOKENC', quote: 'GBP', side: 'buy', quantity: '700', price: '0.25' }, // £175
      { kind: 'trade', date: '2024-04-28', base: 'TOKENC', quote: 'GBP', side: 'buy', quantity: '500', price: '0.2' }, // £100
      { kind: 'trade', date: '2024-05-01', base: 'TOKENC', quote: 'GBP', side: 'buy', quantity: '500', price: '0.3' }, // £150
    ],
    prices: [],
    expected: [
      // 30 day: 700 of 21/04 (175) + 300 of 28/04 (100 x 300/500 = 60) = 235; gain 400 - 235 = 165.
      { what: 'disposal', date: '2024-03-31', coin: 'TOKENC', quantity: '1000', proceeds: '400', cost: '235', gain: '165' },
      // 30 day: 200 of 28/04 (100 x 200/500 = 40) + 300 of 01/05 (150 x 300/500 = 90) = 130; gain 150 - 130 = 20.
      { what: 'disposal', date: '2024-04-20', coin: 'TOKENC', quantity: '500', proceeds: '150', cost: '130', gain: '20' },
      // Pool untouched by the disposals, plus the unmatched 200 of 01/05 at 150 x 200/500 = 60:
      // 2,000 + 200 = 2,200 tokens, 1,000 + 60 = 1,060.
      { what: 'holding', date: '2024-05-01', coin: 'TOKENC', quantity: '2200', cost: '1060' },
    ],
  },
  // ---------------------------------------------------------------------------------------------
  {
    name: 'hmrc-crypto22256-same-day-30-day-pool',
    source:
      'https://www.gov.uk/hmrc-internal-manuals/cryptoassets-manual/crypto22256 (HMRC Cryptoassets Manual, CRYPTO22256 "pooling examples: example 6 - interaction of same day rule, 30 day rule and section 104 pool"; the stored copy ends inside the 5 August table)',
    quote:
      'Gulferaz holds 100,000 token F in a section 104 pool. He spent a total of £300,000 ... 31 July 20XX – acquisition of 10,000 token F for £45,000. 31 July 20XX – disposal of 30,000 token F for £150,000 5 August 20XX – disposal of 20,000 token F for £100,000 6 August 20XX – acquisition of 50,000 token F for £225,000 7 August 20XX – disposal of 100,000 token F for £150,000 ... The remaining 10,000 token F acquired on 6 August 20XX go into the section 104 pool as normal. ... 31 July 20XX Consideration | £150,000 | Less allowable costs – same day (10,000 token F) | £45,000 | (£45,000) | Less allowable costs – 30 day (06/08 - 20,000 token F) | £225,000 x (20,000 / 50,000) | (£90,000) | Gain | £15,000 | ... 5 August 20XX Consideration | £100,000 | Less allowable costs – 30 day (06/08 - 20,000 token F) | £225,000 x (20,000 / 50,000) [page cut here]',
    currency: 'GBP',
    costMethod: 'uk',
    tradeValue: 'received',
    feesInCost: true,
    feeCoinDisposed: true,
    roundTo: 0,
    rounding: 'hmrc-cost-up',
    notes:
      'Opening pool entered as a purchase on 2024-01-01 (placeholder); 20XX = 2024. The stored page stops inside the 5 August table, so the 5 August result and everything for 7 August are arithmetic. For 7 August the HMRC figures £313,637 (allowable cost) and (£163,637) (loss) are as transcribed by two independent third-party test suites found through the code search (one TypeScript suite citing CRYPTO22256 with "£313,637 ... loss of £163,637", one Python fixture with "HMRC net ≈ −£138,637"); repositories not identified by the index, HMRC page itself not read that far. Arithmetic disagrees with half-away-from-zero rounding there: 345,000 x 100,000/110,000 = 313,636.36, which rounds to 313,636 (loss 163,636); the source figure 313,637 is kept, hence rounding "hmrc-cost-up". The pool after 7 August (31,363) is arithmetic on that rule.',
    events: [
      { kind: 'trade', date: '2024-01-01', base: 'TOKENF', quote: 'GBP', side: 'buy', quantity: '100000', price: '3' }, // £300,000
      { kind: 'trade', date: '2024-07-31', base: 'TOKENF', quote: 'GBP', side: 'buy', quantity: '10000', price: '4.5' }, // £45,000
      { kind: 'trade', date: '2024-07-31', base: 'TOKENF', quote: 'GBP', side: 'sell', quantity: '30000', price: '5' }, // £150,000
      { kind: 'trade', date: '2024-08-05', base: 'TOKENF', quote: 'GBP', side: 'sell', quantity: '20000', price: '5' }, // £100,000
      { kind: 'trade', date: '2024-08-06', base: 'TOKENF', quote: 'GBP', side: 'buy', quantity: '50000', price: '4.5' }, // £225,000
      { kind: 'trade', date: '2024-08-07', base: 'TOKENF', quote: 'GBP', side: 'sell', quantity: '100000', price: '1.5' }, // £150,000
    ],
    prices: [],
    expected: [
      // Same day 10,000 (45,000) + 30 day 20,000 of 06/08 (225,000 x 20,000/50,000 = 90,000) = 135,000; gain 150,000 - 135,000 = 15,000.
      { what: 'disposal', date: '2024-07-31', coin: 'TOKENF', quantity: '30000', proceeds: '150000', cost: '135000', gain: '15000' },
      // 30 day 20,000 of 06/08: 90,000; gain 100,000 - 90,000 = 10,000.
      { what: 'disposal', date: '2024-08-05', coin: 'TOKENF', quantity: '20000', proceeds: '100000', cost: '90000', gain: '10000' },
      // Pool before: 100,000 + 10,000 = 110,000 tokens, 300,000 + 225,000 x 10,000/50,000 = 345,000.
      // Cost 345,000 x 100,000/110,000 = 313,636.36 -> 313,637 (HMRC, cost rounded up); loss 150,000 - 313,637 = -163,637.
      {
        what: 'disposal', date: '2024-08-07', coin: 'TOKENF', quantity: '100000', proceeds: '150000', cost: '313637', gain: '-163637',
        exact: { cost: '3450000/11', gain: '-1800000/11' },
        note: 'Source figure via third-party transcription (see notes); half-away-from-zero would give 313636 / -163636.',
      },
      // Pool left: 10,000 tokens, 345,000 - 313,637 = 31,363 (exact 345,000/11 = 31,363.64).
      { what: 'holding', date: '2024-08-07', coin: 'TOKENF', quantity: '10000', cost: '31363', exact: { cost: '345000/11' } },
    ],
  },
  // ---------------------------------------------------------------------------------------------
  {
    name: 'hmrc-crypto22257-exchange',
    source:
      'https://www.gov.uk/hmrc-internal-manuals/cryptoassets-manual/crypto22257 (HMRC Cryptoassets Manual, CRYPTO22257 "pooling examples: example 7 - disposal of tokens to acquire different tokens (\'crypto-to-crypto\' exchange)"; the stored copy ends after the first paragraph of the explanation); leg values cross-checked with BittyTax/BittyTax@287c4b4394f6bd2e685d371aa2516ccaea90d51b data/HMRC-Examples/CRYPTO22257.xlsx',
    quote:
      'Elina holds 100,000 token G in a section 104 pool. She spent a total of £300,000 ... 31 August 20XX – acquisition of 10,000 token H (with a value of £3,200) for 1,000 token G (with a value of £3,200) 31 August 20XX – disposal of 5,000 token H (with a value of £1,700) for 600 token G (with a value of £1,920) 31 August 20XX – acquisition of 5,000 token H (with a value of £1,650) for 550 token G (with a value of £1,760) 4 September 20XX – disposal of 2,000 token H (with a value of £560) for 180 token G (with a value of £558) 16 September 20XX – acquisition of 4,000 token H (with a value of £1,080) for 400 token G (with a value of £1,080) 27 October 20XX – disposal of 12,000 token H (with a value of £2,400) for 900 token G (with a value of £2,430) ... These acquisitions are treated as a single acquisition of 15,000 token H on that date. That single acquisition is then matched as far as possible with the disposal of 5,000 token H on the same date. ... These two disposals are treated as a single disposal of 1,550 token G on that date. That single disposal is matched as far as possible with the acquisition of 600 token G on the same date. The disposal is then matched to the acquisition of 180 token G on 4 Septe[mber ... page cut here]',
    currency: 'GBP',
    costMethod: 'uk',
    tradeValue: 'received',
    feesInCost: true,
    feeCoinDisposed: true,
    roundTo: 2,
    rounding: 'half-away-from-zero',
    notes:
      'HMRC\'s result tables for this example are NOT in the stored copy (it stops mid-explanation), so every expectation here is arithmetic on the stated values under the rules the page and CRYPTO22250-22256 state: proceeds of the token given = value of the token received, cost of the token received = value of the token given (BittyTax\'s transcription, which its wiki says passes this example, records the legs the same way: "Buy 600 TOKENG value 1700 / Sell 5000 TOKENH value 1920"). HMRC rounds to pounds but its figures here could not be read, so the pence rounding is this file\'s; `exact` has the fractions. Cross-check: the net of all disposals is exactly -£972, the figure a third-party Python fixture attributes to HMRC. The 4 September disposal of H is matched (30 day rule) to 2,000 of the 16 September acquisition, 12 days later; the page\'s text for that step is cut off, the rule is CRYPTO22253\'s. Opening G pool entered on 2024-01-01 (placeholder); 20XX = 2024. Per-day prices are not given because token H has three different values on 31 August; use legValues.',
    events: [
      { kind: 'trade', date: '2024-01-01', base: 'TOKENG', quote: 'GBP', side: 'buy', quantity: '100000', price: '3' }, // £300,000
      // 10,000 H for 1,000 G: H £3,200, G £3,200.
      { kind: 'trade', date: '2024-08-31', base: 'TOKENH', quote: 'TOKENG', side: 'buy', quantity: '10000', price: '0.1', legValues: { base: '3200', quote: '3200' } },
      // 5,000 H for 600 G: H £1,700, G £1,920.
      { kind: 'trade', date: '2024-08-31', base: 'TOKENH', quote: 'TOKENG', side: 'sell', quantity: '5000', price: '0.12', legValues: { base: '1700', quote: '1920' } },
      // 5,000 H for 550 G: H £1,650, G £1,760.
      { kind: 'trade', date: '2024-08-31', base: 'TOKENH', quote: 'TOKENG', side: 'buy', quantity: '5000', price: '0.11', legValues: { base: '1650', quote: '1760' } },
      // 2,000 H for 180 G: H £560, G £558.
      { kind: 'trade', date: '2024-09-04', base: 'TOKENH', quote: 'TOKENG', side: 'sell', quantity: '2000', price: '0.09', legValues: { base: '560', quote: '558' } },
      // 4,000 H for 400 G: H £1,080, G £1,080.
      { kind: 'trade', date: '2024-09-16', base: 'TOKENH', quote: 'TOKENG', side: 'buy', quantity: '4000', price: '0.1', legValues: { base: '1080', quote: '1080' } },
      // 12,000 H for 900 G: H £2,400, G £2,430.
      { kind: 'trade', date: '2024-10-27', base: 'TOKENH', quote: 'TOKENG', side: 'sell', quantity: '12000', price: '0.075', legValues: { base: '2400', quote: '2430' } },
    ],
    prices: [],
    expected: [
      // G, 31 Aug: one disposal of 1,000 + 550 = 1,550 G; proceeds = H received 3,200 + 1,650 = 4,850.
      // Cost: same day 600 G (cost = H given 1,700) + 30 day 180 G of 04/09 (H given 560) + S104 770 G (300,000 x 770/100,000 = 2,310) = 4,570.
      // Gain 4,850 - 4,570 = 280.
      { what: 'disposal', date: '2024-08-31', coin: 'TOKENG', quantity: '1550', proceeds: '4850', cost: '4570', gain: '280' },
      // H, 31 Aug: acquisitions 10,000 + 5,000 = 15,000 H costing G given 3,200 + 1,760 = 4,960; disposal 5,000 H, proceeds = G received 1,920.
      // Same day cost 4,960 x 5,000/15,000 = 1,653.33 (4960/3); gain 1,920 - 1,653.33 = 266.67 (800/3). Pool H: 10,000 at 3,306.67 (9920/3).
      { what: 'disposal', date: '2024-08-31', coin: 'TOKENH', quantity: '5000', proceeds: '1920', cost: '1653.33', gain: '266.67', exact: { cost: '4960/3', gain: '800/3' } },
      // H, 4 Sep: 2,000 H, proceeds = G received 558; 30 day: 2,000 of the 16/09 acquisition (4,000 H costing G given 1,080) = 540; gain 558 - 540 = 18.
      { what: 'disposal', date: '2024-09-04', coin: 'TOKENH', quantity: '2000', proceeds: '558', cost: '540', gain: '18' },
      // G, 16 Sep: 400 G, proceeds = H received 1,080; no G bought that day or within 30 days after (27/10 is day 41).
      // S104: pool 100,000 - 770 = 99,230 G at 300,000 - 2,310 = 297,690; cost 297,690 x 400/99,230 = 1,200; gain 1,080 - 1,200 = -120.
      { what: 'disposal', date: '2024-09-16', coin: 'TOKENG', quantity: '400', proceeds: '1080', cost: '1200', gain: '-120' },
      // H, 27 Oct: 12,000 H, proceeds = G received 2,430. Pool: 10,000 H (9920/3) + unmatched 2,000 of 16/09 (540) = 12,000 at 11540/3 = 3,846.67.
      // Gain 2,430 - 3,846.67 = -1,416.67 (-4250/3).
      { what: 'disposal', date: '2024-10-27', coin: 'TOKENH', quantity: '12000', proceeds: '2430', cost: '3846.67', gain: '-1416.67', exact: { cost: '11540/3', gain: '-4250/3' } },
      // Net: 280 + 266.67 + 18 - 120 - 1,416.67 = -972 exactly (280 + 18 - 120 + (800 - 4,250)/3).
      // G pool: 99,230 - 400 + 900 = 99,730 G; 297,690 - 1,200 + 2,400 (900 G cost = H given 2,400) = 298,890.
      { what: 'holding', date: '2024-10-27', coin: 'TOKENG', quantity: '99730', cost: '298890' },
      { what: 'holding', date: '2024-10-27', coin: 'TOKENH', quantity: '0', cost: '0' },
    ],
  },
  // ---------------------------------------------------------------------------------------------
  {
    name: 'hmrc-crypto22280-fee-in-tokens',
    source:
      'https://www.gov.uk/hmrc-internal-manuals/cryptoassets-manual/crypto22280 (HMRC Cryptoassets Manual, CRYPTO22280 "Cryptoassets for individuals: Capital Gains Tax: Fees satisfied in tokens", Example; the stored copy ends at the opening pool table); see also CRYPTO22150 (allowable expenses)',
    quote:
      'If the transaction fee is satisfied in tokens then you need to consider that fee as one of the costs for the disposal of the tokens, but you also need to consider the fee as a disposal in its own right. ... the relevant CG computation will include the following: Consideration equal to the MV of the token given as a fee; Allowable cost equal to the MV of the token given as a fee; Allowable cost using same day rule, 30 day rule or S104 pool as appropriate ... Terri holds 10,000 tokens that she acquired for total cost of £20,000. Terri decides to sell 1,000 of the tokens for £5,000. The transaction requires that she pays a fee of 0.1% of what she is selling, i.e. 1 token.',
    currency: 'GBP',
    costMethod: 'uk',
    tradeValue: 'received',
    feesInCost: true,
    feeCoinDisposed: true,
    notes:
      'The stored page stops at the pool table, so the figures are arithmetic on the three rules it states; the token\'s market value £5 is £5,000 / 1,000 (a third-party Rust test suite, "taxc", transcribes the same example with the fee token at £5 and asserts "£5,005 - £2,002 - £5 = £2,998"; repository not identified by the index). The sale and the fee token are disposals of the same token on the same day, so they are one disposal of 1,001 (TCGA92/S105(1)). Proceeds are gross here (the fee token\'s £5 is in proceeds and in cost); the net form is 1,001 tokens, proceeds 5,000, cost 2,002, same gain. Opening pool and sale dates are placeholders (2024-01-01, 2024-08-01).',
    events: [
      { kind: 'trade', date: '2024-01-01', base: 'TOKEN', quote: 'GBP', side: 'buy', quantity: '10000', price: '2' }, // £20,000
      { kind: 'trade', date: '2024-08-01', base: 'TOKEN', quote: 'GBP', side: 'sell', quantity: '1000', price: '5', fee: { amount: '1', coin: 'TOKEN' } }, // £5,000, fee 1 token
    ],
    prices: [{ date: '2024-08-01', coin: 'TOKEN', price: '5' }], // 5,000 / 1,000
    expected: [
      // Consideration 5,000 + MV of fee token 1 x 5 = 5,005; allowable cost: fee MV 5 + S104 20,000 x 1,001/10,000 = 2,002 -> 2,007;
      // gain 5,005 - 2,007 = 2,998 (= sale 5,000 - 2,000 - 5 = 2,995, plus fee token 5 - 2 = 3).
      { what: 'disposal', date: '2024-08-01', coin: 'TOKEN', quantity: '1001', proceeds: '5005', cost: '2007', gain: '2998', note: 'Gross form; net form proceeds 5000, cost 2002.' },
      // Pool: 10,000 - 1,001 = 8,999 tokens, 20,000 - 2,002 = 17,998.
      { what: 'holding', date: '2024-08-01', coin: 'TOKEN', quantity: '8999', cost: '17998' },
    ],
  },
  // ---------------------------------------------------------------------------------------------
  {
    name: 'rotki-c2c-spent-price-fees-in-cost',
    source:
      'rotki/rotki@ef14aadd1f387a199731fcc03254463b45b6e0cb rotkehlchen/tests/unit/accounting/test_basic.py::test_selling_crypto_bought_with_crypto, parameter {"include_fees_in_cost_basis": True}; prices: rotkehlchen/tests/utils/history.py `prices`; rules: rotkehlchen/accounting/pot.py get_prices_for_swap, rotkehlchen/accounting/history_base_entries.py _process_swap; docs: rotki/docs@27c46cbfba5b71a268c1940f3d716d28748c9bf3 usage-guides/settings/accounting.md "Include Fees in Cost Basis"',
    quote:
      'spend=AssetAmount(asset=A_EUR, amount=Price(FVal(\'268.678317859\')) * FVal(82)), receive=AssetAmount(asset=A_BTC, amount=FVal(82)) ... timestamp=TimestampMS(1449809536000),  # cryptocompare hourly BTC/EUR price: 386.175 ... spend=AssetAmount(asset=A_BTC, amount=Price(FVal(\'0.0010275\')) * FVal(375)), receive=AssetAmount(asset=A_XMR, amount=FVal(375)), fee=AssetAmount(asset=A_XMR, amount=FVal(\'0.9375\')) ... timestamp=TimestampMS(1458070370000),  # cryptocompare hourly XMR/EUR price: 1.0443027675 ... spend=AssetAmount(asset=A_XMR, amount=FVal(45)), receive=AssetAmount(asset=A_EUR, amount=Price(FVal(\'1.0443027675\')) * FVal(45)), fee=AssetAmount(asset=A_XMR, amount=FVal(\'0.117484061344\')) ... {\'include_fees_in_cost_basis\': True}, ... AccountingEventType.TRADE: PNL(taxable=FVal(\'74.24348625705538353047999998\'), free=ZERO), AccountingEventType.FEE: PNL(taxable=ZERO, free=ZERO) ... assert sells[0].rate.is_close(FVal(\'386.175\')). Docs: "The fee event only reduces the amount of the fee asset paid. The actual fee is then used to determine the cost basis of the asset being bought or sold." Code: "2.2. If neither of the assets is fiat -- use `out_price` if `out_price` is known" / "3.3. If `asset_in` is fiat -- fee is subtracted from `calculated_out_price`. 3.4. Otherwise fee is added to the price of the asset that was bought." Mock prices: \'XMR\': {\'EUR\': {1449809536: FVal(0.39665), 1458070370: FVal(\'1.0443027675\')}}',
    currency: 'EUR',
    costMethod: 'fifo',
    tradeValue: 'given',
    feesInCost: true,
    feeCoinDisposed: false,
    notes:
      'rotki asserts only the totals (TRADE 74.24348625705538353047999998, FEE 0) and the BTC spend (0.3853125 at 386.175); the per-disposal split and the holdings are arithmetic on rotki\'s code (get_prices_for_swap, _process_swap), and the split sums to rotki\'s total (exact sum 74.24348625705538353048; rotki\'s FVal keeps 28 significant digits). With the setting on, the XMR fee of the buy is valued at the XMR market price (0.39665) and added to the XMR lot, and the XMR fee of the sale is valued at the XMR market price (1.0443027675) and subtracted from the EUR proceeds; the fee coins then leave the holding with no gain or loss. rotki defaults: FIFO, crypto-to-crypto taxable, one-year tax-free period (not reached here). Dates are the UTC dates of the test\'s timestamps.',
    events: [
      { kind: 'trade', date: '2015-11-08', base: 'BTC', quote: 'EUR', side: 'buy', quantity: '82', price: '268.678317859' }, // ts 1446979735
      { kind: 'trade', date: '2015-12-11', base: 'XMR', quote: 'BTC', side: 'buy', quantity: '375', price: '0.0010275', fee: { amount: '0.9375', coin: 'XMR' } }, // ts 1449809536
      { kind: 'trade', date: '2016-03-15', base: 'XMR', quote: 'EUR', side: 'sell', quantity: '45', price: '1.0443027675', fee: { amount: '0.117484061344', coin: 'XMR' } }, // ts 1458070370
    ],
    prices: [
      { date: '2015-12-11', coin: 'BTC', price: '386.175' },
      { date: '2015-12-11', coin: 'XMR', price: '0.39665' },
      { date: '2016-03-15', coin: 'XMR', price: '1.0443027675' },
    ],
    expected: [
      // BTC given 375 x 0.0010275 = 0.3853125 at the spent asset's price 386.175: proceeds 148.7980546875;
      // cost 0.3853125 x 268.678317859 = 103.5251143500459375; gain 45.2729403374540625.
      { what: 'disposal', date: '2015-12-11', coin: 'BTC', quantity: '0.3853125', proceeds: '148.7980546875', cost: '103.5251143500459375', gain: '45.2729403374540625' },
      // XMR lot: (148.7980546875 + fee 0.9375 x 0.39665 = 0.371859375) / 375 = 149.1699140625 / 375 = 0.3977864375 per XMR.
      // Sale: (45 x 1.0443027675 = 46.9936245375) - fee 0.117484061344 x 1.0443027675 (= 0.12268893039867896952) = 46.87093560710132103048;
      // cost 45 x 0.3977864375 = 17.9003896875; gain 28.97054591960132103048.
      { what: 'disposal', date: '2016-03-15', coin: 'XMR', quantity: '45', proceeds: '46.87093560710132103048', cost: '17.9003896875', gain: '28.97054591960132103048', note: 'Proceeds net of the XMR fee value.' },
      // Total TRADE pnl 45.2729403374540625 + 28.97054591960132103048 = 74.24348625705538353048 (rotki: 74.24348625705538353047999998).
      // BTC left 82 - 0.3853125 = 81.6146875 at 268.678317859 = 21928.0969500879540625.
      { what: 'holding', date: '2016-03-15', coin: 'BTC', quantity: '81.6146875', cost: '21928.0969500879540625' },
      // XMR left 375 - 0.9375 - 45 - 0.117484061344 = 328.945015938656 at 0.3977864375 = 130.849866023618688778.
      { what: 'holding', date: '2016-03-15', coin: 'XMR', quantity: '328.945015938656', cost: '130.849866023618688778' },
    ],
  },
  // ---------------------------------------------------------------------------------------------
  {
    name: 'rotki-c2c-spent-price-fees-not-in-cost',
    source:
      'rotki/rotki@ef14aadd1f387a199731fcc03254463b45b6e0cb rotkehlchen/tests/unit/accounting/test_basic.py::test_selling_crypto_bought_with_crypto, parameter {"include_fees_in_cost_basis": False}; rules: rotkehlchen/accounting/pot.py get_prices_for_swap and add_out_event, rotkehlchen/accounting/structures/processed_event.py calculate_pnl, rotkehlchen/accounting/history_base_entries.py _process_swap',
    quote:
      '{\'include_fees_in_cost_basis\': False}, PnlTotals({ AccountingEventType.TRADE: PNL(taxable=FVal(\'74.4107983124540625\'), free=ZERO), AccountingEventType.FEE: PNL(taxable=FVal(\'-0.418612202811480978\'), free=ZERO), }) [same three swaps as rotki-c2c-spent-price-fees-in-cost]. Code: "if count_entire_amount_spend: # for fees and other types we also need to consider the entire amount as spent self.pnl -= PNL(taxable=taxable_value + free_value, free=ZERO)" then "taxable=taxable_value - taxable_bought_cost". Docs: "The cost basis of that ETH is `10 EUR`. But at the time of the trade you also have a spend event of `1 EUR` as fee."',
    currency: 'EUR',
    costMethod: 'fifo',
    tradeValue: 'given',
    feesInCost: false,
    notes:
      'rotki asserts the totals only; the split is arithmetic on its code and sums to them exactly. With the setting off a fee in a coin is a spend: minus its value as an expense plus (value - cost) on the coins, net minus their cost, written here as a disposal with proceeds 0 (so the net does not depend on which price values the fee). Same events and prices as rotki-c2c-spent-price-fees-in-cost; the XMR market price 0.39665 is unused here.',
    events: [
      { kind: 'trade', date: '2015-11-08', base: 'BTC', quote: 'EUR', side: 'buy', quantity: '82', price: '268.678317859' },
      { kind: 'trade', date: '2015-12-11', base: 'XMR', quote: 'BTC', side: 'buy', quantity: '375', price: '0.0010275', fee: { amount: '0.9375', coin: 'XMR' } },
      { kind: 'trade', date: '2016-03-15', base: 'XMR', quote: 'EUR', side: 'sell', quantity: '45', price: '1.0443027675', fee: { amount: '0.117484061344', coin: 'XMR' } },
    ],
    prices: [
      { date: '2015-12-11', coin: 'BTC', price: '386.175' },
      { date: '2015-12-11', coin: 'XMR', price: '0.39665' },
      { date: '2016-03-15', coin: 'XMR', price: '1.0443027675' },
    ],
    expected: [
      // As with fees in cost: 0.3853125 BTC, proceeds 148.7980546875, cost 103.5251143500459375, gain 45.2729403374540625.
      { what: 'disposal', date: '2015-12-11', coin: 'BTC', quantity: '0.3853125', proceeds: '148.7980546875', cost: '103.5251143500459375', gain: '45.2729403374540625' },
      // XMR lot 148.7980546875 / 375 = 0.3967948125 per XMR. Fee 0.9375 XMR: cost 0.9375 x 0.3967948125 = 0.37199513671875, pnl -0.37199513671875.
      { what: 'disposal', date: '2015-12-11', coin: 'XMR', quantity: '0.9375', proceeds: '0', cost: '0.37199513671875', gain: '-0.37199513671875', note: 'Fee spend: rotki net (-value + value - cost).' },
      // Sale: proceeds 45 x 1.0443027675 = 46.9936245375; cost 45 x 0.3967948125 = 17.8557665625; gain 29.137857975.
      { what: 'disposal', date: '2016-03-15', coin: 'XMR', quantity: '45', proceeds: '46.9936245375', cost: '17.8557665625', gain: '29.137857975' },
      // Fee 0.117484061344 XMR: cost x 0.3967948125 = 0.046617066092730978, pnl -0.046617066092730978.
      { what: 'disposal', date: '2016-03-15', coin: 'XMR', quantity: '0.117484061344', proceeds: '0', cost: '0.046617066092730978', gain: '-0.046617066092730978', note: 'Fee spend: rotki net (-value + value - cost).' },
      // TRADE 45.2729403374540625 + 29.137857975 = 74.4107983124540625 (rotki); FEE -0.37199513671875 - 0.046617066092730978 = -0.418612202811480978 (rotki).
      { what: 'holding', date: '2016-03-15', coin: 'BTC', quantity: '81.6146875', cost: '21928.0969500879540625' },
      // XMR left 328.945015938656 at 0.3967948125 = 130.523675922188519022.
      { what: 'holding', date: '2016-03-15', coin: 'XMR', quantity: '328.945015938656', cost: '130.523675922188519022' },
    ],
  },
  // ---------------------------------------------------------------------------------------------
  {
    name: 'rotki-income-then-swap-fee-in-received-coin',
    source:
      'rotki/rotki@ef14aadd1f387a199731fcc03254463b45b6e0cb rotkehlchen/tests/unit/accounting/test_misc.py::test_fees_in_received_asset (db_settings include_fees_in_cost_basis False); prices: rotkehlchen/tests/utils/history.py `prices`',
    quote:
      'HistoryEvent(... timestamp=TimestampMS(1539713238000),  # 178.615 EUR/ETH ... event_type=HistoryEventType.RECEIVE, ... asset=A_ETH, amount=ONE) ... # Sell 0.02 ETH for USDT with rate 1000 USDT/ETH and 0.10 USDT fee ... timestamp=TimestampMS(1609537953000),  # 0.89 EUR/USDT ... spend=AssetAmount(asset=A_ETH, amount=FVal(\'0.02\')),  # 598.26 EUR/ETH receive=AssetAmount(asset=A_USDT, amount=FVal(\'0.02\') * FVal(1000)),  # PNL: 598.26 ETH/EUR -> PNL: 0.02 * 598.26 - 0.02*178.615 ->  8.3929 ... fee=AssetAmount(amount=FVal(\'0.10\'), asset=A_USDT) ... assert get_calculated_asset_amount(accountant.pots[0].cost_basis, A_USDT).is_close(\'19.90\') ... AccountingEventType.TRADE: PNL(taxable=ZERO, free=FVal(\'8.3929\')), AccountingEventType.FEE: PNL(taxable=FVal(\'-0.059826\'), free=ZERO), AccountingEventType.TRANSACTION_EVENT: PNL(taxable=FVal(\'178.615\'), free=ZERO)',
    currency: 'EUR',
    costMethod: 'fifo',
    tradeValue: 'given',
    feesInCost: false,
    notes:
      'The plain RECEIVE of 1 ETH is booked by rotki\'s default rules as taxable income at its value (178.615), which becomes the lot\'s cost. The ETH sale\'s gain (8.3929) lands in rotki\'s tax-free column because the ETH was held over rotki\'s default one-year period; it is still the gain. The USDT received is valued at the ETH spent (0.02 x 598.26 / 20 = 0.59826 per USDT), not at the USDT market price 0.89 (which the test comment mentions and which is unused with the setting off); the 0.10 USDT fee costs 0.10 x 0.59826 = 0.059826, rotki pnl -0.059826 (the test comment\'s "0.02 * 598.26 + 0.10 * 0.89 -> 12.0542 EUR" line adds the fee at its market price, as include_fees_in_cost_basis=true would; the assertions, -0.059826, follow the false setting). Holdings are arithmetic (rotki asserts the USDT amount 19.90).',
    events: [
      { kind: 'income', date: '2018-10-16', coin: 'ETH', quantity: '1' }, // ts 1539713238
      { kind: 'trade', date: '2021-01-01', base: 'ETH', quote: 'USDT', side: 'sell', quantity: '0.02', price: '1000', fee: { amount: '0.10', coin: 'USDT' } }, // ts 1609537953
    ],
    prices: [
      { date: '2018-10-16', coin: 'ETH', price: '178.615' },
      { date: '2021-01-01', coin: 'ETH', price: '598.26' },
      { date: '2021-01-01', coin: 'USDT', price: '0.89' },
    ],
    expected: [
      // Income at receipt: 1 x 178.615.
      { what: 'income', date: '2018-10-16', coin: 'ETH', quantity: '1', value: '178.615' },
      // 0.02 ETH at the spent asset's price: proceeds 0.02 x 598.26 = 11.9652; cost 0.02 x 178.615 = 3.5723; gain 8.3929 (rotki: free column).
      { what: 'disposal', date: '2021-01-01', coin: 'ETH', quantity: '0.02', proceeds: '11.9652', cost: '3.5723', gain: '8.3929' },
      // USDT lot 11.9652 / 20 = 0.59826; fee 0.10 USDT costs 0.059826; rotki FEE pnl -0.059826.
      { what: 'disposal', date: '2021-01-01', coin: 'USDT', quantity: '0.10', proceeds: '0', cost: '0.059826', gain: '-0.059826', note: 'Fee spend: rotki net (-value + value - cost).' },
      // ETH left 1 - 0.02 = 0.98 at 178.615 = 175.0427.
      { what: 'holding', date: '2021-01-01', coin: 'ETH', quantity: '0.98', cost: '175.0427' },
      // USDT left 20 - 0.10 = 19.9 at 0.59826 = 11.905374.
      { what: 'holding', date: '2021-01-01', coin: 'USDT', quantity: '19.9', cost: '11.905374' },
    ],
  },
  // ---------------------------------------------------------------------------------------------
  {
    name: 'rotki-sell-fee-in-sold-coin-fees-in-cost',
    source:
      'rotki/rotki@ef14aadd1f387a199731fcc03254463b45b6e0cb rotkehlchen/tests/unit/accounting/test_misc.py::test_fees_count_in_cost_basis (default settings: include_fees_in_cost_basis True), first two swaps; prices: rotkehlchen/tests/utils/history.py `prices` (ETH/EUR 1609537953: 598.26, 1624395186: 1862.06)',
    quote:
      'spend=AssetAmount(asset=A_EUR, amount=ONE * FVal(\'598.26\')), receive=AssetAmount(asset=A_ETH, amount=ONE), fee=AssetAmount(asset=A_EUR, amount=ONE), ), # fee: 0.5 * 1862.06 -> 931.03 # PNL: 0.5 * 1862.06 - 0.5 * 599.26 - fee -> -299.63 ... spend=AssetAmount(asset=A_ETH, amount=FVal(\'0.5\')), receive=AssetAmount(asset=A_EUR, amount=FVal(\'0.5\') * FVal(\'1862.06\')), fee=AssetAmount(asset=A_ETH, amount=FVal(\'0.5\')), ... # No ETH is owned at this point.',
    currency: 'EUR',
    costMethod: 'fifo',
    tradeValue: 'given',
    feesInCost: true,
    feeCoinDisposed: false,
    notes:
      'The test has a third swap that sells 0.5 ETH not owned (its proceeds 918.655 count in full) and asserts TRADE 619.025 = -299.63 + 918.655; that swap is left out here, the -299.63 is the test\'s own comment. Shows how rotki with the setting on treats a sale fee paid in the sold coin: the fee value (0.5 x 1862.06 = 931.03) is taken from the proceeds AND the 0.5 ETH fee leaves the lot with its cost (299.63) and no gain. HMRC CRYPTO22280 / RP2 / Koinly would instead dispose of all 1 ETH: proceeds 931.03 (net of the fee), cost 599.26, gain 331.77 - a difference of 631.40, the unrealised gain on the fee coins (931.03 - 299.63). Dates are the UTC dates of the timestamps.',
    events: [
      { kind: 'trade', date: '2021-01-01', base: 'ETH', quote: 'EUR', side: 'buy', quantity: '1', price: '598.26', fee: { amount: '1', coin: 'EUR' } }, // ts 1609537953
      { kind: 'trade', date: '2021-06-22', base: 'ETH', quote: 'EUR', side: 'sell', quantity: '0.5', price: '1862.06', fee: { amount: '0.5', coin: 'ETH' } }, // ts 1624395186
    ],
    prices: [
      { date: '2021-01-01', coin: 'ETH', price: '598.26' },
      { date: '2021-06-22', coin: 'ETH', price: '1862.06' },
    ],
    expected: [
      // Lot: 598.26 + EUR fee 1 = 599.26 for 1 ETH. Sale: 0.5 x 1862.06 = 931.03 less fee 0.5 ETH x 1862.06 = 931.03 -> proceeds 0;
      // cost 0.5 x 599.26 = 299.63; gain -299.63.
      { what: 'disposal', date: '2021-06-22', coin: 'ETH', quantity: '0.5', proceeds: '0', cost: '299.63', gain: '-299.63', note: 'Proceeds net of the fee value; the 0.5 ETH fee is not a disposal in rotki.' },
      // 1 - 0.5 - 0.5 = 0 ETH left.
      { what: 'holding', date: '2021-06-22', coin: 'ETH', quantity: '0', cost: '0' },
    ],
  },
  // ---------------------------------------------------------------------------------------------
  {
    name: 'koinly-fee-in-cost-and-fee-in-coin',
    source:
      'Koinly help: https://support.koinly.io/en/articles/9490025-trading-fees-transaction-fees ("Trading Fees & Transaction Fees", "Example: Fee Reduces Gains") and https://help.koinly.io/en/articles/4286070-why-is-there-a-profit-loss-on-cost-transactions (stored copies in the search tool\'s pages corpus)',
    quote:
      'Let’s say you buy 1 Bitcoin for $10,000 and the exchange charges you a $100 fee. Koinly will add the $100 fee to the cost basis of your Bitcoin, so your total acquisition cost becomes $10,100. When you later sell that Bitcoin for $15,000, ... Capital Gain = $15,000 - $10,100 = $4,900 ... If the fee is paid in cryptocurrency instead of fiat, Koinly treats this as a disposal of that cryptocurrency, like any other sale. | Let\'s say you bought 100 EOS for $100 and a few days later the value of your XRP has doubled to $200. Now your exchange charges you a fee of 10 EOS. ... Koinly will still show you a gain of $10 on it since it\'s technically a disposal too. Think of it like this; you have incurred a cost of $20 and are paying it using crypto that you bought for $10 ... Koinly does not make any cost deductions automatically',
    currency: 'USD',
    costMethod: 'fifo',
    tradeValue: 'received',
    feesInCost: true,
    feeCoinDisposed: true,
    notes:
      'Two independent Koinly examples in one holder (different coins). Koinly gives no dates: 2021-01-01 / 2021-06-01 / 2021-01-05 are placeholders ("later", "a few days later"). "the value of your XRP has doubled" is the source\'s slip for EOS; 100 EOS worth $200 gives $2 per EOS. The standalone fee is a disposal at market value; Koinly reports the $20 as a cost separately and does not deduct it. Koinly\'s crypto-to-crypto valuation side could not be found in its documentation through the tools; tradeValue is irrelevant to this case (no crypto-to-crypto trade). Cost method: Koinly\'s is a user setting; FIFO is assumed and does not matter here.',
    events: [
      { kind: 'trade', date: '2021-01-01', base: 'BTC', quote: 'USD', side: 'buy', quantity: '1', price: '10000', fee: { amount: '100', coin: 'USD' } },
      { kind: 'trade', date: '2021-06-01', base: 'BTC', quote: 'USD', side: 'sell', quantity: '1', price: '15000' },
      { kind: 'trade', date: '2021-01-01', base: 'EOS', quote: 'USD', side: 'buy', quantity: '100', price: '1' }, // $100
      { kind: 'fee', date: '2021-01-05', coin: 'EOS', quantity: '10' },
    ],
    prices: [{ date: '2021-01-05', coin: 'EOS', price: '2' }], // $200 / 100 EOS
    expected: [
      // Cost 10,000 + 100 = 10,100; gain 15,000 - 10,100 = 4,900.
      { what: 'disposal', date: '2021-06-01', coin: 'BTC', quantity: '1', proceeds: '15000', cost: '10100', gain: '4900' },
      // 10 EOS at $2 = $20, cost 10 x $1 = $10, gain $10.
      { what: 'disposal', date: '2021-01-05', coin: 'EOS', quantity: '10', proceeds: '20', cost: '10', gain: '10' },
      { what: 'holding', date: '2021-06-01', coin: 'BTC', quantity: '0', cost: '0' },
      // 100 - 10 = 90 EOS at $1 = $90.
      { what: 'holding', date: '2021-06-01', coin: 'EOS', quantity: '90', cost: '90' },
    ],
  },
  // ---------------------------------------------------------------------------------------------
  {
    name: 'rp2-test-data4-b1-fifo',
    source:
      'eprbell/rp2@eb2a36853db5094011d664cbe498a59b50dd44cd input/test_data4.ods sheet B1 (columns: config/test_data4.ini); expected: input/golden/us/test_data4_fifo_rp2_full_report.ods sheets "B1 Tax" and "B1 In-Out"',
    quote:
      'Input rows (custom and holder columns left out; Crypto In/Out, Spot Price, Crypto Fee): IN 2020-01-01T08:41Z | Coinbase | Buy | B1 | 1 | 10 | 0.1 | Crypto fee test; IN 2020-02-01T09:10Z | Coinbase | Buy | B1 | 4 | 15 | 0.4; OUT 2020-03-11T17:50Z | Coinbase | Sell | B1 | 2 | 20 | 0.2. Golden (FIFO): "2020 | B1 | 6.45 | SHORT | SELL | 2.2 | 40.0 | 33.55" and "2020 | B1 | 1.5 | SHORT | FEE | 0.5 | 7.0 | 5.5"; In-Flow: "BUY | 10.0 | 1.0 | ... | 1.0 | 10.0 | 11.0 | NO ... This transaction has a crypto fee of 0.10000000000 B1, which is modeled with an artificial, fee-only out-transaction"; Account Balances final 2.3; detail rows: 0.1 B1 FEE gain -0.1 (amount 1.0, lot cost 1.1), 0.4 B1 FEE gain 1.6 (6.0, 4.4), SELL fractions 0.5 (cost 5.5) and 1.7 (cost 28.05).',
    currency: 'USD',
    costMethod: 'fifo',
    tradeValue: 'received',
    feesInCost: true,
    feeCoinDisposed: true,
    notes:
      'RP2 adds a buy\'s crypto fee value (fee x spot) to the lot ("USD In With Fee" 11 for 1 B1) AND disposes of the fee coins at spot through an artificial FEE out-transaction (taxable, proceeds = fee value); a sale\'s crypto fee is disposed of with the sold coins and no proceeds of its own (2.2 B1 for 40 = 2 x 20), i.e. proceeds net of the fee. RP2 has no crypto-to-crypto trades (a conversion is a sell plus a buy), so tradeValue does not apply. The golden gains per lot fraction (3.590909090909091 + 2.859090909090909) sum to 6.45; the fraction split 0.5/2.2 and 1.7/2.2 of 40 is RP2\'s.',
    events: [
      { kind: 'trade', date: '2020-01-01', base: 'B1', quote: 'USD', side: 'buy', quantity: '1', price: '10', fee: { amount: '0.1', coin: 'B1' } },
      { kind: 'trade', date: '2020-02-01', base: 'B1', quote: 'USD', side: 'buy', quantity: '4', price: '15', fee: { amount: '0.4', coin: 'B1' } },
      { kind: 'trade', date: '2020-03-11', base: 'B1', quote: 'USD', side: 'sell', quantity: '2', price: '20', fee: { amount: '0.2', coin: 'B1' } },
    ],
    prices: [
      { date: '2020-01-01', coin: 'B1', price: '10' },
      { date: '2020-02-01', coin: 'B1', price: '15' },
      { date: '2020-03-11', coin: 'B1', price: '20' },
    ],
    expected: [
      // Lots: L1 1 B1 cost 10 + 0.1 x 10 = 11 (11/unit); L2 4 B1 cost 60 + 0.4 x 15 = 66 (16.5/unit).
      // Fee 0.1 B1 at 10: proceeds 1, cost 0.1 of L1 = 1.1, gain -0.1.
      { what: 'disposal', date: '2020-01-01', coin: 'B1', quantity: '0.1', proceeds: '1', cost: '1.1', gain: '-0.1', note: 'RP2 artificial FEE out-transaction.' },
      // Fee 0.4 B1 at 15: proceeds 6, cost 0.4 of L1 (FIFO) = 4.4, gain 1.6.
      { what: 'disposal', date: '2020-02-01', coin: 'B1', quantity: '0.4', proceeds: '6', cost: '4.4', gain: '1.6', note: 'RP2 artificial FEE out-transaction.' },
      // Sale 2 + fee 0.2 = 2.2 B1 for 2 x 20 = 40; cost 0.5 of L1 (5.5) + 1.7 of L2 (28.05) = 33.55; gain 6.45.
      { what: 'disposal', date: '2020-03-11', coin: 'B1', quantity: '2.2', proceeds: '40', cost: '33.55', gain: '6.45', note: 'Net form: the 0.2 B1 fee is disposed of with no proceeds.' },
      // Left: 5 - 2.7 = 2.3 B1, all of L2 at 16.5 = 37.95.
      { what: 'holding', date: '2020-03-11', coin: 'B1', quantity: '2.3', cost: '37.95' },
    ],
  },
  // ---------------------------------------------------------------------------------------------
  {
    name: 'rp2-test-data4-b1-lifo',
    source:
      'eprbell/rp2@eb2a36853db5094011d664cbe498a59b50dd44cd input/test_data4.ods sheet B1; expected: input/golden/us/test_data4_lifo_rp2_full_report.ods sheet "B1 Tax"',
    quote:
      'Golden (LIFO): "2020 | B1 | 3.7 | SHORT | SELL | 2.2 | 40.0 | 36.3" and "2020 | B1 | -0.7 | SHORT | FEE | 0.5 | 7.0 | 7.7"; detail rows: 0.1 B1 FEE gain -0.1 (amount 1.0, lot cost 1.1), 0.4 B1 FEE gain -0.6 (6.0, lot 2020-02-01 cost 6.6), 2.2 B1 SELL gain 3.7 (40.0, lot 2020-02-01 cost 36.3).',
    currency: 'USD',
    costMethod: 'lifo',
    tradeValue: 'received',
    feesInCost: true,
    feeCoinDisposed: true,
    notes: 'Same events, prices and fee treatment as rp2-test-data4-b1-fifo.',
    events: [
      { kind: 'trade', date: '2020-01-01', base: 'B1', quote: 'USD', side: 'buy', quantity: '1', price: '10', fee: { amount: '0.1', coin: 'B1' } },
      { kind: 'trade', date: '2020-02-01', base: 'B1', quote: 'USD', side: 'buy', quantity: '4', price: '15', fee: { amount: '0.4', coin: 'B1' } },
      { kind: 'trade', date: '2020-03-11', base: 'B1', quote: 'USD', side: 'sell', quantity: '2', price: '20', fee: { amount: '0.2', coin: 'B1' } },
    ],
    prices: [
      { date: '2020-01-01', coin: 'B1', price: '10' },
      { date: '2020-02-01', coin: 'B1', price: '15' },
      { date: '2020-03-11', coin: 'B1', price: '20' },
    ],
    expected: [
      // Fee 0.1 at 10: proceeds 1, cost 0.1 of L1 (11/unit) = 1.1, gain -0.1.
      { what: 'disposal', date: '2020-01-01', coin: 'B1', quantity: '0.1', proceeds: '1', cost: '1.1', gain: '-0.1' },
      // Fee 0.4 at 15: proceeds 6, cost 0.4 of L2 (16.5/unit, the latest lot) = 6.6, gain -0.6.
      { what: 'disposal', date: '2020-02-01', coin: 'B1', quantity: '0.4', proceeds: '6', cost: '6.6', gain: '-0.6' },
      // Sale 2.2 B1 for 40: cost 2.2 of L2 = 36.3, gain 3.7. (FEE total 7 - 7.7 = -0.7.)
      { what: 'disposal', date: '2020-03-11', coin: 'B1', quantity: '2.2', proceeds: '40', cost: '36.3', gain: '3.7' },
      // Left: L1 0.9 x 11 = 9.9 + L2 (4 - 0.4 - 2.2 = 1.4) x 16.5 = 23.1 -> 2.3 B1, 33.
      { what: 'holding', date: '2020-03-11', coin: 'B1', quantity: '2.3', cost: '33' },
    ],
  },
  // ---------------------------------------------------------------------------------------------
  {
    name: 'rp2-test-data4-b1-hifo',
    source:
      'eprbell/rp2@eb2a36853db5094011d664cbe498a59b50dd44cd input/test_data4.ods sheet B1; expected: input/golden/us/test_data4_hifo_rp2_full_report.ods sheet "B1 Tax"',
    quote:
      'Golden (HIFO): "2020 | B1 | 3.7 | SHORT | SELL | 2.2 | 40.0 | 36.3" and "2020 | B1 | -0.7 | SHORT | FEE | 0.5 | 7.0 | 7.7" (same rows as LIFO: the 2020-02-01 lot, 16.5 per B1, is both the latest and the dearest).',
    currency: 'USD',
    costMethod: 'hifo',
    tradeValue: 'received',
    feesInCost: true,
    feeCoinDisposed: true,
    notes:
      'Same events, prices and fee treatment as rp2-test-data4-b1-fifo. HIFO ranks lots by cost per unit including the fee (11 vs 16.5).',
    events: [
      { kind: 'trade', date: '2020-01-01', base: 'B1', quote: 'USD', side: 'buy', quantity: '1', price: '10', fee: { amount: '0.1', coin: 'B1' } },
      { kind: 'trade', date: '2020-02-01', base: 'B1', quote: 'USD', side: 'buy', quantity: '4', price: '15', fee: { amount: '0.4', coin: 'B1' } },
      { kind: 'trade', date: '2020-03-11', base: 'B1', quote: 'USD', side: 'sell', quantity: '2', price: '20', fee: { amount: '0.2', coin: 'B1' } },
    ],
    prices: [
      { date: '2020-01-01', coin: 'B1', price: '10' },
      { date: '2020-02-01', coin: 'B1', price: '15' },
      { date: '2020-03-11', coin: 'B1', price: '20' },
    ],
    expected: [
      // As LIFO: 0.1 from L1 (only lot) 1.1; 0.4 from L2 (16.5 > 11) 6.6; 2.2 from L2 36.3.
      { what: 'disposal', date: '2020-01-01', coin: 'B1', quantity: '0.1', proceeds: '1', cost: '1.1', gain: '-0.1' },
      { what: 'disposal', date: '2020-02-01', coin: 'B1', quantity: '0.4', proceeds: '6', cost: '6.6', gain: '-0.6' },
      { what: 'disposal', date: '2020-03-11', coin: 'B1', quantity: '2.2', proceeds: '40', cost: '36.3', gain: '3.7' },
      { what: 'holding', date: '2020-03-11', coin: 'B1', quantity: '2.3', cost: '33' },
    ],
  },
];
