import { readFileSync } from 'node:fs';
import yargs from 'yargs';
import { resolveConfig } from '../config/config.ts';
import { Database } from '../store/database.ts';
import { AuthError, ConfigError, DatabaseBusyError, ExledgerError, InterruptedError } from '../errors.ts';
import type { AnyCommand, CommandOutcome } from './command.ts';
import { COMMANDS } from './commands.ts';
import { EXIT } from './exit-codes.ts';
import { Output } from './output.ts';

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

  const cli = yargs(argv)
    .scriptName('exledger')
    .usage('$0 <command> [options]\n\nAccounting and reporting pipeline for a cryptocurrency exchange account.')
    .strict()
    .demandCommand(1, 'name a command: the commands are listed above')
    .option('json', { type: 'boolean', describe: 'Print one JSON object (command, ok, exitCode, startedAt, finishedAt, details) instead of text' })
    .option('quiet', { alias: 'q', type: 'boolean', default: false, describe: 'Print only the summary and errors (no progress, no line per item)' })
    .option('verbose', { type: 'boolean', default: false, describe: 'Print stack traces of unexpected errors' })
    .help()
    .alias('help', 'h')
    .version(VERSION)
    .wrap(Math.min(120, process.stdout.columns ?? 100))
    .fail((message, error, instance) => {
      if (error !== undefined && error !== null) throw error;
      throw new UsageError(message ?? 'invalid arguments', instance);
    });
  for (const command of COMMANDS as readonly AnyCommand[]) {
    cli.command({
      command: command.command,
      describe: command.describe,
      builder: command.builder,
      handler: async (args) => {
        commandName = command.command.split(' ')[0]!;
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

class UsageError extends Error {
  constructor(
    message: string,
    readonly cli: { showHelp: (level: string) => unknown },
  ) {
    super(message);
  }
}

/** The exit code an error means (README "Exit codes"), by its class. */
export function exitCodeOf(error: unknown): number {
  if (error instanceof UsageError || error instanceof ConfigError || error instanceof AuthError) return EXIT.badInput;
  if (error instanceof DatabaseBusyError) return EXIT.busy;
  if (error instanceof InterruptedError) return EXIT.interrupted;
  return EXIT.failure;
}

function report(error: unknown, verbose: boolean, output: Output): number {
  if (error instanceof UsageError) {
    // A bare `exledger` (or a wrong command): the command list first, which the line refers to.
    error.cli.showHelp('error');
    output.error(`\nerror: ${error.message}`);
    return EXIT.badInput;
  }
  if (error instanceof ExledgerError) {
    output.error(`error: ${error.message}`);
    if (error.hint !== undefined) output.error(`  fix: ${error.hint}`);
    if (verbose) output.error(error.stack ?? '');
    return exitCodeOf(error);
  }
  output.error(`error: unexpected failure: ${(error as Error)?.message ?? String(error)}`);
  output.error(verbose ? ((error as Error)?.stack ?? '') : '  (run again with --verbose for the stack trace, and please report it)');
  return EXIT.failure;
}

function errorDetails(error: unknown): Record<string, unknown> {
  if (error instanceof UsageError) return { type: 'UsageError', message: error.message };
  if (error instanceof ExledgerError) return { type: error.name, message: error.message, fix: error.hint ?? null };
  return { type: 'UnexpectedError', message: (error as Error)?.message ?? String(error) };
}

/** The one shape of every command's --json. */
function envelope(command: string, exitCode: number, startedAt: Date, details: Record<string, unknown>): Record<string, unknown> {
  return { command, ok: exitCode === EXIT.ok, exitCode, startedAt: startedAt.toISOString(), finishedAt: new Date().toISOString(), ...details };
}
