import { ExchangeClient, type ExchangeClientOptions } from '../../src/exchange/exchange-client.ts';
import { RateBudget } from '../../src/exchange/rate-budget.ts';
import { startSandbox, type RunningSandbox, type SandboxOptions } from '../../src/sandbox/server.ts';

/** A fixed end of history, so every test sees the same generated data. */
export const TEST_END_MS = Date.UTC(2026, 10, 1);

/** Starts a sandbox on 127.0.0.1:0 with a fixed history end unless told otherwise. */
export function startTestSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  return startSandbox({ endMs: TEST_END_MS, seed: 7, scale: 'small', ...options });
}

/** A client for the sandbox's first (or `index`th) account, with fast retries for tests. */
export function clientFor(sandbox: RunningSandbox, options: Partial<ExchangeClientOptions> = {}, index = 0): ExchangeClient {
  const account = sandbox.exchange.accounts[index]!;
  return new ExchangeClient({
    spotBaseUrl: sandbox.url,
    contractBaseUrl: sandbox.url,
    credentials: { apiKey: account.apiKey, secret: account.secret, passphrase: account.passphrase },
    budget: new RateBudget(),
    retry: { minTimeoutMs: 10, maxTimeoutMs: 200, retries: 12 },
    timeoutMs: 10_000,
    ...options,
  });
}
