import { rmSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/config.ts';
import { DEFAULT_RETRY } from '../exchange/retry.ts';
import { DEFAULT_MODEL_SETTINGS } from '../models/settings.ts';
import { startSandbox } from '../sandbox/server.ts';
import { publishedPath } from '../store/publish.ts';
import { defineCommand } from './command.ts';
import { EXIT } from './exit-codes.ts';
import { formatRunSummary, runNightly } from './run-command.ts';
import { startRunLog } from './run-log.ts';

/** The demo database: its own file, so a demo never mixes with a real account's data. */
const DEMO_DB = './data/demo.duckdb';

/**
 * `exledger demo` (what `npm start` runs): starts the sandbox exchange on a free loopback port,
 * runs `exledger run` against it over its whole history (sync, build, check, the four reports
 * for the last closed month, publish) and stops it. The sandbox's quotas are ten times the real
 * exchange's (and the client's budget with them) so a year of daily referral totals takes
 * seconds, not minutes; everything else behaves as against the real exchange.
 */
export const demoCommand = defineCommand({
  command: 'demo',
  describe: 'Run exledger end to end against the built-in sandbox exchange (no account needed); what `npm start` runs',
  builder: (yargs) =>
    yargs
      .option('seed', { type: 'number', default: 1, describe: 'Seed of the sandbox history' })
      .option('scale', { choices: ['small', 'medium', 'large'] as const, default: 'small' as const, describe: 'Sandbox history size' })
      .option('db', { type: 'string', default: DEMO_DB, describe: 'Database file for the demo (recreated on every demo)' })
      .option('out', { type: 'string', default: './out', describe: 'Folder of the workbooks' }),
  handler: async (args) => {
    const sandbox = await startSandbox({ seed: args.seed, scale: args.scale, spotQuota: 5000, futuresQuota: 10_000 });
    const log = startRunLog('./logs');
    try {
      const { exchange } = sandbox;
      console.log(`sandbox exchange on ${sandbox.url} (seed ${args.seed}, scale ${args.scale}): ${new Date(exchange.startMs).toISOString().slice(0, 10)} to ${new Date(exchange.endMs).toISOString().slice(0, 10)}`);
      console.log(`log: ${log.file}`);
      for (const file of [args.db, `${args.db}.wal`]) rmSync(file, { force: true });
      const config: Config = {
        configFile: null,
        db: args.db,
        spotBaseUrl: sandbox.url,
        contractBaseUrl: sandbox.url,
        accounts: exchange.accounts.map((account, index) => ({ name: index === 0 ? 'sandbox' : `sandbox${index + 1}`, apiKey: account.apiKey, secret: account.secret, passphrase: account.passphrase })),
        budget: { spot: { quota: 5000, windowMs: 10_000 }, contract: { quota: 10_000, windowMs: 10_000 }, utilization: 0.97, burst: 0.03 },
        retry: DEFAULT_RETRY,
        timeoutMs: 15_000,
        memoryLimit: '4GB',
        sync: { spotSymbols: null, quoteCoins: ['USDT', 'USDC', 'BTC', 'ETH'], lookbackDays: 1, startDate: new Date(exchange.startMs).toISOString().slice(0, 10), maxWindowDays: 88 },
        models: { ...DEFAULT_MODEL_SETTINGS, costMethods: ['fifo', 'average'] },
        reports: { names: null, period: 'month', outDir: args.out },
        logDir: './logs',
      };
      const outcome = await runNightly(config, { progress: process.stdout.isTTY === true, now: new Date(exchange.endMs) });
      console.log(formatRunSummary(outcome));

      console.log(`\nThe workbooks (${outcome.period.label}):`);
      for (const report of outcome.reports) console.log(`  ${path.relative(process.cwd(), report.file)}`);
      console.log('\nQuery the data (the published, read-only copy; any DuckDB client can open it too):');
      console.log(`  npx exledger sql --db ${args.db} "from marts.spot_realized_pnl_monthly limit 10"`);
      console.log(`  npx exledger sql --db ${args.db} --csv "select coin, sum(fees_paid) from marts.fees_monthly group by all"`);
      console.log(`  duckdb -readonly ${publishedPath(args.db)}`);
      console.log('Reports for another period:');
      console.log(`  npx exledger report all --db ${args.db} --from ${new Date(exchange.startMs).toISOString().slice(0, 10)} --to ${outcome.period.to}`);
      return outcome.exitCode === EXIT.ok ? EXIT.ok : outcome.exitCode;
    } finally {
      log.close();
      await sandbox.close();
    }
  },
});
