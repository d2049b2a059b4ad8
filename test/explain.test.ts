import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishedPath } from '../src/store/publish.ts';
import { BIN, cronEnvironment, runCli } from './support/cli-process.ts';
import { buildAll, insertHistory, openModelDb, spotFill } from './support/model-db.ts';

/**
 * `exledger explain` as an analyst runs it: the command in a process of its own, on the published
 * copy of a database built from a hand-made ledger (reporting currency USDT: every price is 1 or
 * derived from the fills). Deposit 10000 USDT; buy 1 BTC at 3000 and 1 at 4000; sell 1.5 BTC at
 * 5000 (fee 7.5 USDT): fifo takes all of the first lot (3000) and half of the second (2000).
 */
describe('exledger explain', () => {
  let dir: string;
  let db: string;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'exledger-explain-'));
    db = path.join(dir, 'books.duckdb');
    const database = await openModelDb(db);
    await insertHistory(database, 'funding_bills', [
      { billId: '501', coinId: 2, coinName: 'USDT', bizType: 'deposit', deltaAmount: '10000', afterAmount: '10000', fees: '0', cTime: String(Date.parse('2026-01-09T12:00:00Z')) },
    ]);
    await insertHistory(database, 'spot_fills', [
      spotFill('BTCUSDT_SPBL', '1', '2026-01-10T10:00:00Z', 'buy', '1', '3000', '0', '3000'),
      spotFill('BTCUSDT_SPBL', '2', '2026-01-15T10:00:00Z', 'buy', '1', '4000', '0', '4000'),
      spotFill('BTCUSDT_SPBL', '3', '2026-02-20T10:00:00Z', 'sell', '1.5', '5000', '7.5', '7500'),
    ]);
    await buildAll(database, { costMethods: ['fifo'], reportingCurrency: 'USDT' });
    database.close();
    copyFileSync(db, publishedPath(db));
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a journal entry: its source record, its legs with their values, the lots each disposal took, and its lines', async () => {
    const result = await runCli(['explain', 'spot/main/3', '--db', db], { cwd: dir });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const out = result.stdout;
    expect(out).toMatch(/^spot\/main\/3: Spot sell BTCUSDT_SPBL fill 3 \(2026-02-20, trade, status posted\)$/m);
    expect(out).toContain('Source record: staging.spot_fills (account=main; fill_id=3)');
    expect(out).toMatch(/^ {2}fill_quantity: 1\.5/m);
    // The BTC given up: worth 1.5 * 5000 = 7500, cost 3000 + 2000, gain 2500.
    expect(out).toMatch(/^ {2}2 +trade +out +BTC +1\.5 +7500 +market +5000 +7500 +2500$/m);
    // The lots it took, fifo: all of fill 1's, half of fill 2's.
    expect(out).toMatch(/^Lots taken by leg 2 \(1\.5 BTC out\):$/m);
    expect(out).toMatch(/^ {2}lot +spot\/main\/1 +2026-01-10 +1 +3000$/m);
    expect(out).toMatch(/^ {2}lot +spot\/main\/2 +2026-01-15 +0\.5 +2000$/m);
    // The USDT fee came from the deposit's lot.
    expect(out).toMatch(/^ {2}lot +bill\/main\/501 +2026-01-09 +7\.5 +7\.5$/m);
    // And the lines it posted.
    expect(out).toMatch(/^ {2}\d +Realized gains and losses +BTC +0 +2500$/m);

    const json = await runCli(['explain', 'spot/main/3', '--db', db, '--json'], { cwd: dir });
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.stdout) as { explanation: { legs: { leg: Record<string, unknown>; lots: Record<string, unknown>[] }[] } };
    expect(parsed.explanation.legs.find((leg) => leg.leg.coin === 'BTC')!.lots.map((lot) => [lot.lot_entry, lot.units, lot.cost])).toEqual([
      ['spot/main/1', '1', '3000'],
      ['spot/main/2', '0.5', '2000'],
    ]);
  });

  it('a roll-forward row: its figures and every movement of its month', async () => {
    const result = await runCli(['explain', 'holdings/main/BTC/fifo/2026-02', '--db', db], { cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('holdings/main/BTC/fifo/2026-02: BTC held by main, fifo, 2026-02 (marts.holdings_rollforward)');
    expect(result.stdout).toMatch(/^ {2}2 +7000 +0 +5000 +2500 +0 +0\.5 +2000 +/m);
    expect(result.stdout).toMatch(/^ {2}spot\/main\/3 +2026-02-20 +trade +out +1\.5 +5000 +7500 +2500$/m);
  });

  it('a mart row: its figures, the fills it sums and the lots its sells consumed', async () => {
    // The day's fees in USDT: the sell's 7.5 (a sell's fee is in the coin received).
    const fees = await runCli(['explain', 'fees_daily/main/spot/USDT/2026-02-20', '--db', db], { cwd: dir });
    expect(fees.code, fees.stderr).toBe(0);
    expect(fees.stdout).toMatch(/^fees_daily\/main\/spot\/USDT\/2026-02-20: a row of marts\.fees_daily$/m);
    expect(fees.stdout).toMatch(/^1 spot fills whose fee is in the row's coin \(staging\.spot_fills\): fees_paid 7\.5 = the sum of their fee; fee_count 1 = their number$/m);
    expect(fees.stdout).toMatch(/^ {2}3 +BTCUSDT_SPBL +sell +.* +1\.5 +5000 +7500 +7\.5 +USDT /m);
    // fifo: proceeds 7500 - 7.5 = 7492.5, cost 3000 + 2000, PnL 2492.5; the lots of fills 1 and 2.
    const pnl = await runCli(['explain', 'spot_realized_pnl_daily/main/fifo/BTCUSDT_SPBL/2026-02-20', '--db', db, '--json'], { cwd: dir });
    expect(pnl.code, pnl.stderr).toBe(0);
    const parsed = JSON.parse(pnl.stdout) as { explanation: { kind: string; row: Record<string, unknown>; sources: { model: string; rows: Record<string, unknown>[]; totals: { figure: string; value: string; total: string }[] }[] } };
    expect(parsed.explanation.kind).toBe('mart');
    const lots = parsed.explanation.sources.find((source) => source.model === 'marts.spot_lot_matches')!;
    expect(lots.rows.map((row) => [row.buy_fill_id, row.quantity, row.cost])).toEqual([
      ['1', '1.000000000000000000', '3000.000000000000'],
      ['2', '0.500000000000000000', '2000.000000000000'],
    ]);
    expect(lots.totals.find((total) => total.figure === 'realized_pnl')).toMatchObject({ value: '2492.500000000000', total: '2492.500000000000' });
    // A lot match: the sell fill and the buy fill whose lot it took, each found by its instant too.
    const match = await runCli(['explain', 'spot_lot_matches/main/fifo/BTCUSDT_SPBL/3/fill/main/2', '--db', db, '--json'], { cwd: dir });
    expect(match.code, match.stderr).toBe(0);
    const fills = (JSON.parse(match.stdout) as { explanation: { sources: { model: string; count: number; rows: Record<string, unknown>[] }[] } }).explanation.sources;
    expect(fills.map((source) => [source.model, source.count])).toEqual([['staging.spot_fills', 2]]);
    expect(fills[0]!.rows.map((row) => [row.role, row.fill_id, row.side, row.c_time_at])).toEqual([
      ['lot', '2', 'buy', '2026-01-15 10:00:00+00'],
      ['sell', '3', 'sell', '2026-02-20 10:00:00+00'],
    ]);
  });

  it('a mart row\'s reference that is not in the database: one error naming the mart and the forms, exit 2', async () => {
    const result = await runCli(['explain', 'fees_daily/main/spot/USDT/1999-01-01', '--db', db], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error: <reference>: "fees_daily\/main\/spot\/USDT\/1999-01-01" is not a row of marts\.fees_daily of this database\n {2}fix: give .*a mart row \(its reference column, <mart>\/<key values>/);
  });

  it('a reference a script took from `exledger sql --csv` (its CRLF line end: $(…) keeps the CR) or a copied cell: the row it names', async () => {
    // As a shell script does it: sh, the commands as cron runs them (no terminal, PATH and HOME only).
    const script = `R=$(node "$BIN" sql --csv "SELECT reference FROM marts.spot_lot_matches ORDER BY reference LIMIT 1" --db "$DB" | tail -n 1)
      case "$R" in *"$(printf '\\r')") echo "R ends in a CR";; esac
      node "$BIN" explain "$R" --db "$DB"`;
    const shell = await promisify(execFile)('sh', ['-c', script], { cwd: dir, env: cronEnvironment({ BIN, DB: db }) });
    // The reference as the script holds it: with the CR (RFC 4180's line end) that $(…) keeps.
    expect(shell.stdout).toMatch(/^R ends in a CR$/m);
    expect(shell.stdout).toMatch(/^spot_lot_matches\/main\/fifo\/BTCUSDT_SPBL\/3\/fill\/main\/1: a row of marts\.spot_lot_matches$/m);
    expect(shell.stdout).toMatch(/^ {2}buy_fill_id: 1$/m);
    // Pasted from a workbook's Reference cell, with spaces and a line end around it.
    const pasted = await runCli(['explain', ' spot/main/3\t\r\n', '--db', db], { cwd: dir });
    expect(pasted.code, pasted.stderr).toBe(0);
    expect(pasted.stdout).toMatch(/^spot\/main\/3: Spot sell BTCUSDT_SPBL fill 3 /m);
  });

  it('a reference not in the database, with a character a terminal does not show: the error shows it', async () => {
    const result = await runCli(['explain', 'fees_daily/main/spot/US\rDT/2026-02-20', '--db', db], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error: <reference>: "fees_daily\/main\/spot\/US\\rDT\/2026-02-20" is not a row of marts\.fees_daily of this database\n/);
  });

  it('a reference that is not in the database: one error naming it and the forms, exit 2', async () => {
    const result = await runCli(['explain', 'spot/main/999', '--db', db], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^error: <reference>: "spot\/main\/999" is not a journal entry of this database\n {2}fix: give a journal entry \(spot\/<account>\/<fill id>/);
  });
});
