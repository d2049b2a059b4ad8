import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAMS } from '../pipelines/index.ts';
import { COIN_FORMATS } from '../reports/coin-formats.ts';
import { REPORTS } from '../reports/index.ts';
import { writeReport } from '../src/export/write-report.ts';
import { commitClose } from '../src/close/close-job.ts';
import { resolveConfig } from '../src/config/config.ts';
import { buildJob } from '../src/jobs/build-job.ts';
import { explainSummary } from '../src/jobs/explain-summary.ts';
import { checkModels } from '../src/models/check.ts';
import { readPricesFile } from '../src/models/prices-file.ts';
import type { JournalPosting, ModelSettings } from '../src/models/settings.ts';
import { DEFAULT_CHART_OF_ACCOUNTS } from '../src/models/settings.ts';
import type { Database } from '../src/store/database.ts';
import { publishedPath } from '../src/store/publish.ts';
import { runCli } from './support/cli-process.ts';
import { buildAll, insertHistory, openModelDb, queryRows, spotFill } from './support/model-db.ts';

/**
 * models.journal.posting summary (docs/workbooks.md "Journal entries"): the same hand-made ledger
 * built twice, posted in detail and summed per account, day, kind and coin. Accounts main and alt,
 * zone UTC, reporting currency USD; prices file: USDT 0.998 on 2026-01-09, -10, -20, -31 and 1.002
 * on 2026-02-10 (none on 01-25: what moves then goes to suspense); BTC's prices derived from fills.
 *   01-09 deposits: main 100000 USDT, alt 5000 USDT
 *   01-10 main buys 0.1 BTC @ 30000, 0.2 @ 31000, 0.1 @ 32000 (12400 USDT); alt buys 0.05 @ 30000;
 *         main's commissions 0.8 and 0.4 USDT
 *   01-20 main sells 0.1 @ 40000 twice (fee 4 USDT each); withdraws 1000 USDT (fee 1)
 *   01-25 main sells 0.05 @ 20000 (fee 1): no USDT price
 *   02-10 main buys 0.1 @ 35000
 * Summed, main's three buys of 01-10 are one entry: Dr Digital assets:BTC 12400 * 0.998 = 12375.2
 * (0.4 BTC), Cr Digital assets:USDT 12375.2 (12400 USDT: the deposit's lot at 0.998, no gain).
 */

const PRICES = ['date,coin,currency,price', '2026-01-09,USDT,USD,0.998', '2026-01-10,USDT,USD,0.998', '2026-01-20,USDT,USD,0.998', '2026-01-31,USDT,USD,0.998', '2026-02-10,USDT,USD,1.002', ''].join('\n');
const MAIN_BUYS = 'summary/main/trade/2026-01-10/BTC';

const dir = mkdtempSync(path.join(tmpdir(), 'exledger-summary-'));
const pricesFile = path.join(dir, 'prices.csv');
writeFileSync(pricesFile, PRICES);
const at = (day: string) => String(Date.parse(`${day}T10:00:00Z`));

function settings(posting: JournalPosting): Partial<ModelSettings> {
  return { costMethods: ['fifo'], reportingCurrency: 'USD', prices: readPricesFile(pricesFile), journal: { costMethod: 'fifo', accounts: DEFAULT_CHART_OF_ACCOUNTS, posting } };
}

async function ledger(posting: JournalPosting, location = ':memory:'): Promise<Database> {
  const db = await openModelDb(location);
  const bill = (billId: string, bizType: string, delta: string, after: string, fees: string, day: string) => ({ billId, coinId: 2, coinName: 'USDT', bizType, deltaAmount: delta, afterAmount: after, fees, cTime: at(day) });
  await insertHistory(db, 'funding_bills', [bill('501', 'deposit', '100000', '100000', '0', '2026-01-09'), bill('502', 'withdraw', '-1000', '99000', '1', '2026-01-20')]);
  await insertHistory(db, 'funding_bills', [bill('601', 'deposit', '5000', '5000', '0', '2026-01-09')], { account: 'alt' });
  await insertHistory(db, 'spot_fills', [
    spotFill('BTCUSDT_SPBL', '1', '2026-01-10T10:00:00Z', 'buy', '0.1', '30000', '0', '3000'),
    spotFill('BTCUSDT_SPBL', '2', '2026-01-10T11:00:00Z', 'buy', '0.2', '31000', '0', '6200'),
    spotFill('BTCUSDT_SPBL', '3', '2026-01-10T12:00:00Z', 'buy', '0.1', '32000', '0', '3200'),
    spotFill('BTCUSDT_SPBL', '4', '2026-01-20T10:00:00Z', 'sell', '0.1', '40000', '4', '4000'),
    spotFill('BTCUSDT_SPBL', '5', '2026-01-20T11:00:00Z', 'sell', '0.1', '40000', '4', '4000'),
    spotFill('BTCUSDT_SPBL', '6', '2026-01-25T10:00:00Z', 'sell', '0.05', '20000', '1', '1000'),
    spotFill('BTCUSDT_SPBL', '7', '2026-02-10T10:00:00Z', 'buy', '0.1', '35000', '0', '3500'),
  ]);
  await insertHistory(db, 'spot_fills', [spotFill('BTCUSDT_SPBL', '11', '2026-01-10T10:00:00Z', 'buy', '0.05', '30000', '0', '1500')], { account: 'alt' });
  const commission = (day: string, hour: string, paid: string) => ({ uid: '7001', dealTime: String(Date.parse(`${day}T${hour}:00:00Z`)), coin: 'USDT', fee: '2', commission: paid, rate: '0.4', symbol: 'BTCUSDT_SPBL', sourceType: 1, takerAmount: '1000', makerAmount: '1000' });
  await insertHistory(db, 'affiliate_commissions', [commission('2026-01-10', '08', '0.8'), commission('2026-01-10', '09', '0.4')], { partition: 'productType=SPOT' });
  await buildAll(db, settings(posting));
  return db;
}

/** Every ledger account's balance per account, coin and month, exact. */
const BALANCES = 'select account, ledger_account, coin, strftime(period, \'%Y-%m\') as month, sum(net_amount) as balance from marts.journal_entries group by all order by all';
const check = async (db: Database, id: string) => (await checkModels(db)).find((result) => result.id === `marts/${id}`);
const trimmed = (value: string | null | undefined) => (value === null || value === undefined ? null : value.replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, ''));

describe('models.journal.posting summary: the journal summed per account, day, kind and coin', () => {
  let detail: Database;
  let summary: Database;
  const summaryFile = path.join(dir, 'summary.duckdb');
  beforeAll(async () => {
    detail = await ledger('detail');
    summary = await ledger('summary', summaryFile);
  }, 120_000);
  afterAll(() => {
    detail.close();
    summary.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('every ledger account has the same balance per account, coin and month to the last digit; entries drop to one per account, day, kind and coin', async () => {
    const detailBalances = await queryRows(detail, BALANCES);
    expect(detailBalances.length).toBeGreaterThan(10);
    expect(await queryRows(summary, BALANCES)).toEqual(detailBalances);

    // One summary entry per (account, day, kind, coin) the detail entries post.
    const groups = await queryRows(detail, 'select count(*) as n from (select distinct s.account, s.entry_date, s.kind, s.coin from marts.journal_entries as j join marts.journal_sources as s using (entry_id))');
    const counts = await queryRows(summary, "select count(distinct entry_id) as n, count(distinct entry_id) filter (where not starts_with(entry_id, 'summary/')) as other from marts.journal_entries");
    expect(counts).toEqual([{ n: groups[0]!.n, other: '0' }]);
    const detailCount = Number((await queryRows(detail, 'select count(distinct entry_id) as n from marts.journal_entries'))[0]!.n);
    // 3 buys of main on 01-10 make one, 2 sells on 01-20 one, 2 commissions one: 4 entries fewer.
    expect(Number(groups[0]!.n)).toBe(detailCount - 4);

    // The three buys of 01-10, summed: 12400 USDT at 0.998.
    const lines = await queryRows(summary, `select line_no, ledger_account, coin, debit, credit, coin_amount, kind, source_model, source_key from marts.journal_entries where entry_id = '${MAIN_BUYS}' order by line_no`);
    expect(lines.map((line) => ({ ...line, debit: trimmed(line.debit), credit: trimmed(line.credit), coin_amount: trimmed(line.coin_amount) }))).toEqual([
      { line_no: 1, ledger_account: 'Digital assets:BTC', coin: 'BTC', debit: '12375.2', credit: '0', coin_amount: '0.4', kind: 'trade', source_model: 'marts.journal_sources', source_key: 'account=main; kind=trade; entry_date=2026-01-10; coin=BTC' },
      { line_no: 2, ledger_account: 'Digital assets:USDT', coin: 'USDT', debit: '0', credit: '12375.2', coin_amount: '12400', kind: 'trade', source_model: 'marts.journal_sources', source_key: 'account=main; kind=trade; entry_date=2026-01-10; coin=BTC' },
    ]);
    // alt's buy of the same day is an entry of its own.
    expect(await queryRows(summary, "select distinct entry_id from marts.journal_entries where entry_date = '2026-01-10' and kind = 'trade' order by 1")).toEqual([{ entry_id: 'summary/alt/trade/2026-01-10/BTC' }, { entry_id: MAIN_BUYS }]);
    // What had no price stays in suspense, summed as it was posted.
    const suspense = 'select sum(net_amount) as net from marts.journal_entries where ledger_account = \'Suspense:unvalued\'';
    expect(await queryRows(summary, suspense)).toEqual(await queryRows(detail, suspense));
    expect(Number((await queryRows(summary, suspense))[0]!.net)).not.toBe(0);
  });

  it('every summary entry balances, its lines netted as the detail lines are (non-negative, one side 0, debits first); the checks pass', async () => {
    expect(
      await queryRows(
        summary,
        `select entry_id from marts.journal_entries group by entry_id
         having sum(debit) <> sum(credit) or count(*) < 2 or count(*) <> count(distinct ledger_account || ' ' || coin)
           or bool_or(debit < 0 or credit < 0 or (debit <> 0 and credit <> 0) or net_amount <> debit - credit)
           or max(line_no) filter (where debit > 0) > min(line_no) filter (where credit > 0)`,
      ),
    ).toEqual([]);
    for (const db of [detail, summary]) {
      expect(await check(db, 'journal_entries_balance')).toMatchObject({ status: 'pass' });
      expect(await check(db, 'journal_ties_to_holdings')).toMatchObject({ status: 'pass' });
    }
  });

  it('explain on a summary reference lists the detail entries whose lines sum to its lines; a detail entry keeps its own explain', async () => {
    const explained = (await explainSummary(summary, MAIN_BUYS))!;
    expect(explained.entries.map((entry) => [entry.entry_id, entry.status, trimmed(entry.amount as string)])).toEqual([
      ['spot/main/1', 'posted', '2994'],
      ['spot/main/2', 'posted', '6187.6'],
      ['spot/main/3', 'posted', '3193.6'],
    ]);
    // Their lines summed per ledger account and coin are the summary's lines.
    const sums = new Map<string, bigint>();
    const e12 = (value: unknown) => {
      const [whole, fraction = ''] = String(value).split('.');
      return BigInt(whole!) * 10n ** 12n + BigInt(fraction.padEnd(12, '0'));
    };
    for (const line of explained.entryLines) {
      const key = `${String(line.ledger_account)} ${String(line.coin)}`;
      sums.set(key, (sums.get(key) ?? 0n) + e12(line.debit) - e12(line.credit));
    }
    expect(Object.fromEntries(sums)).toEqual(Object.fromEntries(explained.lines.map((line) => [`${String(line.ledger_account)} ${String(line.coin)}`, e12(line.debit) - e12(line.credit)])));
    expect(await explainSummary(summary, 'summary/main/trade/2026-01-11/BTC')).toBeUndefined();

    // As an analyst runs it: the command on the published copy.
    await summary.checkpoint();
    copyFileSync(summaryFile, publishedPath(summaryFile));
    const result = await runCli(['explain', MAIN_BUYS, '--db', summaryFile], { cwd: dir });
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain(`${MAIN_BUYS}: Summary of 3 trade entries of BTC on 2026-01-10 (main) (2026-01-10, trade, 3 of 3 source records posted)`);
    expect(result.stdout).toMatch(/^ {2}spot\/main\/2 +posted +6187\.6 +Spot buy BTCUSDT_SPBL fill 2$/m);
    expect(result.stdout).toMatch(/^ {2}1 +Digital assets:BTC +BTC +12375\.2 +0$/m);
    const own = await runCli(['explain', 'spot/main/2', '--db', summaryFile], { cwd: dir });
    expect(own.code, own.stderr).toBe(0);
    expect(own.stdout).toContain(`Journal lines (marts.journal_lines_live), posted summed in ${MAIN_BUYS}:`);
    expect(own.stdout).toMatch(/^ {2}1 +Digital assets:BTC +BTC +6187\.6 +0$/m);
  });

  it('the journal workbook\'s CSV and the ledger imports post the summary entries', async () => {
    const outDir = path.join(dir, 'out');
    const journal = REPORTS.find((report) => report.name === 'journal')!;
    await writeReport(summary, journal, { streams: STREAMS, coinFormats: COIN_FORMATS, period: { label: '2026-01', from: '2026-01-01', to: '2026-01-31' }, outDir, formats: ['csv', 'hledger', 'netsuite'] });
    const january = (await queryRows(summary, "select distinct entry_id from marts.journal_entries where period = '2026-01-01' order by 1")).map((row) => row.entry_id);
    expect(january).toContain(MAIN_BUYS);
    const csv = readFileSync(path.join(outDir, 'journal-2026-01.csv'), 'utf8').trim().split('\r\n').slice(1);
    expect([...new Set(csv.map((line) => line.split(',').at(-1)))].sort()).toEqual(january);
    expect(csv).toContain(`2026-01-10,Digital assets:BTC,12375.2,,USD,Summary of 3 trade entries of BTC on 2026-01-10 (main),${MAIN_BUYS}`);
    const hledger = readFileSync(path.join(outDir, 'journal-2026-01.journal'), 'utf8');
    expect(hledger).toMatch(new RegExp(`^2026-01-10 \\(${MAIN_BUYS.replaceAll('/', '\\/')}\\) Summary of 3 trade entries of BTC on 2026-01-10 \\(main\\)\\n {4}Digital assets:BTC +12375\\.20 USD\\n {4}Digital assets:USDT +-12375\\.20 USD$`, 'm'));
    expect(hledger.match(/^\d{4}-\d{2}-\d{2} \(/gm)).toHaveLength(january.length);
    const netsuite = readFileSync(path.join(outDir, 'journal-2026-01.netsuite.csv'), 'utf8');
    expect(netsuite).toContain(`${MAIN_BUYS},01/10/2026,Digital assets:BTC,12375.20,,`);
  });

  it('a summary line broken on purpose: the tie fails at its coin and month end, and the balance check names the entry whose line is not the sum of its records\'', async () => {
    const db = await ledger('summary');
    try {
      // Both lines moved by 1: the entry still balances, but BTC's and USDT's accounts no longer tie, at both month ends.
      await db.run(`UPDATE marts.journal_entries SET debit = debit + 1, net_amount = net_amount + 1 WHERE entry_id = '${MAIN_BUYS}' AND line_no = 1`);
      await db.run(`UPDATE marts.journal_entries SET credit = credit + 1, net_amount = net_amount - 1 WHERE entry_id = '${MAIN_BUYS}' AND line_no = 2`);
      // BTC held by main at 01-31, fifo: 12375.2 bought, less 2994 + 3093.8 (01-20) and 1546.9 (01-25) = 4740.5; at 02-28 + 3507.
      const tie = await check(db, 'journal_ties_to_holdings');
      expect(tie).toMatchObject({ status: 'fail', offending: 4 });
      expect(tie?.sample.map((row) => `${String(row.pool)} ${String(row.coin)} ${String(row.month_end)} ${trimmed(row.journal_balance as string)} ${trimmed(row.lots_carrying_value as string)}`)).toEqual([
        'main BTC 2026-01-31 4741.5 4740.5',
        'main BTC 2026-02-28 8248.5 8247.5',
        'main USDT 2026-01-31 94402.0156 94403.0156',
        'main USDT 2026-02-28 90909.0156 90910.0156',
      ]);
      const balance = await check(db, 'journal_entries_balance');
      expect(balance).toMatchObject({ status: 'fail', offending: 2 });
      expect(balance?.sample.map((row) => row.entry_id)).toEqual([MAIN_BUYS, MAIN_BUYS]);
    } finally {
      db.close();
    }
  });
});

describe('models.journal.posting and closed periods', () => {
  it('a closed summary period keeps its lines; a late record is an adjusting entry to its summary entry; another posting is refused naming the closed period', async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'exledger-summary-close-'));
    try {
      writeFileSync(path.join(folder, 'prices.csv'), PRICES);
      const file = path.join(folder, 'books.duckdb');
      const db = await openModelDb(file);
      await insertHistory(db, 'funding_bills', [{ billId: '501', coinId: 2, coinName: 'USDT', bizType: 'deposit', deltaAmount: '100000', afterAmount: '100000', fees: '0', cTime: at('2026-01-09') }]);
      await insertHistory(db, 'spot_fills', [spotFill('BTCUSDT_SPBL', '1', '2026-01-10T10:00:00Z', 'buy', '0.1', '30000', '0', '3000'), spotFill('BTCUSDT_SPBL', '7', '2026-02-10T10:00:00Z', 'buy', '0.1', '35000', '0', '3500')]);
      const config = (posting: JournalPosting) =>
        resolveConfig({ values: { db: file, models: { costMethods: ['fifo'], reportingCurrency: 'USD', pricesFile: path.join(folder, 'prices.csv'), journal: { posting } } } }, {}, folder);
      await buildAll(db, config('summary').models);
      await commitClose(db, { period: { label: '2026-01', from: '2026-01-01', to: '2026-01-31' }, kind: 'month', timeZone: 'UTC', by: 'test', at: '2026-02-02T00:00:00Z', note: null, files: [] });
      // A fill of 01-10 published late: January's summary entry stays as closed (2994),
      // and 3000 * 0.998 = 2994 more is an adjusting entry to it on 02-01.
      await insertHistory(db, 'spot_fills', [spotFill('BTCUSDT_SPBL', '2', '2026-01-10T11:00:00Z', 'buy', '0.1', '30000', '0', '3000')]);
      await buildAll(db, config('summary').models);
      const rows = await queryRows(db, "select entry_id, entry_date::varchar as day, ledger_account, net_amount from marts.journal_entries where ledger_account = 'Digital assets:BTC' order by entry_date, entry_id");
      expect(rows.map((row) => ({ ...row, net_amount: trimmed(row.net_amount) }))).toEqual([
        { entry_id: MAIN_BUYS, day: '2026-01-10', ledger_account: 'Digital assets:BTC', net_amount: '2994' },
        { entry_id: `adjustment/2026-02-01/${MAIN_BUYS}`, day: '2026-02-01', ledger_account: 'Digital assets:BTC', net_amount: '2994' },
        // 3500 * 1.002
        { entry_id: 'summary/main/trade/2026-02-10/BTC', day: '2026-02-10', ledger_account: 'Digital assets:BTC', net_amount: '3507' },
      ]);
      expect(await check(db, 'journal_entries_balance')).toMatchObject({ status: 'pass' });
      expect(await check(db, 'journal_ties_to_holdings')).toMatchObject({ status: 'pass' });
      db.close();
      // Posting in detail now would reverse January's summary entries and post them again: refused.
      await expect(buildJob(config('detail'), STREAMS)).rejects.toThrow(
        'models.journal.posting: is detail, but the journal of the closed period 2026-01 was posted in summary: its lines as closed and their adjusting entries stay at that grain',
      );
      await expect(buildJob(config('summary'), STREAMS, { select: ['marts.journal_entries'] })).resolves.toBeDefined();
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, 120_000);
});
