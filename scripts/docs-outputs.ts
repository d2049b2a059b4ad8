/**
 * The command outputs the documentation quotes, captured from a real run so that they cannot go
 * stale (`npm run docs:outputs` rewrites them; test/docs-outputs.test.ts fails when one differs).
 *
 * In README.md and docs/*.md a fenced block right after a marker is generated:
 *
 *   <!-- output: run-summary -->      what a command printed (a capture of CAPTURES below)
 *   <!-- file: deploy/crontab -->     a file of this repository, verbatim
 *
 * One session: `exledger sandbox` in a process of its own (fixed seed and end, so the history and
 * its credentials are the same on every run), a temporary folder holding an exledger.config.json
 * that points at it, and each command as a child process with stdin closed and no terminal, as cron
 * runs it. What differs between runs (the clock, durations, sizes, ports, pids, the temporary
 * folder) is replaced by stable stand-ins (see normaliseOutput): the folder reads /srv/exledger,
 * wall-clock instants 2026-11-02T02:15:00.000Z, durations n.nn s.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { writeDemoPrices } from '../src/sandbox/demo-prices.ts';
import { startHostileProxy } from '../test/support/hostile-proxy.ts';
import { mountSmallDisk, SMALL_DISK_UNAVAILABLE } from '../test/support/small-disk.ts';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(REPO, 'src/cli/exledger.js');

/** Where the captured commands appear to run (the deployed folder of docs/operating.md). */
export const SHOWN_FOLDER = '/srv/exledger';
/** The stand-in for every wall-clock instant of a run (the night after the sandbox history ends). */
export const SHOWN_INSTANT = '2026-11-02T02:15:00.000Z';
const SHOWN_PORT = 8123;
const SHOWN_PID = 4242;
/** The sandbox history: a year ending here (exclusive), from this seed, so every run holds the same rows. */
const SANDBOX_END = '2026-11-01';
const SANDBOX_SEED = '1';
/** The period the documented workbooks and run are for. */
export const SHOWN_PERIOD = '2026-10';

/** The documentation files whose marked blocks are generated: README.md and docs/*.md. */
export function documentationFiles(): string[] {
  const docs = readdirSync(path.join(REPO, 'docs')).filter((name) => name.endsWith('.md')).sort();
  return ['README.md', ...docs.map((name) => `docs/${name}`)];
}

/** A generated block of a Markdown file. */
export interface MarkedBlock {
  kind: 'output' | 'file';
  /** The capture's name, or the repository file's path. */
  name: string;
  /** 1-based line of the marker. */
  line: number;
  /** The block's text (between the fences), lines joined by \n, with its final newline. */
  body: string;
  /** Character offsets of the body in the file. */
  bodyStart: number;
  bodyEnd: number;
}

const MARKER = /^<!-- (output|file): (\S+) -->$/;

/**
 * The marked blocks of a Markdown text. A marker must be followed at once by a fenced block
 * (``` with an optional language) that is closed: anything else is an error naming the line.
 */
export function findMarkedBlocks(markdown: string, file = 'markdown'): MarkedBlock[] {
  const lines = markdown.split('\n');
  const offsets: number[] = [];
  let offset = 0;
  for (const line of lines) {
    offsets.push(offset);
    offset += line.length + 1;
  }
  const blocks: MarkedBlock[] = [];
  let fenced = false;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    if (/^\s*```/.test(line)) fenced = !fenced;
    const marker = MARKER.exec(line);
    if (marker === null || fenced) continue;
    const open = lines[index + 1];
    if (open === undefined || !/^```[\w-]*$/.test(open)) throw new Error(`${file}:${index + 1}: the marker ${line} must be followed at once by a fenced block`);
    const close = lines.findIndex((candidate, at) => at > index + 1 && candidate === '```');
    if (close === -1) throw new Error(`${file}:${index + 2}: the block after ${line} is never closed`);
    const bodyStart = offsets[index + 2]!;
    const bodyEnd = offsets[close]!;
    blocks.push({ kind: marker[1] as MarkedBlock['kind'], name: marker[2]!, line: index + 1, body: markdown.slice(bodyStart, bodyEnd), bodyStart, bodyEnd });
    index = close;
  }
  return blocks;
}

/** The text with each marked block's body replaced by `content(block)` (undefined: left as it is). */
export function replaceMarkedBlocks(markdown: string, content: (block: MarkedBlock) => string | undefined, file = 'markdown'): string {
  let result = '';
  let from = 0;
  for (const block of findMarkedBlocks(markdown, file)) {
    const text = content(block);
    result += markdown.slice(from, block.bodyStart) + (text === undefined ? block.body : asBlockBody(text));
    from = block.bodyEnd;
  }
  return result + markdown.slice(from);
}

/** A text as a fenced block's body: trailing spaces and blank lines removed, one final newline. */
export function asBlockBody(text: string): string {
  const lines = text.split('\n').map((line) => line.trimEnd());
  while (lines.length > 0 && lines.at(-1) === '') lines.pop();
  while (lines.length > 0 && lines[0] === '') lines.shift();
  if (lines.some((line) => line.startsWith('```'))) throw new Error('a quoted text holds a fence line (```)');
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/** The expected body of a `file:` block: the repository file, verbatim. */
export function fileBlockBody(name: string): string {
  return asBlockBody(readFileSync(path.join(REPO, name), 'utf8'));
}

/** What varies between two runs of the same commands, to be replaced. */
export interface Volatile {
  /** The session's folder (as created and as resolved). */
  folders: readonly string[];
  /** Instants from here on are the run's clock, not data (ms). */
  historyEndMs: number;
}

/**
 * Replaces what differs between runs with stable stand-ins: the session's folder, wall-clock
 * instants (ISO and the compact form of run ids and log names, run ids' random suffix), loopback
 * ports, pids, durations (n.nn s, set apart from a column before them by two spaces, whatever
 * the width of the number was) and sizes (n.n MB). Instants of the history itself (before the run started) stay.
 */
export function normaliseOutput(text: string, volatile: Volatile): string {
  let result = text;
  for (const folder of [...volatile.folders].sort((a, b) => b.length - a.length)) result = result.replaceAll(folder, SHOWN_FOLDER);
  // The sandbox holds nothing after its history's end: a later instant comes from the clock of
  // the run (a sync's end, a snapshot, "an hour ago"), never from the data.
  const isRunTime = (ms: number) => ms > volatile.historyEndMs;
  result = result.replace(/\b(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(\.\d+)?Z/g, (instant, ...parts: string[]) => {
    const ms = Date.parse(instant);
    if (!isRunTime(ms)) return instant;
    const fraction = parts[6] ?? '';
    return SHOWN_INSTANT.slice(0, 19) + (fraction === '' ? '' : `.${'0'.repeat(fraction.length - 1)}`) + 'Z';
  });
  const compactShown = SHOWN_INSTANT.slice(0, 19).replaceAll('-', '').replaceAll(':', '');
  // A run id's random suffix (6 hex digits, all of them decimal now and then) or a log name's pid (before .log).
  result = result.replace(/\b(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)(\.\d{3}Z)?(?:(-\d+(?=\.log))|(-[0-9a-f]{6}\b))?/g, (compact, y, mo, d, h, mi, s, fraction: string | undefined, pid: string | undefined, runSuffix: string | undefined) => {
    const ms = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s}Z`);
    if (!isRunTime(ms)) return compact;
    const tail = pid !== undefined ? `-${SHOWN_PID}` : runSuffix !== undefined ? '-3fa2c1' : '';
    return compactShown + (fraction === undefined ? '' : '.000Z') + tail;
  });
  result = result.replace(/\b(127\.0\.0\.1|localhost):\d+/g, `$1:${SHOWN_PORT}`);
  // A workbook's SHA-256 (whole, or its first 12 digits): the workbook holds the time it was written.
  result = result.replace(/\bSHA-256 [0-9a-f]{64}\b/g, 'SHA-256 <sha-256>').replace(/\bSHA-256 [0-9a-f]{12}…/g, 'SHA-256 <sha-256>…');
  result = result.replace(/\bpid (\d+)/g, `pid ${SHOWN_PID}`);
  result = result.replace(/(\s*)\b(\d+(?:\.\d+)?)( (?:MB|GB|KB|kB|B)\b)/g, (_match, space: string, size: string, unit: string) => `${space}${size.replace(/\d+/g, 'n')}${unit}`);
  result = result.replace(/( *)\b(\d+)(?:\.(\d+))?( ?)(s|ms)\b(?!\w)/g, (match, spaces: string, _whole: string, decimals: string | undefined, gap: string, unit: string, at: number, whole: string) => {
    // A count of seconds after a number of things ("365 windows") is not a duration: only a
    // number directly followed by its unit.
    if (spaces === '' && whole[at - 1] !== undefined && /[\w.:]/.test(whole[at - 1]!)) return match;
    // Two spaces or more set a column apart; how many depends on the width of the number (a
    // right-aligned column, or not), so they become two, and every row of the column alike.
    const shown = `n${decimals === undefined ? '' : `.${'n'.repeat(decimals.length)}`}`;
    return `${spaces.length >= 2 ? '  ' : spaces}${shown}${gap}${unit}`;
  });
  return result;
}

/** Masks a column of a text table (by its header) as n.n, keeping the table's alignment. */
export function maskColumn(table: string, header: string): string {
  const lines = table.split('\n');
  const headerLine = lines.findIndex((line) => new RegExp(`(^|\\s)${header}(\\s|$)`).test(line));
  if (headerLine === -1) return table;
  const end = lines[headerLine]!.indexOf(header) + header.length;
  return lines
    .map((line, index) => {
      if (index <= headerLine || line.length < end || /\S/.test(line[end] ?? ' ')) return line;
      const cell = line.slice(0, end);
      const match = /\s(\d+(?:\.\d+)?)$/.exec(cell);
      if (match === null) return line;
      match.index += 1;
      const masked = match[1]!.replace(/\d+/g, (digits, at: number) => (at === 0 ? 'n' : 'n'.repeat(digits.length)));
      return cell.slice(0, match.index).padEnd(end - masked.length) + masked + line.slice(end);
    })
    .join('\n');
}

/** The lines of `text` from the first that matches `from` (included) to the end. */
export function linesFrom(text: string, from: RegExp): string {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => from.test(line));
  return start === -1 ? '' : lines.slice(start).join('\n');
}

/** The first `head` and last `tail` lines, with a line `…` between when some were left out. */
export function excerpt(text: string, head: number, tail: number): string {
  const lines = asBlockBody(text).trimEnd().split('\n');
  if (lines.length <= head + tail + 1) return lines.join('\n');
  return [...lines.slice(0, head), '…', ...lines.slice(lines.length - tail)].join('\n');
}

/**
 * Captures that cannot be made on this machine, with the reason: a full disk is a real small disk
 * (a tmpfs), which only root can mount (CI runs as root). Their blocks are left as they are.
 */
export const UNAVAILABLE_CAPTURES: ReadonlyMap<string, string> = new Map(SMALL_DISK_UNAVAILABLE === null ? [] : [['error-disk-full', SMALL_DISK_UNAVAILABLE]]);

/** The commands whose --help the reference quotes ('' is `exledger --help`). */
export const HELP_COMMANDS = ['', 'run', 'sync', 'build', 'check', 'ls', 'report', 'close', 'reopen', 'export', 'explain', 'docs', 'archive', 'restore', 'status', 'sql', 'sandbox', 'demo'] as const;

/** Runs the tasks, at most `size` at once; their results in order. */
async function inPool<T>(tasks: readonly (() => Promise<T>)[], size: number): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await tasks[index]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(size, tasks.length) }, worker));
  return results;
}

/** What a command left. */
interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface Session {
  folder: string;
  run: (args: readonly string[], options?: { cwd?: string }) => Promise<CommandResult>;
}

/** Every process a capture started that has not ended yet (stopCaptures ends them). */
const running = new Set<ChildProcess>();

function track(child: ChildProcess): void {
  running.add(child);
  child.on('exit', () => running.delete(child));
}

/**
 * Ends (SIGKILL) every process the captures started that is still running: for a test whose
 * hook timed out, so no sandbox is left behind.
 */
export function stopCaptures(): void {
  for (const child of running) child.kill('SIGKILL');
}

/** A command as cron runs it: own process, stdin closed, pipes, only PATH and HOME in its environment. */
function runCommand(args: readonly string[], cwd: string): Promise<CommandResult> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env: quietEnvironment(), stdio: ['ignore', 'pipe', 'pipe'] });
  track(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The environment of a cron job: PATH and HOME, nothing of this shell's EXLEDGER_ settings. */
function quietEnvironment(): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' };
}

/** Runs a command and insists on its exit code, so a capture never quotes an unexpected failure. */
async function expectExit(session: Session, args: readonly string[], code: number, options: { cwd?: string } = {}): Promise<CommandResult> {
  const result = await session.run(args, options);
  if (result.code !== code) throw new Error(`exledger ${args.join(' ')} exited ${String(result.code)}, expected ${code}:\n${result.stdout}\n${result.stderr}`);
  return result;
}

/**
 * Every capture the documentation may quote, by name, normalised. One sandbox, one folder; about
 * 40 s on two cores. Independent read-only commands run side by side.
 */
export async function captureOutputs(): Promise<Map<string, string>> {
  const folder = mkdtempSync(path.join(tmpdir(), 'exledger-docs-'));
  const raw = new Map<string, string>();
  const session: Session = { folder, run: (args, options = {}) => runCommand(args, options.cwd ?? folder) };
  const resolvedFolder = realpathSync(folder);
  const sandbox = await startSandbox(folder).catch((error: unknown) => {
    rmSync(folder, { recursive: true, force: true });
    throw error;
  });
  try {
    raw.set('sandbox', sandbox.banner);
    const settings = {
      db: './data/exledger.duckdb',
      spotBaseUrl: sandbox.url,
      contractBaseUrl: sandbox.url,
      accounts: [{ name: 'main', ...sandbox.credentials }],
      // The sandbox allows a hundred times the real quotas, so a year of daily referral
      // totals takes seconds; the client's budget follows it.
      budget: { spot: { quota: 50_000, windowMs: 10_000 }, contract: { quota: 100_000, windowMs: 10_000 } },
      sync: { startDate: '2025-11-01' },
    };
    // Valued in USD with the demo's generated daily USDT closes, so the journal can be written.
    writeDemoPrices(path.join(folder, 'prices.csv'), '2025-11-01', SANDBOX_END);
    const config = (values: object) => `${JSON.stringify(values, null, 2)}\n`;
    writeFileSync(path.join(folder, 'exledger.config.json'), config({ ...settings, models: { reportingCurrency: 'USD', pricesFile: './prices.csv' } }));
    writeFileSync(path.join(folder, 'no-currency.json'), config(settings));
    const empty = path.join(folder, 'elsewhere');
    mkdirSync(empty);
    // The first sync stops before the period's end, so that the run below brings a night's rows.
    // The mistakes touch no database: they run beside it.
    const [sync, missing, typoOption, typoCommand, noDatabase] = await Promise.all([
      expectExit(session, ['sync', '--until', '2026-10-20'], 0),
      expectExit(session, ['sync'], 2, { cwd: empty }),
      expectExit(session, ['sync', '--sinse', '2026-10-01'], 2),
      expectExit(session, ['statsu'], 2),
      expectExit(session, ['status', '--db', './data/exledger.duckbd'], 2),
    ]);
    raw.set('error-missing-setting', missing.stderr);
    raw.set('error-typo-option', typoOption.stderr);
    raw.set('error-typo-command', typoCommand.stderr);
    raw.set('error-no-database', noDatabase.stderr);

    raw.set('sync-first', maskColumn(sync.stdout, 'seconds'));
    raw.set('sync-progress', sync.stderr.split('\n').filter((line) => line.includes(' sync main/affiliate_referrals: ') && (line.includes('started') || line.includes('done'))).join('\n'));
    raw.set('status-first', (await expectExit(session, ['status'], 0)).stdout);
    const build = await expectExit(session, ['build'], 0);
    raw.set('build-first', excerpt(build.stdout, 6, 3));
    const check = await expectExit(session, ['check'], 0);
    raw.set('check', excerpt(check.stdout, 4, 3));

    const run = await expectExit(session, ['run', '--period', SHOWN_PERIOD], 0);
    raw.set('run-start', run.stdout.split('\n')[0] ?? '');
    raw.set('run-summary', linesFrom(run.stdout, /^== summary$/));
    // The archive (docs/operating.md "Archive and restore"): a first archive, and a restore of it beside the database.
    mkdirSync(path.join(folder, 'archive'));
    writeFileSync(path.join(folder, 'archive.json'), config({ ...settings, models: { reportingCurrency: 'USD', pricesFile: './prices.csv' }, archive: { dir: './archive' } }));
    raw.set('archive-first', (await expectExit(session, ['archive', '--config', 'archive.json', '--quiet'], 0)).stdout);
    raw.set('restore', (await expectExit(session, ['restore', '--from', './archive', '--db', './data/restored.duckdb', '--quiet'], 0)).stdout);
    const logs = readdirSync(path.join(folder, 'logs'));
    raw.set('run-logs', logs.map((name) => `logs/${name}`).join('\n'));
    // Alone: a report removes the half-written files of other writers of its folder.
    const journal = await session.run(['report', 'journal', '--period', SHOWN_PERIOD]);
    if (journal.code !== 0 && journal.code !== 3) throw new Error(`exledger report journal exited ${String(journal.code)}:\n${journal.stderr}`);
    raw.set('report-journal', `${journal.stdout}${journal.stderr}`);
    raw.set('journal-csv', readFileSync(path.join(folder, 'out', `journal-${SHOWN_PERIOD}.csv`), 'utf8').split('\r\n').slice(0, 3).join('\n'));
    // The ledger imports (docs/workbooks.md "Ledger imports"). Xero names accounts by their codes:
    // one for each ledger account the journal posts to (read from the copy the run published) and
    // the rounding account; a second config lacks the rounding account's, for the error it gives.
    const ledgerAccounts = (await expectExit(session, ['sql', '--csv', 'select distinct ledger_account from marts.journal_entries order by 1'], 0)).stdout
      .split(/\r?\n/)
      .slice(1)
      .filter((line) => line !== '')
      .map((line) => line.replace(/^"(.*)"$/, '$1'));
    const accountCodes = Object.fromEntries([...ledgerAccounts, 'Rounding differences'].map((account, index) => [account, String(600 + index * 10)]));
    const { 'Rounding differences': _rounding, ...withoutRounding } = accountCodes;
    const currencyModels = { reportingCurrency: 'USD', pricesFile: './prices.csv' };
    writeFileSync(path.join(folder, 'ledger.json'), config({ ...settings, models: currencyModels, reports: { ledger: { xero: { accountCodes } } } }));
    writeFileSync(path.join(folder, 'ledger-codes.json'), config({ ...settings, models: currencyModels, reports: { ledger: { xero: { accountCodes: withoutRounding } } } }));
    const ledger = await session.run(['report', 'journal', '--period', SHOWN_PERIOD, '--config', 'ledger.json', '--format', 'quickbooks,xero,netsuite,hledger']);
    if (ledger.code !== 0 && ledger.code !== 3) throw new Error(`exledger report journal --format … exited ${String(ledger.code)}:\n${ledger.stderr}`);
    raw.set('report-journal-ledger', `${ledger.stdout}${ledger.stderr}`);
    const firstLines = (name: string, count: number) => readFileSync(path.join(folder, 'out', `journal-${SHOWN_PERIOD}.${name}`), 'utf8').split(/\r?\n/).slice(0, count).join('\n');
    raw.set('journal-quickbooks', firstLines('quickbooks.csv', 3));
    raw.set('journal-xero', firstLines('xero-1.csv', 3));
    raw.set('journal-netsuite', firstLines('netsuite.csv', 3));
    // The hledger journal's directives, its first transaction and its first with a rounding posting.
    const [directives, first, ...transactions] = readFileSync(path.join(folder, 'out', `journal-${SHOWN_PERIOD}.journal`), 'utf8').split('\n\n');
    raw.set('journal-hledger', [directives, first, '; …', transactions.find((transaction) => transaction.includes('; Rounding difference'))].join('\n\n'));

    // What only reads the built database (or nothing at all), a few at a time.
    const keep = (name: string, stream: 'stdout' | 'stderr') => (result: CommandResult) => void raw.set(name, result[stream]);
    await inPool(
      [
        () => expectExit(session, ['status'], 0).then(keep('status', 'stdout')),
        () => expectExit(session, ['report', 'pnl', 'fees', '--period', SHOWN_PERIOD], 0).then(keep('report', 'stdout')),
        () => expectExit(session, ['sql', 'select fee_month, product, coin, fees_paid from marts.fees_monthly order by fee_month desc, product, coin limit 5'], 0).then(keep('sql', 'stdout')),
        () =>
          expectExit(session, ['sql', '--csv', "select coin_name, balance_month, closing_balance from marts.balance_reconciliation where balance_month = DATE '2026-10-01' order by coin_name"], 0).then(
            keep('sql-csv', 'stdout'),
          ),
        () => expectExit(session, ['ls', '--select', 'tag:report'], 0).then(keep('ls-report', 'stdout')),
        () => expectExit(session, ['build', '--select', 'marts.fees_montly'], 2).then(keep('error-select', 'stderr')),
        () => expectExit(session, ['report', 'journal', '--period', SHOWN_PERIOD, '--config', 'no-currency.json'], 2).then(keep('error-journal-currency', 'stderr')),
        () => expectExit(session, ['report', 'journal', '--period', SHOWN_PERIOD, '--format', 'quickbook'], 2).then(keep('error-format', 'stderr')),
        () => expectExit(session, ['report', 'journal', '--period', SHOWN_PERIOD, '--config', 'ledger-codes.json', '--format', 'xero'], 2).then(keep('error-ledger-codes', 'stderr')),
        () => expectExit(session, ['docs'], 0).then(keep('docs', 'stdout')),
        () => expectExit(session, ['export', 'marts.fees_monthly', 'marts.balance_vs_assets'], 0).then(keep('export', 'stdout')),
        ...HELP_COMMANDS.map((command) => () => expectExit(session, command === '' ? ['--help'] : [command, '--help'], 0).then(keep(command === '' ? 'help' : `help-${command}`, 'stdout'))),
      ],
      4,
    );
    raw.set('export-layout', listFiles(path.join(folder, 'export')).join('\n'));

    // Closing October (docs/workbooks.md "Closing a period"): refused while days lack a price (BTC
    // and ETH on days without a fill to derive it from), closed once the prices file has them, its
    // workbooks written again as closed, a corrected price pending as adjustments in November, and
    // October reopened.
    const by = ['--by', 'Jane Doe'];
    raw.set('close-refused', (await expectExit(session, ['close', '--period', SHOWN_PERIOD, ...by, '--quiet'], 1)).stderr);
    const days = [...new Set(readFileSync(path.join(folder, 'prices.csv'), 'utf8').split('\n').slice(1).filter((line) => line !== '').map((line) => line.slice(0, 10)))];
    const prices = `${readFileSync(path.join(folder, 'prices.csv'), 'utf8')}${days.map((day) => `${day},BTC,USD,61234.5\n${day},ETH,USD,2345.67\n`).join('')}`;
    writeFileSync(path.join(folder, 'prices.csv'), prices);
    raw.set('close', (await expectExit(session, ['close', '--period', SHOWN_PERIOD, ...by, '--note', 'signed by the CFO, ticket FIN-123', '--quiet'], 0)).stdout);
    raw.set('report-closed', (await expectExit(session, ['report', 'all', '--period', SHOWN_PERIOD], 0)).stdout);
    writeFileSync(path.join(folder, 'prices.csv'), prices.replace(/^2026-10-14,USDT,USD,.*$/m, '2026-10-14,USDT,USD,0.9871'));
    await expectExit(session, ['build', '--quiet'], 0);
    raw.set('status-closed', linesFrom((await expectExit(session, ['status'], 0)).stdout, /^closed periods:/));
    raw.set('reopen', (await expectExit(session, ['reopen', '--period', SHOWN_PERIOD, '--reason', 'a corrected USDT price for 14 October', ...by], 0)).stdout);

    // What the sync notices and what it refuses: the exchange's answers through a proxy in a
    // process of its own that rewrites them (a new field; a quantity no DECIMAL holds), each into
    // a database of its own, a month of spot fills.
    const proxy = await startHostileProxy(sandbox.url);
    try {
      const fills = '/api/v2/trade/fills';
      const throughProxy = (name: string) => config({ ...settings, spotBaseUrl: proxy.url, contractBaseUrl: proxy.url, db: `./data/${name}.duckdb`, sync: { startDate: '2026-10-01', spotSymbols: ['BTCUSDT_SPBL'] } });
      writeFileSync(path.join(folder, 'drift.json'), throughProxy('drift'));
      writeFileSync(path.join(folder, 'refused.json'), throughProxy('refused'));
      await proxy.setRules([{ path: fills, pattern: '"fillId":', replacement: '"rebateTier":"gold","fillId":' }]);
      const drift = await expectExit(session, ['sync', '--config', 'drift.json', '--streams', 'spot_fills'], 0);
      raw.set('sync-drift', drift.stdout.split('\n').filter((line) => line.startsWith('drift in ')).join('\n'));
      await proxy.setRules([{ path: fills, pattern: '"fillQuantity":("[^"]*"|[-0-9.eE+]+)', replacement: '"fillQuantity":"100000000000000000000000"' }]);
      const refused = await expectExit(session, ['sync', '--config', 'refused.json', '--streams', 'spot_fills'], 1);
      raw.set('sync-refused', refused.stdout.split('\n').filter((line) => line.startsWith('error in ')).join('\n'));
    } finally {
      await proxy.stop();
    }

    // A full disk where the workbooks go: a tmpfs over ./out with 16 KB left (less than a workbook).
    if (!UNAVAILABLE_CAPTURES.has('error-disk-full')) {
      const disk = mountSmallDisk(path.join(folder, 'out'), '256k');
      try {
        disk.fill(16 * 1024);
        raw.set('error-disk-full', (await expectExit(session, ['report', 'pnl', '--period', SHOWN_PERIOD], 1)).stderr);
      } finally {
        disk.unmount();
      }
    }
  } finally {
    await sandbox.stop();
    rmSync(folder, { recursive: true, force: true });
  }
  const volatile: Volatile = { folders: [folder, resolvedFolder], historyEndMs: Date.parse(`${SANDBOX_END}T00:00:00Z`) };
  return new Map([...raw].map(([name, text]) => [name, asBlockBody(normaliseOutput(text, volatile))]));
}

/** Every file under a folder, relative to it, sorted. */
function listFiles(root: string, under = ''): string[] {
  return readdirSync(path.join(root, under), { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? listFiles(root, path.join(under, entry.name)) : [path.join(under, entry.name)]))
    .sort();
}

/** `exledger sandbox` (text output, as a person starts it) in a process of its own. */
async function startSandbox(cwd: string): Promise<{ banner: string; url: string; credentials: { apiKey: string; secret: string; passphrase: string }; stop: () => Promise<void> }> {
  const child: ChildProcess = spawn(
    process.execPath,
    [BIN, 'sandbox', '--port', '0', '--seed', SANDBOX_SEED, '--end', SANDBOX_END, '--spot-quota', '50000', '--futures-quota', '100000'],
    { cwd, env: quietEnvironment(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  track(child);
  const exited = once(child, 'exit');
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
  };
  const lines: string[] = [];
  const reader = createInterface({ input: child.stdout! });
  try {
    await Promise.race([
      (async () => {
        for await (const line of reader) {
          lines.push(line);
          if (line.startsWith('Ctrl-C stops it')) return;
        }
      })(),
      exited.then(() => {
        throw new Error(`exledger sandbox exited before it listened: ${stderr}`);
      }),
    ]);
  } catch (error) {
    await stop();
    throw error;
  }
  const banner = lines.join('\n');
  const setting = (name: string) => {
    const value = new RegExp(`^export ${name}=(\\S+)$`, 'm').exec(banner)?.[1];
    if (value === undefined) throw new Error(`exledger sandbox printed no ${name}:\n${banner}`);
    return value;
  };
  return {
    banner,
    url: setting('EXLEDGER_SPOT_BASE_URL'),
    credentials: { apiKey: setting('EXLEDGER_API_KEY'), secret: setting('EXLEDGER_API_SECRET'), passphrase: setting('EXLEDGER_API_PASSPHRASE') },
    stop,
  };
}

/**
 * Rewrites every marked block of the documentation from the captures and the repository files.
 * A block naming a capture or a file that does not exist is an error (nothing is written).
 */
export function rewriteDocumentation(captures: ReadonlyMap<string, string>): { file: string; changed: number }[] {
  const updates = documentationFiles().map((file) => {
    const text = readFileSync(path.join(REPO, file), 'utf8');
    let changed = 0;
    const next = replaceMarkedBlocks(
      text,
      (block) => {
        const body = expectedBody(block, captures, file);
        if (body !== undefined && body !== block.body) changed++;
        return body;
      },
      file,
    );
    return { file, text: next, changed };
  });
  for (const update of updates) if (update.changed > 0) writeFileSync(path.join(REPO, update.file), update.text);
  return updates.map(({ file, changed }) => ({ file, changed }));
}

/** What a marked block must hold; undefined for a capture this machine cannot make (UNAVAILABLE_CAPTURES). */
export function expectedBody(block: MarkedBlock, captures: ReadonlyMap<string, string>, file: string): string | undefined {
  if (block.kind === 'file') {
    try {
      return fileBlockBody(block.name);
    } catch {
      throw new Error(`${file}:${block.line}: quotes ${block.name}, which is not a file of the repository`);
    }
  }
  const capture = captures.get(block.name);
  if (capture === undefined && UNAVAILABLE_CAPTURES.has(block.name)) return undefined;
  if (capture === undefined) throw new Error(`${file}:${block.line}: no capture named "${block.name}" (scripts/docs-outputs.ts has ${[...captures.keys()].join(', ')})`);
  return capture;
}

async function main(): Promise<void> {
  const started = Date.now();
  const captures = await captureOutputs();
  const updates = rewriteDocumentation(captures);
  const quoted = new Set(documentationFiles().flatMap((file) => findMarkedBlocks(readFileSync(path.join(REPO, file), 'utf8'), file).map((block) => block.name)));
  for (const { file, changed } of updates) if (changed > 0) console.log(`${file}: ${changed} block(s) rewritten`);
  const unused = [...captures.keys()].filter((name) => !quoted.has(name));
  if (unused.length > 0) console.log(`captured but quoted nowhere: ${unused.join(', ')}`);
  for (const [name, reason] of UNAVAILABLE_CAPTURES) console.log(`not captured here, its block left as it is: ${name} (${reason})`);
  console.log(`docs:outputs: ${captures.size} captures, ${updates.reduce((sum, update) => sum + update.changed, 0)} block(s) changed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  });
}
