import { existsSync } from 'node:fs';
import type { Config } from '../config/config.ts';
import { ConfigError } from '../errors.ts';
import { checkModels, type TestResult } from '../models/check.ts';
import { Database } from '../store/database.ts';
import { defineCommand } from './command.ts';
import { configFromArgs, withConfigOptions } from './config-options.ts';
import { EXIT } from './exit-codes.ts';

/** `pass  marts/balance_chain_unbroken  0.01 s`, and for a failure the offending rows below it. */
export function formatTestResult(result: TestResult): string {
  const head = `${result.status === 'pass' ? 'pass' : result.status === 'fail' ? 'FAIL' : 'ERROR'}  ${result.id.padEnd(44)} ${(result.ms / 1000).toFixed(2).padStart(6)} s`;
  if (result.status === 'pass') return head;
  if (result.status === 'error') return `${head}\n      ${result.message}`;
  const more = result.offending > result.sample.length ? `\n      ... ${result.offending - result.sample.length} more` : '';
  return `${head}  ${result.offending} offending row${result.offending === 1 ? '' : 's'}\n${formatRows(result.sample)}${more}`;
}

/** Rows as an indented table, values exactly as DuckDB returned them. */
function formatRows(rows: readonly Record<string, unknown>[]): string {
  const columns = Object.keys(rows[0] ?? {});
  const cells = rows.map((row) => columns.map((column) => (row[column] === null ? 'null' : typeof row[column] === 'object' ? JSON.stringify(row[column]) : String(row[column]))));
  const widths = columns.map((column, index) => Math.max(column.length, ...cells.map((cell) => cell[index]!.length)));
  return [columns, ...cells].map((cell) => `      ${cell.map((value, index) => value.padEnd(widths[index]!)).join('  ').trimEnd()}`).join('\n');
}

/** Runs the SQL tests on the configured database (read-only), printing a line per test. */
export async function checkWithConfig(config: Readonly<Config>, options: { print: boolean }): Promise<TestResult[]> {
  if (!existsSync(config.db)) throw new ConfigError(config.db, 'no database here yet', { hint: 'run exledger sync and exledger build first, or point --db / EXLEDGER_DB at the database' });
  const db = await Database.open(config.db, { readOnly: true });
  try {
    return await checkModels(db, { onResult: options.print ? (result) => console.log(formatTestResult(result)) : undefined });
  } finally {
    db.close();
  }
}

/** `exledger check`. */
export const checkCommand = defineCommand({
  command: 'check',
  describe: 'Run the SQL tests over the built models: pass, or fail with a sample of the offending rows',
  builder: (yargs) => withConfigOptions(yargs).option('json', { type: 'boolean', default: false, describe: 'Print JSON instead of lines' }),
  handler: async (args) => {
    const results = await checkWithConfig(configFromArgs(args), { print: !args.json });
    const failing = results.filter((result) => result.status !== 'pass');
    if (args.json) console.log(JSON.stringify(results.map((result) => ({ ...result, ms: Math.round(result.ms) })), null, 2));
    else console.log(`check: ${results.length - failing.length} passed, ${failing.length} failed of ${results.length}`);
    return failing.length === 0 ? EXIT.ok : EXIT.failure;
  },
});
