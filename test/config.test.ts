import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../src/config/config.ts';
import { ConfigError } from '../src/errors.ts';
import { tempDir } from './support/temp-dir.ts';

function dirWithConfig(content: unknown): string {
  const dir = tempDir('exledger-config-');
  writeFileSync(path.join(dir, 'exledger.config.json'), typeof content === 'string' ? content : JSON.stringify(content));
  return dir;
}

const FILE_ACCOUNT = { name: 'desk', apiKey: 'file-key-123456', secret: 'file-secret-abcdef', passphrase: 'file-pass' };

describe('resolveConfig', () => {
  it('applies defaults, then the file, then the environment, then flags', () => {
    const dir = dirWithConfig({ db: 'from-file.duckdb', spotBaseUrl: 'http://file.example', accounts: [FILE_ACCOUNT], budget: { spot: { quota: 300, windowMs: 5000 } } });
    const config = resolveConfig({ db: 'from-flag.duckdb' }, { EXLEDGER_DB: 'from-env.duckdb', EXLEDGER_SPOT_BASE_URL: 'http://env.example' }, dir);
    expect(config.db).toBe('from-flag.duckdb');
    expect(config.spotBaseUrl).toBe('http://env.example');
    expect(config.contractBaseUrl).toBeNull();
    expect(config.budget.spot).toEqual({ quota: 300, windowMs: 5000 });
    expect(config.budget.contract).toEqual({ quota: 1000, windowMs: 10_000 });
    expect(config.accounts).toEqual([FILE_ACCOUNT]);
    expect(Object.isFrozen(config.budget.spot)).toBe(true);
  });

  it('lets the environment credentials replace the first account, keeping its name', () => {
    const dir = dirWithConfig({ accounts: [FILE_ACCOUNT] });
    const config = resolveConfig({}, { EXLEDGER_API_KEY: 'k', EXLEDGER_API_SECRET: 's', EXLEDGER_API_PASSPHRASE: 'p' }, dir);
    expect(config.accounts).toEqual([{ name: 'desk', apiKey: 'k', secret: 's', passphrase: 'p' }]);
  });

  it('--accounts keeps only the named accounts (and their opening positions); an unknown name lists the configured ones', () => {
    const other = { ...FILE_ACCOUNT, name: 'otc', apiKey: 'otc-key-123456' };
    const third = { ...FILE_ACCOUNT, name: 'treasury', apiKey: 'treasury-key-123456' };
    const positions = [
      { account: 'desk', symbol: 'BTCUSDT_SPBL', quantity: '1', cost: '30000' },
      { account: 'otc', symbol: 'BTCUSDT_SPBL', quantity: '2', cost: '61000' },
    ];
    const dir = dirWithConfig({ accounts: [FILE_ACCOUNT, other, third], models: { openingPositions: positions } });
    const all = resolveConfig({}, {}, dir);
    expect(all.accounts.map((account) => account.name)).toEqual(['desk', 'otc', 'treasury']);
    expect(all.selectedAccounts).toBeNull();
    const worker = resolveConfig({ accounts: 'treasury, otc' }, {}, dir);
    // In the configured order; the positions of the other accounts are not this worker's.
    expect(worker.accounts.map((account) => account.name)).toEqual(['otc', 'treasury']);
    expect(worker.selectedAccounts).toEqual(['treasury', 'otc']);
    expect(worker.models.openingPositions.map((position) => position.account)).toEqual(['otc']);
    expect(() => resolveConfig({ accounts: 'desk,dsk' }, {}, dir)).toThrow('--accounts: "dsk" is not a configured account; the configured accounts are desk, otc, treasury');
    expect(() => resolveConfig({ accounts: ' , ' }, {}, dir)).toThrow(/--accounts: name at least one account/);
  });

  it('names the missing variable when only some credentials are set', () => {
    const dir = tempDir('exledger-config-');
    expect(() => resolveConfig({}, { EXLEDGER_API_KEY: 'k', EXLEDGER_API_SECRET: 's' }, dir)).toThrow(/EXLEDGER_API_PASSPHRASE/);
  });

  it('rejects a bad URL, an unknown key and invalid JSON with the thing to fix, never a secret', () => {
    const dir = tempDir('exledger-config-');
    expect(() => resolveConfig({}, { EXLEDGER_SPOT_BASE_URL: 'ftp://x' }, dir)).toThrow(ConfigError);
    expect(() => resolveConfig({}, { EXLEDGER_SPOT_BASE_URL: 'ftp://x' }, dir)).toThrow(/EXLEDGER_SPOT_BASE_URL/);

    const typo = dirWithConfig({ accounts: [FILE_ACCOUNT], budgte: {} });
    expect(() => resolveConfig({}, {}, typo)).toThrow(/budgte/);

    const badAccount = dirWithConfig({ accounts: [{ ...FILE_ACCOUNT, passphrase: '' }] });
    const error = (() => {
      try {
        resolveConfig({}, {}, badAccount);
      } catch (caught) {
        return caught as Error;
      }
      return undefined;
    })();
    expect(error?.message).toMatch(/accounts\.0\.passphrase/);
    expect(error?.message).not.toContain(FILE_ACCOUNT.secret);

    expect(() => resolveConfig({}, {}, dirWithConfig('{ not json'))).toThrow(/not valid JSON at line 1, column 3 /);
    // The text around a syntax error may be a secret: the message says where, never what.
    const secret = 'sk-live-9f8e7d6c5b4a';
    for (const text of [`{\n  "accounts": [{ "name": "main", "apiKey": ${secret} }]\n}`, `{ "db": "x.duckdb",\n  "apiKey" ${secret} }`]) {
      let message = '';
      try {
        resolveConfig({}, {}, dirWithConfig(text));
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toMatch(/is not valid JSON at line 2, column \d+ \(the text there is not shown: the file holds secrets\)$/);
      expect(message).not.toContain(secret.slice(0, 4));
    }
    expect(() => resolveConfig({ configPath: 'missing.json' }, {}, dir)).toThrow(/--config/);
  });

  it('reports.detailRowLimit: 100,000 by default, a whole number of rows from 1 to what a sheet holds, else one error naming it with an example', () => {
    expect(resolveConfig({}, {}, dirWithConfig({})).reports.detailRowLimit).toBe(100_000);
    expect(resolveConfig({}, {}, dirWithConfig({ reports: { detailRowLimit: 250_000 } })).reports.detailRowLimit).toBe(250_000);
    const errorOf = (value: unknown): ConfigError => {
      try {
        resolveConfig({}, {}, dirWithConfig({ reports: { detailRowLimit: value } }));
      } catch (error) {
        return error as ConfigError;
      }
      throw new Error(`${JSON.stringify(value)} was accepted`);
    };
    for (const [value, why] of [
      [0, 'at least 1 row'],
      [1.5, 'a whole number of rows'],
      [2_000_000, 'at most 1047575 rows (a sheet\'s rows less its header and totals: more would not fit on one sheet)'],
      ['100000', 'Invalid input: expected number, received string'],
    ] as const) {
      const error = errorOf(value);
      expect(error).toBeInstanceOf(ConfigError);
      expect(error.message).toBe(`exledger.config.json: reports.detailRowLimit: ${why}`);
      expect(error.hint).toBe('e.g. reports.detailRowLimit: 100000 (a whole number of rows, 1 to 1047575: a sheet with more is rolled up)');
    }
  });

  it('reads the model settings, flags over the file, and rejects numbers for amounts and unknown zones', () => {
    expect(resolveConfig({}, {}, dirWithConfig({})).models).toEqual({
      reportingTimeZone: 'UTC',
      costMethods: ['fifo'],
      openingPositions: [],
      pooling: 'account',
      reportingCurrency: null,
      prices: null,
      books: { tradeValue: 'given', fees: 'expense', valuation: 'cost' },
    });
    const dir = dirWithConfig({
      accounts: [FILE_ACCOUNT],
      models: {
        reportingTimeZone: 'Asia/Tokyo',
        costMethods: ['average'],
        openingPositions: [{ symbol: 'BTCUSDT_SPBL', quantity: '0.5', cost: '15000.25' }],
        tradeValue: 'received',
        fees: 'capitalize',
        valuation: 'fair_value',
      },
    });
    expect(resolveConfig({}, {}, dir).models).toEqual({
      reportingTimeZone: 'Asia/Tokyo',
      costMethods: ['average'],
      // With one account the position's account may be left out.
      openingPositions: [{ account: 'desk', symbol: 'BTCUSDT_SPBL', quantity: '0.5', cost: '15000.25' }],
      pooling: 'account',
      reportingCurrency: null,
      prices: null,
      books: { tradeValue: 'received', fees: 'capitalize', valuation: 'fair_value' },
    });
    expect(() => resolveConfig({}, {}, dirWithConfig({ models: { fees: 'expensed' } }))).toThrow(/models\.fees/);
    // The journal's grain: one error naming the key and the values it takes, with an example.
    expect(resolveConfig({}, {}, dirWithConfig({ models: { journal: { posting: 'summary' } } })).models.journal?.posting).toBe('summary');
    let posting: unknown;
    try {
      resolveConfig({}, {}, dirWithConfig({ models: { journal: { posting: 'rolled_up' } } }));
    } catch (error) {
      posting = error;
    }
    expect(posting).toBeInstanceOf(ConfigError);
    expect((posting as ConfigError).message).toMatch(/^\S+config\.json: models\.journal\.posting: Invalid option: expected one of "detail"\|"summary"$/);
    expect((posting as ConfigError).hint).toBe('e.g. models.journal.posting: "detail" (or summary: an entry per account, day, kind and coin)');
    expect(resolveConfig({ reportingTimeZone: 'Europe/Paris', costMethods: ['fifo', 'average'] }, {}, dir).models).toMatchObject({ reportingTimeZone: 'Europe/Paris', costMethods: ['fifo', 'average'] });

    expect(() => resolveConfig({}, {}, dirWithConfig({ models: { openingPositions: [{ symbol: 'BTCUSDT_SPBL', quantity: 0.5, cost: '1' }] } }))).toThrow(/models\.openingPositions\.0\.quantity/);
    expect(() => resolveConfig({}, {}, dirWithConfig({ models: { reportingTimeZone: 'Mars/Olympus' } }))).toThrow(/models\.reportingTimeZone: an IANA time zone/);
    expect(() => resolveConfig({ reportingTimeZone: 'Mars/Olympus' }, {}, dir)).toThrow(/--time-zone/);
    const twoAccounts = dirWithConfig({ accounts: [FILE_ACCOUNT, { ...FILE_ACCOUNT, name: 'other' }], models: { openingPositions: [{ symbol: 'BTCUSDT_SPBL', quantity: '1', cost: '1' }] } });
    expect(() => resolveConfig({}, {}, twoAccounts)).toThrow(/models\.openingPositions\.0\.account: several accounts/);
  });
});
