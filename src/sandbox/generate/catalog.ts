/**
 * What the sandbox exchange lists: currencies, spot pairs and futures contracts, with the
 * precisions that make every generated amount exact.
 *
 * Precision rule: a spot fill's fillTotalAmount is price * quantity, so for every pair
 * priceDecimals + quantityDecimals <= the quote coin's decimals; a futures fill's fee is
 * price * size * rate with 4-decimal rates, so priceDecimals + sizeDecimals + 4 <= 8.
 * Listed-but-never-traded pairs and contracts, and currencies without any pair, exist on purpose:
 * a sync has to discover the symbols it needs (exchange-notes "Paging and ordering").
 */
import type { SpotSymbol, WireObject } from '../model.ts';
import type { MarketAsset } from './market.ts';

/** One deposit/withdrawal chain of a currency (exchange-api.md 2.7). */
export interface ChainSpec {
  chain: string | null;
  needTag: boolean;
  withdrawAble: boolean;
  rechargeAble: boolean;
  withdrawFee: string;
  depositConfirm: number;
  withdrawConfirm: number;
  minDepositAmount: string;
  minWithdrawAmount: string;
  browserUrl: string;
}

/** A currency: its id, the decimals its balances and bills are written with, its chains. */
export interface CoinSpec {
  name: string;
  coinId: number;
  decimals: number;
  chains: ChainSpec[];
}

/** A day range [fromDay, toDay) of the history (day 0 is its first UTC day). */
export type DayRange = readonly [number, number];

/** A spot pair and how the generator trades it. */
export interface SpotSymbolSpec extends SpotSymbol {
  priceDecimals: number;
  quantityDecimals: number;
  /** Smallest order, in quantity units (10^-quantityDecimals). */
  minQuantityUnits: number;
  /** Days the account trades it (empty: listed, never traded); jittered per account. */
  tradedDays: readonly DayRange[];
  /** Relative share of the account's orders while traded. */
  weight: number;
}

/** A USDT-margined perpetual contract and how the generator trades it. */
export interface ContractSpec {
  symbol: string;
  /** The futures id used as key of the account's setting maps (2.11). */
  contractId: number;
  base: MarketAsset | 'XRP' | 'DOGE';
  priceDecimals: number;
  /** Prices are multiples of priceEndStep units of the last decimal (e.g. 5: ...0 or ...5). */
  priceEndStep: number;
  sizeDecimals: number;
  contractVal: string;
  minOrderSize: string;
  maxOrderSize: string;
  maxPositionSize: string;
  maxLeverage: number;
  tradedDays: readonly DayRange[];
  weight: number;
}

const usdtChains: ChainSpec[] = [
  chain('TRC20', '1', '10', 'https://tronscan.org/#/transaction/', 19),
  chain('ERC20', '3.5', '20', 'https://etherscan.io/tx/', 12),
  chain('BEP20', '0.3', '10', 'https://bscscan.com/tx/', 15),
];

function chain(name: string | null, withdrawFee: string, minWithdrawAmount: string, browserUrl: string, confirms: number, needTag = false): ChainSpec {
  return {
    chain: name,
    needTag,
    withdrawAble: name !== null,
    rechargeAble: name !== null,
    withdrawFee,
    depositConfirm: confirms,
    withdrawConfirm: confirms,
    minDepositAmount: name === null ? '0' : '0.0001',
    minWithdrawAmount,
    browserUrl,
  };
}

/**
 * Every listed currency. ETH carries 18 decimals (wei precision), the others 8; WXT is an
 * exchange token without an on-chain network (chain null). LTC, TRX, ADA and TON have no pair.
 */
export const COINS: readonly CoinSpec[] = [
  { name: 'BTC', coinId: 1, decimals: 8, chains: [chain('BTC', '0.0002', '0.001', 'https://mempool.space/tx/', 2)] },
  { name: 'USDT', coinId: 2, decimals: 8, chains: usdtChains },
  {
    name: 'ETH',
    coinId: 3,
    decimals: 18,
    chains: [chain('ERC20', '0.0015', '0.01', 'https://etherscan.io/tx/', 12), chain('ARBITRUM', '0.0001', '0.005', 'https://arbiscan.io/tx/', 20)],
  },
  { name: 'LTC', coinId: 4, decimals: 8, chains: [chain('LTC', '0.001', '0.01', 'https://blockchair.com/litecoin/transaction/', 6)] },
  { name: 'XRP', coinId: 5, decimals: 8, chains: [chain('XRP', '0.2', '20', 'https://xrpscan.com/tx/', 1, true)] },
  { name: 'TRX', coinId: 6, decimals: 8, chains: [chain('TRC20', '1', '10', 'https://tronscan.org/#/transaction/', 19)] },
  { name: 'SOL', coinId: 7, decimals: 8, chains: [chain('SOL', '0.008', '0.1', 'https://solscan.io/tx/', 32)] },
  { name: 'ADA', coinId: 8, decimals: 8, chains: [chain('ADA', '1', '10', 'https://cardanoscan.io/transaction/', 15)] },
  { name: 'DOGE', coinId: 9, decimals: 8, chains: [chain('DOGE', '4', '20', 'https://blockchair.com/dogecoin/transaction/', 20)] },
  { name: 'WXT', coinId: 12, decimals: 8, chains: [chain(null, '0', '0', '', 0)] },
  { name: 'SHIB', coinId: 18, decimals: 8, chains: [chain('ERC20', '250000', '1000000', 'https://etherscan.io/tx/', 12)] },
  { name: 'TON', coinId: 21, decimals: 8, chains: [chain('TON', '0.05', '1', 'https://tonviewer.com/transaction/', 1, true)] },
];

/** Every listed spot pair; XRPUSDT and DOGEUSDT are listed but the account never trades them. */
export const SPOT_SYMBOLS: readonly SpotSymbolSpec[] = [
  spot('BTC', 'USDT', 2, 6, 100, [[0, 365]], 5),
  spot('ETH', 'USDT', 2, 4, 10, [[0, 365]], 4),
  spot('SOL', 'USDT', 2, 3, 10, [[35, 365]], 3),
  // Stops for five months in the middle of the year, then comes back.
  spot('WXT', 'USDT', 6, 2, 100, [[0, 110], [265, 365]], 2),
  spot('SHIB', 'USDT', 8, 0, 200_000, [[20, 150]], 2),
  // Quoted in BTC: the quote leg of its bills moves BTC, not USDT.
  spot('ETH', 'BTC', 5, 3, 10, [[0, 125], [300, 365]], 1),
  spot('XRP', 'USDT', 4, 2, 100, [], 0),
  spot('DOGE', 'USDT', 5, 1, 100, [], 0),
];

function spot(baseCoin: string, quoteCoin: string, priceDecimals: number, quantityDecimals: number, minQuantityUnits: number, tradedDays: DayRange[], weight: number): SpotSymbolSpec {
  return { symbol: `${baseCoin}${quoteCoin}_SPBL`, baseCoin, quoteCoin, priceDecimals, quantityDecimals, minQuantityUnits, tradedDays, weight };
}

/** Maker and taker fee rates of spot fills (fee charged in the asset received). */
export const SPOT_FEE_RATES = { maker: '0.0008', taker: '0.001' } as const;

/** Maker and taker fee rates of futures fills, and the extra fee of a forced liquidation. */
export const FUTURES_FEE_RATES = { maker: '0.0002', taker: '0.0006', liquidation: '0.0005' } as const;

/** The leverage the account's futures settings carry for every contract. */
export const FUTURES_LEVERAGE = 10;

/** Futures settle funding at these times of day (2.8 delivery), every 8 hours. */
export const FUNDING_TIMES = ['00:00:00', '08:00:00', '16:00:00'] as const;

/** Every listed contract; XRP and DOGE are listed but the account never trades them. */
export const CONTRACTS: readonly ContractSpec[] = [
  contract('BTC', 10000001, 1, 5, 3, '0.0001', '0.001', '1200', '5000', 125, [[1, 365]], 5),
  contract('ETH', 10000002, 2, 1, 2, '0.001', '0.01', '10000', '40000', 100, [[1, 365]], 3),
  contract('SOL', 10000004, 3, 1, 1, '0.1', '0.1', '100000', '400000', 75, [[60, 250]], 2),
  contract('XRP', 10000005, 4, 1, 0, '1', '10', '5000000', '20000000', 75, [], 0),
  contract('DOGE', 10000009, 5, 1, 0, '1', '100', '50000000', '200000000', 75, [], 0),
];

function contract(
  base: ContractSpec['base'],
  contractId: number,
  priceDecimals: number,
  priceEndStep: number,
  sizeDecimals: number,
  contractVal: string,
  minOrderSize: string,
  maxOrderSize: string,
  maxPositionSize: string,
  maxLeverage: number,
  tradedDays: DayRange[],
  weight: number,
): ContractSpec {
  return {
    symbol: `cmt_${base.toLowerCase()}usdt`,
    contractId,
    base,
    priceDecimals,
    priceEndStep,
    sizeDecimals,
    contractVal,
    minOrderSize,
    maxOrderSize,
    maxPositionSize,
    maxLeverage,
    tradedDays,
    weight,
  };
}

/** The coin with the given name; throws for an unknown name. */
export function coinByName(name: string): CoinSpec {
  const coin = COINS.find((c) => c.name === name);
  if (coin === undefined) throw new RangeError(`unknown coin ${name}`);
  return coin;
}

/** public/currencies payload (2.7): every value a string, booleans and numbers included. */
export function buildCurrenciesWire(): WireObject[] {
  return COINS.map((coin) => ({
    coinId: String(coin.coinId),
    coinName: coin.name,
    transfer: 'true',
    chains: coin.chains.map((c) => ({
      chain: c.chain,
      needTag: String(c.needTag),
      withdrawAble: String(c.withdrawAble),
      rechargeAble: String(c.rechargeAble),
      withdrawFee: c.withdrawFee,
      depositConfirm: String(c.depositConfirm),
      withdrawConfirm: String(c.withdrawConfirm),
      minDepositAmount: c.minDepositAmount,
      minWithdrawAmount: c.minWithdrawAmount,
      browserUrl: c.browserUrl,
    })),
  }));
}

/**
 * market/contracts payload (2.8) in its JSON types: strings, except listing (null, as in the
 * sample), delivery (array), forwardContractFlag (boolean) and the integer fields.
 * size_increment and tick_size are decimal-place counts, as the real exchange sends them.
 */
export function buildContractsWire(): WireObject[] {
  return CONTRACTS.map((c) => ({
    symbol: c.symbol,
    underlying_index: c.base,
    quote_currency: 'USDT',
    coin: 'USDT',
    contract_val: c.contractVal,
    listing: null,
    delivery: [...FUNDING_TIMES],
    size_increment: String(c.sizeDecimals),
    tick_size: String(c.priceDecimals),
    forwardContractFlag: true,
    priceEndStep: c.priceEndStep,
    minLeverage: 1,
    maxLeverage: c.maxLeverage,
    buyLimitPriceRatio: '0.01',
    sellLimitPriceRatio: '0.01',
    makerFeeRate: FUTURES_FEE_RATES.maker,
    takerFeeRate: FUTURES_FEE_RATES.taker,
    minOrderSize: c.minOrderSize,
    maxOrderSize: c.maxOrderSize,
    maxPositionSize: c.maxPositionSize,
  }));
}

/** The public list of spot pairs (symbol, base, quote). */
export function listSpotSymbols(): SpotSymbol[] {
  return SPOT_SYMBOLS.map((s) => ({ symbol: s.symbol, baseCoin: s.baseCoin, quoteCoin: s.quoteCoin }));
}
