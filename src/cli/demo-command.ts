import { rmSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/config.ts';
import { DEFAULT_RETRY } from '../exchange/retry.ts';
import { DEFAULT_MODEL_SETTINGS } from '../models/settings.ts';
import { startSandbox } from '../sandbox/server.ts';
import { Database } from '../store/database.ts';
import { buildWithConfig, summarizeBuild } from './build-command.ts';
import { checkWithConfig } from './check-command.ts';
import { defineCommand } from './command.ts';
import { readStatus } from '../store/stream-status.ts';
import { formatSyncSummary, syncWithConfig } from './sync-command.ts';

/** The demo database: its own file, so a demo never mixes with a real account's data. */
const DEMO_DB = './data/demo.duckdb';

/**
 * `exledger demo` (what `npm start` runs): starts the sandbox exchange on a free loopback port,
 * runs exledger against it over its whole history and stops it. The sandbox's quotas are ten
 * times the real exchange's (and the client's budget with them) so a year of daily referral
 * totals takes seconds, not minutes; everything else behaves as against the real exchange.
 */
export const demoCommand = defineCommand({
  command: 'demo',
  describe: 'Run exledger end to end against the built-in sandbox exchange (no account needed); what `npm start` runs',
  builder: (yargs) =>
    yargs
      .option('seed', { type: 'number', default: 1, describe: 'Seed of the sandbox history' })
      .option('scale', { choices: ['small', 'medium', 'large'] as const, default: 'small' as const, describe: 'Sandbox history size' })
      .option('db', { type: 'string', default: DEMO_DB, describe: 'Database file for the demo (recreated on every demo)' }),
  handler: async (args) => {
    const sandbox = await startSandbox({ seed: args.seed, scale: args.scale, spotQuota: 5000, futuresQuota: 10_000 });
    try {
      const { exchange } = sandbox;
      console.log(`sandbox exchange on ${sandbox.url} (seed ${args.seed}, scale ${args.scale}): ${new Date(exchange.startMs).toISOString().slice(0, 10)} to ${new Date(exchange.endMs).toISOString().slice(0, 10)}\n`);
      rmSync(args.db, { force: true });
      rmSync(`${args.db}.wal`, { force: true });
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
        reports: { names: null, period: 'month', outDir: './out' },
        logDir: './logs',
      };
      const outcome = await syncWithConfig(config, { progress: process.stdout.isTTY === true });
      console.log(formatSyncSummary(outcome));

      console.log('\nbuilding the models:');
      const buildStarted = performance.now();
      const built = await buildWithConfig(config, { print: true });
      console.log(summarizeBuild(built, performance.now() - buildStarted));
      console.log('\nchecking them:');
      const checked = await checkWithConfig(config, { print: true });

      const db = await Database.open(args.db, { readOnly: true });
      try {
        const statuses = await readStatus(db);
        const rows = statuses.reduce((sum, status) => sum + status.rows, 0);
        console.log(`\n${rows} rows in ${path.resolve(args.db)}.`);
      } finally {
        db.close();
      }
      console.log('Look around:');
      console.log(`  npx exledger status --db ${args.db}`);
      console.log(`  duckdb ${args.db} "select symbol, count(*), sum(fill_total_amount) from staging.spot_fills group by all"   (any DuckDB client)`);
      console.log('  npx exledger sandbox   # the exchange on its own, to sync by hand (README "Commands")');
      console.log(`  duckdb ${args.db} "from marts.spot_realized_pnl_monthly"`);
      console.log('Excel reports follow (README "Status").');
      const modelsOk = built.every((result) => result.status === 'ok') && checked.every((result) => result.status === 'pass');
      return outcome.exitCode !== 0 ? outcome.exitCode : modelsOk ? 0 : 1;
    } finally {
      await sandbox.close();
    }
  },
});
