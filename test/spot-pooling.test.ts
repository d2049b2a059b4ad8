import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkModels } from '../src/models/check.ts';
import type { Pooling } from '../src/models/settings.ts';
import type { Database } from '../src/store/database.ts';
import { runCli } from './support/cli-process.ts';
import { buildAll, insertHistory, openModelDb, queryRows, spotFill } from './support/model-db.ts';

/**
 * models.pooling on a hand-made two-account ledger, built once per account and once universal
 * (one inventory per symbol across accounts), every cost method. Convention (README): a buy of q
 * at p adds q units costing q*p, a sell of q at p has proceeds q*p (no fees here).
 *
 * XUSD: 1 Mar a buys 1 @ 100 (fill 1); 2 Mar b buys 1 @ 200 (2); 3 Mar a buys 1 @ 150 (3);
 *       4 Mar b sells 1 @ 300 (4); 5 Mar a sells 2 @ 250 = 500 (5).
 * YUSD: opening positions a 1 costing 50 and b 1 costing 80; 1 Mar b sells 1 @ 100 (6).
 */
const fill = (symbol: string, fillId: string, day: string, side: 'buy' | 'sell', quantity: string, price: string): object => spotFill(symbol, fillId, `2025-03-0${day}T10:00:00Z`, side, quantity, price);

const FILLS: Record<string, object[]> = {
  a: [fill('XUSD_SPBL', '1', '1', 'buy', '1', '100'), fill('XUSD_SPBL', '3', '3', 'buy', '1', '150'), fill('XUSD_SPBL', '5', '5', 'sell', '2', '250')],
  b: [fill('XUSD_SPBL', '2', '2', 'buy', '1', '200'), fill('XUSD_SPBL', '4', '4', 'sell', '1', '300'), fill('YUSD_SPBL', '6', '1', 'sell', '1', '100')],
};
const OPENING = [
  { account: 'a', symbol: 'YUSD_SPBL', quantity: '1', cost: '50' },
  { account: 'b', symbol: 'YUSD_SPBL', quantity: '1', cost: '80' },
];

const dbs = new Map<Pooling, Database>();

beforeAll(async () => {
  for (const pooling of ['account', 'universal'] as const) {
    const db = await openModelDb();
    for (const [account, fills] of Object.entries(FILLS)) await insertHistory(db, 'spot_fills', fills, { account });
    await buildAll(db, { costMethods: ['fifo', 'average', 'lifo', 'hifo', 'uk'], openingPositions: OPENING, pooling });
    dbs.set(pooling, db);
  }
}, 120_000);
afterAll(() => {
  for (const db of dbs.values()) db.close();
});

/** '-18.500000000000' -> '-18.5', so expectations read like the arithmetic. */
const trim = (value: string | null) => (value !== null && /^-?\d+\.\d+$/.test(value) ? value.replace(/\.?0+$/, '') : value);

/** Per cost method, account: the realized PnL of the symbol's sells. */
async function pnl(pooling: Pooling, symbol: string): Promise<Record<string, string | null>> {
  const rows = await queryRows<{ key: string; pnl: string }>(
    dbs.get(pooling)!,
    `select cost_method || ' ' || account as key, sum(realized_pnl)::varchar as pnl from marts.spot_realized_pnl_daily
      where symbol = '${symbol}' group by all having sum(quantity_sold) > 0 order by all`,
  );
  return Object.fromEntries(rows.map((row) => [row.key, trim(row.pnl)]));
}

describe('pooling account and universal, every cost method', () => {
  it('per account: each account sells its own units', async () => {
    // a: lots 100 and 150, sells both for 500: 500 - 250 = 250 under every method (uk: pool of 250 for 2).
    // b: lot 200, sells it for 300: 100. YUSD: b's own opening lot (80) sold for 100: 20.
    expect(await pnl('account', 'XUSD_SPBL')).toEqual({
      'average a': '250', 'average b': '100', 'fifo a': '250', 'fifo b': '100', 'hifo a': '250', 'hifo b': '100',
      'lifo a': '250', 'lifo b': '100', 'uk a': '250', 'uk b': '100',
    });
    expect(await pnl('account', 'YUSD_SPBL')).toEqual({ 'average b': '20', 'fifo b': '20', 'hifo b': '20', 'lifo b': '20', 'uk b': '20' });
  });

  it('universal: one inventory of every account\'s lots, the PnL on the selling account', async () => {
    // Pool lots in time order: a 100 (1 Mar), b 200 (2 Mar), a 150 (3 Mar).
    // fifo: b's sell takes a's 100 (300 - 100 = 200); a's takes b's 200 and a's 150 (500 - 350 = 150).
    // lifo: b takes a's 150 (150); a takes b's 200 and a's 100 (500 - 300 = 200).
    // hifo: b takes its own 200 (100); a takes 150 and 100 (250), as per account.
    // average and uk (no buy after a sell, so the section 104 pool): 3 units for 450, b's unit costs 150 (150);
    // 2 units for 300 left, a's sell 500 - 300 = 200.
    expect(await pnl('universal', 'XUSD_SPBL')).toEqual({
      'average a': '200', 'average b': '150', 'fifo a': '150', 'fifo b': '200', 'hifo a': '250', 'hifo b': '100',
      'lifo a': '200', 'lifo b': '150', 'uk a': '200', 'uk b': '150',
    });
    // Opening lots by account: fifo takes a's (50): 100 - 50 = 50; lifo b's own (80): 20; hifo the
    // dearer, b's 80: 20; average and uk 2 units for 130: 100 - 65 = 35.
    expect(await pnl('universal', 'YUSD_SPBL')).toEqual({ 'average b': '35', 'fifo b': '50', 'hifo b': '20', 'lifo b': '20', 'uk b': '35' });
  });

  it('the lot detail names the lot\'s account', async () => {
    const detail = (pooling: Pooling) =>
      queryRows(
        dbs.get(pooling)!,
        `select account, sell_fill_id, lot_source, lot_account, buy_fill_id, quantity::varchar as quantity, cost::varchar as cost from marts.spot_lot_matches
          where cost_method = 'fifo' order by sell_fill_id, lot_account, buy_fill_id`,
      );
    const rows = (pooling: Pooling) => detail(pooling).then((all) => all.map((row) => Object.values(row).map(trim)));
    expect(await rows('account')).toEqual([
      ['b', '4', 'fill', 'b', '2', '1', '200'],
      ['a', '5', 'fill', 'a', '1', '1', '100'],
      ['a', '5', 'fill', 'a', '3', '1', '150'],
      ['b', '6', 'opening', 'b', null, '1', '80'],
    ]);
    // b's sell takes a's first lot, a's sell b's lot and a's last one; b's YUSD sell a's opening lot.
    expect(await rows('universal')).toEqual([
      ['b', '4', 'fill', 'a', '1', '1', '100'],
      ['a', '5', 'fill', 'a', '3', '1', '150'],
      ['a', '5', 'fill', 'b', '2', '1', '200'],
      ['b', '6', 'opening', 'a', null, '1', '50'],
    ]);
  });

  it('universal: each account\'s open figures are its contribution, and add up to the pool', async () => {
    const open = await queryRows(
      dbs.get('universal')!,
      `select cost_method, account, symbol, arg_max(open_quantity, trade_date)::varchar as q, arg_max(open_cost, trade_date)::varchar as c
        from marts.spot_realized_pnl_daily where cost_method in ('fifo', 'average') group by all order by all`,
    );
    // fifo XUSD: a put in 2 for 250 and its sell took out 350: 0 units, -100; b put in 200, took out 100: 100.
    // YUSD: a's opening 1 for 50 untouched; b put in 1 for 80 and took out a's 50: 0 units, 30.
    // The pool: XUSD empty (0, -100 + 100 = 0), YUSD 1 unit for 80 (b's opening lot).
    // average XUSD: a 250 - 300 = -50, b 200 - 150 = 50; YUSD: b 80 - 65 = 15 (pool: 1 for 65).
    expect(open.map((row) => Object.values(row).map(trim))).toEqual([
      ['average', 'a', 'XUSD_SPBL', '0', '-50'],
      ['average', 'a', 'YUSD_SPBL', '1', '50'],
      ['average', 'b', 'XUSD_SPBL', '0', '50'],
      ['average', 'b', 'YUSD_SPBL', '0', '15'],
      ['fifo', 'a', 'XUSD_SPBL', '0', '-100'],
      ['fifo', 'a', 'YUSD_SPBL', '1', '50'],
      ['fifo', 'b', 'XUSD_SPBL', '0', '100'],
      ['fifo', 'b', 'YUSD_SPBL', '0', '30'],
    ]);
  });

  it('the SQL checks pass under both poolings', async () => {
    for (const db of dbs.values()) {
      const failing = (await checkModels(db)).filter((result) => result.status !== 'pass' && /spot|no_floating_point/.test(result.id));
      expect(failing.map(({ id, status, sample }) => ({ id, status, sample }))).toEqual([]);
    }
  });
});

describe('exledger build --pooling, as deployed', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'exledger-pooling-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('an unknown pooling, as a flag or in the config file, is exit 2 naming it, and builds nothing', async () => {
    const flag = await runCli(['build', '--db', path.join(dir, 'flag.duckdb'), '--pooling', 'global'], { cwd: dir });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/pooling/);
    expect(flag.stderr).toMatch(/account.*universal/);
    writeFileSync(path.join(dir, 'exledger.config.json'), JSON.stringify({ db: './ledger.duckdb', models: { pooling: 'per-person' } }));
    const file = await runCli(['build'], { cwd: dir });
    expect(file.code).toBe(2);
    expect(file.stderr).toMatch(/models\.pooling/);
    expect(file.stderr).toMatch(/account.*universal/);
    expect(existsSync(path.join(dir, 'ledger.duckdb'))).toBe(false);
    expect(existsSync(path.join(dir, 'flag.duckdb'))).toBe(false);
  }, 60_000);
});
