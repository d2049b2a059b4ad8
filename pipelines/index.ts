import type { StreamDeclaration } from '../src/extract/stream.ts';
import { affiliateCommissions } from './affiliate-commissions.ts';
import { affiliateReferrals } from './affiliate-referrals.ts';
import { currencies } from './currencies.ts';
import { fundingBills } from './funding-bills.ts';
import { futuresAccounts } from './futures-accounts.ts';
import { futuresContracts } from './futures-contracts.ts';
import { futuresFills } from './futures-fills.ts';
import { futuresOpenOrders } from './futures-open-orders.ts';
import { spotAssets } from './spot-assets.ts';
import { spotFills } from './spot-fills.ts';
import { spotOpenOrders } from './spot-open-orders.ts';
import { transferRecords } from './transfer-records.ts';

/**
 * Every stream, in sync order: reference snapshots first (symbol discovery reads currencies,
 * assets and funding bills), then histories, then the other snapshots.
 */
export const STREAMS: readonly StreamDeclaration[] = [
  currencies,
  futuresContracts,
  spotAssets,
  fundingBills,
  spotFills,
  transferRecords,
  futuresFills,
  affiliateCommissions,
  affiliateReferrals,
  futuresAccounts,
  spotOpenOrders,
  futuresOpenOrders,
];
