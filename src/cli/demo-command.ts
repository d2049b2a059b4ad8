import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { resolveConfig } from '../config/config.ts';
import { ExledgerError } from '../errors.ts';
import { writeDemoPrices } from '../sandbox/demo-prices.ts';
import { publishedPath } from '../store/publish.ts';
import { definePlainCommand } from './command.ts';
import { runWithLog } from './nightly-run.ts';
import { displayPath } from './result-text.ts';

/** The demo database: its own file, so a demo never mixes with a real account's data. */
const DEMO_DB = './data/demo.duckdb';
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
 * against it over its whole history (sync, build, check, the five reports (the journal with its CSV) for the last closed
 * month, publish) and stops it. Its marts are valued in USD with generated daily USDT closes
 * (src/sandbox/demo-prices.ts, written beside the database). The sandbox's quotas are ten times the real exchange's (and the
 * client's budget with them) so a year of daily referral totals takes seconds, not minutes;
 * everything else behaves as against the real exchange.
 */
export const demoCommand = definePlainCommand({
  command: 'demo',
  stopsOnSignal: true,
  describe: 'Run exledger end to end against the built-in sandbox exchange (no account needed); what `npm start` runs',
  builder: (yargs) =>
    yargs
      .option('seed', { type: 'number', default: 1, describe: 'Seed of the sandbox history' })
      .option('scale', { choices: ['small', 'medium', 'large'] as const, default: 'small' as const, describe: 'Sandbox history size' })
      .option('db', { type: 'string', default: DEMO_DB, describe: 'Database file for the demo (recreated on every demo)' })
      .option('out', { type: 'string', default: './out', describe: 'Folder of the workbooks' }),
  handler: async (args, { output, signal }) => {
    const sandbox = await startSandboxProcess(['--seed', String(args.seed), '--scale', args.scale, '--spot-quota', '5000', '--futures-quota', '10000']);
    try {
      const { ready } = sandbox;
      // The demo's prices: daily USDT closes over the sandbox's history, beside its database.
      const pricesFile = path.join(path.dirname(args.db), 'demo-prices.csv');
      writeDemoPrices(pricesFile, ready.historyFrom, ready.historyUntil);
      // The same resolver as every command, with the demo's settings in place of a config file
      // and none of this shell's EXLEDGER_ variables (they are for a real account).
      const config = resolveConfig(
        {
          values: {
            db: args.db,
            spotBaseUrl: ready.url,
            contractBaseUrl: ready.url,
            accounts: ready.accounts.map((account, index) => ({ name: index === 0 ? 'sandbox' : `sandbox${index + 1}`, apiKey: account.apiKey, secret: account.secret, passphrase: account.passphrase })),
            budget: { spot: { quota: 5000, windowMs: 10_000 }, contract: { quota: 10_000, windowMs: 10_000 } },
            sync: { startDate: ready.historyFrom.slice(0, 10), lookbackDays: 1 },
            models: { costMethods: ['fifo', 'average'], reportingCurrency: 'USD', pricesFile: path.resolve(pricesFile) },
            reports: { outDir: args.out },
            logDir: './logs',
          },
        },
        {},
      );
      for (const file of [config.db, `${config.db}.wal`]) rmSync(file, { force: true });
      const outcome = await runWithLog(config, output, signal, {
        now: new Date(ready.historyUntil),
        banner: [`sandbox exchange on ${ready.url}, pid ${sandbox.child.pid} (seed ${args.seed}, scale ${args.scale}): ${ready.historyFrom.slice(0, 10)} to ${ready.historyUntil.slice(0, 10)}`],
      });
      const reports = (outcome.details.reports ?? []) as { file: string }[];
      const period = outcome.details.period as { label: string; to: string } | undefined;
      if (period !== undefined) output.summary(`\nThe workbooks (${period.label}):`);
      for (const report of reports) output.summary(`  ${displayPath(report.file)}`);
      output.summary('\nQuery the data (the published, read-only copy; any DuckDB client can open it too):');
      output.summary(`  npx exledger sql --db ${args.db} "from marts.spot_realized_pnl_monthly limit 10"`);
      output.summary(`  npx exledger sql --db ${args.db} --csv "select coin, sum(fees_paid) from marts.fees_monthly group by all"`);
      output.summary(`  duckdb -readonly ${publishedPath(args.db)}`);
      if (period !== undefined) {
        output.summary('Reports for another period:');
        output.summary(`  npx exledger report all --db ${args.db} --from ${ready.historyFrom.slice(0, 10)} --to ${period.to}`);
      }
      return outcome;
    } finally {
      await sandbox.stop();
    }
  },
});

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

