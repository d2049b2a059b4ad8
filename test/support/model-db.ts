import { STREAMS } from '../../pipelines/index.ts';
import { ensureRawTables } from '../../src/extract/sync.ts';
import { buildModels, type BuildOptions, type ModelResult } from '../../src/models/build.ts';
import { loadProject } from '../../src/models/project.ts';
import { DEFAULT_MODEL_SETTINGS, type ModelSettings } from '../../src/models/settings.ts';
import { Database } from '../../src/store/database.ts';
import { recordRawChange } from '../../src/store/raw-store.ts';

/** The lines of a whole build (`[i/N]`, `build: N ok`): every macro file, then every model. */
export const BUILD_STEPS = (({ macros, models }) => macros.length + models.length)(loadProject());
/** The models of a whole build (macro files are not models), as its last line counts them: `build: N models: …`. */
export const BUILD_MODELS = loadProject().models.length;

/** Quote coins a sandbox-style spot symbol may end with, longest first (`XUSD_SPBL` is X in USD). */
const QUOTE_COINS = ['USDT', 'USDC', 'USD', 'BTC', 'ETH'];

/**
 * A spot fill as the exchange sends it (spot_fills' record), for hand-written ledgers: the base
 * and quote coins come from the symbol (`BTCUSDT_SPBL`: BTC in USDT), the order id from the fill id.
 * `price` '' is a fill without a price (its `total` is then the amount); `total` is '0' otherwise.
 */
export function spotFill(symbol: string, fillId: string, at: string, side: 'buy' | 'sell', quantity: string, price: string, fees = '0', total = '0'): object {
  const pair = symbol.replace(/_SPBL$/, '');
  const quote = QUOTE_COINS.find((coin) => pair.endsWith(coin) && pair.length > coin.length);
  if (quote === undefined) throw new Error(`spotFill: ${symbol} ends with none of ${QUOTE_COINS.join(', ')}`);
  return {
    accountId: '590105411156181178',
    symbol,
    baseCoin: pair.slice(0, -quote.length),
    quoteCoin: quote,
    orderId: `9${fillId}`,
    fillId,
    orderType: price === '' ? '' : 'limit',
    side,
    fillPrice: price,
    fillQuantity: quantity,
    fillTotalAmount: total,
    fees,
    cTime: String(Date.parse(at)),
  };
}

/**
 * A real DuckDB (in memory) with every raw table, for model tests: hand-written ledgers go into
 * the raw tables exactly as the exchange would send them, and the real runner builds the models.
 */
export async function openModelDb(location = ':memory:'): Promise<Database> {
  const db = await Database.open(location);
  await ensureRawTables(db, STREAMS);
  return db;
}

/** Record fields that carry the event time, in the order the streams use them. */
const TIME_FIELDS = ['cTime', 'createdTime', 'tradeTime', 'dealTime', 'date'] as const;
let keySequence = 0;

/** Options of insertHistory. */
export interface InsertOptions {
  /** @default 'main' */
  account?: string;
  /** The raw `_partition` (e.g. `productType=FUTURES` for commissions). @default '' */
  partition?: string;
  /** The raw `_event_ms`; by default the record's time field. */
  eventMs?: number;
}

/**
 * Inserts history records (objects as the exchange sends them: amounts as strings) into
 * raw.<stream>, each under a new unique key.
 */
export async function insertHistory(db: Database, stream: string, records: readonly object[], options: InsertOptions = {}): Promise<void> {
  let low = Infinity;
  let high = -Infinity;
  for (const record of records) {
    const fields = record as Record<string, unknown>;
    const timeField = TIME_FIELDS.find((field) => fields[field] !== undefined);
    const eventMs = options.eventMs ?? (timeField === undefined ? 0 : Number(fields[timeField]));
    keySequence += 1;
    low = Math.min(low, eventMs);
    high = Math.max(high, eventMs);
    await db.run(`INSERT INTO raw.${stream} VALUES ($1, $2, $3, $4, $5::JSON, 'test-run', now())`, [
      options.account ?? 'main',
      options.partition ?? '',
      `test-${keySequence}`,
      eventMs,
      JSON.stringify(record),
    ]);
  }
  // Logged as the sync logs its windows, so that an incremental build takes these rows.
  if (records.length > 0) await recordRawChange(db, { account: options.account ?? 'main', table: stream, kind: 'window', minEventMs: low, maxEventMs: high, rows: records.length, runId: 'test-run' });
}

/** Inserts one snapshot of a snapshot stream taken at `takenAt` (ISO instant), by the sync `runId` ('test-run' unless given). */
export async function insertSnapshot(db: Database, stream: string, takenAt: string, records: readonly object[], options: { account?: string; partition?: string; runId?: string } = {}): Promise<void> {
  const runId = options.runId ?? 'test-run';
  let seq = 0;
  for (const record of records) {
    await db.run(`INSERT INTO raw.${stream} VALUES ($1, $2, $3::TIMESTAMPTZ, $4, $5::JSON, $6, now())`, [
      options.account ?? 'main',
      options.partition ?? '',
      takenAt,
      seq++,
      JSON.stringify(record),
      runId,
    ]);
  }
  await recordRawChange(db, { account: options.account ?? 'main', table: stream, kind: 'snapshot', minEventMs: Date.parse(takenAt), maxEventMs: Date.parse(takenAt), rows: records.length, runId });
}

/** Builds every model with these settings (defaults otherwise); throws naming each model that failed. */
export async function buildAll(db: Database, settings: Partial<ModelSettings> = {}, options: BuildOptions = {}): Promise<ModelResult[]> {
  const results = await buildModels(db, { ...DEFAULT_MODEL_SETTINGS, ...settings }, options);
  const broken = results.filter((result) => result.status !== 'ok');
  if (broken.length > 0) throw new Error(`models not built:\n${broken.map((result) => `${result.id} ${result.status}: ${result.message}`).join('\n')}`);
  return results;
}

/** Runs a query; rows as objects with DECIMAL, BIGINT and times as exact strings. */
export function queryRows<T = Record<string, string | null>>(db: Database, sql: string): Promise<T[]> {
  return db.all<T>(sql);
}

/** A futures fill as the exchange sends it (exchange-api.md; amounts as strings); `direction` OPEN_LONG, CLOSE_SHORT…, a liquidation where `liquidateFee` is not 0. */
export function futuresFill(tradeId: string, symbol: string, at: string, direction: string, size: string, value: string, fee: string, pnl: string, liquidateFee = '0'): object {
  return {
    tradeId,
    orderId: `9${tradeId}`,
    symbol,
    marginMode: 'SHARED',
    separatedMode: 'COMBINED',
    positionSide: direction.endsWith('LONG') ? 'LONG' : 'SHORT',
    orderSide: direction === 'OPEN_LONG' || direction === 'CLOSE_SHORT' ? 'BUY' : 'SELL',
    fillSize: size,
    fillValue: value,
    fillFee: fee,
    liquidateFee,
    realizePnl: pnl,
    direction,
    liquidateType: liquidateFee === '0' ? '' : 'FORCE_LIQUIDATE',
    legacyOrdeDirection: direction,
    createdTime: String(Date.parse(at)),
  };
}

/** The futures account payload (exchange-api.md 2.11) with one USDT collateral entry and its running funding total. */
export function futuresAccountRecord(cumFunding: string): object {
  const zero = '0';
  return {
    account: { id: 'a1', user_id: 'u1', status: 'NORMAL' },
    collateral: [
      {
        account_id: 'a1',
        coin_id: 2,
        margin_mode: 'SHARED',
        cross_contract_id: 0,
        isolated_position_id: '0',
        amount: '10000',
        cum_deposit_amount: zero,
        cum_withdraw_amount: zero,
        cum_transfer_in_amount: '10000',
        cum_transfer_out_amount: zero,
        cum_position_fill_fee_amount: zero,
        cum_position_liquidate_fee_amount: zero,
        cum_position_funding_amount: cumFunding,
      },
    ],
    position: [],
    version: '1',
  };
}
