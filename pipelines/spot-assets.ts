import type { SnapshotStream } from '../src/extract/stream.ts';

/** Spot asset balances (4.8). */
export const spotAssets = {
  kind: 'snapshot',
  name: 'spot_assets',
  description: 'Spot balances per coin, one row set per snapshot',
  endpoint: 'spot.assets',
  recordsPath: '',
  partitions: { kind: 'none' },
  paginator: { kind: 'single' },
  fields: [
    { name: 'coinId', type: 'integer' },
    { name: 'coinName', type: 'text' },
    { name: 'available', type: 'amount' },
    { name: 'frozen', type: 'amount' },
    { name: 'equity', type: 'amount' },
  ],
} as const satisfies SnapshotStream;
