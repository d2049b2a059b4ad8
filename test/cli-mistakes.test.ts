import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../src/cli/commands.ts';
import { EXIT } from '../src/cli/exit-codes.ts';
import { runCli, type CliResult } from './support/cli-process.ts';

/**
 * Mistakes on the command line (issue 25): the `exledger` executable as cron runs it (its own
 * process, stdin closed, no terminal). A typo is one `error:` line naming it, with the closest
 * valid name, and one `fix:` line; exit 2; never the help text (which would fill a cron error log).
 */

/** Runs commands a few at a time (the machine's two cores are shared). */
async function runAll(lines: readonly (readonly string[])[], cwd: string | readonly string[], env: readonly Record<string, string>[] = []): Promise<CliResult[]> {
  const results: CliResult[] = [];
  const run = (args: readonly string[], index: number) => runCli(args, { cwd: typeof cwd === 'string' ? cwd : cwd[index], env: env[index] ?? {} });
  for (let start = 0; start < lines.length; start += 4) results.push(...(await Promise.all(lines.slice(start, start + 4).map((args, offset) => run(args, start + offset)))));
  return results;
}

describe('exledger: a mistake on the command line is one error line and one fix line, exit 2', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'exledger-mistakes-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('unknown commands and options, bad choices, missing and extra arguments: the thing named, the closest valid name, a fix, no help', { timeout: 240_000 }, async () => {
    const cases: [string[], string, RegExp][] = [
      [['sync', '--sinse', '2026-11-01'], 'error: unknown option --sinse for exledger sync; did you mean --since?', /^ {2}fix: exledger sync --help lists its options$/],
      [['statsu'], 'error: unknown command statsu; did you mean status?', /^ {2}fix: the commands are run, sync, build, .*status.*\(exledger --help describes them\)$/],
      [['sycn', '--since', '2026-11-01'], 'error: unknown command sycn; did you mean sync?', /^ {2}fix: the commands are /],
      [['frobnicate'], 'error: unknown command frobnicate', /^ {2}fix: the commands are /],
      [['sync', '--full-refreh'], 'error: unknown option --full-refreh for exledger sync; did you mean --full-refresh?', /^ {2}fix: exledger sync --help lists its options$/],
      [['report', 'pnl', '--perod', '2026-10'], 'error: unknown option --perod for exledger report; did you mean --period?', /^ {2}fix: exledger report --help lists its options$/],
      [['status', '--sinse', '1', '--zzz'], 'error: unknown options for exledger status: --sinse, --zzz', /^ {2}fix: exledger status --help lists its options$/],
      [['build', '--pooling', 'acount'], 'error: --pooling acount is not one of account, universal; did you mean account?', /^ {2}fix: give one of account, universal \(exledger build --help describes them\)$/],
      [['build', '--pooling'], 'error: --pooling needs a value for exledger build: one of account, universal', /^ {2}fix: give one of account, universal/],
      [['report'], 'error: exledger report needs <name..>: none was given', /^ {2}fix: the usage is exledger report <name\.\.> \[options\]/],
      [['status', 'now'], 'error: unexpected argument now for exledger status (it takes no argument)', /^ {2}fix: the usage is exledger status \[options\]/],
      [['sql', '--raw', 'select 1'], 'error: --raw needs --csv for exledger sql', /^ {2}fix: add --csv \(exledger sql --help describes them\)$/],
      [['--sinse'], 'error: no command given in exledger --sinse', /^ {2}fix: name one of the commands first: run, sync, /],
    ];
    const results = await runAll(cases.map(([args]) => args), dir);
    results.forEach((result, index) => {
      const [args, error, fix] = cases[index]!;
      const name = args.join(' ');
      expect(result.code, name).toBe(EXIT.badInput);
      expect(result.stdout, name).toBe('');
      const lines = result.stderr.split('\n');
      expect(lines, name).toHaveLength(3);
      expect(lines[0], name).toBe(error);
      expect(lines[1], name).toMatch(fix);
      expect(lines[2], name).toBe('');
    });
  });

  it('--json: the one object, its error with type, message and fix; stderr has the two lines only', async () => {
    const result = await runCli(['sync', '--sinse', '2026-11-01', '--json'], { cwd: dir });
    expect(result.code).toBe(EXIT.badInput);
    expect(result.stderr).toBe('error: unknown option --sinse for exledger sync; did you mean --since?\n  fix: exledger sync --help lists its options\n');
    expect(JSON.parse(result.stdout)).toMatchObject({
      command: 'sync',
      ok: false,
      exitCode: 2,
      error: { type: 'UsageError', message: 'unknown option --sinse for exledger sync; did you mean --since?', fix: 'exledger sync --help lists its options' },
    });
  });

  it('a bare exledger prints the command list, then says a command is needed (exit 2)', async () => {
    const bare = await runCli([], { cwd: dir });
    expect(bare.code).toBe(EXIT.badInput);
    expect(bare.stdout).toBe('');
    expect(bare.stderr).toMatch(/^exledger <command> \[options\]\n(.*\n)*Commands:\n(.*\n)*.*exledger run .*\n(.*\n)*Exit codes:\n(.*\n)*\nerror: no command given: name one of the commands listed above\n {2}fix: exledger <command> --help lists the options of that command\n$/);
  });
});

describe('exledger --help: no contradictions, and each command names its exit codes', () => {
  it('every command: no [default: []] beside [required], and an "Exit codes:" block of the codes it returns', { timeout: 240_000 }, async () => {
    const names = COMMANDS.map((command) => command.command.split(' ')[0]!);
    const results = await runAll(names.map((name) => [name, '--help']), os.tmpdir());
    results.forEach((result, index) => {
      const name = names[index]!;
      expect(result.code, name).toBe(0);
      expect(result.stdout, name).not.toMatch(/\[default: \[\]\]/);
      expect(result.stdout, name).not.toMatch(/\[required\] \[default:/);
      const block = result.stdout.slice(result.stdout.indexOf('\nExit codes:\n'));
      expect(block, name).toMatch(/^\nExit codes:\n {2}0 {4}\S/);
      // One line per code (none wrapped onto a line of its own).
      for (const line of block.trim().split('\n').slice(1)) expect(line, name).toMatch(/^ {2}\d+ +\S/);
      // Every command can fail, be given bad input and be interrupted.
      for (const code of [1, 2, 130]) expect(block, `${name} ${code}`).toMatch(new RegExp(`\\n {2}${code} +\\S`));
    });
    const help = Object.fromEntries(names.map((name, index) => [name, results[index]!.stdout]));
    // A sync or run can be partly done (3) and find the database busy (4); ls reads no database.
    for (const name of ['sync', 'run']) expect(help[name], name).toMatch(/\n {2}3 {4}\S.*\n {2}4 {4}busy/);
    expect(help.ls).not.toMatch(/\n {2}4 {4}/);
    expect(help.report).toMatch(/\n {2}3 {4}the journal was written, some of its records not valued in full \(a price is missing\)\n/);
    // The report's positional is required, with no default shown.
    expect(help.report).toMatch(/or all +\[array\] \[required\]\n/);
  });

  it('exledger --help ends with every exit code', async () => {
    const result = await runCli(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/\nExit codes:\n {2}0 .*\n {2}1 .*\n {2}2 .*\n {2}3 .*\n {2}4 .*\n {2}130 .*\n`exledger <command> --help` lists the codes that command returns\.\n$/);
  });
});

describe('exledger: every setting that is missing or wrong says what to put there', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'exledger-settings-'));
  });
  afterAll(() => {
    rmSync(root, { recursive: true, force: true });
  });

  it('each case: one error line naming the setting, one fix line naming the variable or key and an example value, exit 2', { timeout: 300_000 }, async () => {
    const URLS = { EXLEDGER_SPOT_BASE_URL: 'http://127.0.0.1:9', EXLEDGER_CONTRACT_BASE_URL: 'http://127.0.0.1:9' };
    const KEYS = { EXLEDGER_API_KEY: 'k', EXLEDGER_API_SECRET: 's', EXLEDGER_API_PASSPHRASE: 'p' };
    const ACCOUNTS = [{ name: 'main', apiKey: 'k', secret: 's', passphrase: 'p' }, { name: 'desk', apiKey: 'k2', secret: 's2', passphrase: 'p2' }];
    /** [what, command line, environment, config file (object or raw text) or none, error line, fix line] */
    const cases: [string, string[], Record<string, string>, object | string | null, RegExp, RegExp][] = [
      ['no spot base URL', ['sync'], {}, null, /^error: EXLEDGER_SPOT_BASE_URL: is not set/, /^ {2}fix: set EXLEDGER_SPOT_BASE_URL \(or spotBaseUrl in exledger\.config\.json\) to .*e\.g\. https:\/\/\S+$/],
      ['no contract base URL', ['run'], { EXLEDGER_SPOT_BASE_URL: URLS.EXLEDGER_SPOT_BASE_URL }, null, /^error: EXLEDGER_CONTRACT_BASE_URL: is not set/, /^ {2}fix: set EXLEDGER_CONTRACT_BASE_URL \(or contractBaseUrl in exledger\.config\.json\) to .*e\.g\. https:\/\/\S+$/],
      ['a base URL that is no URL', ['sync'], { ...URLS, EXLEDGER_SPOT_BASE_URL: 'api.example-exchange.com' }, null, /^error: EXLEDGER_SPOT_BASE_URL: "api\.example-exchange\.com" is not an http\(s\) URL$/, /^ {2}fix: set EXLEDGER_SPOT_BASE_URL .*e\.g\. https:\/\/\S+$/],
      ['no account', ['sync'], URLS, null, /^error: EXLEDGER_API_KEY: no account is configured$/, /^ {2}fix: set EXLEDGER_API_KEY, EXLEDGER_API_SECRET and EXLEDGER_API_PASSPHRASE .*"accounts": \[\{ "name": "main", "apiKey"/],
      ['two of three credentials', ['sync'], { ...URLS, EXLEDGER_API_KEY: 'k', EXLEDGER_API_SECRET: 's' }, null, /^error: EXLEDGER_API_PASSPHRASE: is not set, but other API credentials are$/, /^ {2}fix: set all three of EXLEDGER_API_KEY, EXLEDGER_API_SECRET and EXLEDGER_API_PASSPHRASE/],
      ['the journal without a reporting currency', ['report', 'journal', '--period', '2026-10'], {}, null, /^error: models\.reportingCurrency: is not set/, /^ {2}fix: set models\.reportingCurrency \(e\.g\. "USD"\)/],
      ['a prices file without a reporting currency', ['status'], {}, { models: { pricesFile: './prices.csv' } }, /^error: models\.pricesFile: is set but models\.reportingCurrency is not/, /^ {2}fix: add "reportingCurrency": "USD" .* to "models"/],
      ['a prices file that is not there', ['status'], {}, { models: { reportingCurrency: 'USD', pricesFile: './prices.csv' } }, /^error: models\.pricesFile: the file \S+prices\.csv does not exist$/, /^ {2}fix: give a CSV with the header /],
      ['a misspelt key', ['status'], {}, { spotBaseURL: 'https://api.example-exchange.com' }, /^error: exledger\.config\.json: \(top level\): Unrecognized key: "spotBaseURL"; did you mean spotBaseUrl\?$/, /^ {2}fix: rename it to spotBaseUrl; the keys at the top level are db, spotBaseUrl, /],
      ['a misspelt nested key', ['status'], {}, { sync: { startdate: '2025-11-01' } }, /^error: exledger\.config\.json: sync: Unrecognized key: "startdate"; did you mean startDate\?$/, /^ {2}fix: rename it to startDate; the keys of sync are /],
      ['a value of the wrong form', ['status'], {}, { sync: { startDate: '2025/11/01' } }, /^error: exledger\.config\.json: sync\.startDate: YYYY-MM-DD$/, /^ {2}fix: e\.g\. sync\.startDate: "2025-11-01"$/],
      ['an account without its secret', ['status'], {}, { accounts: [{ name: 'main', apiKey: 'k', passphrase: 'p' }] }, /^error: exledger\.config\.json: accounts\.0\.secret: /, /^ {2}fix: e\.g\. accounts\.0\.secret: the API key's secret, as a string$/],
      ['a base URL in the file that is no URL', ['status'], {}, { contractBaseUrl: 'capi.example-exchange.com' }, /^error: exledger\.config\.json: contractBaseUrl: must be an http\(s\) URL$/, /^ {2}fix: e\.g\. contractBaseUrl: "https:\/\/\S+"/],
      ['a start date that is no day', ['sync'], {}, { sync: { startDate: '2026-02-30' } }, /^error: sync\.startDate: "2026-02-30" is not a date of the form YYYY-MM-DD$/, /^ {2}fix: give a real day in that form, e\.g\. "startDate": "2026-11-01"$/],
      ['a config file that is not there', ['status', '--config', 'nope.json'], {}, null, /^error: --config: the file \S+nope\.json does not exist$/, /^ {2}fix: give the path of an existing config file, or leave --config out/],
      ['a config file that is not JSON', ['status'], {}, '{ "db": "./x.duckdb", }', /^error: \S+exledger\.config\.json: is not valid JSON at line 1, column \d+ /, /^ {2}fix: fix the JSON there/],
      ['an account --accounts does not know', ['sync', '--accounts', 'mian'], KEYS, { accounts: ACCOUNTS }, /^error: --accounts: "mian" is not a configured account; the configured accounts are main, desk; did you mean main\?$/, /^ {2}fix: check the name \(e\.g\. --accounts main\)/],
      ['the cost method of the journal not built', ['status'], {}, { models: { costMethods: ['fifo'], journal: { costMethod: 'lifo' } } }, /^error: models\.journal\.costMethod: "lifo" is not one of the cost methods built \(fifo\)$/, /^ {2}fix: set models\.journal\.costMethod to one of them \(e\.g\. "fifo"\), or add "lifo" to models\.costMethods$/],
      ['an opening position of several accounts', ['status'], {}, { accounts: ACCOUNTS, models: { openingPositions: [{ symbol: 'BTCUSDT_SPBL', quantity: '1', cost: '2' }] } }, /^error: models\.openingPositions\.0\.account: several accounts are configured/, /^ {2}fix: add "account": "main" /],
      ['a time zone that is none', ['build', '--time-zone', 'Mars/Olympus'], {}, null, /^error: --time-zone: "Mars\/Olympus" is not an IANA time zone/, /^ {2}fix: give a zone name such as --time-zone Europe\/Paris/],
      ['a --since that is no day', ['sync', '--since', '2026-13-01'], { ...URLS, ...KEYS }, null, /^error: --since: "2026-13-01" is not a date of the form YYYY-MM-DD$/, /^ {2}fix: give a real day in that form, e\.g\. --since 2026-11-01$/],
      ['a stream that is none', ['sync', '--streams', 'spot_fill'], { ...URLS, ...KEYS }, null, /^error: --streams: unknown stream "spot_fill" \(did you mean spot_fills\?\)/, /^ {2}fix: give stream names from that list, comma-separated, e\.g\. --streams spot_fills$/],
      ['a report that is none', ['report', 'fess', '--period', '2026-10'], {}, null, /^error: report: "fess" is not a report; .*; did you mean fees\?$/, /^ {2}fix: name reports from that list, e\.g\. exledger report fees --period 2026-10$/],
    ];
    const dirs = cases.map(([, , , file], index) => {
      const dir = path.join(root, String(index));
      mkdirSync(dir);
      if (file !== null) writeFileSync(path.join(dir, 'exledger.config.json'), typeof file === 'string' ? file : JSON.stringify(file));
      return dir;
    });
    const results = await runAll(
      cases.map(([, args]) => args),
      dirs,
      cases.map(([, , env]) => env),
    );
    results.forEach((result, index) => {
      const [what, args, , , error, fix] = cases[index]!;
      expect(result.code, what).toBe(EXIT.badInput);
      // (A run says on stdout where its database and log are before its sync step finds the setting missing.)
      if (args[0] !== 'run') expect(result.stdout, what).toBe('');
      const lines = result.stderr.split('\n');
      expect(lines, what).toHaveLength(3);
      expect(lines[0], what).toMatch(error);
      expect(lines[1], what).toMatch(fix);
    });
  });
});

describe('starting the CLI', () => {
  it('does not load exceljs until a workbook is written (0.3 to 0.8 s of every command\'s start)', () => {
    // Every command module, as the CLI loads them; then the packages Node has loaded by require.
    const script = "import('./src/cli/commands.ts').then(() => console.log(JSON.stringify(Object.keys(require.cache).filter((file) => file.includes('/node_modules/exceljs/')).length)))";
    const child = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { encoding: 'utf8', timeout: 60_000 });
    expect(child.stderr).toBe('');
    expect(child.stdout.trim()).toBe('0');
  });
});
