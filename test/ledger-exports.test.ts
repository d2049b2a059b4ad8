import { spawnSync } from 'node:child_process';
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
 * `exledger report journal --format quickbooks,xero,netsuite,hledger` as deployed: exledger sync,
 * build and report in processes of their own, against `exledger sandbox` in another, reporting
 * in USD with daily USDT closes. Each file is checked against its ledger's published layout
 * (docs/workbooks.md "Ledger imports"), and the hledger journal by hledger itself.
 */

/** hledger on PATH (CI installs the Debian package; .ci/run). Without it the hledger test is skipped, saying why. */
const hasHledger = spawnSync('hledger', ['--version'], { encoding: 'utf8' }).status === 0;
if (!hasHledger) console.warn('hledger is not on PATH: the test that loads the hledger journal into hledger is skipped (apt-get install hledger)');

/** A decimal text (any number of decimals) as cents, rounded once, half away from zero: written here apart from the code under test. */
function roundedCents(text: string): bigint {
  const match = /^(-?)(\d+)(?:\.(\d*))?$/.exec(text);
  expect(match, text).not.toBeNull();
  const [, sign, whole, fraction = ''] = match!;
  const scale = Math.max(fraction.length, 2);
  const units = BigInt(whole! + fraction.padEnd(scale, '0'));
  const factor = 10n ** BigInt(scale - 2);
  const cents = (units + factor / 2n) / factor;
  return sign === '-' ? -cents : cents;
}

/** An amount the imports write (`1234.50`, `-0.04`): cents, exact; never more than 2 decimals, never an exponent. */
function cents(text: string): bigint {
  expect(text).toMatch(/^-?\d+\.\d{2}$/);
  return BigInt(text.replace('.', ''));
}

/** Daily USDT closes in USD from 1 August to 31 October 2026. */
function usdtCloses(): string {
  const lines = ['date,coin,currency,price'];
  for (let day = Date.parse('2026-08-01T00:00:00Z'); day <= Date.parse('2026-10-31T00:00:00Z'); day += 86_400_000) {
    lines.push(`${new Date(day).toISOString().slice(0, 10)},USDT,USD,0.99${String(((day / 86_400_000) % 90) + 10)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Each ledger account's balance on a journal workbook's Summary (its exact text), rounded once to the cent. */
async function workbookBalances(file: string): Promise<Map<string, bigint>> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.readFile(file);
  const totals = new Map<string, bigint>();
  workbook.getWorksheet('Summary')!.eachRow((row) => {
    if (row.getCell(1).text === 'Balance per ledger account (debits − credits)') {
      const [account, currency] = String(row.getCell(2).value).split(' · ');
      expect(currency).toBe('USD');
      totals.set(account!, roundedCents(String(row.getCell(4).value)));
    }
  });
  return totals;
}

/** Adds an amount to a total per key. */
function add(totals: Map<string, bigint>, key: string, amount: bigint): void {
  totals.set(key, (totals.get(key) ?? 0n) + amount);
}

describe('deployed: exledger report journal --format (ledger imports)', () => {
  let exchange: SandboxProcess;
  let dir: string;
  let codes: Record<string, string>;
  const cli = (args: string[]) => runCli(args, { cwd: dir, env: exchange.settings });
  const database = () => path.join(dir, 'ledger.duckdb');
  const MODELS = { reportingCurrency: 'USD', pricesFile: 'prices.csv' };
  const config = (reports: object = {}) =>
    writeFileSync(
      path.join(dir, 'exledger.config.json'),
      JSON.stringify({ db: './ledger.duckdb', retry: { retries: 8, minTimeoutMs: 50, maxTimeoutMs: 500 }, sync: { startDate: '2026-08-01' }, models: MODELS, reports }),
    );
  const RANGE = ['--from', '2026-08-01', '--to', '2026-10-31'];
  const BASE = 'journal-2026-08-01_2026-10-31';
  const file = (name: string) => path.join(dir, 'out', name);
  // Each ledger account's balance in the workbook (its Summary's exact text), rounded once to the cent.
  let workbookTotals: Map<string, bigint>;

  beforeAll(async () => {
    exchange = await startSandboxProcess(['--end', '2026-11-01']);
    dir = mkdtempSync(path.join(tmpdir(), 'exledger-ledger-exports-'));
    writeFileSync(path.join(dir, 'prices.csv'), usdtCloses());
    config();
    const sync = await cli(['sync', '--streams', 'currencies,futures_contracts,spot_fills,futures_fills,futures_accounts,funding_bills,affiliate_commissions']);
    expect(sync.code, sync.stdout + sync.stderr).toBe(0);
    const build = await cli(['build']);
    expect(build.code, build.stdout + build.stderr).toBe(0);
    // Xero names accounts by their codes: one for each ledger account of the journal, and the rounding account.
    const accounts = await queryDatabase<{ account: string }>(database(), 'select distinct ledger_account as account from marts.journal_entries order by 1');
    codes = Object.fromEntries([...accounts.map((row) => row.account), 'Rounding differences'].map((account, index) => [account, String(600 + index)]));
    config({ ledger: { xero: { accountCodes: codes } } });
  }, 240_000);
  afterAll(async () => {
    expect(await exchange?.stop()).toBe(0);
    if (process.env.KEEP_LEDGER_DIR === undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('writes each layout beside the workbook: headers, dates and amounts as each ledger reads them, every entry balanced to the cent, Xero 300 lines a file, each account\'s total the workbook\'s rounded once', async () => {
    const report = await cli(['report', 'journal', ...RANGE, '--out', 'out', '--format', 'quickbooks,xero', '--format', 'netsuite,hledger']);
    const [{ unposted }] = (await queryDatabase<{ unposted: string }>(
      database(),
      "select cast(count(*) as varchar) as unposted from marts.journal_sources where status = 'no_price' and entry_date between '2026-08-01' and '2026-10-31'",
    )) as [{ unposted: string }];
    expect(report.code, report.stdout + report.stderr).toBe(unposted === '0' ? 0 : 3);
    if (unposted !== '0') expect(report.stderr).toContain(`warning: out/${BASE}.quickbooks.csv, out/${BASE}.xero-1.csv`);
    expect(report.stdout).toContain(`out/${BASE}.xlsx`);
    expect(report.stdout).toMatch(/rounded to 0\.01 USD: \d+ rounding lines? on "Rounding differences"/);
    const names = readdirSync(path.join(dir, 'out')).sort();
    // --format names what is written beside the workbook: the plain CSV only when asked for (csv); no temporary file is left.
    expect(names.filter((name) => !/^journal-2026-08-01_2026-10-31\.xero-\d+\.csv$/.test(name))).toEqual([`${BASE}.journal`, `${BASE}.netsuite.csv`, `${BASE}.quickbooks.csv`, `${BASE}.xlsx`]);

    // The workbook's balance per ledger account (debits − credits), its exact text, rounded once.
    workbookTotals = await workbookBalances(file(`${BASE}.xlsx`));
    expect(workbookTotals.size).toBeGreaterThan(2);
    // The rounding account holds what rounding each account once leaves over (the exact balances add up to 0).
    const expected = new Map(workbookTotals);
    expected.set('Rounding differences', -[...workbookTotals.values()].reduce((sum, total) => sum + total, 0n));
    // An account whose lines add up to 0 (the rounding account's can) is compared as absent.
    const withoutZero = (totals: Map<string, bigint>) => new Map([...totals].filter(([, total]) => total !== 0n));

    // QuickBooks Online: its columns; dates MM/DD/YYYY; Debits or Credits, the other empty; a Journal No per entry of at most 21 characters.
    const quickbooks = parseCsv(readFileSync(file(`${BASE}.quickbooks.csv`), 'utf8'));
    expect(quickbooks[0]).toEqual(['Journal No', 'Journal Date', 'Account Name', 'Description', 'Debits', 'Credits', 'Name']);
    const qbEntries = new Map<string, { balance: bigint; lines: number; date: string }>();
    const qbTotals = new Map<string, bigint>();
    for (const [number, date, account, description, debit, credit, name] of quickbooks.slice(1)) {
      expect(number!.length).toBeLessThanOrEqual(21);
      expect(date).toMatch(/^(08|09|10)\/\d{2}\/2026$/);
      expect(description).toMatch(/ \([^()]+\)$/);
      expect(name).toBe('');
      expect([debit, credit].filter((side) => side === '')).toHaveLength(1);
      const amount = debit === '' ? -cents(credit!) : cents(debit!);
      expect(amount).not.toBe(0n);
      const entry = qbEntries.get(number!) ?? { balance: 0n, lines: 0, date: date! };
      expect(entry.date).toBe(date);
      qbEntries.set(number!, { balance: entry.balance + amount, lines: entry.lines + 1, date: date! });
      add(qbTotals, account!, amount);
    }
    expect([...qbEntries].filter(([, entry]) => entry.balance !== 0n || entry.lines < 2)).toEqual([]);
    expect(withoutZero(qbTotals)).toEqual(withoutZero(expected));

    // Xero: the template's columns; an entry per narration, never split across files; at most 300 lines a file; Amount signed.
    const xeroFiles = names.filter((name) => name.startsWith(`${BASE}.xero-`));
    expect(xeroFiles.length, 'three months of the sandbox are more than 300 lines').toBeGreaterThan(1);
    expect(xeroFiles.sort((a, b) => Number(/(\d+)\.csv$/.exec(a)![1]) - Number(/(\d+)\.csv$/.exec(b)![1]))).toEqual(xeroFiles.map((_, index) => `${BASE}.xero-${index + 1}.csv`));
    const xeroTotals = new Map<string, bigint>();
    const narrations = new Map<string, { file: string; balance: bigint; lines: number }>();
    let xeroLines = 0;
    for (const name of xeroFiles) {
      const rows = parseCsv(readFileSync(file(name), 'utf8'));
      expect(rows[0]).toEqual(['*Narration', '*Date', 'Description', '*AccountCode', '*TaxRate', '*Amount', 'TrackingName1', 'TrackingOption1', 'TrackingName2', 'TrackingOption2']);
      expect(rows.length - 1).toBeLessThanOrEqual(300);
      expect(rows.length - 1).toBeGreaterThan(0);
      xeroLines += rows.length - 1;
      for (const [narration, date, , code, taxRate, amountText, ...tracking] of rows.slice(1)) {
        expect(date).toMatch(/^\d{2} (Aug|Sep|Oct) 2026$/);
        expect(taxRate).toBe('Tax Exempt');
        expect(tracking).toEqual(['', '', '', '']);
        const account = Object.keys(codes).find((candidate) => codes[candidate] === code);
        expect(account, `code ${code}`).toBeDefined();
        const amount = cents(amountText!);
        expect(amount).not.toBe(0n);
        const entry = narrations.get(narration!) ?? { file: name, balance: 0n, lines: 0 };
        expect(entry.file, `entry ${narration} split across files`).toBe(name);
        narrations.set(narration!, { file: name, balance: entry.balance + amount, lines: entry.lines + 1 });
        add(xeroTotals, account!, amount);
      }
    }
    expect([...narrations].filter(([, entry]) => entry.balance !== 0n || entry.lines < 2)).toEqual([]);
    expect(withoutZero(xeroTotals)).toEqual(withoutZero(expected));
    // The same entries in every layout.
    expect(narrations.size).toBe(qbEntries.size);
    expect(xeroLines).toBe(quickbooks.length - 1);

    // NetSuite: an External ID (the entry) per entry, at least two balancing lines; Debit, Credit of at most 10 digits and 2 decimals.
    const netsuite = parseCsv(readFileSync(file(`${BASE}.netsuite.csv`), 'utf8'));
    expect(netsuite[0]).toEqual(['External ID', 'Date', 'Account', 'Debit', 'Credit', 'Memo']);
    const nsEntries = new Map<string, { balance: bigint; lines: number }>();
    const nsTotals = new Map<string, bigint>();
    for (const [externalId, date, account, debit, credit, memo] of netsuite.slice(1)) {
      expect(date).toMatch(/^(08|09|10)\/\d{2}\/2026$/);
      expect(memo).not.toBe('');
      expect([debit, credit].filter((side) => side === '')).toHaveLength(1);
      expect(debit === '' ? credit : debit).toMatch(/^\d{1,10}\.\d{2}$/);
      const amount = debit === '' ? -cents(credit!) : cents(debit!);
      const entry = nsEntries.get(externalId!) ?? { balance: 0n, lines: 0 };
      nsEntries.set(externalId!, { balance: entry.balance + amount, lines: entry.lines + 1 });
      add(nsTotals, account!, amount);
    }
    expect([...nsEntries].filter(([, entry]) => entry.balance !== 0n || entry.lines < 2)).toEqual([]);
    expect(withoutZero(nsTotals)).toEqual(withoutZero(expected));
    expect([...nsEntries.keys()].sort()).toEqual([...narrations.keys()].sort());
  });

  it.skipIf(!hasHledger)('the hledger journal passes hledger check (strict: accounts and commodity declared; balanced; dates in order), and hledger bal gives each account the workbook\'s total rounded once [skipped when hledger is not on PATH]', () => {
    const journal = file(`${BASE}.journal`);
    for (const checks of [['check'], ['check', '--strict'], ['check', 'ordereddates']]) {
      const checked = spawnSync('hledger', ['-f', journal, ...checks], { encoding: 'utf8' });
      expect(checked.status, `hledger ${checks.join(' ')}: ${checked.stderr}`).toBe(0);
    }
    const balance = spawnSync('hledger', ['-f', journal, 'bal', '-O', 'csv', '--no-total'], { encoding: 'utf8' });
    expect(balance.status, balance.stderr).toBe(0);
    const balances = new Map<string, bigint>();
    for (const [account, amount] of parseCsv(balance.stdout.replaceAll(/\r?\n/g, '\r\n')).slice(1)) {
      const [number, commodity] = amount!.split(' ');
      expect(commodity).toBe('USD');
      balances.set(account!, cents(number!));
    }
    const expected = new Map([...workbookTotals].filter(([, total]) => total !== 0n));
    const rounding = -[...workbookTotals.values()].reduce((sum, total) => sum + total, 0n);
    if (rounding !== 0n) expected.set('Rounding differences', rounding);
    expect(balances).toEqual(expected);
    // Every transaction as hledger reads it: dated in the period, its postings adding up to 0 exactly.
    const printed = spawnSync('hledger', ['-f', journal, 'print', '-O', 'csv'], { encoding: 'utf8' });
    expect(printed.status, printed.stderr).toBe(0);
    const transactions = new Map<string, bigint>();
    const rows = parseCsv(printed.stdout.replaceAll(/\r?\n/g, '\r\n'));
    const header = rows[0]!;
    for (const row of rows.slice(1)) {
      const at = (name: string) => row[header.indexOf(name)]!;
      expect(at('date')).toMatch(/^2026-(08|09|10)-\d{2}$/);
      add(transactions, at('txnidx'), cents(at('amount')));
    }
    expect([...transactions].filter(([, sum]) => sum !== 0n)).toEqual([]);
  });

  it('rounds to the minor unit configured (0: whole dollars) and removes an earlier export\'s Xero files past the last one', async () => {
    config({ ledger: { minorUnit: 0, xero: { accountCodes: codes } } });
    const xeroParts = () => readdirSync(path.join(dir, 'out')).filter((name) => /^journal-2026-10\.xero-\d+\.csv$/.test(name)).sort();
    const first = await cli(['report', 'journal', '--period', '2026-10', '--out', 'out', '--format', 'xero']);
    expect([0, 3]).toContain(first.code);
    const parts = xeroParts();
    // Two Xero files of an earlier export with more lines: they would be imported again beside the new ones.
    for (const extra of [parts.length + 1, parts.length + 2]) writeFileSync(file(`journal-2026-10.xero-${extra}.csv`), 'stale\r\n');
    const report = await cli(['report', 'journal', '--period', '2026-10', '--out', 'out', '--format', 'xero,hledger,csv']);
    expect([0, 3]).toContain(report.code);
    expect(report.stdout).toMatch(/rounded to 1 USD: /);
    expect(xeroParts()).toEqual(parts);
    expect(existsSync(file('journal-2026-10.csv'))).toBe(true);
    const xero = parts.flatMap((name) => parseCsv(readFileSync(file(name), 'utf8')).slice(1));
    const perEntry = new Map<string, bigint>();
    for (const [narration, , , , , amount] of xero) {
      expect(amount).toMatch(/^-?\d+$/);
      add(perEntry, narration!, BigInt(amount!));
    }
    expect([...perEntry].filter(([, sum]) => sum !== 0n)).toEqual([]);
    expect(readFileSync(file('journal-2026-10.journal'), 'utf8')).toContain('commodity 1000. USD');
    if (hasHledger) expect(spawnSync('hledger', ['-f', file('journal-2026-10.journal'), 'check', '--strict'], { encoding: 'utf8' }).status).toBe(0);
    config({ ledger: { xero: { accountCodes: codes } } });
  });

  it('refuses, exit 2 and nothing written: an unknown format (naming the valid ones), an account without its Xero code, a format no report named writes, more decimals than an import reads', async () => {
    const before = readdirSync(path.join(dir, 'out')).sort();
    const unknown = await cli(['report', 'journal', '--period', '2026-09', '--out', 'out', '--format', 'quickbook']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.split('\n')[0]).toBe('error: --format: "quickbook" is not a format; the formats are csv, quickbooks, xero, netsuite, hledger; did you mean quickbooks?');

    const { 'Trading fees': _fees, ...withoutFees } = codes;
    config({ ledger: { xero: { accountCodes: withoutFees } } });
    const uncoded = await cli(['report', 'journal', '--period', '2026-09', '--out', 'out', '--format', 'xero']);
    expect(uncoded.code).toBe(2);
    expect(uncoded.stderr).toContain('error: reports.ledger.xero.accountCodes: has no code for "Trading fees": Xero imports an account by its code (e.g. 200), not its name');

    const pnl = await cli(['report', 'pnl', '--period', '2026-09', '--out', 'out', '--format', 'hledger']);
    expect(pnl.code).toBe(2);
    expect(pnl.stderr).toContain('error: --format: hledger: the pnl report writes no such file; journal does');

    config({ ledger: { minorUnit: 3 } });
    const decimals = await cli(['report', 'journal', '--period', '2026-09', '--out', 'out', '--format', 'netsuite']);
    expect(decimals.code).toBe(2);
    expect(decimals.stderr).toContain('error: reports.ledger.minorUnit: is 3 (USD): NetSuite imports amounts of at most 2 decimals');

    config({ ledger: { roundingAccount: 'Trading fees' } });
    const shared = await cli(['report', 'journal', '--period', '2026-09', '--out', 'out', '--format', 'hledger']);
    expect(shared.code).toBe(2);
    expect(shared.stderr).toContain('error: reports.ledger.roundingAccount: "Trading fees" is also an account the journal posts to');

    expect(readdirSync(path.join(dir, 'out')).sort()).toEqual(before);
    config({ ledger: { xero: { accountCodes: codes } } });
  });

  it('a closed period: the workbook as its close wrote it, and beside it the imports of the lines as closed, which add up to the signed workbook\'s totals rounded once', { timeout: 240_000 }, async () => {
    // A close needs every stream synced through the period and a price for every amount: the other
    // streams, and BTC and ETH on the days no fill prices them (as test/period-close.test.ts does).
    const days = Array.from({ length: 92 }, (_, index) => new Date(Date.parse('2026-08-01T00:00:00Z') + index * 86_400_000).toISOString().slice(0, 10));
    writeFileSync(path.join(dir, 'prices.csv'), `${readFileSync(path.join(dir, 'prices.csv'), 'utf8')}${days.map((day) => `${day},BTC,USD,61234.5\n${day},ETH,USD,2345.67\n`).join('')}`);
    for (const step of [['sync'], ['build']]) {
      const done = await cli(step);
      expect(done.code, done.stdout + done.stderr).toBe(0);
    }
    const close = await cli(['close', '--period', '2026-09', '--by', 'Controller A']);
    expect(close.code, close.stdout + close.stderr).toBe(0);
    const report = await cli(['report', 'journal', '--period', '2026-09', '--out', 'closed', '--format', 'netsuite,hledger']);
    expect([0, 3], report.stdout + report.stderr).toContain(report.code);
    expect(report.stdout).toContain('closed/journal-2026-09.xlsx and closed/journal-2026-09.csv  closed on');
    expect(report.stdout).toContain('closed/journal-2026-09.netsuite.csv');
    const signed = await workbookBalances(path.join(dir, 'closed', 'journal-2026-09.xlsx'));
    const totals = new Map<string, bigint>();
    for (const [, , account, debit, credit] of parseCsv(readFileSync(path.join(dir, 'closed', 'journal-2026-09.netsuite.csv'), 'utf8')).slice(1)) {
      add(totals, account!, debit === '' ? -cents(credit!) : cents(debit!));
    }
    const rounding = -[...signed.values()].reduce((sum, total) => sum + total, 0n);
    // An account's lines can add up to 0 (the rounding account's, a cent each way): compared without those.
    const nonZero = (map: Map<string, bigint>) => new Map([...map].filter(([, total]) => total !== 0n));
    expect(nonZero(totals)).toEqual(nonZero(new Map([...signed, ['Rounding differences', rounding]])));
    if (hasHledger) {
      const checked = spawnSync('hledger', ['-f', path.join(dir, 'closed', 'journal-2026-09.journal'), 'check', '--strict'], { encoding: 'utf8' });
      expect(checked.status, checked.stderr).toBe(0);
    }
  });
});
