/**
 * What the process is waiting for, as text: a request waiting for rate budget, a workbook being
 * written, a publish. Long work registers itself here so that, if Node ever found nothing left
 * to wait for while a command was unfinished (the bug behind issue 11: a scheduled run that
 * stopped silently), the launcher can say what was pending instead of exiting without a word.
 */

const pending = new Map<symbol, () => string>();

/**
 * Registers pending work, described lazily (the text is only built if it is ever printed).
 * Returns the function that unregisters it; calling it twice is harmless.
 */
export function holdPending(describe: () => string): () => void {
  const key = Symbol('pending');
  pending.set(key, describe);
  return () => void pending.delete(key);
}

/** Runs `work` while it is registered as pending under `label`. */
export async function whilePending<T>(label: string, work: () => Promise<T>): Promise<T> {
  const release = holdPending(() => label);
  try {
    return await work();
  } finally {
    release();
  }
}

/** The descriptions of what is pending now, oldest first. */
export function describePending(): string[] {
  return [...pending.values()].map((describe) => describe());
}
