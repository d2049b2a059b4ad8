import { ExchangeClient } from '../exchange/exchange-client.ts';
import { ENDPOINTS, type EndpointId } from '../exchange/endpoints.ts';
import { startSandbox } from '../sandbox/server.ts';
import { defineCommand } from './command.ts';
import { EXIT } from './exit-codes.ts';

/**
 * `exledger demo` (what `npm start` runs): starts the sandbox on a free loopback port, drives the
 * pipeline against it and stops it. Until the sync, models and reports exist it shows the
 * foundation: one signed, budgeted call to every read endpoint.
 */
export const demoCommand = defineCommand({
  command: 'demo',
  describe: 'Run exledger end to end against the built-in sandbox exchange (no account needed); what `npm start` runs',
  builder: (yargs) =>
    yargs
      .option('seed', { type: 'number', default: 1, describe: 'Seed of the sandbox history' })
      .option('scale', { choices: ['small', 'medium', 'large'] as const, default: 'small' as const, describe: 'Sandbox history size' }),
  handler: async (args) => {
    const sandbox = await startSandbox({ seed: args.seed, scale: args.scale });
    try {
      const account = sandbox.exchange.accounts[0]!;
      const client = new ExchangeClient({
        spotBaseUrl: sandbox.url,
        contractBaseUrl: sandbox.url,
        credentials: { apiKey: account.apiKey, secret: account.secret, passphrase: account.passphrase },
      });
      const symbol = sandbox.exchange.spotSymbols[0]!.symbol;
      const calls: [EndpointId, Record<string, string | number>][] = [
        ['spot.currencies', {}],
        ['spot.assets', {}],
        ['spot.fills', { symbol, pageSize: 100 }],
        ['spot.fundingBills', { pageSize: 100 }],
        ['spot.transferRecords', { limit: 100 }],
        ['spot.openOrders', { symbol, limit: 100 }],
        ['futures.contracts', {}],
        ['futures.fills', { limit: 100 }],
        ['futures.currentOrders', { limit: 100 }],
        ['futures.accounts', {}],
        ['rebate.commission', { startTime: sandbox.exchange.endMs - 30 * 86_400_000, endTime: sandbox.exchange.endMs - 1 }],
        ['rebate.referrals', { startTime: sandbox.exchange.endMs - 30 * 86_400_000, endTime: sandbox.exchange.endMs - 1 }],
      ];
      console.log(`sandbox exchange on ${sandbox.url} (seed ${args.seed}, scale ${args.scale})\n`);
      console.log(`${'endpoint'.padEnd(24)}${'path'.padEnd(54)}records`);
      for (const [endpoint, params] of calls) {
        const data = await client.call(endpoint, params);
        console.log(`${endpoint.padEnd(24)}${ENDPOINTS[endpoint].path.padEnd(54)}${countRecords(data)}`);
      }
      const stats = client.stats();
      console.log(`\n${stats.requests} signed, budgeted requests; ${stats.ipWeight} IP weight spent; ${stats.failedAttempts} failed attempts.`);
      console.log('Next: `exledger sandbox` runs the exchange on its own; sync, models and reports follow.');
      return EXIT.ok;
    } finally {
      await sandbox.close();
    }
  },
});

function countRecords(data: unknown): number {
  if (Array.isArray(data)) return data.length;
  if (typeof data === 'object' && data !== null) {
    const list = Object.values(data).find(Array.isArray);
    return list?.length ?? 1;
  }
  return 1;
}
