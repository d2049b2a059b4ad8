import type { AnyCommand } from './command.ts';
import { demoCommand } from './demo-command.ts';
import { sandboxCommand } from './sandbox-command.ts';

/** Every CLI command, in the order `exledger --help` lists them. */
export const COMMANDS: readonly AnyCommand[] = [demoCommand, sandboxCommand];
