import type { Argv, ArgumentsCamelCase } from 'yargs';
import type { Config, ConfigOverrides } from '../config/config.ts';
import type { Output } from './output.ts';

/** What every handler gets besides its flags. */
export interface CommandContext {
  /** Where to print (results, details, progress, the --json object). */
  output: Output;
  /** Aborted, with an InterruptedError as its reason, on the first SIGINT or SIGTERM. */
  signal: AbortSignal;
  /** The command line as given (yargs reads a lone `-` as an empty string). */
  argv: readonly string[];
}

/** The context of a command that reads configuration: resolved once, before the handler runs. */
export interface ConfiguredContext extends CommandContext {
  config: Readonly<Config>;
}

/** How a command ended: its exit code and, for `--json`, its details. */
export interface CommandOutcome {
  exitCode: number;
  /** Printed after the common fields (command, ok, exitCode, startedAt, finishedAt) with --json. */
  details: Record<string, unknown>;
}

interface CommandBase<A extends object> {
  /** yargs command string, e.g. `sandbox` or `report <name..>`. */
  command: string;
  describe: string;
  builder: (yargs: Argv) => Argv<A>;
  /**
   * The handler watches `signal` and stops cleanly on SIGINT/SIGTERM (a sync finishes its
   * commit). Otherwise the first signal ends the command at once, exit 130. @default false
   */
  stopsOnSignal?: boolean;
}

/**
 * A command that reads configuration (after wrangler's command objects): `config` maps its
 * flags onto the resolver's overrides, main.ts resolves the configuration once (defaults, the
 * config file, the environment, then these flags) and hands it to the handler.
 */
export interface ConfiguredCommand<A extends object = object> extends CommandBase<A> {
  /** Written inline, `(args) => …`, so the argument types come from the builder. */
  config: (args: ArgumentsCamelCase<A>) => ConfigOverrides;
  handler: (args: ArgumentsCamelCase<A>, context: ConfiguredContext) => Promise<CommandOutcome>;
}

/** A command that reads no configuration (the sandbox, the demo, which resolves its own). */
export interface PlainCommand<A extends object = object> extends CommandBase<A> {
  config?: undefined;
  handler: (args: ArgumentsCamelCase<A>, context: CommandContext) => Promise<CommandOutcome>;
}

export type Command<A extends object = object> = ConfiguredCommand<A> | PlainCommand<A>;

/** Defines a command that reads configuration, its argument types inferred from the builder. */
export function defineCommand<A extends object>(command: ConfiguredCommand<A>): ConfiguredCommand<A> {
  return command;
}

/** Defines a command that reads no configuration. */
export function definePlainCommand<A extends object>(command: PlainCommand<A>): PlainCommand<A> {
  return command;
}

/** A command of any argument type, for the registry (each command checks its own arguments). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyCommand = Command<any>;
