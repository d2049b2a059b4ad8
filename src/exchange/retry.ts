import pRetry from 'p-retry';
import { ExledgerError, InterruptedError, RateLimitError } from '../errors.ts';

/**
 * The one retry layer. Faults the exchange recovers from (5xx, resets, timeouts, malformed
 * bodies) are retried with exponential backoff and jitter; auth, permission and parameter
 * errors are final at once. 429s do not use up retries (the budget has already slowed the
 * client down and held it for a window), so a rate limit never fails a run, only delays it,
 * within `maxRetryTimeMs`.
 */

/** Options of the retry layer. */
export interface RetryOptions {
  /** Retries after the first attempt for faults other than 429. @default 8 */
  retries: number;
  /** First backoff delay, ms (doubles each retry, times a random factor in [1, 2)). @default 250 */
  minTimeoutMs: number;
  /** Longest backoff delay, ms. @default 15000 */
  maxTimeoutMs: number;
  /** Give up on one request after this long, ms, whatever the error. @default 900000 */
  maxRetryTimeMs: number;
}

export const DEFAULT_RETRY: RetryOptions = Object.freeze({
  retries: 8,
  minTimeoutMs: 250,
  maxTimeoutMs: 15_000,
  maxRetryTimeMs: 900_000,
});

/** What the retry layer reports after each failed attempt (for counters and logs). */
export interface RetryEvent {
  error: Error;
  attemptNumber: number;
  willRetry: boolean;
}

/**
 * Runs `attempt` until it succeeds, fails with a final error, or the retry budget runs out.
 * Once `signal` is aborted no further attempt starts and a backoff wait ends at once: the call
 * fails with the signal's reason (an InterruptedError), whatever the attempt in flight did.
 */
export async function withRetry<T>(
  attempt: (attemptNumber: number) => Promise<T>,
  options: RetryOptions,
  onFailedAttempt?: (event: RetryEvent) => void | Promise<void>,
  signal?: AbortSignal,
): Promise<T> {
  return pRetry(attempt, {
    signal,
    retries: options.retries,
    minTimeout: options.minTimeoutMs,
    maxTimeout: options.maxTimeoutMs,
    maxRetryTime: options.maxRetryTimeMs,
    factor: 2,
    randomize: true,
    shouldConsumeRetry: ({ error }) => !(error instanceof RateLimitError),
    shouldRetry: ({ error }) => isRetryable(error),
    onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
      // A stop is not a failed attempt (p-retry reports it as one before it gives up).
      if (signal?.aborted === true || error instanceof InterruptedError) return;
      await onFailedAttempt?.({ error, attemptNumber, willRetry: isRetryable(error) && retriesLeft > 0 });
    },
  });
}

function isRetryable(error: Error): boolean {
  // A stop is final for the request (InterruptedError is retryable only as a whole command).
  return error instanceof ExledgerError && error.isRetryable && !(error instanceof InterruptedError);
}
