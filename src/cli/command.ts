import type { Argv, ArgumentsCamelCase } from 'yargs';

/**
 * A CLI command: a typed object registered in commands.ts (after wrangler's command objects).
 * The handler returns the process exit code; errors propagate to main.ts, the only catcher.
 */
export interface Command<A extends object = object> {
  /** yargs command string, e.g. `sandbox` or `report <name..>`. */
  command: string;
  describe: string;
  builder: (yargs: Argv) => Argv<A>;
  handler: (args: ArgumentsCamelCase<A>) => Promise<number>;
}

/** Defines a command with its argument types inferred from the builder. */
export function defineCommand<A extends object>(command: Command<A>): Command<A> {
  return command;
}

/** A command of any argument type, for the registry (each command checks its own arguments). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyCommand = Command<any>;
