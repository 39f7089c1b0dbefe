import { parseArgs } from 'node:util';
import { closestMatch } from 'leven';
import { UsageError } from './errors.js';
import { describeOptions, GLOBAL_OPTIONS, type OptionSpecs, toParseArgs } from './options.js';
import type { Session } from './session.js';

export interface Invocation {
  positionals: string[];
  values: Record<string, string | boolean | undefined>;
}

/** A command: `deploy`, or a subcommand such as `pipelines list`. */
export interface Command {
  name: string;
  summary: string;
  /** The arguments as the usage line shows them: `NAME [KEY=VALUE...]`. */
  args?: string;
  /** How many arguments it takes: [at least, at most]. */
  arity: [number, number];
  options?: OptionSpecs;
  /** More explanation for --help. */
  details?: string;
  /** Resolves to the exit status (0 when undefined). */
  run(session: Session, invocation: Invocation): Promise<number | undefined>;
}

/** A command made of subcommands: `pipelines`. */
export interface Group {
  name: string;
  summary: string;
  commands: Command[];
}

export type Entry = Command | Group;

export type Parsed =
  | { kind: 'help'; text: string }
  | { kind: 'run'; command: Command; usage: string; invocation: Invocation };

const isGroup = (entry: Entry): entry is Group => 'commands' in entry;

/**
 * ` (did you mean "pipelines"?)` when one of the names is a likely typo of `word` (at most a
 * third of its letters wrong, as the server judges task names), else nothing.
 */
function suggestion(word: string, names: string[]): string {
  const maxDistance = Math.floor(word.length / 3);
  const nearest = maxDistance > 0 ? closestMatch(word, names, { maxDistance }) : undefined;
  return nearest ? ` (did you mean ${JSON.stringify(nearest)}?)` : '';
}

function usageLine(path: string[], command: Command): string {
  return `Usage: pipewright ${[...path, command.args].filter(Boolean).join(' ')} [options]\n`;
}

function shortUsage(path: string[], command: Command): string {
  return `${usageLine(path, command)}Run \`pipewright ${path.join(' ')} --help\` for details.\n`;
}

function commandHelp(path: string[], command: Command): string {
  const options = command.options && Object.keys(command.options).length > 0 ? command.options : undefined;
  return (
    `${usageLine(path, command)}\n${command.summary}\n` +
    (command.details ? `\n${command.details.trimEnd()}\n` : '') +
    (options ? `\nOptions:\n${describeOptions(options)}` : '') +
    `\nGlobal options:\n${describeOptions(GLOBAL_OPTIONS)}`
  );
}

function listing(items: { name: string; args?: string; summary: string }[]): string {
  const labels = items.map((item) => [item.name, item.args].filter(Boolean).join(' '));
  const width = Math.max(...labels.map((label) => label.length));
  return items.map((item, index) => `  ${(labels[index] ?? '').padEnd(width)}  ${item.summary}\n`).join('');
}

function groupHelp(group: Group): string {
  return (
    `Usage: pipewright ${group.name} SUBCOMMAND [arguments] [options]\n\n${group.summary}\n\n` +
    `Subcommands:\n${listing(group.commands)}\n` +
    `Run \`pipewright ${group.name} SUBCOMMAND --help\` for details.\n`
  );
}

export function topHelp(entries: Entry[]): string {
  return (
    'Usage: pipewright COMMAND [SUBCOMMAND] [arguments] [options]\n\n' +
    'The command-line tool of Pipewright.\n\n' +
    `Commands:\n${listing(entries)}\n` +
    `Global options:\n${describeOptions(GLOBAL_OPTIONS)}\n` +
    'Settings come from the flags, then the PIPEWRIGHT_* environment variables, then the\n' +
    'nearest pipewright.json (the project), then the file `pipewright login` writes.\n' +
    'Run `pipewright COMMAND --help` for details.\n'
  );
}

function allOptions(entries: Entry[]): OptionSpecs {
  const commands = entries.flatMap((entry) => (isGroup(entry) ? entry.commands : [entry]));
  return Object.assign({}, GLOBAL_OPTIONS, ...commands.map((command) => command.options ?? {}));
}

/**
 * Finds the command named by the first words of `argv`, then parses the rest strictly
 * against that command's options. Options may come before, between or after arguments.
 */
export function parseCommandLine(entries: Entry[], argv: string[]): Parsed {
  // First pass, only to find the words: every option any command knows, so that option
  // values are not taken for words. Options are the same type wherever they appear.
  const { positionals: words, values: loose } = parseArgs({
    args: argv,
    options: toParseArgs(allOptions(entries)),
    strict: false,
    allowPositionals: true,
  });
  const help = loose.help === true;
  const [first, second] = words;
  if (first === undefined) {
    if (help) return { kind: 'help', text: topHelp(entries) };
    throw new UsageError('a command is needed', topHelp(entries));
  }
  const entry = entries.find((candidate) => candidate.name === first);
  if (!entry) {
    const names = entries.map((candidate) => candidate.name);
    throw new UsageError(`unknown command "${first}"${suggestion(first, names)}`, topHelp(entries));
  }
  let command: Command;
  let path: string[];
  if (isGroup(entry)) {
    if (second === undefined) {
      if (help) return { kind: 'help', text: groupHelp(entry) };
      throw new UsageError(`${first} needs a subcommand`, groupHelp(entry));
    }
    const found = entry.commands.find((candidate) => candidate.name === second);
    if (!found) {
      const names = entry.commands.map((candidate) => candidate.name);
      throw new UsageError(
        `unknown subcommand "${first} ${second}"${suggestion(second, names)}`,
        groupHelp(entry),
      );
    }
    command = found;
    path = [first, second];
  } else {
    command = entry;
    path = [first];
  }
  if (help) return { kind: 'help', text: commandHelp(path, command) };

  const usage = shortUsage(path, command);
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      options: toParseArgs({ ...GLOBAL_OPTIONS, ...command.options }),
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    // Node's message goes on to explain `--`; its first sentence is what matters here.
    const message = /^[^\n]*?\.(?= |$)|^[^\n]*/.exec((error as Error).message)?.[0] ?? 'invalid options';
    throw new UsageError(message, usage);
  }
  const positionals = parsed.positionals.slice(path.length);
  const [least, most] = command.arity;
  if (positionals.length < least) throw new UsageError('missing arguments', usage);
  if (positionals.length > most) throw new UsageError(`unexpected argument "${positionals[most]}"`, usage);
  // No option is declared `multiple`: every value is a string or a boolean.
  const values = parsed.values as Invocation['values'];
  return { kind: 'run', command, usage, invocation: { positionals, values } };
}
