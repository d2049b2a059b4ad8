import { closestName } from '../closest-name.ts';
import { UsageError } from '../errors.ts';

/** yargs's message for a line that names no command (main.ts gives it to demandCommand). */
export const NO_COMMAND = 'no command given';

/** What yargs knows of the options in force when it refused a command line (its getOptions()). */
export interface KnownOptions {
  /** Every option name and alias (positionals too). */
  key: Record<string, unknown>;
  /** Each option's aliases. */
  alias: Record<string, string[]>;
  /** Each option's choices. */
  choices: Record<string, unknown[]>;
}

/** The command line yargs refused, and what it was checked against. */
export interface RefusedLine {
  /** The command line as given. */
  argv: readonly string[];
  /** yargs's message (its English strings: main.ts sets the locale). */
  message: string;
  /** The command named on the line (its yargs command string, e.g. `report <name..>`), or undefined when none was. */
  command: string | undefined;
  /** The names of every command. */
  commands: readonly string[];
  options: KnownOptions;
}

/**
 * yargs's refusal of a command line as one UsageError: what was wrong, by name, with the closest
 * valid name where one is close (`unknown option --sinse for exledger sync; did you mean
 * --since?`), and a hint saying where the valid ones are listed. Never the help text: a typo in a
 * cron line is one line in the job's error log, not thirty.
 */
export function usageErrorOf(line: RefusedLine): UsageError {
  const commandName = line.command?.split(' ')[0];
  const where = commandName === undefined ? 'exledger' : `exledger ${commandName}`;
  const listsOptions = commandName === undefined ? 'exledger --help lists the commands and the options every command takes' : `${where} --help lists its options`;
  const first = line.message.split('\n')[0]!;

  if (first === NO_COMMAND) {
    const words = line.argv.map(quoted).join(' ');
    return new UsageError(`no command given in exledger ${words}`, { hint: `name one of the commands first: ${line.commands.join(', ')} (exledger --help describes them)` });
  }

  const unknown = /^Unknown arguments?: (.*)$/.exec(first);
  if (unknown !== null) {
    const names = unknown[1]!.split(', ').map((name) => name.replace(/^"(.*)"$/, '$1'));
    const options: string[] = [];
    const words: string[] = [];
    for (const name of names) {
      const flag = flagOf(line.argv, name);
      if (flag !== undefined) options.push(flag);
      // yargs also names an unknown --kebab-case option by its camelCase form: not a word of the line.
      else if (line.argv.includes(name)) words.push(name);
    }
    if (commandName === undefined && words.length > 0) return unknownCommand(words[0]!, line.commands);
    if (words.length > 0 && options.length === 0) {
      const positionals = positionalsOf(line.command ?? '');
      const takes = positionals.length === 0 ? 'it takes no argument' : `it takes ${positionals.join(' ')}`;
      return new UsageError(`unexpected argument${words.length === 1 ? '' : 's'} ${words.map(quoted).join(' ')} for ${where} (${takes})`, {
        hint: `${usageOf(line.command)}; quote a value that holds spaces (${where} --help lists its options)`,
      });
    }
    const known = optionNames(line);
    const told = [...new Set(options.length > 0 ? options : names.map((name) => `--${name}`))];
    const suggestion = (flag: string) => {
      const meant = closestName(flag.replace(/^-+/, ''), known);
      return meant === undefined ? undefined : meant.length === 1 ? `-${meant}` : `--${meant}`;
    };
    if (told.length === 1) {
      const meant = suggestion(told[0]!);
      return new UsageError(`unknown option ${told[0]} for ${where}${meant === undefined ? '' : `; did you mean ${meant}?`}`, { hint: listsOptions });
    }
    const each = told.map((flag) => {
      const meant = suggestion(flag);
      return meant === undefined ? flag : `${flag} (did you mean ${meant}?)`;
    });
    return new UsageError(`unknown options for ${where}: ${each.join(', ')}`, { hint: listsOptions });
  }

  // Invalid values:\n  Argument: pooling, Given: "x", Choices: "account", "universal"
  const invalid = /^\s*Argument: (.+?), Given: (.*?), Choices: (.*)$/m.exec(line.message);
  if (first.startsWith('Invalid values') && invalid !== null) {
    const [, name, given, choiceList] = invalid;
    const choices = (line.options.choices[name!] ?? choiceList!.split(', ').map((choice) => choice.replace(/^"(.*)"$/, '$1'))).map(String);
    const values = given!.split(', ').map((value) => value.replace(/^"(.*)"$/, '$1'));
    const wrong = values.find((value) => !choices.includes(value)) ?? values[0] ?? '';
    const hint = `give one of ${choices.join(', ')} (${where} --help describes them)`;
    if (wrong === '') return new UsageError(`--${name} needs a value for ${where}: one of ${choices.join(', ')}`, { hint });
    const meant = closestName(wrong, choices);
    return new UsageError(`--${name} ${quoted(wrong)} is not one of ${choices.join(', ')}${meant === undefined ? '' : `; did you mean ${meant}?`}`, { hint });
  }

  if (/^Not enough non-option arguments/.test(first)) {
    const positionals = positionalsOf(line.command ?? '').filter((positional) => positional.startsWith('<'));
    if (commandName !== undefined && positionals.length > 0) {
      return new UsageError(`${where} needs ${positionals.join(' ')}: none was given`, { hint: `${usageOf(line.command)} (${where} --help says what to give)` });
    }
  }

  const missing = /^Missing required arguments?: ([^\n]*)/.exec(line.message);
  if (missing !== null) {
    const names = missing[1]!.split(', ').map((name) => (positionalsOf(line.command ?? '').some((positional) => positional.slice(1, -1).replace(/\.\.$/, '') === name) ? `<${name}>` : `--${name}`));
    return new UsageError(`${where} needs ${names.join(' and ')}: none was given`, { hint: `${usageOf(line.command)} (${where} --help says what to give)` });
  }

  const mutuallyExclusive = /^Arguments (\S+) and (\S+) are mutually exclusive$/.exec(first);
  if (mutuallyExclusive !== null) {
    return new UsageError(`--${mutuallyExclusive[1]} and --${mutuallyExclusive[2]} cannot be given together for ${where}`, { hint: `give one of them (${where} --help describes them)` });
  }

  const implied = /^Missing dependent arguments:\s*\n?\s*(\S+) -> (\S+)/.exec(line.message);
  if (implied !== null) {
    return new UsageError(`--${implied[1]} needs --${implied[2]} for ${where}`, { hint: `add --${implied[2]} (${where} --help describes them)` });
  }

  // Anything else yargs refuses: its own words, on one line.
  return new UsageError(`${first.replace(/:$/, '')}${commandName === undefined ? '' : ` (${where})`}`, { hint: listsOptions });
}

/** The line for a word that is no command: the closest one, and the list. */
function unknownCommand(word: string, commands: readonly string[]): UsageError {
  const meant = closestName(word, commands);
  return new UsageError(`unknown command ${quoted(word)}${meant === undefined ? '' : `; did you mean ${meant}?`}`, {
    hint: `the commands are ${commands.join(', ')} (exledger --help describes them)`,
  });
}

/** How the line named the option yargs calls `name`: `--sinse`, `--no-color`, `-x`; undefined when no word of it does. */
function flagOf(argv: readonly string[], name: string): string | undefined {
  for (const word of argv) {
    if (word === '--') return undefined;
    const flag = word.split('=')[0]!;
    if (flag === `--${name}` || flag === `--no-${name}`) return flag;
    if (name.length === 1 && /^-[^-]/.test(flag) && flag.slice(1).includes(name)) return `-${name}`;
  }
  return undefined;
}

/** The option names to suggest from: long names and one-letter aliases, not positionals nor yargs's camelCase copies. */
function optionNames(line: RefusedLine): string[] {
  const positionals = new Set(positionalsOf(line.command ?? '').map((positional) => positional.slice(1, -1).replace(/\.\.$/, '')));
  return Object.keys(line.options.key).filter((name) => !positionals.has(name) && name !== '$0' && !/[A-Z]/.test(name));
}

/** A command string's positionals: `report <name..>` → [`<name..>`]. */
function positionalsOf(command: string): string[] {
  return command.split(' ').slice(1).filter((word) => /^[<[]/.test(word));
}

function usageOf(command: string | undefined): string {
  return `the usage is exledger ${command ?? '<command>'} [options]`;
}

/** A word as typed, quoted when it holds a space or is empty. */
function quoted(word: string): string {
  return /^[^\s"']+$/.test(word) ? word : JSON.stringify(word);
}
