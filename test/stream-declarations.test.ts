import { describe, expect, it } from 'vitest';
import { STREAMS } from '../pipelines/index.ts';
import { spotFills } from '../pipelines/spot-fills.ts';
import { validateDeclaration, type StreamDeclaration } from '../src/extract/stream.ts';

describe('stream declarations', () => {
  it('declares the twelve streams of the sync, each valid, each name once', () => {
    expect(STREAMS.map((stream) => stream.name).sort()).toEqual(
      [
        'affiliate_commissions',
        'affiliate_referrals',
        'currencies',
        'funding_bills',
        'futures_accounts',
        'futures_contracts',
        'futures_fills',
        'futures_open_orders',
        'spot_assets',
        'spot_fills',
        'spot_open_orders',
        'transfer_records',
      ].sort(),
    );
    for (const stream of STREAMS) expect(() => validateDeclaration(stream)).not.toThrow();
  });

  it.each([
    ['an unknown endpoint', { ...spotFills, endpoint: 'spot.nope' }, /unknown endpoint "spot.nope"/],
    ['a time field it does not declare', { ...spotFills, timeFields: ['uTime'] }, /time field "uTime" is not among its fields/],
    ['an identity field it does not declare', { ...spotFills, identity: { kind: 'key', fields: ['tradeId'] } }, /identity field "tradeId"/],
    ['windows longer than the exchange allows', { ...spotFills, window: { ...spotFills.window, months: 6 } }, /window.months must be 1 to 3/],
  ])('refuses %s, naming the stream', (_name, declaration, message) => {
    expect(() => validateDeclaration(declaration as unknown as StreamDeclaration)).toThrow(message);
    expect(() => validateDeclaration(declaration as unknown as StreamDeclaration)).toThrow(/pipelines\/spot_fills/);
  });
});
