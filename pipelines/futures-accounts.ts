import type { SnapshotStream } from '../src/extract/stream.ts';

/**
 * The futures account (4.16): account settings, collateral with running totals, open positions.
 * Stored whole, one record per snapshot; staging splits collateral and positions out.
 */
export const futuresAccounts = {
  kind: 'snapshot',
  name: 'futures_accounts',
  description: 'Futures account, collateral and positions, one record per snapshot',
  endpoint: 'futures.accounts',
  recordsPath: '',
  singleRecord: true,
  partitions: { kind: 'none' },
  paginator: { kind: 'single' },
  fields: [
    { name: 'account', type: 'json' },
    { name: 'collateral', type: 'json' },
    { name: 'position', type: 'json' },
    { name: 'version', type: 'text', required: false },
  ],
} as const satisfies SnapshotStream;
