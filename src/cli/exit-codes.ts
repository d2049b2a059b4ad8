/** Process exit codes, documented in the README ("Exit codes"). */
export const EXIT = {
  /** Everything asked for was done. */
  ok: 0,
  /** A failure: nothing more was done after it (the error line says what). A full disk is one (DiskFullError). */
  failure: 1,
  /** Bad input: a flag, the config file or an environment variable (the error line names it). */
  badInput: 2,
  /** Partial success: some streams or steps failed, the rest were done (see the summary). */
  partial: 3,
  /** Busy: the database is held by another exledger (or a client writing it); try again when it is done. */
  busy: 4,
  /** Interrupted by a signal (Ctrl-C, SIGTERM): what was committed stays; run again to continue. */
  interrupted: 130,
} as const;
