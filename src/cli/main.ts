import { readFileSync } from 'node:fs';
import yargs from 'yargs';
import { resolveConfig } from '../config/config.ts';
import { Database } from '../store/database.ts';
import { AuthError, ConfigError, DatabaseBusyError, ExledgerError, InterruptedError, UsageError } from '../errors.ts';
import type { AnyCommand, CommandOutcome } from './command.ts';
import { COMMANDS } from './commands.ts';
import { allExitCodesHelp, EXIT, exitCodesHelp } from './exit-codes.ts';
import { Output } from './output.ts';
import { NO_COMMAND, usageErrorOf, type KnownOptions } from './usage-error.ts';

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Options of main, for tests and embedding. */
export interface MainOptions {
  /** Whether stderr is a terminal (progress bars). @default process.stderr.isTTY */
  tty?: boolean;
}

/**
 * The CLI's top level: registers the commands, resolves the configuration once for the one
 * that runs, hands it to its handler with the output and an abort signal (SIGINT, SIGTERM),
 * and is the only place that catches errors: it prints one actionable line (and a hint), and
 * picks the exit code. With `--json`, stdout gets one object of the same shape for every
 * command: command, ok, exitCode, startedAt, finishedAt, then the command's details (or its
 * error).
 */
export async function main(argv: string[], options: MainOptions = {}): Promise<number> {
  const startedAt = new Date();
  const json = argv.includes('--json');
  const output = new Output({ json, quiet: argv.includes('--quiet') || argv.includes('-q'), tty: options.tty ?? process.stderr.isTTY === true });
  let ran: { name: string; outcome: CommandOutcome } | undefined;
  let commandName = argv.find((arg) => !arg.startsWith('-')) ?? '';
  const abort = new AbortController();
  let stopsOnSignal = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (abort.signal.aborted || !stopsOnSignal) {
      // Nothing of this command is half-committed by stopping here: DuckDB keeps its last
      // commit, a workbook or a published copy is only ever renamed into place complete.
      output.error(`error: interrupted by ${signal}${abort.signal.aborted ? ' again' : ''}: stopped; what was committed stays`);
      if (json) output.json(envelope(commandName, EXIT.interrupted, startedAt, { error: errorDetails(new InterruptedError(signal)) }));
      Database.interruptOpenQueries();
      process.exit(EXIT.interrupted);
    }
    output.error(`exledger: ${signal} received: stopping; what is committed stays (send it again to stop at once)`);
    abort.abort(new InterruptedError(signal));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // Signals that arrived while the launcher was loading this (src/cli/exledger.js).
  const early = (process as unknown as Record<symbol, { received: NodeJS.Signals[]; stop: () => void } | undefined>)[Symbol.for('exledger.earlySignals')];
  early?.stop();
  for (const signal of early?.received.splice(0) ?? []) onSignal(signal);

  const commandOf = (name: string | undefined) => (COMMANDS as readonly AnyCommand[]).find((command) => command.command.split(' ')[0] === name);
  const cli = yargs(argv)
    .scriptName('exledger')
    .usage('$0 <command> [options]\n\nAccounting and reporting pipeline for a cryptocurrency exchange account.')
    // yargs's own words (and the messages usageErrorOf reads) in English, whatever the machine's locale.
    .locale('en')
    .strict()
    .demandCommand(1, NO_COMMAND)
    .option('json', { type: 'boolean', describe: 'Print one JSON object (command, ok, exitCode, startedAt, finishedAt, details) instead of text' })
    .option('quiet', { alias: 'q', type: 'boolean', default: false, describe: 'Print only the summary and errors (no progress, no line per item)' })
    .option('verbose', { type: 'boolean', default: false, describe: 'Print stack traces of unexpected errors' })
    .help()
    .alias('help', 'h')
    .version(VERSION)
    .epilogue(allExitCodesHelp())
    .wrap(Math.min(120, process.stdout.columns ?? 100))
    .fail((message, error) => {
      if (error !== undefined && error !== null) throw error;
      // A bare `exledger` (global flags at most) is no mistake: it gets the command list (report() prints it).
      if (message === NO_COMMAND && argv.every((arg) => GLOBAL_FLAGS.includes(arg))) throw new NoCommandError(cli);
      // Anything else refused is one line naming it (and the closest valid name), then a fix line.
      const first = argv.find((arg) => !arg.startsWith('-'));
      throw usageErrorOf({
        argv,
        message: message ?? 'invalid arguments',
        command: commandOf(first)?.command,
        commands: COMMANDS.map((command) => command.command.split(' ')[0]!),
        // yargs's options in force where it stopped (the command's, once one was named).
        options: (cli as unknown as { getOptions(): KnownOptions }).getOptions(),
      });
    });
  for (const command of COMMANDS as readonly AnyCommand[]) {
    const name = command.command.split(' ')[0]!;
    cli.command({
      command: command.command,
      describe: command.describe,
      builder: (yargs) => command.builder(yargs).epilogue(exitCodesHelp(name)),
      handler: async (args) => {
        commandName = name;
        stopsOnSignal = command.stopsOnSignal === true;
        const context = { output, signal: abort.signal, argv };
        const outcome = command.config === undefined ? await command.handler(args, context) : await command.handler(args, { ...context, config: resolveConfig(command.config(args)) });
        ran = { name: commandName, outcome };
      },
    });
  }
  try {
    await cli.parseAsync();
    if (ran === undefined) return EXIT.ok; // --help, --version
    if (json) output.json(envelope(ran.name, ran.outcome.exitCode, startedAt, ran.outcome.details));
    return ran.outcome.exitCode;
  } catch (error) {
    const exitCode = report(error, argv.includes('--verbose'), output);
    if (json) output.json(envelope(commandName, exitCode, startedAt, { error: errorDetails(error) }));
    return exitCode;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** The flags of a bare `exledger` that still gets the command list. */
const GLOBAL_FLAGS = ['--json', '--quiet', '-q', '--verbose'];

/** A bare `exledger`: the command list, then the line saying a command is needed. */
class NoCommandError extends UsageError {
  constructor(readonly cli: { showHelp: (level: string) => unknown }) {
    super('no command given: name one of the commands listed above', { hint: 'exledger <command> --help lists the options of that command' });
  }
}

/** The exit code an error means (docs/reference.md "Exit codes"), by its class. */
export function exitCodeOf(error: unknown): number {
  if (error instanceof UsageError || error instanceof ConfigError || error instanceof AuthError) return EXIT.badInput;
  if (error instanceof DatabaseBusyError) return EXIT.busy;
  if (error instanceof InterruptedError) return EXIT.interrupted;
  return EXIT.failure;
}

function report(error: unknown, verbose: boolean, output: Output): number {
  // The command list first, which the error line refers to (on stderr: stdout stays empty).
  if (error instanceof NoCommandError) error.cli.showHelp('error');
  if (error instanceof ExledgerError) {
    output.error(`${error instanceof NoCommandError ? '\n' : ''}error: ${error.message}`);
    if (error.hint !== undefined) output.error(`  fix: ${error.hint}`);
    if (verbose) output.error(error.stack ?? '');
    return exitCodeOf(error);
  }
  output.error(`error: unexpected failure: ${(error as Error)?.message ?? String(error)}`);
  output.error(verbose ? ((error as Error)?.stack ?? '') : '  (run again with --verbose for the stack trace, and please report it)');
  return EXIT.failure;
}

function errorDetails(error: unknown): Record<string, unknown> {
  if (error instanceof ExledgerError) return { type: error instanceof UsageError ? 'UsageError' : error.name, message: error.message, fix: error.hint ?? null };
  return { type: 'UnexpectedError', message: (error as Error)?.message ?? String(error) };
}

/** The one shape of every command's --json. */
function envelope(command: string, exitCode: number, startedAt: Date, details: Record<string, unknown>): Record<string, unknown> {
  return { command, ok: exitCode === EXIT.ok, exitCode, startedAt: startedAt.toISOString(), finishedAt: new Date().toISOString(), ...details };
}
