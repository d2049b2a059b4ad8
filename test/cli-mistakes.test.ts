import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../src/cli/commands.ts';
import { EXIT } from '../src/cli/exit-codes.ts';
import { runCli, type CliResult } from './support/cli-process.ts';

/**
 * Mistakes on the command line (issue 25): the `exledger` executable as cron runs it (its own
 * process, stdin closed, no terminal). A typo is one `error:` line naming it, with the closest
 * valid name, and one `fix:` line; exit 2; never the help text (which would fill a cron error log).
 */

/** Runs commands a few at a time (the machine's two cores are shared). */
async function runAll(lines: readonly (readonly string[])[], cwd: string): Promise<CliResult[]> {
  const results: CliResult[] = [];
  for (let start = 0; start < lines.length; start += 4) results.push(...(await Promise.all(lines.slice(start, start + 4).map((args) => runCli(args, { cwd })))));
  return results;
}

describe('exledger: a mistake on the command line is one error line and one fix line, exit 2', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'exledger-mistakes-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('unknown commands and options, bad choices, missing and extra arguments: the thing named, the closest valid name, a fix, no help', { timeout: 240_000 }, async () => {
    const cases: [string[], string, RegExp][] = [
      [['sync', '--sinse', '2026-11-01'], 'error: unknown option --sinse for exledger sync; did you mean --since?', /^ {2}fix: exledger sync --help lists its options$/],
      [['statsu'], 'error: unknown command statsu; did you mean status?', /^ {2}fix: the commands are run, sync, build, .*status.*\(exledger --help describes them\)$/],
      [['sycn', '--since', '2026-11-01'], 'error: unknown command sycn; did you mean sync?', /^ {2}fix: the commands are /],
      [['frobnicate'], 'error: unknown command frobnicate', /^ {2}fix: the commands are /],
      [['sync', '--full-refreh'], 'error: unknown option --full-refreh for exledger sync; did you mean --full-refresh?', /^ {2}fix: exledger sync --help lists its options$/],
      [['report', 'pnl', '--perod', '2026-10'], 'error: unknown option --perod for exledger report; did you mean --period?', /^ {2}fix: exledger report --help lists its options$/],
      [['status', '--sinse', '1', '--zzz'], 'error: unknown options for exledger status: --sinse, --zzz', /^ {2}fix: exledger status --help lists its options$/],
      [['build', '--pooling', 'acount'], 'error: --pooling acount is not one of account, universal; did you mean account?', /^ {2}fix: give one of account, universal \(exledger build --help describes them\)$/],
      [['build', '--pooling'], 'error: --pooling needs a value for exledger build: one of account, universal', /^ {2}fix: give one of account, universal/],
      [['report'], 'error: exledger report needs <name..>: none was given', /^ {2}fix: the usage is exledger report <name\.\.> \[options\]/],
      [['status', 'now'], 'error: unexpected argument now for exledger status (it takes no argument)', /^ {2}fix: the usage is exledger status \[options\]/],
      [['sql', '--raw', 'select 1'], 'error: --raw needs --csv for exledger sql', /^ {2}fix: add --csv \(exledger sql --help describes them\)$/],
      [['--sinse'], 'error: no command given in exledger --sinse', /^ {2}fix: name one of the commands first: run, sync, /],
    ];
    const results = await runAll(cases.map(([args]) => args), dir);
    results.forEach((result, index) => {
      const [args, error, fix] = cases[index]!;
      const name = args.join(' ');
      expect(result.code, name).toBe(EXIT.badInput);
      expect(result.stdout, name).toBe('');
      const lines = result.stderr.split('\n');
      expect(lines, name).toHaveLength(3);
      expect(lines[0], name).toBe(error);
      expect(lines[1], name).toMatch(fix);
      expect(lines[2], name).toBe('');
    });
  });

  it('--json: the one object, its error with type, message and fix; stderr has the two lines only', async () => {
    const result = await runCli(['sync', '--sinse', '2026-11-01', '--json'], { cwd: dir });
    expect(result.code).toBe(EXIT.badInput);
    expect(result.stderr).toBe('error: unknown option --sinse for exledger sync; did you mean --since?\n  fix: exledger sync --help lists its options\n');
    expect(JSON.parse(result.stdout)).toMatchObject({
      command: 'sync',
      ok: false,
      exitCode: 2,
      error: { type: 'UsageError', message: 'unknown option --sinse for exledger sync; did you mean --since?', fix: 'exledger sync --help lists its options' },
    });
  });

  it('a bare exledger prints the command list, then says a command is needed (exit 2)', async () => {
    const bare = await runCli([], { cwd: dir });
    expect(bare.code).toBe(EXIT.badInput);
    expect(bare.stdout).toBe('');
    expect(bare.stderr).toMatch(/^exledger <command> \[options\]\n(.*\n)*Commands:\n(.*\n)*.*exledger run .*\n(.*\n)*Exit codes:\n(.*\n)*\nerror: no command given: name one of the commands listed above\n {2}fix: exledger <command> --help lists the options of that command\n$/);
  });
});

describe('exledger --help: no contradictions, and each command names its exit codes', () => {
  it('every command: no [default: []] beside [required], and an "Exit codes:" block of the codes it returns', { timeout: 240_000 }, async () => {
    const names = COMMANDS.map((command) => command.command.split(' ')[0]!);
    const results = await runAll(names.map((name) => [name, '--help']), os.tmpdir());
    results.forEach((result, index) => {
      const name = names[index]!;
      expect(result.code, name).toBe(0);
      expect(result.stdout, name).not.toMatch(/\[default: \[\]\]/);
      expect(result.stdout, name).not.toMatch(/\[required\] \[default:/);
      const block = result.stdout.slice(result.stdout.indexOf('\nExit codes:\n'));
      expect(block, name).toMatch(/^\nExit codes:\n {2}0 {4}\S/);
      // One line per code (none wrapped onto a line of its own).
      for (const line of block.trim().split('\n').slice(1)) expect(line, name).toMatch(/^ {2}\d+ +\S/);
      // Every command can fail, be given bad input and be interrupted.
      for (const code of [1, 2, 130]) expect(block, `${name} ${code}`).toMatch(new RegExp(`\\n {2}${code} +\\S`));
    });
    const help = Object.fromEntries(names.map((name, index) => [name, results[index]!.stdout]));
    // A sync or run can be partly done (3) and find the database busy (4); ls reads no database.
    for (const name of ['sync', 'run']) expect(help[name], name).toMatch(/\n {2}3 {4}\S.*\n {2}4 {4}busy/);
    expect(help.ls).not.toMatch(/\n {2}4 {4}/);
    expect(help.report).toMatch(/\n {2}3 {4}the journal was written but leaves source rows out/);
    // The report's positional is required, with no default shown.
    expect(help.report).toMatch(/or all +\[array\] \[required\]\n/);
  });

  it('exledger --help ends with every exit code', async () => {
    const result = await runCli(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/\nExit codes:\n {2}0 .*\n {2}1 .*\n {2}2 .*\n {2}3 .*\n {2}4 .*\n {2}130 .*\n`exledger <command> --help` lists the codes that command returns\.\n$/);
  });
});
