/**
 * Request-budget benchmark: 2,000 weighted requests at the default budget, then the same client
 * against a server that allows half its quota. Prints utilisation and request rates.
 */
import { RateBudget } from '../src/exchange/rate-budget.ts';
import { driveBudget, formatBudgetDrive } from '../test/support/budget-drive.ts';
import { clientFor, startTestSandbox } from '../test/support/sandbox.ts';

export async function benchBudget(): Promise<void> {
  const full = await startTestSandbox();
  try {
    const result = await driveBudget(full, clientFor(full, { budget: new RateBudget() }), 2000, { spot: 500, contract: 1000, windowMs: 10_000 });
    console.log(formatBudgetDrive('\n== budget: 2,000 requests at the default budget (500 / 1000 weight per 10 s per endpoint, per IP and per UID)', result));
  } finally {
    await full.close();
  }
  const half = await startTestSandbox({ spotQuota: 250, futuresQuota: 500 });
  try {
    const client = clientFor(half, { budget: new RateBudget() });
    // Enough requests to outlast a whole window: the server's half quota must bind.
    const result = await driveBudget(half, client, 4000, { spot: 250, contract: 500, windowMs: 10_000 });
    console.log(formatBudgetDrive('\n== budget: server allows half the quota the client assumes (250 / 500 per 10 s)', result));
  } finally {
    await half.close();
  }
}
