import { archiveCommand } from './archive-command.ts';
import { buildCommand } from './build-command.ts';
import { checkCommand } from './check-command.ts';
import { closeCommand, reopenCommand } from './close-command.ts';
import type { AnyCommand } from './command.ts';
import { demoCommand } from './demo-command.ts';
import { docsCommand } from './docs-command.ts';
import { explainCommand } from './explain-command.ts';
import { exportCommand } from './export-command.ts';
import { lsCommand } from './ls-command.ts';
import { reportCommand } from './report-command.ts';
import { restoreCommand } from './restore-command.ts';
import { runCommand } from './run-command.ts';
import { sandboxCommand } from './sandbox-command.ts';
import { sqlCommand } from './sql-command.ts';
import { statusCommand } from './status-command.ts';
import { syncCommand } from './sync-command.ts';

/** Every CLI command, in the order `exledger --help` lists them. */
export const COMMANDS: readonly AnyCommand[] = [runCommand, syncCommand, buildCommand, checkCommand, lsCommand, reportCommand, closeCommand, reopenCommand, exportCommand, explainCommand, docsCommand, archiveCommand, restoreCommand, statusCommand, sqlCommand, sandboxCommand, demoCommand];
