import yargs from 'yargs';
import { ExledgerError, ExchangeError } from '../errors.ts';
import { COMMANDS } from './commands.ts';
import { EXIT } from './exit-codes.ts';

/**
 * The CLI's top level: registers the commands, runs one, and is the only place that catches
 * errors. It prints one actionable line (and a hint) and picks the exit code.
 */
export async function main(argv: string[]): Promise<number> {
  let exitCode: number = EXIT.ok;
  const cli = yargs(argv)
    .scriptName('exledger')
    .usage('$0 <command> [options]\n\nAccounting and reporting pipeline for a cryptocurrency exchange account.')
    .strict()
    .demandCommand(1, 'Name a command (see the list above).')
    .option('verbose', { type: 'boolean', default: false, describe: 'Print stack traces of unexpected errors' })
    .help()
    .alias('help', 'h')
    .version(false)
    .wrap(Math.min(120, process.stdout.columns ?? 100))
    .fail((message, error) => {
      if (error !== undefined && error !== null) throw error;
      throw new UsageError(message ?? 'invalid arguments');
    });
  for (const command of COMMANDS) {
    cli.command({
      command: command.command,
      describe: command.describe,
      builder: command.builder,
      handler: async (args) => {
        exitCode = await command.handler(args);
      },
    });
  }
  try {
    await cli.parseAsync();
    return exitCode;
  } catch (error) {
    return report(error, argv.includes('--verbose'));
  }
}

class UsageError extends Error {}

function report(error: unknown, verbose: boolean): number {
  if (error instanceof UsageError) {
    console.error(`error: ${error.message}\n(run exledger --help for the commands and their options)`);
    return EXIT.badInput;
  }
  if (error instanceof ExledgerError) {
    console.error(`error: ${error.message}`);
    if (error.hint !== undefined) console.error(`  fix: ${error.hint}`);
    if (verbose) console.error(error.stack);
    const isInput = error.name === 'ConfigError' || (error instanceof ExchangeError && error.name === 'AuthError');
    return isInput ? EXIT.badInput : EXIT.failure;
  }
  console.error(`error: unexpected failure: ${(error as Error)?.message ?? String(error)}`);
  console.error(verbose ? (error as Error)?.stack : '  (run again with --verbose for the stack trace, and please report it)');
  return EXIT.failure;
}
