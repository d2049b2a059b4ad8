import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './support/cli-process.ts';
import { parseCsv } from './support/csv-rows.ts';
import { startSandboxProcess, type SandboxProcess } from './support/sandbox-process.ts';
import { queryDatabase } from './support/sync-harness.ts';

/**
 * `exledger report journal` as deployed: exledger sync, build and report in processes of their
 * own, against `exledger sandbox` in another, reporting in USD with daily USDT closes.
 */

/** A plain decimal string as an integer of 10^-12 units (exact: the CSV's amounts never pass through a JS number). */
function units(text: string): bigint {
  if (text === '') return 0n;
  expect(text).toMatch(/^\d+(\.\d{1,12})?$/);
  const [whole, fraction = ''] = text.split('.');
  return BigInt(whole!) * 10n ** 12n + BigInt(fraction.padEnd(12, '0'));
}

/** Daily USDT closes for September and October 2026, except the days `missing`. */
function usdtCloses(missing: readonly string[] = []): string {
  const lines = ['date,coin,currency,price'];
  for (let day = Date.parse('2026-09-01T00:00:00Z'); day <= Date.parse('2026-10-31T00:00:00Z'); day += 86_400_000) {
    const date = new Date(day).toISOString().slice(0, 10);
    if (!missing.includes(date)) lines.push(`${date},USDT,USD,0.99${String(((day / 86_400_000) % 90) + 10)}`);
  }
  return `${lines.join('\n')}\n`;
}

describe('deployed: exledger report journal', () => {
  let exchange: SandboxProcess;
  let dir: string;
  const cli = (args: string[]) => runCli(args, { cwd: dir, env: exchange.settings });
  const database = () => path.join(dir, 'ledger.duckdb');
  const config = (models: object) =>
    writeFileSync(
      path.join(dir, 'exledger.config.json'),
      JSON.stringify({ db: './ledger.duckdb', retry: { retries: 8, minTimeoutMs: 50, maxTimeoutMs: 500 }, sync: { startDate: '2026-09-01' }, models }),
    );
  const USD = { reportingCurrency: 'USD', pricesFile: 'prices.csv', costMethods: ['fifo', 'average'] };

  beforeAll(async () => {
    exchange = await startSandboxProcess(['--end', '2026-11-01']);
    dir = mkdtempSync(path.join(tmpdir(), 'exledger-journal-deployed-'));
    writeFileSync(path.join(dir, 'prices.csv'), usdtCloses());
    config(USD);
    const sync = await cli(['sync', '--streams', 'currencies,futures_contracts,spot_fills,futures_fills,futures_accounts,funding_bills,affiliate_commissions']);
    expect(sync.code, sync.stdout + sync.stderr).toBe(0);
  });
  afterAll(async () => {
    expect(await exchange?.stop()).toBe(0);
    if (process.env.KEEP_JOURNAL_DIR === undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('writes the workbook and the CSV: the CSV balances overall and per entry, in the import layout, with exact plain decimals; the workbook\'s totals are the SQL sums over the mart; rows without a price are a warning and exit 3', async () => {
    const build = await cli(['build']);
    expect(build.code, build.stdout + build.stderr).toBe(0);
    const check = await cli(['check', '--select', 'marts.journal_entries']);
    expect(check.code, check.stdout + check.stderr).toBe(0);
    expect(check.stdout).toContain('journal_entries_balance');

    // Leave out the USDT close of a day with spot PnL: that day's records are not valued in full.
    const [missing] = (
      await queryDatabase<{ day: string }>(
        database(),
        "select cast(trade_date as varchar) as day from marts.spot_realized_pnl_daily where cost_method = 'fifo' and quote_coin = 'USDT' and realized_pnl <> 0 and trade_month = '2026-10-01' order by trade_date limit 1",
      )
    ).map((row) => row.day);
    writeFileSync(path.join(dir, 'prices.csv'), usdtCloses([missing!]));
    expect((await cli(['build'])).code).toBe(0);

    const report = await cli(['report', 'journal', '--period', '2026-10', '--out', 'out']);
    const [sql] = await queryDatabase<{ lines: string; debits: string; credits: string; unposted: string }>(
      database(),
      `select cast(count(*) as varchar) as lines, cast(sum(debit) as varchar) as debits, cast(sum(credit) as varchar) as credits,
         (select cast(count(*) as varchar) from marts.journal_sources where status in ('no_price', 'suspense') and entry_date between '2026-10-01' and '2026-10-31') as unposted
       from marts.journal_entries where entry_date between '2026-10-01' and '2026-10-31'`,
    );
    expect(Number(sql!.unposted)).toBeGreaterThan(0);
    expect(report.code, report.stdout + report.stderr).toBe(3);
    expect(report.stderr).toContain(`warning: out/journal-2026-10.csv: ${sql!.unposted} source row${sql!.unposted === '1' ? '' : 's'} not valued in full: a price in the reporting currency`);
    expect(report.stdout).toContain('out/journal-2026-10.xlsx');

    const csv = parseCsv(readFileSync(path.join(dir, 'out', 'journal-2026-10.csv'), 'utf8'));
    expect(csv[0]).toEqual(['date', 'account', 'debit', 'credit', 'currency', 'memo', 'reference']);
    const lines = csv.slice(1);
    expect(lines).toHaveLength(Number(sql!.lines));
    const perEntry = new Map<string, bigint>();
    let debits = 0n;
    let credits = 0n;
    for (const [date, account, debit, credit, currency, memo, reference] of lines) {
      expect(date).toMatch(/^2026-10-\d{2}$/);
      expect(account).not.toBe('');
      expect(currency).toBe('USD');
      expect(memo).not.toBe('');
      // One side per line, the other empty; never an exponent (units() checks the form).
      expect([debit, credit].filter((side) => side === '')).toHaveLength(1);
      debits += units(debit!);
      credits += units(credit!);
      perEntry.set(reference!, (perEntry.get(reference!) ?? 0n) + units(debit!) - units(credit!));
    }
    expect(debits).toBe(credits);
    expect(debits).toBe(units(sql!.debits.replace(/\.?0+$/, '')));
    expect([...perEntry.entries()].filter(([, balance]) => balance !== 0n)).toEqual([]);
    // The day without a USDT close: its trades' values are unknown, so no gain or loss is posted for
    // them (never a line of 0): what their coins cost is in the suspense account.
    const unvalued = await queryDatabase<{ entry_id: string }>(database(), `select entry_id from marts.journal_sources where entry_date = '${missing}' and kind = 'trade' and status = 'suspense'`);
    expect(unvalued.length).toBeGreaterThan(0);
    const unvaluedIds = new Set(unvalued.map((row) => row.entry_id));
    expect(lines.filter(([, account, , , , , reference]) => unvaluedIds.has(reference!) && account === 'Realized gains and losses')).toEqual([]);
    expect(lines.some(([, account, , , , , reference]) => unvaluedIds.has(reference!) && account === 'Suspense:unvalued')).toBe(true);

    // The workbook's figures are the sums over the mart; the unposted rows are counted and listed.
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(path.join(dir, 'out', 'journal-2026-10.xlsx'));
    const summary: unknown[][] = [];
    workbook.getWorksheet('Summary')!.eachRow((row) => summary.push([1, 2, 3, 4].map((column) => (column === 1 ? row.getCell(1).text : row.getCell(column).value))));
    const figure = (label: string) => summary.find((line) => line[0] === label);
    expect(figure('Debits')?.slice(1, 4)).toEqual(['USD', expect.any(Number), sql!.debits.replace(/\.?0+$/, '')]);
    expect(figure('Credits')?.[3]).toBe(sql!.credits.replace(/\.?0+$/, ''));
    expect(figure('Source records not valued in full (no price)')?.[3]).toBe(sql!.unposted);
    expect(summary.find((line) => line[0] === 'Journal')?.[1]).toContain('cost method fifo');
    let notPosted = 0;
    workbook.getWorksheet('Not valued in full')!.eachRow((_, index) => {
      if (index > 1 && index <= 1 + Number(sql!.unposted)) notPosted++;
    });
    expect(notPosted).toBe(Number(sql!.unposted));
    expect(readdirSync(path.join(dir, 'out')).filter((name) => name.startsWith('.'))).toEqual([]);
  });

  it('configuration errors are exit 2 naming the key, and leave the earlier workbook and CSV untouched', async () => {
    const csv = path.join(dir, 'out', 'journal-2026-10.csv');
    const before = existsSync(csv) ? readFileSync(csv, 'utf8') : null;

    config({ ...USD, journal: { accounts: { tradingFees: 'Fees:{symbol}' } } });
    const bad = await cli(['report', 'journal', '--period', '2026-10', '--out', 'out']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('models.journal.accounts.tradingFees: the only placeholders are {coin}, {account}, {counterpart} and {contract}');

    config({ ...USD, journal: { costMethod: 'uk' } });
    const method = await cli(['build']);
    expect(method.code).toBe(2);
    expect(method.stderr).toContain('models.journal.costMethod: "uk" is not one of the cost methods built (fifo, average)');

    config({});
    const none = await cli(['report', 'journal', '--period', '2026-10', '--out', 'out']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('models.reportingCurrency: is not set: the journal report posts values in the reporting currency');
    // `all` leaves the journal out without a reporting currency (the other workbooks are written).
    const all = await cli(['report', 'all', '--period', '2026-10', '--out', 'all-out']);
    expect(all.code, all.stdout + all.stderr).toBe(0);
    expect(readdirSync(path.join(dir, 'all-out')).filter((name) => name.startsWith('journal'))).toEqual([]);

    if (before !== null) expect(readFileSync(csv, 'utf8')).toBe(before);
    config(USD);
  });
});
