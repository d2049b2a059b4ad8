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

export type ExitName = keyof typeof EXIT;

/** What each exit code means, in a few words (a command's own words for it are in COMMAND_EXIT_CODES). */
const MEANING: Record<ExitName, string> = {
  ok: 'done',
  failure: 'failed: the error line says what; nothing after it was done',
  badInput: 'bad input (a flag, the config file, an environment variable): the error line names it',
  partial: 'partly done: the summary says what failed',
  busy: 'busy: another exledger (or a client writing it) holds the database; run again later',
  interrupted: 'interrupted (Ctrl-C, SIGTERM): what was committed stays; run it again to continue',
};

/**
 * The exit codes each command can return (docs/reference.md "Exit codes"), in its own words where they say
 * more than MEANING; `exledger <command> --help` ends with them. Every command can also fail
 * unexpectedly (1), be given bad input (2) and be stopped by a signal (130).
 */
export const COMMAND_EXIT_CODES: Readonly<Record<string, Partial<Record<ExitName, string | true>>>> = {
  run: {
    ok: 'every step was ok',
    failure: 'the sync failed for every stream, or a disk is full (the steps after it were skipped)',
    partial: 'some step failed or was partly done, the others were done (the summary lists each step)',
    busy: true,
  },
  sync: { ok: 'every stream was synced', failure: 'every stream failed', partial: 'some streams failed, the rest were synced (each failure is listed)', busy: true },
  build: { ok: 'every model was built', failure: 'a model failed (each failure is listed)', busy: true },
  check: { ok: 'every test passed', failure: 'a test failed (each failure is listed)', busy: true },
  ls: { ok: true },
  report: { ok: 'every workbook was written, or is unchanged since it was (not written again)', partial: 'the journal was written, some of its records not valued in full (a price is missing)', busy: true },
  close: { ok: 'closed: its workbooks were written as closed', failure: 'refused: each reason is listed, nothing was closed', busy: 'a run, a close or a reopen is under way, or the database is held' },
  reopen: { ok: 'reopened', busy: 'a run, a close or a reopen is under way, or the database is held' },
  export: { ok: true, busy: true },
  explain: { ok: 'explained' },
  docs: { ok: true, busy: true },
  archive: {
    ok: 'archived: the manifest lists what the database holds',
    failure: 'not archived, the archive left as it was: the error line says why',
    badInput: 'archive.dir not set, missing or not writable (never created); or no database',
    busy: 'a sync, a run or another archive holds the database or the archive',
  },
  restore: {
    ok: 'restored: run exledger build on the new database',
    failure: 'an archive file is missing or does not match its SHA-256 (named): nothing written',
    badInput: 'the database exists (restore never overwrites one), or --from holds no archive',
    busy: 'another restore into the same file is under way',
  },
  status: { ok: 'shown (during a sync or run too: what it is doing, and the published copy\'s table)', busy: 'the database is held by a process that is not an exledger' },
  sql: { ok: true, busy: true },
  sandbox: { ok: 'stopped by Ctrl-C or SIGTERM, the way to stop it' },
  demo: { ok: true, partial: true, busy: true },
};

/** The `Exit codes:` block that ends `exledger <command> --help`, from COMMAND_EXIT_CODES. */
export function exitCodesHelp(command: string): string {
  const own = COMMAND_EXIT_CODES[command] ?? {};
  const codes: Partial<Record<ExitName, string | true>> = { failure: true, badInput: true, interrupted: true, ...own };
  const names = (Object.keys(EXIT) as ExitName[]).filter((name) => codes[name] !== undefined);
  return ['Exit codes:', ...names.map((name) => `  ${String(EXIT[name]).padEnd(4)} ${codes[name] === true ? MEANING[name] : codes[name]}`)].join('\n');
}

/** The `Exit codes:` block of `exledger --help`: every code, and where each command's are. */
export function allExitCodesHelp(): string {
  return ['Exit codes:', ...(Object.keys(EXIT) as ExitName[]).map((name) => `  ${String(EXIT[name]).padEnd(4)} ${MEANING[name]}`), '`exledger <command> --help` lists the codes that command returns.'].join('\n');
}
