import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STREAMS } from '../pipelines/index.ts';
import { discoverSpotSymbols } from '../src/extract/partitions.ts';
import { ensureRawTables } from '../src/extract/sync.ts';
import { Database } from '../src/store/database.ts';

let db: Database;

beforeEach(async () => {
  db = await Database.open(':memory:');
  await ensureRawTables(db, STREAMS);
});
afterEach(() => db.close());

async function bill(cTime: number, bizType: string, coinName: string, deltaAmount: string, key = `${cTime}-${coinName}-${bizType}`): Promise<void> {
  await db.run(`INSERT INTO raw.funding_bills VALUES ('main', '', $1, $2, $3::JSON, 'run', now())`, [key, cTime, JSON.stringify({ billId: key, coinName, bizType, deltaAmount, cTime: String(cTime) })]);
}

async function snapshot(table: string, records: object[]): Promise<void> {
  for (const [seq, record] of records.entries()) {
    await db.run(`INSERT INTO raw.${table} VALUES ('main', '', now(), $1, $2::JSON, 'run', now())`, [seq, JSON.stringify(record)]);
  }
}

describe('spot symbol discovery', () => {
  it('reads traded pairs off the two legs of buy and sell bills, base by the sign of its delta', async () => {
    // A buy of ETH with USDT: ETH in, USDT out. A sell of SOL for BTC: SOL out, BTC in.
    await bill(1000, 'buy', 'ETH', '0.5');
    await bill(1000, 'buy', 'USDT', '-1500');
    await bill(2000, 'sell', 'SOL', '-3');
    await bill(2000, 'sell', 'BTC', '0.006');
    // Deposits say nothing about trading.
    await bill(3000, 'deposit', 'DOGE', '100');
    expect(await discoverSpotSymbols(db, 'main', ['USDT', 'BTC'])).toEqual(['ETHUSDT_SPBL', 'SOLBTC_SPBL']);
  });

  it('pairs a traded coin whose legs never stand alone with the quote coins traded', async () => {
    // Two trades in one millisecond: the legs cannot be told apart, so XRP is paired with USDT.
    await bill(1000, 'buy', 'XRP', '10');
    await bill(1000, 'buy', 'ADA', '20');
    await bill(1000, 'buy', 'USDT', '-30');
    await bill(2000, 'buy', 'ADA', '5');
    await bill(2000, 'buy', 'USDT', '-2');
    expect(await discoverSpotSymbols(db, 'main', ['USDT', 'USDC'])).toEqual(['ADAUSDT_SPBL', 'XRPUSDT_SPBL']);
  });

  it('without any trade bills, pairs the listed coins held with the quote coins held', async () => {
    await snapshot('currencies', [{ coinName: 'BTC' }, { coinName: 'ETH' }, { coinName: 'USDT' }]);
    await snapshot('spot_assets', [{ coinName: 'BTC' }, { coinName: 'USDT' }, { coinName: 'NOTLISTED' }]);
    expect(await discoverSpotSymbols(db, 'main', ['USDT', 'ETH'])).toEqual(['BTCUSDT_SPBL']);
  });
});
