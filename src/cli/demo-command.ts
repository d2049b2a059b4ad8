import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { DEFAULT_CONFIG_FILE, resolveConfig, type Config } from '../config/config.ts';
import { ConfigError, ExledgerError } from '../errors.ts';
import type { ReportPeriod } from '../export/period.ts';
import { writeDemoPrices } from '../sandbox/demo-prices.ts';
import { publishedPath } from '../store/publish.ts';
import { definePlainCommand } from './command.ts';
import { EXIT } from './exit-codes.ts';
import { runWithLog } from './nightly-run.ts';
import { displayPath } from './result-text.ts';

/**
 * The demo's folder: everything it writes goes here (its database and published copy, prices,
 * config file, workbooks, logs), never into a real job's `./data`, `./out` or `./logs`.
 */
const DEMO_DIR = './demo';
/** Written into the demo's folder: a folder without it, and not empty, is not the demo's to recreate. */
const MARKER = '.exledger-demo';
const LAUNCHER = fileURLToPath(new URL('./exledger.js', import.meta.url));

/** What `exledger sandbox --json` prints once it listens. */
interface SandboxReady {
  url: string;
  historyFrom: string;
  historyUntil: string;
  accounts: { apiKey: string; secret: string; passphrase: string }[];
}

/** The sandbox could not be started. */
class SandboxStartError extends ExledgerError {
  readonly isRetryable = false;
}

/**
 * `exledger demo` (what `npm start` runs): starts `exledger sandbox` as a process of its own (the
 * exchange is never inside the client's process, as in production), runs the nightly job
 * against it over its whole history (sync, build, check, the five reports (the journal with its
 * CSV) for the last closed month, publish) and stops it. Its marts are valued in USD with
 * generated daily USDT closes (src/sandbox/demo-prices.ts). The sandbox's quotas are ten times
 * the real exchange's (and the client's budget with them) so a year of daily referral totals
 * takes seconds, not minutes; everything else behaves as against the real exchange.
 *
 * Everything it writes is in its own folder (`./demo/`), recreated on every demo: a real job's
 * files are never touched. Its settings are written there as a config file
 * (`demo/exledger.config.json`), read back by this run exactly as a later command reads it, so
 * the commands it prints at the end (report, sql, build, docs with `--config`) work on its data
 * with the same model settings. The file holds no base URL and no credentials: the sandbox, and
 * its keys with it, are gone when the demo ends, so a sync from it could never work, and keys
 * (even throwaway ones) belong in no file a demo leaves behind; nothing but sync and run needs
 * them. The run gets them from the running sandbox.
 */
export const demoCommand = definePlainCommand({
  command: 'demo',
  stopsOnSignal: true,
  describe: 'Run exledger end to end against the built-in sandbox exchange (no account needed); what `npm start` runs',
  builder: (yargs) =>
    yargs
      .option('seed', { type: 'number', default: 1, describe: 'Seed of the sandbox history' })
      .option('scale', { choices: ['small', 'medium', 'large'] as const, default: 'small' as const, describe: 'Sandbox history size' })
      .option('dir', { type: 'string', default: DEMO_DIR, describe: "The demo's folder: everything it writes goes there (recreated on every demo; a folder holding other files is refused)" }),
  handler: async (args, { output, signal }) => {
    const dir = path.resolve(args.dir);
    prepareDemoFolder(dir);
    const shownDir = `${displayPath(dir)}/`;
    const files = {
      config: path.join(dir, DEFAULT_CONFIG_FILE),
      db: path.join(dir, 'demo.duckdb'),
      prices: path.join(dir, 'demo-prices.csv'),
      out: path.join(dir, 'out'),
      logs: path.join(dir, 'logs'),
    };
    output.summary(`exledger demo: everything it writes goes into ${shownDir} (recreated on every demo); nothing outside it is touched`);
    const sandbox = await startSandboxProcess(['--seed', String(args.seed), '--scale', args.scale, '--spot-quota', '5000', '--futures-quota', '10000']);
    let outcome;
    try {
      const { ready } = sandbox;
      // The demo's prices: daily USDT closes over the sandbox's history.
      writeDemoPrices(files.prices, ready.historyFrom, ready.historyUntil);
      // Its settings as a config file (absolute paths: it works from any folder), read back with
      // the same resolver as every command and none of this shell's EXLEDGER_ variables (they are
      // for a real account); the sandbox's address, keys and raised quotas are added for this run only.
      writeFileSync(
        files.config,
        `${JSON.stringify(
          {
            db: files.db,
            sync: { startDate: ready.historyFrom.slice(0, 10), lookbackDays: 1 },
            models: { costMethods: ['fifo', 'average'], reportingCurrency: 'USD', pricesFile: files.prices },
            reports: { outDir: files.out },
            logDir: files.logs,
          },
          null,
          2,
        )}\n`,
      );
      const settings = resolveConfig({ configPath: files.config }, {});
      const config: Readonly<Config> = {
        ...settings,
        spotBaseUrl: ready.url,
        contractBaseUrl: ready.url,
        accounts: ready.accounts.map((account, index) => ({ name: index === 0 ? 'sandbox' : `sandbox${index + 1}`, apiKey: account.apiKey, secret: account.secret, passphrase: account.passphrase })),
        budget: { ...settings.budget, spot: { quota: 5000, windowMs: 10_000 }, contract: { quota: 10_000, windowMs: 10_000 } },
      };
      outcome = await runWithLog(config, output, signal, {
        now: new Date(ready.historyUntil),
        banner: [`sandbox exchange on ${ready.url}, pid ${sandbox.child.pid} (seed ${args.seed}, scale ${args.scale}): ${ready.historyFrom.slice(0, 10)} to ${ready.historyUntil.slice(0, 10)}`],
      });
    } finally {
      await sandbox.stop();
    }
    const period = outcome.details.period as ReportPeriod | undefined;
    output.summary(`\nThe demo wrote only into ${shownDir} (nothing outside it was touched):`);
    const listed: [string, string][] = [
      [displayPath(files.config), 'its settings: the database, folders and model settings (no credentials: the sandbox has stopped, and its keys with it)'],
      [displayPath(files.db), `the database; ${displayPath(publishedPath(files.db))} is the read-only copy for analysts`],
      [displayPath(files.prices), 'the prices the marts are valued with (USDT and the coins never traded, in USD, generated)'],
      [`${displayPath(files.out)}/`, `the workbooks${period === undefined ? '' : ` for ${period.label}`}`],
      [`${displayPath(files.logs)}/`, "the run's log, with a line per model and check"],
    ];
    const width = Math.max(...listed.map(([file]) => file.length));
    for (const [file, what] of listed) output.summary(`  ${file.padEnd(width)}  ${what}`);
    // The run's next steps only when it got that far (an interrupted or failed run has no data to show).
    if (outcome.exitCode === EXIT.ok || outcome.exitCode === EXIT.partial) {
      const config = `--config ${shellWord(displayPath(files.config))}`;
      output.summary(`\nThe sandbox has stopped; these work on the demo's data with its settings (from this folder):`);
      output.summary(`  npx exledger sql ${config} "from marts.spot_realized_pnl_monthly limit 10"`);
      output.summary(`  npx exledger sql ${config} --csv "select coin, sum(fees_paid) from marts.fees_monthly group by all"`);
      if (period !== undefined) output.summary(`  npx exledger report pnl fees ${config} --period ${monthBefore(period)}`);
      output.summary(`  npx exledger build ${config} --select marts.fees_monthly`);
      output.summary(`  npx exledger docs ${config} --out ${shellWord(`${displayPath(path.join(dir, 'docs-site'))}`)}`);
      output.summary('The published copy opens read-only in any DuckDB client, or with exledger itself:');
      output.summary(`  npx exledger sql --db ${shellWord(displayPath(publishedPath(files.db)))} "select schema_name, table_name from duckdb_tables() order by all"`);
    }
    return { exitCode: outcome.exitCode, details: { ...outcome.details, dir, config: files.config } };
  },
});

/**
 * Makes the demo's folder: a new or empty one, or a previous demo's (it has the marker), which is
 * emptied first so no workbook of an earlier demo stays beside the new ones. Any other folder is
 * refused, and so is the working folder or one above it: the demo never removes what it did not write.
 */
function prepareDemoFolder(dir: string): void {
  const fix = { hint: `give the demo a folder of its own: exledger demo --dir <new folder> (default ${DEMO_DIR})` };
  if (!path.relative(dir, process.cwd()).startsWith('..')) throw new ConfigError('--dir', `${dir} is the working folder or holds it: the demo recreates its folder`, fix);
  if (existsSync(dir)) {
    if (!statSync(dir).isDirectory()) throw new ConfigError('--dir', `${dir} is a file, not a folder`, fix);
    const entries = readdirSync(dir);
    if (entries.length > 0 && !entries.includes(MARKER)) {
      throw new ConfigError('--dir', `${dir} holds files no demo wrote (${entries.slice(0, 3).join(', ')}${entries.length > 3 ? ', …' : ''}), and the demo recreates its folder`, fix);
    }
    rmSync(dir, { recursive: true, force: true });
  }
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, MARKER), 'Written by exledger demo, which empties and recreates this folder on every demo.\n');
}

/** The month before a month's period (`2026-10` → `2026-09`). */
function monthBefore(period: ReportPeriod): string {
  const [year, month] = period.from.split('-').map(Number) as [number, number];
  return new Date(Date.UTC(year, month - 2, 1)).toISOString().slice(0, 7);
}

/** A path as one word of a shell command line: as it is when that is safe, else single-quoted. */
function shellWord(text: string): string {
  return /^[\w./@%+=:,-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
}

/** Starts `exledger sandbox --json` as a child process and waits for its ready line. */
async function startSandboxProcess(flags: readonly string[]): Promise<{ child: ChildProcessByStdio<null, Readable, Readable>; ready: SandboxReady; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [LAUNCHER, 'sandbox', '--json', '--port', '0', ...flags], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = once(child, 'exit');
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
  };
  try {
    const lines = createInterface({ input: child.stdout });
    const first = await Promise.race([
      once(lines, 'line').then(([line]) => line as string),
      exited.then(([code]) => {
        throw new SandboxStartError(`the sandbox exchange exited (code ${String(code)}) before it listened: ${stderr.trim().split('\n').at(-1) ?? ''}`);
      }),
    ]);
    const ready = JSON.parse(first) as SandboxReady;
    return { child, ready, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

