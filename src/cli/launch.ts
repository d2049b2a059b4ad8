import { describePending } from '../pending-work.ts';
import { EXIT } from './exit-codes.ts';
import { main } from './main.ts';

/**
 * Runs the CLI as a process: every exit is one the command chose, and says why.
 *
 * - The exit code is main's, and the process exits once stdout and stderr are flushed.
 * - A reader that closes stdout early (`exledger sql … | head -1`) is not an error: output
 *   stops, the command finishes quietly (no EPIPE stack trace) with its own exit code.
 * - Last line of defence: if Node runs out of things to wait for while the command is still
 *   unfinished (a promise nothing will ever settle), `beforeExit` fires; instead of Node's
 *   silent exit 13, print one `error: internal: …` line naming what was pending, and exit 1.
 */
export function launch(argv: string[], run: (argv: string[]) => Promise<number> = main): void {
  let finished = false;
  // EPIPE: the reader went away; later writes fail quietly on the destroyed stream. Any other
  // failure to write the output (a full disk under `> file`) is said once on stderr; the command
  // goes on (a run still has its log file) and exits with its own code.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') process.stderr.write(`error: could not write the output (${error.code ?? error.message}); the rest of it is lost\n`);
  });
  process.stderr.on('error', () => undefined);
  process.on('beforeExit', () => {
    if (finished) return;
    finished = true;
    const pending = describePending();
    const what = pending.length === 0 ? 'nothing was registered as pending' : `pending: ${pending.join('; ')}`;
    process.stderr.write(`error: internal: exledger stopped before the command finished, with nothing left to wait for (${what})\n  fix: this is a bug in exledger; run the command again (what was committed stays) and report this line\n`);
    process.exit(EXIT.failure);
  });
  run(argv).then(
    (code) => exit(code),
    (error: unknown) => {
      // main catches everything it knows; this is a failure of the CLI itself.
      process.stderr.write(`error: internal: ${(error as Error)?.stack ?? String(error)}\n`);
      exit(EXIT.failure);
    },
  );

  function exit(code: number): void {
    finished = true;
    process.exitCode = code;
    // Wait until what was written is handed to the OS (a pipe may be slower than the command),
    // then exit: idle keep-alive sockets must not hold a finished command open.
    let waiting = 2;
    const done = () => {
      waiting -= 1;
      if (waiting === 0) process.exit(code);
    };
    for (const stream of [process.stdout, process.stderr]) {
      if (stream.destroyed || !stream.writable) done();
      else stream.write('', () => done());
    }
  }
}
