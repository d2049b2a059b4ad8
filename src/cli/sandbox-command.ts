import { ConfigError } from '../errors.ts';
import { parseDay } from '../jobs/parse-day.ts';
import { startSandbox, type SandboxOptions } from '../sandbox/server.ts';
import { definePlainCommand } from './command.ts';
import { EXIT } from './exit-codes.ts';

/** `exledger sandbox`: the built-in exchange, for trying exledger without an account. */
export const sandboxCommand = definePlainCommand({
  command: 'sandbox',
  stopsOnSignal: true,
  describe: 'Start the sandbox exchange (a real HTTP server over a generated account history) and print its address and credentials',
  builder: (yargs) =>
    yargs
      .option('port', { type: 'number', default: 0, describe: 'TCP port to listen on (0 picks a free one)' })
      .option('host', { type: 'string', default: '127.0.0.1', describe: 'Address to listen on' })
      .option('seed', { type: 'number', default: 1, describe: 'Seed of the generated history (same seed and end, same data)' })
      .option('scale', { choices: ['small', 'medium', 'large'] as const, default: 'small' as const, describe: 'History size per account: small ~5k, medium ~100k, large ~1M records' })
      .option('faults', { choices: ['none', 'light', 'heavy'] as const, default: 'none' as const, describe: 'Inject 5xx, connection resets, slow and malformed responses (light ~2%, heavy ~20%)' })
      .option('accounts', { type: 'number', default: 1, describe: 'Number of accounts (API keys), each with its own history' })
      .option('end', { type: 'string', describe: 'End of the history (exclusive), YYYY-MM-DD in UTC; the history covers the year before it [default: today]' })
      .option('spot-quota', { type: 'number', default: 500, describe: 'Weight per window per endpoint, per IP and per UID, for /api/v2' })
      .option('futures-quota', { type: 'number', default: 1000, describe: 'Weight per window per endpoint, per IP and per UID, for /capi/v2' })
      .option('window-ms', { type: 'number', default: 10_000, describe: 'Sliding rate-limit window, ms' })
      .option('bounds', { choices: ['inclusive', 'exclusive', 'half-open'] as const, default: 'inclusive' as const, describe: 'How history endpoints treat their start/end time bounds' })
      .option('transfer-cursor', { choices: ['documented', 'reversed'] as const, default: 'documented' as const, describe: "Meaning of transferRecords' after/before (documented: after = older than)" })
      .option('history-horizon-days', { type: 'number', describe: 'Refuse history older than this many days with 40704, as the real exchange does for some histories' })
      .option('late-spot-fills-ms', { type: 'number', default: 0, describe: 'Late records: one spot fill in ten is published this many ms after its time, hidden until POST /__sandbox/visible-until reaches that moment (0: none)' })
      .option('clock-skew-ms', { type: 'number', default: 0, describe: "Offset of the server's clock from this machine's, ms" })
      .option('request-log', { type: 'string', describe: 'Also append every request to this file as JSON lines' }),
  handler: async (args, { output, signal }) => {
    requireInteger('--port', args.port, 0, 65_535);
    requireInteger('--seed', args.seed, -(2 ** 53) + 1, 2 ** 53 - 1);
    requireInteger('--accounts', args.accounts, 1, 64);
    requireInteger('--spot-quota', args.spotQuota, 1, Number.MAX_SAFE_INTEGER);
    requireInteger('--futures-quota', args.futuresQuota, 1, Number.MAX_SAFE_INTEGER);
    requireInteger('--window-ms', args.windowMs, 1, Number.MAX_SAFE_INTEGER);
    requireInteger('--late-spot-fills-ms', args.lateSpotFillsMs, 0, Number.MAX_SAFE_INTEGER);
    if (args.historyHorizonDays !== undefined) requireInteger('--history-horizon-days', args.historyHorizonDays, 1, 100_000);
    const options: SandboxOptions = {
      host: args.host,
      port: args.port,
      seed: args.seed,
      scale: args.scale,
      faults: args.faults,
      accounts: args.accounts,
      endMs: args.end === undefined ? undefined : parseDay('--end', args.end),
      spotQuota: args.spotQuota,
      futuresQuota: args.futuresQuota,
      windowMs: args.windowMs,
      bounds: args.bounds,
      transferCursor: args.transferCursor,
      historyHorizonDays: args.historyHorizonDays ?? null,
      clockSkewMs: args.clockSkewMs,
      lateSpotFillsMs: args.lateSpotFillsMs,
      requestLogFile: args.requestLog,
    };
    const sandbox = await startSandbox(options);
    const { exchange } = sandbox;
    const startedAt = new Date();
    const accounts = exchange.accounts.map((account) => ({ uid: account.uid, apiKey: account.apiKey, secret: account.secret, passphrase: account.passphrase }));
    if (output.options.json) {
      // One line as soon as it listens, for the program that started it (the demo, tests).
      process.stdout.write(
        `${JSON.stringify({ command: 'sandbox', ok: true, exitCode: null, startedAt: startedAt.toISOString(), finishedAt: null, url: sandbox.url, historyFrom: new Date(exchange.startMs).toISOString(), historyUntil: new Date(exchange.endMs).toISOString(), seed: exchange.seed, scale: exchange.scale, faults: args.faults, accounts })}\n`,
      );
    } else {
      output.summary(
        [
          `sandbox exchange listening on ${sandbox.url}`,
          `history ${new Date(exchange.startMs).toISOString()} .. ${new Date(exchange.endMs).toISOString()} (seed ${exchange.seed}, scale ${exchange.scale}, faults ${args.faults})`,
          'request log: GET /__sandbox/requests; info: GET /__sandbox/info',
          '',
          '# point exledger at it (sandbox credentials are throwaway test values):',
          `export EXLEDGER_SPOT_BASE_URL=${sandbox.url}`,
          `export EXLEDGER_CONTRACT_BASE_URL=${sandbox.url}`,
          ...accounts.map((account, index) => {
            const prefix = accounts.length > 1 ? `# account ${index + 1} (uid ${account.uid})\n` : '';
            return `${prefix}export EXLEDGER_API_KEY=${account.apiKey}\nexport EXLEDGER_API_SECRET=${account.secret}\nexport EXLEDGER_API_PASSPHRASE=${account.passphrase}`;
          }),
          '\nCtrl-C stops it.',
        ].join('\n'),
      );
    }
    // Serves until SIGINT or SIGTERM (main.ts turns either into this signal).
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    await sandbox.close();
    output.summary('sandbox exchange stopped');
    return { exitCode: EXIT.ok, details: { url: sandbox.url, requests: sandbox.requestLog.length } };
  },
});

function requireInteger(flag: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) throw new ConfigError(flag, `must be a whole number from ${min} to ${max}`);
}
