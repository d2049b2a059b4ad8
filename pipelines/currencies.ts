import type { SnapshotStream } from '../src/extract/stream.ts';

/** Currencies with chain details (4.1, public). Values are strings, booleans included. */
export const currencies = {
  kind: 'snapshot',
  name: 'currencies',
  description: 'Listed currencies and their chains',
  endpoint: 'spot.currencies',
  recordsPath: '',
  partitions: { kind: 'none' },
  paginator: { kind: 'single' },
  fields: [
    { name: 'coinId', type: 'integer' },
    { name: 'coinName', type: 'text' },
    { name: 'transfer', type: 'text', required: false },
    { name: 'chains', type: 'json', required: false },
  ],
} as const satisfies SnapshotStream;
