/** Process exit codes, documented in the README ("Exit codes"). */
export const EXIT = {
  /** Everything asked for was done. */
  ok: 0,
  /** A failure: nothing more was done after it (the error line says what). */
  failure: 1,
  /** Bad input: a flag, the config file or an environment variable (the error line names it). */
  badInput: 2,
  /** Partial success: some streams or steps failed, the rest were done (see the summary). */
  partial: 3,
} as const;
