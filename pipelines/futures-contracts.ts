import type { SnapshotStream } from '../src/extract/stream.ts';

/** Futures contracts and their trading parameters (4.12, public). */
export const futuresContracts = {
  kind: 'snapshot',
  name: 'futures_contracts',
  description: 'Futures contracts: face value, fee rates, sizes',
  endpoint: 'futures.contracts',
  recordsPath: '',
  partitions: { kind: 'none' },
  paginator: { kind: 'single' },
  fields: [
    { name: 'symbol', type: 'text' },
    { name: 'underlying_index', type: 'text' },
    { name: 'quote_currency', type: 'text' },
    { name: 'coin', type: 'text' },
    { name: 'contract_val', type: 'amount' },
    { name: 'size_increment', type: 'amount', required: false },
    { name: 'tick_size', type: 'amount', required: false },
    { name: 'makerFeeRate', type: 'amount', required: false },
    { name: 'takerFeeRate', type: 'amount', required: false },
    { name: 'forwardContractFlag', type: 'boolean', required: false },
  ],
  // Trading limits and listing dates: no model needs them.
  knownFields: ['buyLimitPriceRatio', 'delivery', 'listing', 'maxLeverage', 'maxOrderSize', 'maxPositionSize', 'minLeverage', 'minOrderSize', 'priceEndStep', 'sellLimitPriceRatio'],
} as const satisfies SnapshotStream;
